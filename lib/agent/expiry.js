'use strict';

// The end of a free socket's life: its free deadline, the sweep that finds
// it due, the probe it may become, and its close. One per agent, held by the
// agent; the decisions (how long a socket may idle, what happens at its
// deadline) are policy/free_timeout's, this module applies them.
const debug = require('debug')('steady-agent');
const { socketFreeTimeout } = require('../options/normalize');
const { CLOSE_REASONS } = require('../state/close_reasons');
const { takeOutOfPool } = require('../core/agent_maps');
const { ExpiredTimeout } = require('../core/expired_timeout');
const { PHASES, stateOf } = require('../state/socket_state');
const clock = require('../timers/clock');
const { FreeSocketSweeper } = require('../timers/free_socket_sweeper');
const { SOCKET_NAME } = require('../constants');

// A socket's name in debug lines; one put in agent.freeSockets by hand has none.
const nameOf = (socket) => socket[SOCKET_NAME] ?? 'a socket put in the pool by hand';

class Expiry {
  #agent;
  #config;
  #learning;
  #events;
  // The 'timeout' emitted on an expired socket.
  #expiredTimeout = new ExpiredTimeout();
  // One timer for every free socket's deadline; each socket due comes back
  // to #freeDue.
  #sweeper = FreeSocketSweeper.forDue((state, now) => this.#freeDue(state, now));

  /**
   * @param {object} agent the agent whose free sockets these are
   * @param {object} config its normalised options (freeSocketTimeout and
   *   socketActiveTTL change with agent.options)
   * @param {import('./idle_learning').IdleLearning} learning
   * @param {import('../observe/events').PoolEvents} events
   */
  constructor(agent, config, learning, events) {
    this.#agent = agent;
    this.#config = config;
    this.#learning = learning;
    this.#events = events;
  }

  /** `state` must be looked at no later than `deadline` (clock.now() time). */
  watch(state, deadline) {
    this.#sweeper.watch(state, deadline);
  }

  /** `state` needs no look at its deadline (its socket closed). */
  unwatch(state) {
    this.#sweeper.unwatch(state);
  }

  stop() {
    this.#sweeper.stop();
  }

  /** The socket's own 'timeout' came: the one an expired socket emits is over. */
  timeoutHeard() {
    this.#expiredTimeout.restore(this.#agent);
  }

  // A free socket or a probe reached its deadline.
  #freeDue(state, now) {
    const socket = state.socket;
    if (state.phase !== PHASES.FREE) { // a probe: still open at its bound, it closes
      if (this.#learning.outlived(socket, state, now)) this.#expireFree(socket, state);
      return;
    }
    // The limits may have changed since it was freed (the learning engine decides).
    const next = this.#atDeadline(socket, state, now);
    if (next.action === 'wait') {
      state.setFreeDeadline(state.freedAt + next.timeout);
      this.#sweeper.watch(state, state.freeDeadline);
    } else if (next.action === 'probe') {
      this.removeFromPool(socket, state);
      this.#startProbe(socket, state, next.bound);
    } else {
      this.#expireFree(socket, state);
    }
  }

  /**
   * The check before reuse found a free socket's deadline passed before the
   * sweep (the event loop was late): as at its deadline, the first of its
   * origin to reach a learned limit becomes the probe.
   */
  deadlinePassed(socket, state) {
    const now = clock.now();
    const next = state === undefined ? null : this.#atDeadline(socket, state, now);
    if (next?.action === 'probe') {
      this.#sweeper.unwatch(state);
      this.#startProbe(socket, state, next.bound);
    } else {
      this.#expireFree(socket, state);
    }
  }

  // The first socket of its origin to reach a learned limit, out of the
  // pool already, stays open as a probe; core's own timer is off meanwhile.
  #startProbe(socket, state, bound) {
    if (socket.timeout > 0) socket.setTimeout(0);
    this.#sweeper.watch(state, this.#learning.startProbe(socket, state, bound));
  }

  #atDeadline(socket, state, now) {
    return this.#learning.engine.atDeadline(state.pool, this.#uncapped(socket, state, now), state.serverTimeout,
      this.#config.serverTimeoutMargin, state.freeDeadline - state.freedAt);
  }

  /**
   * A limit became confirmed: free sockets of `pool` freed without it (while
   * a probe tried it) are capped now.
   */
  tighten(pool) {
    const free = this.#agent.freeSockets[pool];
    if (free === undefined) return;
    const now = clock.now();
    for (const socket of free) {
      const state = stateOf(socket);
      if (state === undefined || state.phase !== PHASES.FREE) continue;
      const deadline = state.freedAt + this.freeTimeout(socket, state, now);
      if (deadline < state.freeDeadline) {
        state.setFreeDeadline(deadline);
        this.#sweeper.watch(state, deadline);
      }
    }
  }

  /** How long the socket may stay idle (the learning engine decides); its state's limitedBy says which limit did. */
  freeTimeout(socket, state, now) {
    const uncapped = this.#uncapped(socket, state, now);
    const allowed = this.#learning.engine.freeTimeout(state.pool, uncapped, state.serverTimeout, this.#config.serverTimeoutMargin);
    if (allowed.limitedBy !== null) state.limitBy(allowed.limitedBy);
    return allowed.timeout;
  }

  // The free timeout from options, the per-socket override and the TTL
  // (Infinity: none); its state's limitedBy says which.
  #uncapped(socket, state, now) {
    const config = this.#config;
    const base = socketFreeTimeout(socket, config.freeSocketTimeout, debug);
    const ttl = config.socketActiveTTL;
    const ttlLeft = ttl > 0 ? ttl - (now - state.createdAt) : Infinity;
    const uncapped = base === 0 ? Infinity : base;
    if (ttlLeft < uncapped) {
      state.limitBy('ttl');
      return ttlLeft;
    }
    state.limitBy('freeSocketTimeout');
    return uncapped;
  }

  /**
   * A free socket reached its deadline. As agentkeepalive's, it emits
   * 'timeout' once it has left the pool and can no longer be written, so a
   * listener sees what agentkeepalive shows it; our own listener sees a
   * socket we closed and lets it be.
   */
  #expireFree(socket, state) {
    this.#events.socketTimedOut(state);
    this.retire(socket, state, CLOSE_REASONS.FREE_TIMEOUT);
    this.#expiredTimeout.emit(this.#agent, socket);
  }

  /** A free socket closes before its time: out of the pool, then destroyed. */
  retire(socket, state, reason) {
    this.removeFromPool(socket, state);
    this.close(socket, state, reason);
  }

  close(socket, state, reason) {
    state?.markClosing(reason); // a socket put in the pool by hand has no state
    if (debug.enabled) debug('%s closing: %s', nameOf(socket), reason);
    socket.destroy();
  }

  /**
   * Core takes a socket out of its free pool only on 'close', which comes a
   * tick or more after destroy(); until then addRequest could hand it out.
   */
  removeFromPool(socket, state) {
    this.#sweeper.unwatch(state);
    takeOutOfPool(this.#agent.freeSockets, state.pool, socket);
  }
}

module.exports = { Expiry };
