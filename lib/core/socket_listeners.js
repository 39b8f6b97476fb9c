'use strict';

// Where the agent's listeners go on each of its sockets, and core's own
// per-socket listeners they stand in for. The listeners themselves are the
// agent's (agent/socket_events.js): the same functions for every socket
// (`this` is the socket), so a socket holds no closure of the agent's. Code
// here reads and rearranges listeners and counts core's sockets; it calls no
// method of the agent and emits nothing on it: the agent's listeners do, and
// act on what these functions answer.
//
// What an idle socket carries counts, once per socket (benchmark/README.md,
// What is left in memory):
// - core's createSocket gives every socket four closures of its own over the
//   agent, the socket and its options ('free', 'close', 'timeout',
//   'agentRemove', and their context). The agent takes
//   them off and does their work in its own listeners for those events
//   (takeOverCore; the core* functions below), which it needs anyway; one
//   listener where there were two also means no array of them;
// - net's own 'end' listener, one function for every socket, is called first
//   by the agent's (endAfterNet) instead of sharing an array with it;
// - where a listener of the agent's must share an event, the array is made
//   with room for a request's listener (withRoom).
const { EventEmitter } = require('node:events');
const { PHASES } = require('../state/socket_state');
const { countOut } = require('./agent_maps');
const { requestOf } = require('./private_fields');

// Core's listeners (lib/_http_agent.js, installListeners), the last added to
// each of these events before the agent takes the socket on, by name: the
// same on Node 18 to 26. Another Node's, named otherwise, stay where they are.
const CORE_LISTENERS = [['free', 'onFree'], ['close', 'onClose'], ['timeout', 'onTimeout'], ['agentRemove', 'onRemove']];

// net's 'end' listener (onReadableStreamEnd: a socket that may not be half
// open stops writing), the same function on every socket; found on the
// first socket.
let netEnd = null;

/**
 * Listens on `socket` (its `state` just made) with `on`, the agent's
 * listeners: connect, free, timeout, error, close, end, agentRemove.
 * `fromCore`: core's createSocket set the socket up.
 */
function listen(socket, state, on, fromCore) {
  if (socket.encrypted) socket.once('secureConnect', on.connect);
  else if (socket.connecting) socket.once('connect', on.connect);
  else state.connectedBefore();
  state.standInForCore(fromCore && takeOverCore(socket));
  if (state.coreListens) socket.on('free', on.free);
  socket.on('timeout', on.timeout);
  socket.on('error', on.error);
  socket.on('close', on.close);
  if (!absorbNetEnd(socket, endAfterNet(on))) socket.on('end', on.end);
  // on, not once: a once wrapper would stay on every idle socket. On a
  // socket core set up where core's listeners stayed, core's calls
  // removeSocket (see upgradeCall).
  if (state.coreListens || !fromCore) socket.on('agentRemove', on.agentRemove);
  withRoom(socket, 'timeout');
  withRoom(socket, 'close');
  withRoom(socket, 'end');
}

/** The last listener of `event` on `socket`, if it is named `name`; else null. */
function lastNamed(socket, event, name) {
  const list = socket._events?.[event];
  const last = Array.isArray(list) ? list[list.length - 1] : list;
  return typeof last === 'function' && last.name === name ? last : null;
}

/** Takes core's four listeners off `socket` if all four are there; true if so. */
function takeOverCore(socket) {
  const found = CORE_LISTENERS.map(([event, name]) => lastNamed(socket, event, name));
  if (found.includes(null)) return false;
  CORE_LISTENERS.forEach(([event], i) => socket.removeListener(event, found[i]));
  return true;
}

/**
 * Puts `listener` (endAfterNet) in net's place on 'end' (in an array where
 * a TLS socket still has its handshake's listener in front); true if net's
 * was there.
 */
function absorbNetEnd(socket, listener) {
  const events = socket._events;
  const end = events === undefined ? undefined : events.end;
  if (end === undefined) return false;
  if (netEnd === null) {
    const found = (Array.isArray(end) ? end : [end]).find((each) => each.name === 'onReadableStreamEnd');
    if (found === undefined) return false;
    netEnd = found;
  }
  if (end === netEnd) {
    events.end = listener;
    return true;
  }
  const at = Array.isArray(end) ? end.indexOf(netEnd) : -1;
  if (at === -1) return false;
  end[at] = listener;
  return true;
}

// The agent classes' 'end' listener after net's, as one listener: made
// once for each set of listeners (`on`), the same function on every socket.
const endsAfterNet = new WeakMap();

function endAfterNet(on) {
  let listener = endsAfterNet.get(on);
  if (listener === undefined) {
    const end = on.end;
    listener = function endAfterNet() {
      netEnd.call(this);
      end.call(this);
    };
    endsAfterNet.set(on, listener);
  }
  return listener;
}

// ---- core's listeners, taken over ---------------------------------------------
// Each does what core's did, while core's would still be listening (until
// its 'agentRemove').

/**
 * 'free', after the agent's listener emitted the agent's 'free' (where core's
 * would have: lib/_http_agent.js, installListeners, onFree), and core's
 * 'free' listener pooled the socket. Pooled, it has core's own 'error'
 * listener, which destroys it and emits 'agentRemove' (where the agent counts
 * the error): the agent's comes off until the socket is reused
 * (takeErrorsBack), so that an idle socket has one 'error' listener, not an
 * array of two.
 */
