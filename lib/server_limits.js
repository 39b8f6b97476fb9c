'use strict';

// What each server allows an idle connection, and how long the agent may
// therefore keep a socket idle. Pure: it is given times and observations and
// answers; it holds no socket and reads no clock (test/server-limits.test.js
// tests it without sockets).
//
// Servers that announce their limit (Keep-Alive: timeout=N) are taken at
// their word, less serverTimeoutMargin. Servers that announce nothing are
// learned from what they do: an observation is a close, by the server, of
// one of our sockets after it sat idle t ms: either it closed the socket in
// the pool, or a request sent on the socket after t ms idle failed before
// any byte of its response (the collision itself). Observations are not all
// idle limits, so per origin:
//
// - A burst: closes of idle sockets within BURST_WINDOW ms of each other are
//   one event. If their idle times agree (sockets freed together, closed
//   together at the limit) the burst is one observation. If they differ, it
//   is a restart or a drain (server.closeIdleConnections()), not a limit:
//   the whole burst is forgotten, including what its first close taught.
// - Agreement: two idle times agree when they differ by at most
//   max(AGREE_MIN_MS, AGREE_FRACTION of the larger).
// - A first observation (or any one while the limit is only tentative) sets
//   a tentative limit. A second that agrees confirms it.
// - A close later than the limit (by more than the agreement) raises it, to
//   a new tentative limit: the server kept a socket that long.
// - A close earlier than a confirmed limit is held as a candidate and
//   replaces the limit only when a second early close agrees with it: a
//   single early close is not a limit. A collision lowers at once (a request
//   was lost; the next one should not be).
// - Closes right after unsolicited bytes from the server are not
//   observations (the caller leaves them out).
//
// A learned limit is checked as it is used: the first socket of an origin to
// reach it is taken out of the pool (no request can get it) and watched, a
// probe. The server closing the probe is an observation; a probe that stays
// open for the whole free timeout it would have had without the learned
// limit (or PROBE_BOUND_FACTOR times the limit, at least PROBE_BOUND_MIN_MS,
// where that is unbounded) means the limit is wrong, and it is forgotten.

const BURST_WINDOW = 50; // ms
const AGREE_MIN_MS = 50;
const AGREE_FRACTION = 0.1;
// A learned limit keeps sockets at most this fraction of it less: a 300 ms
// limit keeps them 225 ms, not -700 ms.
const SHORT_MARGIN_FRACTION = 0.25;
const PROBE_BOUND_FACTOR = 4;
const PROBE_BOUND_MIN_MS = 10000;

/** True when two idle times are the same limit, give or take timer jitter. */
function agree(a, b) {
  return Math.abs(a - b) <= Math.max(AGREE_MIN_MS, AGREE_FRACTION * Math.max(a, b));
}

/**
 * The margin before a learned limit: serverTimeoutMargin, but never more than
 * a fixed fraction of the limit. (A hinted limit keeps the whole
 * serverTimeoutMargin, as Node's agentKeepAliveTimeoutBuffer does.)
 */
function learnedMargin(limit, serverTimeoutMargin) {
  const proportional = limit * SHORT_MARGIN_FRACTION;
  return proportional < serverTimeoutMargin ? proportional : serverTimeoutMargin;
}

/**
 * How long a socket whose idle time is capped by a learned limit may stay
 * open as a probe: the free timeout it would have had without the learned
 * limit, bounded where that is infinite.
 */
function probeBound(limit, uncapped) {
  if (uncapped !== Infinity) return uncapped;
  return Math.max(PROBE_BOUND_FACTOR * limit, PROBE_BOUND_MIN_MS);
}

/**
 * How long a socket may stay idle, in ms, and which limit decided it:
 * 'hint', 'learned', or null (`uncapped` did).
 * @param {number} uncapped the free timeout from options, the per-socket
 *   override and the TTL (Infinity: no limit)
 * @param {number|undefined} hinted the server's Keep-Alive timeout in ms
 * @param {number|undefined} learned the learned idle limit in ms
 * @param {number} margin serverTimeoutMargin
 */
function idleAllowance(uncapped, hinted, learned, margin) {
  let timeout = uncapped;
  let limitedBy = null;
  if (hinted !== undefined && hinted - margin < timeout) {
    timeout = hinted - margin;
    limitedBy = 'hint';
  }
  if (learned !== undefined) {
    const capped = learned - learnedMargin(learned, margin);
    if (capped < timeout) return { timeout: capped, limitedBy: 'learned' };
  }
  return { timeout, limitedBy };
}

/**
 * How long a socket may stay idle in the pool: the smallest of every limit
 * known for it. Written into `state` (lib/socket_state.js): `limitedBy`, the
 * limit that decided ('freeSocketTimeout', 'ttl', 'hint' or 'learned'), and
 * `probeBound`, how long it may stay open as a probe where the learned limit
 * decided (Infinity otherwise). Returns the timeout in ms (Infinity: none;
 * 0 or less: do not keep the socket).
 * @param {object} state the socket's state; its serverTimeout is the hint
 * @param {number} base the free timeout from options or the per-socket
 *   override (0: no limit)
 * @param {number} ttlLeft ms until socketActiveTTL (Infinity: no TTL)
 * @param {number|undefined} learned the learned idle limit of its origin
 * @param {number} margin serverTimeoutMargin
 */
function freeTimeout(state, base, ttlLeft, learned, margin) {
  let uncapped = base === 0 ? Infinity : base;
  let limitedBy = 'freeSocketTimeout';
  if (ttlLeft < uncapped) {
    uncapped = ttlLeft;
    limitedBy = 'ttl';
  }
  const allowed = idleAllowance(uncapped, state.serverTimeout, learned, margin);
  state.limitedBy = allowed.limitedBy ?? limitedBy;
  // Where the learned limit decided, the socket may become its probe.
  state.probeBound = allowed.limitedBy === 'learned' ? probeBound(learned, uncapped) : Infinity; // Infinity: not kept
  return allowed.timeout;
}

