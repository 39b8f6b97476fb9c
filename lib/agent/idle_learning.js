'use strict';

// The agent's side of learning a server's idle limit: it reads the facts
// off its sockets (closes of idle sockets, collisions, requests failing in
// flight, reuses that got their response, probes still open) and hands them
// to the learning engine (policy/learning_engine.js), which decides. It
// closes nothing itself: the agent does, when its sweep finds a probe due.
const debug = require('debug')('steady-agent');
const { LearningEngine } = require('../policy/learning_engine');
const { SOCKET_NAME } = require('../constants');
const { roundMs } = require('../timers/clock');

class IdleLearning {
  #engine;
  #events;
  #confirmed;

  /**
   * @param {boolean} enabled learnServerTimeout
   * @param {import('../observe/events').PoolEvents} events told of every verdict
   * @param {(pool: string) => void} confirmed told when a limit becomes
   *   confirmed: free sockets freed without it are capped now
   */
  constructor(enabled, events, confirmed) {
    this.#events = events;
    this.#confirmed = confirmed;
    this.#engine = new LearningEngine(enabled, (origin) => events.serverIdleLimitChanged(origin, {
      outcome: 'evicted', why: 'forgotten to make room for another origin', ms: null, confidence: null, tighten: false,
    }));
  }

  /** The engine, whose decisions (free timeouts, deadlines) expiry.js applies. */
  get engine() {
    return this.#engine;
  }

  /** The learned limit of `pool` in force, in ms, or undefined. */
  limitOf(pool) {
    return this.#engine.limitOf(pool);
  }

  /** `{ origin: ms }` for every learned limit in force. */
  toJSON() {
    return this.#engine.toJSON();
  }

  // ---- facts -------------------------------------------------------------------

  /**
   * A request reused the socket after `state.idleBeforeReuse` ms idle and
   * got its response. Called as the socket is freed again, only for a reused one.
   */
  alive(state) {
    const verdict = this.#engine.reused(state.pool, state.idleBeforeReuse);
    if (verdict !== null) this.#report(state, verdict);
  }

  /**
   * A request on the socket, reused after sitting idle, failed before any
   * byte of its response: the server closed the socket at about that idle
   * time, or reset the request (the engine's counts tell which).
   */
  collision(socket, state, now) {
    const idle = state.idleBeforeReuse;
    if (idle > 0 && this.#fresh(socket, state)) this.#heard(socket, state, idle, true, this.#engine.collided(state.pool, idle, now, state.serverTimeout));
  }

  // Whether the socket's close may be weighed: not the agent's own, not
  // weighed already, and no bytes from the server while idle (Node 22+ core
  // destroys the socket on them: the server misbehaved, which says nothing
  // of when it closes idle sockets; after a reuse, bytes mean the response
  // had begun).
  #fresh(socket, state) {
    if (!this.#engine.enabled || state.closedBy === 'agent' || state.learnedFrom || socket.bytesRead !== state.bytesReadWhenFreed) return false;
    state.markLearnedFrom();
    return true;
  }

  #heard(socket, state, idle, collision, verdict) {
    if (verdict === null) return;
    if (debug.enabled) debug('%s closed by the server after %d ms idle%s: %s, %s', socket[SOCKET_NAME], roundMs(idle), collision ? ' (a request failed on it)' : '', verdict.outcome, verdict.why);
    this.#report(state, verdict);
  }

  #report(state, verdict) {
    this.#events.serverIdleLimitChanged(state.pool, verdict);
    if (verdict.tighten) this.#confirmed(state.pool);
  }

  // ---- probes --------------------------------------------------------------------

  /**
   * The socket (already out of the pool) becomes its origin's probe: open,
   * where no request can get it, until the server closes it (an observation)
   * or `bound` ms of idle time pass. Returns its new deadline.
   */
  startProbe(socket, state, bound) {
    this.#engine.startProbe(state.pool, socket);
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
      if (this.#fresh(socket, state)) {
        const idle = now - state.freedAt;
        this.#heard(socket, state, idle, false, this.#engine.closedIdle(state.pool, idle, now, state.serverTimeout, socket));
      }
      state.closedByServer();
    } else if (socket.readableEnded || state.errored) {
      if (state.idleBeforeReuse > 0 && socket.bytesRead === state.bytesReadWhenFreed) this.collision(socket, state, now);
      else if (state.closedBy !== 'agent' && state.requestsFinished < state.requests) this.#heard(socket, state, 0, false, this.#engine.failedInFlight(state.pool, now));
      state.closedByServer();
    }
    this.closed(socket, state);
  }

  /** The socket closed: it is no longer its origin's probe. */
  closed(socket, state) {
    this.#engine.endProbe(state.pool, socket);
  }

  /**
   * The probe reached its bound still open at `now`: the server keeps idle
   * sockets longer than the learned limit, which is forgotten. Returns true
   * when `socket` was its origin's probe; the agent then closes it (the
   * engine's rule).
   */
  outlived(socket, state, now) {
    const idle = now - state.freedAt;
    const { wasProbe, verdict } = this.#engine.probeOutlived(state.pool, socket, idle);
    if (!wasProbe) return false;
    if (debug.enabled) debug('%s probe still open after %d ms idle: learned limit forgotten', socket[SOCKET_NAME], roundMs(idle));
    if (verdict !== null) this.#report(state, verdict);
    return true;
  }

  /** The probes, for maxTotalSockets: each holds a place (total_limit.js). */
  probes() {
    return this.#engine.probes();
  }

  /** Every probe, taken: the agent closes them (close() and destroy()). */
  takeProbes() {
    return this.#engine.takeProbes();
  }
}

module.exports = { IdleLearning };
