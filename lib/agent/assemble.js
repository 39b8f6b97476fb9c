'use strict';

// The composition root: each peer of an agent, made once, with the peers it
// calls. The agent class (agent/keep_alive.js) keeps them and calls, from
// each of core's hooks, the one that owns that step:
//   addRequest -> admission; getName -> reuse (the check before reuse) or
//   admission (room under maxTotalSockets); createSocket, createConnection ->
//   connections, socket events (taking the socket on); 'free',
//   keepSocketAlive -> keep; reuseSocket -> reuse; removeSocket -> socket
//   events; close(), destroy() -> shutdown.
// Each socket's listeners reach the socket events in one hop, through its state.
const { PoolEvents } = require('../observe/events');
const { Shutdown } = require('./shutdown');
const { IdleLearning } = require('./idle_learning');
const { Expiry } = require('./expiry');
const { Connections } = require('./connections');
const { SocketEvents } = require('./socket_events');
const { Reuse } = require('./reuse');
const { Keep } = require('./keep');
const { Admission } = require('./admission');

/**
 * The peers of `agent`, made after its super() and counters.
 * @param {object} agent
 * @param {object} config normalizeOptions(the caller's options)
 * @param {object} settings the agent's own settings, which live options change
 */
function assemble(agent, config, settings) {
  const events = new PoolEvents(agent); // diagnostics_channel events and getStats()
  const shutdown = new Shutdown(agent);
  const learning = new IdleLearning(config.learnServerTimeout, events, (pool) => expiry.tighten(pool));
  const expiry = new Expiry(agent, settings, learning, events);
  const connections = new Connections(agent, config, shutdown, events, (socket, state, reason) => expiry.retire(socket, state, reason));
  const { proxy, dns } = connections;
  const socketEvents = new SocketEvents(agent, events, learning, expiry, shutdown, dns);
  const reuse = new Reuse(agent, settings, events, expiry);
  return {
    events, shutdown, learning, expiry, connections, proxy, dns, socketEvents, reuse,
    keep: new Keep(agent, settings, { events, learning, expiry, shutdown, reuse, dns }),
    admission: new Admission(agent, config, { events, learning, expiry, shutdown, proxy }),
  };
}

module.exports = { assemble };