class OriginState {
  limit = undefined; // ms, in force
  confirmed = false;
  candidate = undefined; // an early close held against a confirmed limit
  burstAt = -Infinity; // when the current burst's last close came
  burstIdle = 0; // the idle time of the burst's first close
  burstRestart = false;
  before = null; // the state before the current burst began

  save() {
    return { limit: this.limit, confirmed: this.confirmed, candidate: this.candidate };
  }

  restore(saved) {
    this.limit = saved.limit;
    this.confirmed = saved.confirmed;
    this.candidate = saved.candidate;
  }
}

/**
 * Learned idle limits per origin. Bounded: the least recently used origin is
 * dropped once `capacity` origins are known.
 */
class ServerLimits {
  #origins = new Map();
  #capacity;
  #onEvict;

  /**
   * @param {number} capacity origins kept at most
   * @param {(origin: string) => void} [onEvict] told of an origin whose limit
   *   was dropped to make room
   */
  constructor(capacity = 256, onEvict = undefined) {
    this.#capacity = capacity;
    this.#onEvict = onEvict;
  }

  /** Origins with anything learned (cheap: lets the caller skip get()). */
  get size() {
    return this.#origins.size;
  }

  /** The learned idle limit in ms for `origin`, or undefined. Marks the origin used. */
  get(origin) {
    const state = this.#origins.get(origin);
    if (state === undefined) return undefined;
    this.#origins.delete(origin);
    this.#origins.set(origin, state);
    return state.limit;
  }

  /** The learned idle limit in ms for `origin`, or undefined, leaving the LRU order as it is. */
  peek(origin) {
    return this.#origins.get(origin)?.limit;
  }

  /**
   * The server of `origin` closed a socket idle for `idleMs`, at `now` (a
   * monotonic time). `collision`: the close was found by a request sent on
   * the socket. Returns what the observation did: 'learned', 'confirmed',
   * 'raised', 'lowered', 'held', 'burst' (part of a burst that agrees: no
   * news) or 'restart' (a burst of differing idle times: forgotten).
   */
  observe(origin, idleMs, now, collision = false) {
    // A close within a millisecond of the response is not an idle limit.
    if (!(idleMs >= 1)) return 'ignored';
    const state = this.#touch(origin);
    if (now - state.burstAt <= BURST_WINDOW) {
      state.burstAt = now;
      if (state.burstRestart) return 'restart';
      if (agree(idleMs, state.burstIdle)) {
        if (state.limit !== undefined && idleMs < state.limit) state.limit = idleMs;
        return 'burst';
      }
      state.burstRestart = true;
      state.restore(state.before);
      this.#dropIfEmpty(origin, state);
      return 'restart';
    }
    state.before = state.save();
    state.burstAt = now;
    state.burstIdle = idleMs;
    state.burstRestart = false;
    return ServerLimits.#apply(state, idleMs, collision);
  }

  static #apply(state, idle, collision) {
    const limit = state.limit;
    if (limit === undefined) {
      state.limit = idle;
      state.confirmed = false;
      state.candidate = undefined;
      return 'learned';
    }
    if (agree(idle, limit)) {
      state.limit = Math.min(limit, idle);
      state.confirmed = true;
      state.candidate = undefined;
      return 'confirmed';
    }
    if (idle > limit) {
      state.limit = idle;
      state.confirmed = false;
      state.candidate = undefined;
      return 'raised';
    }
    if (!state.confirmed || collision) {
      state.limit = idle;
      state.confirmed = false;
      state.candidate = undefined;
      return 'lowered';
    }
    if (state.candidate !== undefined && agree(idle, state.candidate)) {
      state.limit = Math.min(idle, state.candidate);
      state.candidate = undefined;
      return 'lowered';
    }
    state.candidate = idle;
    return 'held';
  }

  /**
   * A probe of `origin` stayed open for its whole bound: the server keeps
   * idle sockets longer than the learned limit, which is forgotten.
   */
  forget(origin) {
    const state = this.#origins.get(origin);
    if (state === undefined) return;
    state.limit = undefined;
    state.confirmed = false;
    state.candidate = undefined;
    this.#dropIfEmpty(origin, state);
  }

  #touch(origin) {
    let state = this.#origins.get(origin);
    if (state === undefined) state = new OriginState();
    else this.#origins.delete(origin);
    this.#origins.set(origin, state);
    if (this.#origins.size > this.#capacity) {
      const [oldest, dropped] = this.#origins.entries().next().value;
      this.#origins.delete(oldest);
      if (dropped.limit !== undefined && this.#onEvict !== undefined) this.#onEvict(oldest);
    }
    return state;
  }

  // An origin that teaches nothing more is dropped, unless a burst is still
  // open: its later closes must still be recognised as part of it.
  #dropIfEmpty(origin, state) {
    if (state.limit === undefined && state.candidate === undefined && !state.burstRestart) {
      this.#origins.delete(origin);
    }
  }

  /** `{ origin: ms }` for every origin with a limit in force. */
  toJSON() {
    const limits = {};
    for (const [origin, state] of this.#origins) {
      if (state.limit !== undefined) limits[origin] = Math.round(state.limit);
    }
    return limits;
  }
}

module.exports = {
  ServerLimits,
  idleAllowance,
  freeTimeout,
  learnedMargin,
  probeBound,
  agree,
  BURST_WINDOW,
};
