'use strict';

// Learning the idle limit of servers that do not announce one, applied to
// sockets: gathers the facts (closes of idle sockets, collisions, requests
// failing in flight, reuses that got their response, probes still open),
// asks the pure rules of server_limits.js what they mean, and keeps the
// probes (one socket per origin, out of the pool, trying a learned limit).
// It closes nothing itself: the agent does, when its sweep finds a probe due.
const debug = require('debug')('steady-agent');
const { ServerLimits } = require('../policy/server_limits');
const { capOf } = require('../policy/free_timeout');
const { SOCKET_NAME } = require('../constants');
const { roundMs } = require('../timers/clock');

class IdleLearning {
  #enabled;
  #limits;
  #events;
  #confirmed;
  // Per pool, the one socket taken out of the pool at the learned limit and
  // kept open to see when the server closes it.
  #probes = new Map();

  /**
   * @param {boolean} enabled learnServerTimeout
   * @param {import('../observe/events').PoolEvents} events told of every observation
   * @param {(pool: string) => void} confirmed told when a limit becomes
   *   confirmed: free sockets freed without it are capped now
   */
  constructor(enabled, events, confirmed) {
    this.#enabled = enabled;
    this.#events = events;
    this.#confirmed = confirmed;
    this.#limits = new ServerLimits(256, (origin) => events.serverIdleLimitChanged(origin, undefined, { outcome: 'evicted', why: 'forgotten to make room for another origin' }));
  }

  /** The learned limit that caps a socket of `pool` freed now, in ms, or undefined. */
  capOf(pool) {
    return this.#limits.size > 0 ? capOf(this.#limits.get(pool), this.#probes.size > 0 && this.#probes.has(pool)) : undefined;
  }

  /** The learned limit of `pool` in force, in ms, or undefined. */
  limitOf(pool) {
    return this.#limits.size > 0 ? this.#limits.limitOf(pool) : undefined;
  }

  /** The origin's record (read only), or undefined. */
  recordOf(pool) {
    return this.#limits.size > 0 ? this.#limits.peek(pool) : undefined;
  }

  /** Whether a probe of `pool` is out. */
  probing(pool) {
    return this.#probes.size > 0 && this.#probes.has(pool);
  }

  /** `{ origin: ms }` for every learned limit in force. */
  toJSON() {
    return this.#limits.toJSON();
  }

  // ---- observations ----------------------------------------------------------

  /**
   * A request reused the socket after `state.idleBeforeReuse` ms idle and
   * got its response: the server's limit is above that. Called as the socket
   * is freed again, only for a reused one.
   */
  alive(state, now) {
    const idle = state.idleBeforeReuse;
    const entry = state.entry;
    if (idle > entry.aliveMs) entry.aliveMs = idle;
    if (this.#limits.size === 0) return;
    const refuted = this.#limits.refute(state.pool, idle, now);
    if (refuted !== null) this.#report(state, refuted);
  }

  /**
   * A request on the socket, reused after sitting idle, failed before any
   * byte of its response: the server closed the socket at about that idle
   * time, as if it had closed it in the pool.
   */
  collision(socket, state, now) {
    const idle = state.idleBeforeReuse;
    if (idle > 0) this.#observe(socket, state, idle, true, now);
  }

  #observe(socket, state, idle, collision, now) {
    if (!this.#enabled || state.closedBy === 'agent' || state.learnedFrom) return;
    // Bytes from the server while idle (Node 22+ core destroys the socket on
    // them) say the server misbehaved, not when it closes idle sockets;
    // after a reuse, bytes mean the response had begun.
    if (socket.bytesRead !== state.bytesReadWhenFreed) return;
    state.markLearnedFrom();
    const learned = this.#limits.observe(state.pool, {
      idleMs: idle, now, collision, hinted: state.serverTimeout, aliveMs: state.entry.aliveMs,
    });
    if (learned.outcome === 'ignored') return;
    if (learned.resetAlive) state.entry.aliveMs = 0;
    if (debug.enabled) debug('%s closed by the server after %d ms idle%s: %s, %s', socket[SOCKET_NAME], roundMs(idle), collision ? ' (a request failed on it)' : '', learned.outcome, learned.why);
    this.#report(state, learned);
  }

  #report(state, learned) {
    const record = this.#limits.peek(state.pool);
    this.#events.serverIdleLimitChanged(state.pool, record, learned);
    if (record !== undefined && record.confirmed && (learned.outcome === 'confirmed' || learned.outcome === 'lowered')) {
      this.#confirmed(state.pool);
    }
  }

  // ---- probes --------------------------------------------------------------------

  /**
   * The socket (already out of the pool) becomes its origin's probe: open,
   * where no request can get it, until the server closes it (an observation)
   * or `bound` ms of idle time pass. Returns its new deadline.
   */
  startProbe(socket, state, bound) {
    this.#probes.set(state.pool, socket);
    const deadline = state.startProbe(bound);
    if (debug.enabled) debug('%s reached the learned idle limit: out of the pool, watched until %d ms idle', socket[SOCKET_NAME], roundMs(bound));
    return deadline;
  }

  /**
   * The socket closed at `now`. One that closes while idle (in the pool or a
   * probe) was closed by the server (a FIN, or a reset: an error, then a
   * close), unless the agent closed it; one whose server's FIN came before
   * the response ('socket hang up') collided; one whose request was in
   * flight and failed otherwise (an error, or the server's FIN after the
   * response began) is a fault: with closes at the same moment, a restart.
   */
  socketClosed(socket, state, now) {
    if (state.idle) {
      this.#observe(socket, state, now - state.freedAt, false, now);
      state.closedByServer();
    } else if (socket.readableEnded || state.errored) {
      if (state.idleBeforeReuse > 0 && socket.bytesRead === state.bytesReadWhenFreed) this.collision(socket, state, now);
      else if (this.#enabled && state.closedBy !== 'agent' && state.requestsFinished < state.requests) this.#limits.fault(state.pool, now);
      state.closedByServer();
    }
    this.closed(socket, state);
  }

  /** The socket closed: it is no longer its origin's probe. */
  closed(socket, state) {
    if (this.#probes.size > 0 && this.#probes.get(state.pool) === socket) this.#probes.delete(state.pool);
  }

  /**
   * The probe reached its bound still open at `now`: the server keeps idle
   * sockets longer than the learned limit, which is forgotten. Returns true
   * when `socket` was its origin's probe (the agent then puts it back in
   * the pool, or closes it when its own free timeout is over).
   */
  outlived(socket, state, now) {
    const pool = state.pool;
    if (this.#probes.get(pool) !== socket) return false;
    this.#probes.delete(pool);
    const idle = now - state.freedAt;
    if (idle > state.entry.aliveMs) state.entry.aliveMs = idle;
    if (debug.enabled) debug('%s probe still open after %d ms idle: learned limit forgotten', socket[SOCKET_NAME], roundMs(idle));
    const refuted = this.#limits.refute(pool, idle, now, true);
    if (refuted !== null) this.#report(state, refuted);
    return true;
  }

  /** The probes, for maxTotalSockets: each holds a place (total_limit.js). */
  probes() {
    return this.#probes.values();
  }

  /** Every probe, taken: the agent closes them (close() and destroy()). */
  takeProbes() {
    const probes = [...this.#probes.values()];
    this.#probes.clear();
    return probes;
  }
}

module.exports = { IdleLearning };
