'use strict';

// agentkeepalive's public socket name, `sock[<id>#<pool>]`, made once per
// socket and kept on every idle one, so its size counts: one flat string,
// one byte a character where it can be. A template or `+` makes a tree of
// three or four strings where one will do; join makes one string, but on
// Node 20 a two-byte one once the pool name has been a key of core's maps
// (V8 then reads it through a forwarding "thin" string). The sizes are in
// benchmark/README.md (Issue 23: what changed). normalize() returns
// a one-byte string flat, as it is; a name it would change (decomposed
// characters in a host name) stays as it was.

const { stateOf } = require('../state/socket_state');
const { SOCKET_NAME, SOCKET_CREATED_TIME, SOCKET_REQUEST_COUNT, SOCKET_REQUEST_FINISHED_COUNT } = require('../constants');

/** The name of the agent's socket number `id` in `pool`. */
function socketName(id, pool) {
  const name = 'sock[' + id + '#' + pool + ']';
  const flat = name.normalize();
  return flat === name ? flat : name;
}

// agentkeepalive's public socket properties, read from the socket's state:
// accessors, the same functions on every socket, which V8 keeps in the
// socket's hidden class, so an idle socket holds no slot and no value for
// them (a name string, a number object for the time, four property slots). The name is made when it is read. A caller's
// write to the name or the time makes it the socket's own property; to a
// count, it changes the count the agent keeps.
const PUBLIC = Object.freeze({
  [SOCKET_NAME]: accessor(function get() {
    const state = stateOf(this);
    return socketName(state.id, state.pool);
  }, ownValue(SOCKET_NAME)),
  [SOCKET_CREATED_TIME]: accessor(function get() { return stateOf(this).createdWall; }, ownValue(SOCKET_CREATED_TIME)),
  [SOCKET_REQUEST_COUNT]: accessor(function get() { return stateOf(this).requests; }, function set(value) { stateOf(this).setRequests(value); }),
  [SOCKET_REQUEST_FINISHED_COUNT]: accessor(
    function get() { return stateOf(this).requestsFinished; },
    function set(value) { stateOf(this).setRequestsFinished(value); },
  ),
});

function accessor(get, set) {
  return { get, set, enumerable: true, configurable: true };
}

/** A setter that makes `key` a data property of the socket, holding the value written. */
function ownValue(key) {
  return function set(value) {
    Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true });
  };
}

/** Gives `socket` (its state attached) agentkeepalive's public properties. */
function exposeSocketProperties(socket) {
  Object.defineProperties(socket, PUBLIC);
}

module.exports = { socketName, exposeSocketProperties };
