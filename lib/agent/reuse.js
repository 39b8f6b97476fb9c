'use strict';

// A free socket taken for a request: the check before reuse (core's
// addRequest is about to take the socket from its pool without asking the
// agent: the agent's getName runs this check between naming the pool and
// the taking), and the reuse itself (reuseSocket, or a socket handed
// straight to a queued request on 'free'): its 'error' listener back, its
// active timeout, its counts.
const debug = require('debug')('steady-agent');
const { activeTimeout } = require('../options/normalize');
const { unusableReason } = require('../policy/reusable');
const { nextFree, dropNextFree } = require('../core/agent_maps');
const { poolOptions } = require('../core/private_fields');
const { takeErrorsBack } = require('../core/socket_listeners');
const { stateOf } = require('../state/socket_state');
const { CLOSE_REASONS } = require('../state/close_reasons');
const clock = require('../timers/clock');
const { LISTENERS } = require('./socket_events');
const { INIT_SOCKET, SOCKET_NAME } = require('../constants');

class Reuse {
  #agent;
  #config;
  #events;
  #expiry;

  /**
   * @param {object} agent
   * @param {object} config the agent's settings (socketActiveTTL and timeout
   *   change with agent.options)
   * @param {import('../observe/events').PoolEvents} events
   * @param {import('./expiry').Expiry} expiry closes what the check turns away
   */
  constructor(agent, config, events, expiry) {
    this.#agent = agent;
    this.#config = config;
    this.#events = events;
    this.#expiry = expiry;
  }

  /**
   * Core's addRequest named `pool`, which has free sockets, and is about to
   * take one. Each one it would take that must not be reused leaves the
   * pool and closes, until one may be (marked picked) or none is left. The
   * one clock read of a reuse: a stalled event loop has kept the sweeper
   * from closing sockets whose deadline passed.
   */
  check(pool) {
    const freeSockets = this.#agent.freeSockets;
    const fifo = this.#agent.scheduling === 'fifo';
    const now = clock.now();
    const ttl = this.#config.socketActiveTTL;
    let socket;
    while ((socket = nextFree(freeSockets, pool, fifo)) !== undefined) {
      const state = stateOf(socket);
      const reason = this.#unusableReason(socket, state, now, ttl);
      if (reason === null) {
        state?.picked(now); // one put in the pool by hand is taken on in reused()
        return;
      }
      dropNextFree(freeSockets, pool, fifo);
      if (reason === CLOSE_REASONS.FREE_TIMEOUT) this.#expiry.deadlinePassed(socket, state);
      else this.#expiry.close(socket, state, reason);
    }
  }

  // The facts policy/reusable judges a free socket by. A socket put in
  // agent.freeSockets by hand has no state: the agent never freed it, so it
  // has no count of bytes read to compare, and only one that reports no count
  // either (a handle that keeps none, as Node's own tests build) passes; it has
  // no deadline of ours.
  #unusableReason(socket, state, now, ttl) {
    const readWhileIdle = socket.bytesRead !== (state === undefined ? undefined : state.bytesReadWhenFreed);
    const reason = state === undefined
      ? unusableReason(socket.destroyed, socket.writable, socket.readableLength, readWhileIdle, Infinity, 0, now, 0)
      : unusableReason(socket.destroyed, socket.writable, socket.readableLength, readWhileIdle, state.freeDeadline, ttl > 0 ? now - state.createdAt : 0, now, ttl);
    // One that never connected has no connection to reuse either. Asked only
    // here, off the path of a reuse that goes ahead.
    if (readWhileIdle && reason === CLOSE_REASONS.UNUSABLE && debug.enabled && socket.pending) {
      debug('%s never connected: not reused', socket[SOCKET_NAME] ?? 'a socket put in the pool by hand');
    }
    return reason;
  }

  /** Core's reuseSocket handed `socket`, from `pool`, to a request. */
  reused(socket, pool) {
    // A socket someone put in agent.freeSockets by hand: the agent takes
    // it on, in the pool core just took it from.
    let state = stateOf(socket);
    if (state === undefined || state.agent !== this.#agent) {
      this.#agent[INIT_SOCKET](socket, poolOptions(pool));
      state = stateOf(socket);
    }
    this.activate(socket, state);
  }

  /** The socket takes a request: from the pool, or handed straight on from its last one. */
  activate(socket, state) {
    takeErrorsBack(socket, state, LISTENERS);
    state.activate();
    this.armActiveTimeout(socket);
    this.#events.socketReused(socket, state);
    if (debug.enabled) debug('%s reused for request %d', socket[SOCKET_NAME], state.requests);
  }

  /** The socket serves a request: the agent's timeout while active. */
  armActiveTimeout(socket) {
    const timeout = activeTimeout(this.#agent.options, this.#config.timeout);
    if (socket.timeout !== timeout) socket.setTimeout(timeout);
  }
}

module.exports = { Reuse };
