'use strict';

// The agent's listeners on each of its sockets: the same functions for every
// socket (`this` is the socket), so a socket holds no closure of the agent's.
//
// Core listens to most of these events itself: a listener of the agent's
// beside core's makes an array of two on the socket, and one of nineteen
// slots once a request's own listener has joined (V8's growth on push),
// which stays while the socket idles: 64 to 200 bytes an event on every idle
// socket. Where core's own listener calls one of the agent's hooks with all
// it needs to know ('agentRemove': removeSocket), the agent adds none (see
// fromCore); where it must listen, the array is made with room for a
// request's listener (withRoom); the rest is in benchmark/README.md, What is
// left in memory.
const { PHASES } = require('./socket_state');

/**
 * Listens on `socket` (its `state` just made) with `on`, the agent class's
 * listeners: connect, timeout, error, close, end, agentRemove. `fromCore`:
 * core's createSocket set the socket up, and its 'agentRemove' listener
 * calls removeSocket (see upgradeCall).
 */
function watch(socket, state, on, fromCore) {
  if (socket.encrypted) socket.once('secureConnect', on.connect);
  else if (socket.connecting) socket.once('connect', on.connect);
  else state.connected = true;
  socket.on('timeout', on.timeout);
  socket.on('error', on.error);
  socket.on('close', on.close);
  socket.on('end', on.end);
  // on, not once: a once wrapper would stay on every idle socket.
  if (!fromCore) socket.on('agentRemove', on.agentRemove);
  withRoom(socket, 'timeout');
  withRoom(socket, 'close');
  withRoom(socket, 'end');
}

/**
 * Where the agent's listener made an array of two (beside core's 'timeout'
 * and 'close' listeners, net's own 'end'), the same two in an array with
 * room for two more: a request's listener then joins it without V8 growing
 * it to nineteen slots, which it would keep while the socket idles (120
 * bytes an event). Once, when the socket is taken on; EventEmitter reads
 * the array as any other.
 */
function withRoom(socket, event) {
  const events = socket._events;
  const list = events === undefined ? undefined : events[event];
  if (!Array.isArray(list) || list.length !== 2) return;
  const roomy = [list[0], list[1], undefined, undefined];
  roomy.length = 2; // V8 keeps the capacity: it shrinks only a store much larger than its length
  events[event] = roomy;
}

/** An HTTP upgrade took `socket`: every listener off but 'close' (its close still counts). */
function unwatch(socket, on) {
  socket.removeListener('secureConnect', on.connect);
  socket.removeListener('connect', on.connect);
  socket.removeListener('timeout', on.timeout);
  socket.removeListener('error', on.error);
  socket.removeListener('end', on.end);
}

/**
 * Whether core called removeSocket from its 'agentRemove' listener for an
 * HTTP upgrade: the socket is still open and serving its request. Pooling a
 * socket, core has detached the request first; a close, or an error on a
 * free socket (core's other 'agentRemove'), destroyed it.
 */
function upgradeCall(socket, state) {
  return state !== undefined && state.phase === PHASES.ACTIVE && socket._httpMessage != null && !socket.destroyed;
}

module.exports = { watch, unwatch, upgradeCall };