function leaveErrorsToCore(socket, state, on) {
  if (state.phase !== PHASES.FREE) return;
  const events = socket._events;
  const list = events.error;
  if (!Array.isArray(list) || list.length !== 2 || list[0] !== on.error || !isCoreFreeError(list[1].listener)) return;
  // The array of two becomes core's listener alone, in place (what
  // removeListener does, without its search).
  events.error = list[1];
  state.errorsToCore();
}

// Core's 'error' listener on a free socket (freeSocketErrorListener, the
// same function for every socket), found by name on the first.
let coreFreeError = null;

function isCoreFreeError(listener) {
  if (coreFreeError === null && typeof listener === 'function' && listener.name === 'freeSocketErrorListener') coreFreeError = listener;
  return listener === coreFreeError && listener !== null;
}

/** Reused: the agent's 'error' listener back, before the request's. */
function takeErrorsBack(socket, state, on) {
  if (!state.errorsOff) return;
  state.errorsBack();
  socket.on('error', on.error);
}

/**
 * Whether this 'agentRemove' is core's, after an error on a free socket
 * (or a probe) the agent had stopped listening to (leaveErrorsToCore).
 */
function erroredWhileFree(socket, state) {
  return state.errorsOff && state.idle && socket.destroyed;
}

/**
 * 'close', as core's onClose (lib/_http_agent.js, installListeners): out of
 * core's count. True when it stood in for core's listener: the agent then
 * calls its removeSocket, as core's would.
 */
function coreClose(state) {
  if (!state.coreListens) return false;
  countOut(state.agent);
  return true;
}

/** 'timeout', as core's onTimeout: a socket in the pool is destroyed. */
function coreTimeout(socket, state) {
  if (!state.coreListens || state.phase !== PHASES.FREE) return;
  if (state.agent.freeSockets[state.pool]?.includes(socket)) socket.destroy();
}

/**
 * 'agentRemove' (an HTTP upgrade, or an error on a free socket), as core's
 * onRemove: the socket leaves core's count, and core listens no more; the
 * agent's 'free' and 'agentRemove' listeners come off with core's. True when
 * it stood in for core's listener: the agent then calls its removeSocket, as
 * core's would. False if core's listeners were not taken over.
 */
function coreRemove(socket, state, on) {
  if (!state.coreListens) return false;
  state.coreLeft();
  countOut(state.agent);
  socket.removeListener('free', on.free);
  socket.removeListener('agentRemove', on.agentRemove);
  return true;
}

/**
 * Where the agent's listener shares an event with others (TLS's on 'close',
 * core's where they stayed), or is alone on 'close', the same listeners in
 * an array with room for three more: a request's listeners (and a caller's
 * on 'close') then join it without V8 growing it to nineteen slots, which it
 * would keep while the socket idles. Once, when the
 * socket is taken on; EventEmitter reads the array as any other, and makes
 * it one function again when one listener is left.
 */
function withRoom(socket, event) {
  const events = socket._events;
  const list = events === undefined ? undefined : events[event];
  let roomy;
  if (Array.isArray(list)) {
    roomy = [...list, undefined, undefined, undefined];
    roomy.length = list.length; // V8 keeps the capacity: it shrinks only a store much larger than its length
  } else if (event === 'close' && typeof list === 'function') {
    roomy = [list, undefined, undefined, undefined];
    roomy.length = 1;
  } else {
    return;
  }
  for (const mark of ARRAY_MARKS) roomy[mark] = 0;
  events[event] = roomy;
}

// What EventEmitter writes on each array of listeners it makes, besides the
// listeners: Node 24 and later count the emits under way over it (an array
// being emitted over is copied before it changes, so that a listener that
// takes itself off does not make the next one missed). An array withRoom
// makes carries the same, at zero: none is under way over a new array.
const ARRAY_MARKS = (() => {
  const probe = new EventEmitter();
  const noop = () => {};
  probe.on('probe', noop);
  probe.on('probe', noop);
  return Object.getOwnPropertySymbols(probe._events.probe);
})();

/** An HTTP upgrade took `socket`: every listener off but 'close' (its close still counts); net's 'end' stays. */
function unlisten(socket, on) {
  socket.removeListener('secureConnect', on.connect);
  socket.removeListener('connect', on.connect);
  socket.removeListener('timeout', on.timeout);
  socket.removeListener('error', on.error);
  socket.removeListener('end', on.end);
  const events = socket._events;
  const end = events.end;
  const ours = endAfterNet(on);
  if (end === ours) events.end = netEnd;
  else if (Array.isArray(end) && end.includes(ours)) end[end.indexOf(ours)] = netEnd;
}

/**
 * Whether core called removeSocket from its 'agentRemove' listener (or the
 * agent's, in its place) for an HTTP upgrade: the socket is still open and
 * serving its request. Pooling a socket, core has detached the request
 * first; a close, or an error on a free socket (core's other
 * 'agentRemove'), destroyed it.
 */
function upgradeCall(socket, state) {
  return state !== undefined && state.phase === PHASES.ACTIVE && requestOf(socket) != null && !socket.destroyed;
}

module.exports = {
  listen, unlisten, upgradeCall, leaveErrorsToCore, coreClose, coreTimeout, coreRemove, takeErrorsBack, erroredWhileFree,
};
