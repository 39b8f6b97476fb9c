'use strict';

// The learning engine: one per agent or dispatcher, the same for every
// transport and for the pool model of the tests. Facts in (a socket reused
// after t ms idle and answered or not, closed by the server after t ms idle,
// a request failing in flight, a probe still open, a close of our own);
// decisions out (how long a freed socket may idle, what happens at its
// deadline, whether it becomes the origin's probe, and what to publish, and
// why). Pure: no socket (a probe is the caller's opaque handle), no clock
// (times are given), no I/O. The counting is server_limits.js's; the
// deadlines are free_timeout.js's.
const { ServerLimits } = require('./server_limits');
const { idleAllowance, atDeadline, capOf, TRIAL_EXTRA_MIN_MS } = require('./free_timeout');

/**
 * A verdict: what a fact did (`outcome`, `why`: server_limits.js), the limit
 * held now (`ms`, or null) and how sure (`confidence`), and `tighten`: a
 * limit was confirmed or lowered, so the origin's free sockets freed
 * without it must be capped now.
 */
function verdict(record, learned) {
  const limit = record?.limit;
  const confirmed = limit !== undefined && record.confirmed;
  return {
    outcome: learned.outcome,
    why: learned.why,
    ms: limit === undefined ? null : limit,
    confidence: limit === undefined ? null : (confirmed ? 'confirmed' : 'tentative'),
    tighten: confirmed && (learned.outcome === 'confirmed' || learned.outcome === 'lowered'),
  };
}

class LearningEngine {
  #enabled;
  #limits;
  // Per origin, the one probe out: the caller's handle (a socket, a trial).
  #probes = new Map();

  /**
   * @param {boolean} enabled learnServerTimeout: off, facts teach nothing
   * @param {(origin: string) => void} [onEvict] told of an origin whose
   *   limit was dropped to make room for another
   */
  constructor(enabled, onEvict = undefined) {
    this.#enabled = enabled;
    this.#limits = new ServerLimits(256, onEvict);
  }

  /** learnServerTimeout: whether facts teach anything. */
  get enabled() {
    return this.#enabled;
  }

  // ---- facts -------------------------------------------------------------------

