'use strict';

// The agent's limits on sockets, applied by the transport with the agent's
// meaning (docs/options.md), apart from what it learns of servers:
//
// - timeout: a socket serving a request (or connecting) that is quiet this
//   long is destroyed with the agent's SocketTimeoutError (close reason
//   'active-timeout'). Node's socket timeout, armed while a request is
//   served and off while the socket is idle (undici's keep-alive timers and
//   ours watch it then). Off unless given: undici's headersTimeout and
//   bodyTimeout (300 s) bound a quiet response already.
// - socketActiveTTL: a socket older than this is not reused: one timer per
//   socket from its creation closes it if idle then ('ttl'), and a socket
//   busy then closes when its request ends.
// - maxFreeSockets: a socket that goes free while its origin already has
//   that many idle is closed ('not-kept').
// - maxTotalSockets: a new socket over the limit takes the place of the idle
//   socket of any origin freed longest ago ('total-limit'); with none idle,
//   the connect waits for a place (a socket closing, or one going free,
//   which is then given up).
//
// Closing a socket as its request ends is what undici itself does with a
// `Connection: close` answer: it starts the origin's next request on a new
// connection. Closing an idle one is safe too (./socket_state.js).
const { stateOf } = require('./channel');
// Every module of the agent this file uses, in one place.
const { CLOSE_REASONS } = require('../state/close_reasons');
const { now, MAX_TIMER } = require('../timers/clock');
const { SocketTimeoutError, AgentDestroyedError } = require('../errors');

class SocketLimits {
  constructor(transport, { timeout, socketActiveTTL, maxFreeSockets, maxTotalSockets }) {
    this.transport = transport;
    this.timeout = timeout;
    this.ttl = socketActiveTTL;
    this.maxFree = maxFreeSockets;
    this.maxTotal = maxTotalSockets;
    this.total = 0; // sockets open or being opened, over every origin
    this.waiting = []; // connects waiting for a place under maxTotal: { open }
  }

  /** A place for a new socket: true at once, or false after queueing `open` for when one is free. */
  place(open) {
    if (this.total < this.maxTotal || this.giveUpIdle()) {
      this.total++;
      return true;
    }
    this.waiting.push(open);
    return false;
  }

  /** A socket (or a connect that never made one) gave its place back. */
  released() {
    this.total--;
    if (this.waiting.length > 0 && this.total < this.maxTotal) {
      this.total++;
      this.waiting.shift()();
    }
  }

  /** Closes the idle socket freed longest ago, of any origin; false when there is none. */
  giveUpIdle() {
    let oldest = null;
    for (const origin of this.transport.byName.values()) {
      for (const state of origin.connections) {
        if (!state.active && state.connected && (oldest === null || state.freedAt < oldest.freedAt)) oldest = state;
      }
    }
    if (oldest === null) return false;
    oldest.close(CLOSE_REASONS.TOTAL_LIMIT);
    return true;
  }

  /** A new socket, before it connects: the active timeout and the TTL. */
  created(state) {
    const socket = state.socket;
    if (this.timeout > 0) {
      socket.setTimeout(this.timeout);
      socket.on('timeout', onSocketTimeout);
    }
    if (this.ttl > 0) state.ttlTimer = setTimeout(ttlReached, Math.min(this.ttl, MAX_TIMER), state);
  }

  /** A request starts on `state`'s socket. */
  started(state) {
    if (this.timeout > 0 && state.requestsFinished > 0) state.socket.setTimeout(this.timeout);
  }

  /**
   * `state`'s socket went free: true when it was closed for a limit
   * (its TTL, maxFreeSockets, a connect waiting for a place).
   */
  freed(state) {
    if (this.timeout > 0) state.socket.setTimeout(0);
    if (this.ttl > 0 && now() - state.createdAt >= this.ttl) {
      state.close(CLOSE_REASONS.TTL);
      return true;
    }
    if (this.waiting.length > 0) {
      state.close(CLOSE_REASONS.TOTAL_LIMIT);
      return true;
    }
    if (this.maxFree !== Infinity) {
      let idle = 0;
      for (const other of state.origin.connections) if (other !== state && !other.active && other.connected) idle++;
      if (idle >= this.maxFree) {
        state.close(CLOSE_REASONS.NOT_KEPT);
        return true;
      }
    }
    return false;
  }

  /** `state`'s socket closed. */
  closed(state) {
    if (state.ttlTimer !== null) {
      clearTimeout(state.ttlTimer);
      state.ttlTimer = null;
    }
    this.released();
  }

  /** The dispatcher is gone: connects still waiting for a place fail. */
  stop() {
    const waiting = this.waiting;
    this.waiting = [];
    for (const open of waiting) open(new AgentDestroyedError());
  }
}

// A TTL past the largest timer is waited for in steps.
function ttlReached(state) {
  state.ttlTimer = null;
  const left = state.createdAt + state.origin.transport.limitsOfSockets.ttl - now();
  if (left > 0) state.ttlTimer = setTimeout(ttlReached, Math.min(left, MAX_TIMER), state);
  else if (!state.active && state.connected) state.close(CLOSE_REASONS.TTL);
}

// A socket listener: `this` is the socket. Quiet while connecting or
// serving a request (the timeout is off while it is idle).
function onSocketTimeout() {
  const state = stateOf(this);
  if (state === undefined || (state.connected && !state.active)) return;
  const limits = state.origin.transport.limitsOfSockets;
  state.closeReason ??= CLOSE_REASONS.ACTIVE_TIMEOUT;
  this.destroy(new SocketTimeoutError(limits.timeout, state.origin.name));
}

module.exports = { SocketLimits };
