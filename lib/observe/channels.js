'use strict';

// Every diagnostics_channel the library publishes on, by one name each, and
// the one function that publishes. Made once: a channel's hasSubscribers is
// then a field read, and holding them keeps them alive on Node 18, where
// channels are weakly referenced. steady-agent/otel subscribes by these
// names; docs/observability.md documents them.
const dc = require('node:diagnostics_channel');

const CHANNEL_NAMES = Object.freeze({
  create: 'steady-agent:socket:create',
  reuse: 'steady-agent:socket:reuse',
  free: 'steady-agent:socket:free',
  close: 'steady-agent:socket:close',
  serverIdleLimit: 'steady-agent:server-idle-limit',
  queued: 'steady-agent:request:queued',
  dequeued: 'steady-agent:request:dequeued',
  noSocket: 'steady-agent:request:no-socket',
  resend: 'steady-agent:request:resend',
  listeners: 'steady-agent:socket:listeners',
  dnsLookup: 'steady-agent:dns:lookup',
  dnsChange: 'steady-agent:dns:change',
  dnsStale: 'steady-agent:dns:stale',
  dnsRetire: 'steady-agent:dns:retire',
  connectAttempt: 'steady-agent:connect:attempt',
});

const channels = Object.freeze(Object.fromEntries(Object.entries(CHANNEL_NAMES).map(([key, name]) => [key, dc.channel(name)])));

/** Publishes `message` on `channel`: the only place the library does. */
function publish(channel, message) {
  try {
    channel.publish(message);
  } catch {
    // Only Node 18 gets here: its publish() throws when a subscriber
    // removes the channel's last subscriber while being called (the loop
    // reads the list it just dropped). Errors thrown by subscribers never
    // come here: publish() reports them as uncaught exceptions itself.
  }
}

module.exports = { CHANNEL_NAMES, channels, publish };