  /** A request reused a socket of `origin` after `idleMs` idle and got its response. */
  reused(origin, idleMs) {
    if (!this.#enabled) return null;
    return this.#verdict(origin, this.#limits.survived(origin, idleMs));
  }

  /**
   * A request sent on a socket of `origin` reused after `idleMs` idle failed
   * before any byte of its response: the server had closed it (or reset the
   * request: the counts tell which). `hinted`: its Keep-Alive timeout, ms.
   */
  collided(origin, idleMs, now, hinted) {
    if (!this.#enabled) return null;
    return this.#verdict(origin, this.#limits.died(origin, { idleMs, now, collision: true, hinted }));
  }

  /**
   * The server closed a socket of `origin` that sat idle `idleMs`, in the
   * pool or as the probe: `handle` is the caller's handle of the socket, and
   * if it was the probe, it is one no longer.
   */
  closedIdle(origin, idleMs, now, hinted, handle = undefined) {
    const probe = handle !== undefined && this.endProbe(origin, handle);
    if (!this.#enabled) return null;
    return this.#verdict(origin, this.#limits.died(origin, { idleMs, now, collision: false, hinted, probe }));
  }

  /**
   * A request in flight on a socket of `origin` failed as its connection
   * closed, not a collision: a fault. Returns a verdict only when it undid
   * what a close at the same moment taught (a restart).
   */
  failedInFlight(origin, now) {
    if (!this.#enabled) return null;
    const before = this.#limits.limitOf(origin);
    const learned = this.#limits.fault(origin, now);
    return this.#limits.limitOf(origin) === before ? null : this.#verdict(origin, learned);
  }

  /**
   * The agent closed a socket of `origin` itself (its free timeout, close(),
   * destroy(), a created fetch's close()): never evidence, on any transport.
   */
  ownClose() {
    return null;
  }

  // ---- probes ------------------------------------------------------------------

  /** `handle` (the caller's: a socket, a trial) is now the probe of `origin`. */
  startProbe(origin, handle) {
    this.#probes.set(origin, handle);
  }

  /** The probe of `origin`, or undefined. */
  probeOf(origin) {
    return this.#probes.size > 0 ? this.#probes.get(origin) : undefined;
  }

  /** `handle` is no longer a probe (it closed). Returns whether it was. */
  endProbe(origin, handle) {
    if (this.#probes.size === 0 || this.#probes.get(origin) !== handle) return false;
    this.#probes.delete(origin);
    return true;
  }

  /**
   * The probe `handle` of `origin` is still open after `idleMs` idle, its
   * bound: the server keeps idle sockets longer than the limit, which is
   * forgotten. Returns { wasProbe, verdict } (verdict null: nothing changed).
   * The caller closes the probe: it has idled past anything the server was
   * seen to allow, and a request that took it could meet the server's close
   * (each tentative limit costs one connection).
   */
  probeOutlived(origin, handle, idleMs) {
    if (!this.endProbe(origin, handle)) return { wasProbe: false, verdict: null };
    if (!this.#enabled) return { wasProbe: true, verdict: null };
    return { wasProbe: true, verdict: this.#verdict(origin, this.#limits.survived(origin, idleMs, true, TRIAL_EXTRA_MIN_MS)) };
  }

  /**
   * The trial `handle` of `origin` (a probe kept by time alone: the undici
   * transport cannot keep a socket out of its pool) ended with nothing
   * confirming the limit: it is forgotten, and no survival is counted.
   */
  trialLapsed(origin, handle) {
    if (!this.endProbe(origin, handle) || !this.#enabled) return null;
    return this.#verdict(origin, this.#limits.lapse(origin));
  }

  /** Every probe's handle. */
  probes() {
    return this.#probes.values();
  }

  /** Every probe's handle, taken: the caller closes them. */
  takeProbes() {
    const probes = [...this.#probes.values()];
    this.#probes.clear();
    return probes;
  }

  // ---- decisions ---------------------------------------------------------------

  /**
   * How long a socket of `origin` freed now may stay idle, and which limit
   * decided ('hint', 'learned', or null: `uncapped` did).
   * @param {number} uncapped the free timeout from options and TTL (Infinity: none)
   * @param {number|undefined} hinted the server's Keep-Alive timeout in ms
   * @param {number} margin serverTimeoutMargin
   */
  freeTimeout(origin, uncapped, hinted, margin) {
    const cap = this.#limits.anyInForce ? capOf(this.#limits.peek(origin), this.#probes.size > 0 && this.#probes.has(origin)) : undefined;
    return idleAllowance(uncapped, hinted, cap, margin);
  }

  /**
   * A free socket of `origin` reached its deadline, having been allowed
   * `allowedMs`: { action: 'expire' }, { action: 'wait', timeout } (a limit
   * was forgotten), or { action: 'probe', bound } (the caller makes it the
   * probe, open until `bound` ms idle, and calls startProbe).
   */
  atDeadline(origin, uncapped, hinted, margin, allowedMs) {
    const record = this.#limits.anyInForce ? this.#limits.peek(origin) : undefined;
    return atDeadline(uncapped, hinted, record, this.#probes.size > 0 && this.#probes.has(origin), margin, allowedMs);
  }

  /**
   * How long a socket of `origin` may have idled for a request that cannot
   * be sent again after a collision (not idempotent and without a key, or a
   * body read once) to take it, in ms (Infinity: no limit). Every learned
   * limit in doubt caps it: one on trial that caps no other socket, and one
   * whose trial lapsed with nothing seen (the undici transport, which keeps
   * no probe). The other requests may take such a socket: a collision
   * costs them a resend, and tells whether the limit was right.
   */
  strictFreeTimeout(origin, uncapped, hinted, margin) {
    if (!this.#enabled || this.#limits.size === 0) return Infinity;
    const doubted = this.#limits.doubted(origin);
    return doubted === undefined ? Infinity : idleAllowance(uncapped, hinted, doubted, margin).timeout;
  }

  /**
   * A request that cannot be sent again was kept off a socket of `origin`
   * idle past a lapsed limit (the caller closed the socket). Returns true
   * when that ended the doubt: the next ones take such sockets too.
   */
  keptOff(origin) {
    return this.#enabled && this.#limits.keptOff(origin);
  }

  /** The learned limit of `origin` in force, in ms, or undefined. */
  limitOf(origin) {
    return this.#limits.limitOf(origin);
  }

  /** The counts behind the estimate of `origin`: [{ idleMs, survived, died }]. */
  evidenceOf(origin) {
    return this.#limits.size > 0 ? (this.#limits.peek(origin)?.evidence.toJSON() ?? []) : [];
  }

  /** `{ origin: ms }` for every learned limit in force. */
  toJSON() {
    return this.#limits.toJSON();
  }

  #verdict(origin, learned) {
    return learned === null ? null : verdict(this.#limits.peek(origin), learned);
  }
}

module.exports = { LearningEngine };
