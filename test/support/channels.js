'use strict';

// Subscribes to every steady-agent diagnostics_channel and keeps the messages
// about one agent, in order. stop() unsubscribes (call it in afterEach).
const dc = require('node:diagnostics_channel');

const CHANNELS = Object.freeze([
  'socket:create',
  'socket:reuse',
  'socket:free',
  'socket:close',
  'server-idle-limit',
  'request:queued',
  'request:dequeued',
  'request:no-socket',
  'socket:listeners',
]);

/**
 * Resolves nothing; returns { all, of(name), stop() }: `all` holds
 * { name, message } in publishing order, `of(name)` the messages of one
 * channel ('socket:close', ...).
 */
function watchAgent(agent, names = CHANNELS) {
  const all = [];
  const listeners = names.map((name) => {
    const listener = (message) => {
      if (message.agent === agent) all.push({ name, message });
    };
    dc.subscribe(`steady-agent:${name}`, listener);
    return [name, listener];
  });
  return {
    all,
    of(name) { return all.filter((event) => event.name === name).map((event) => event.message); },
    stop() {
      for (const [name, listener] of listeners) dc.unsubscribe(`steady-agent:${name}`, listener);
    },
  };
}

module.exports = { CHANNELS, watchAgent };
