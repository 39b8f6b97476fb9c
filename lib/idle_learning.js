'use strict';

// Learning the idle limit of servers that do not announce one, and checking
// it as it is used: observes the server's closes of idle sockets and the
// collisions (a request on a reused socket failing before any byte of its
// response), and keeps the probes (the first socket of an origin to reach
// its learned limit, kept out of the pool and watched). The rule itself is
// pure and lives in lib/server_limits.js; this module applies it to sockets.
// It closes nothing itself: the agent does, when its sweep finds a probe due.
const debug = require('debug')('steady-agent');
const { ServerLimits } = require('./server_limits');
const { SOCKET_NAME } = require('./constants');
const { roundMs } = require('./clock');

class IdleLearning {
  #enabled;
  #limits;
  #events;
  // Per pool, the one socket taken out of the pool at the learned limit and
  // kept open to see when the server closes it.
  #probes = new Map();

  /**
   * @param {boolean} enabled learnServerTimeout
   * @param {import('./events').PoolEvents} events told when a limit changes
   */
  constructor(enabled, events) {
    this.#enabled = enabled;
    this.#events = events;
    this.#limits = new ServerLimits(256, (origin) => events.serverIdleLimitChanged(origin, undefined, 'evicted'));
  }

  /** The learned idle limit of `pool` in ms, or undefined. */
  limitOf(pool) {
    return this.#limits.size > 0 ? this.#limits.get(pool) : undefined;
  }

  /** `{ origin: ms }` for every learned limit in force. */
  toJSON() {
    return this.#limits.toJSON();
  }

  // ---- observations ----------------------------------------------------------

  /** The socket closed while idle, after `idleMs` ms in the pool. */
  closedIdle(socket, state, idleMs, now) {
    this.#observe(socket, state, idleMs, false, now);
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
    state.learnedFrom = true;
    const pool = state.pool;
    const before = this.#limits.peek(pool);
    const learned = this.#limits.observe(pool, idle, now, collision);
    if (debug.enabled) debug('%s closed by the server after %d ms idle%s: %s', socket[SOCKET_NAME], roundMs(idle), collision ? ' (a request failed on it)' : '', learned);
    const after = this.#limits.peek(pool);
    if (after !== before) this.#events.serverIdleLimitChanged(pool, after, collision ? 'collision' : learned);
  }

  // ---- probes --------------------------------------------------------------------

  /** The socket reached its free deadline: should it become its origin's probe? */
  wantsProbe(state) {
    return state.limitedBy === 'learned' && !this.#probes.has(state.pool);
  }

  /**
   * The socket (already out of the pool) becomes its origin's probe: open,
   * where no request can get it, until the server closes it (an observation)
   * or its bound passes. Returns its new deadline.
   */
  startProbe(socket, state) {
    this.#probes.set(state.pool, socket);
    const deadline = state.startProbe();
    if (debug.enabled) debug('%s reached the learned idle limit: out of the pool, watched for %d ms idle', socket[SOCKET_NAME], roundMs(state.probeBound));
    return deadline;
  }

  /**
   * The socket closed at `now`. One that closes while idle (in the pool or a
   * probe) was closed by the server (a FIN, or a reset: an error, then a
   * close), unless the agent closed it; one whose server's FIN came before
   * the response ('socket hang up') collided. Either is an observation.
   */
  socketClosed(socket, state, now) {
    if (state.idle) {
      this.closedIdle(socket, state, now - state.freedAt, now);
      state.closedByServer();
    } else if (socket.readableEnded) {
      this.collision(socket, state, now);
      state.closedByServer();
    }
    this.closed(socket, state);
  }

  /** The socket closed: it is no longer its origin's probe. */
  closed(socket, state) {
    if (this.#probes.size > 0 && this.#probes.get(state.pool) === socket) this.#probes.delete(state.pool);
  }

  /**
   * The probe reached its deadline still open at `now`: it outlived the
   * learned limit as long as it may wait, so the limit was wrong and is
   * forgotten. Returns true when `socket` was its origin's probe (the agent
   * then closes it).
   */
  outlived(socket, state, now) {
    const pool = state.pool;
    if (this.#probes.get(pool) !== socket) return false;
    this.#probes.delete(pool);
    if (debug.enabled) debug('%s probe still open after %d ms idle: learned limit forgotten', socket[SOCKET_NAME], roundMs(now - state.freedAt));
    this.#limits.forget(pool);
    this.#events.serverIdleLimitChanged(pool, undefined, 'probe');
    return true;
  }

  /** The probes, for maxTotalSockets: each holds a place (lib/total_limit.js). */
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
