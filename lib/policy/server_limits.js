'use strict';

// What each server allows an idle connection, and how long a socket may
// therefore stay idle. Pure: it is given facts (idle times, the server's
// hint, what the pool saw alive, the time) and returns decisions; it holds no
// socket, reads no clock and writes into nothing but its own records. The
// agent applies its decisions to sockets (agent/idle_learning.js), and the pool
// model of the tests drives the very same functions on simulated time.
//
// Servers that announce their limit (Keep-Alive: timeout=N) are taken at
// their word, less serverTimeoutMargin. Servers that announce nothing are
// learned from what they do. An observation is a close, by the server, of a
// socket after it sat idle t ms: in the pool, as a probe, or found by a
// request sent on it after t ms idle that failed before any byte of its
// response (a collision). Not every close is a limit: a restart, a reset of
// one request or a drain closes sockets too. So the evidence is weighed:
//
// - Alive: a request reused a socket after t ms idle and got its response,
//   or a probe was still open after t ms: the limit is above t. A close
//   clearly earlier than the longest such t (the caller keeps it per
//   origin; by more than ALIVE_SLACK) is contradicted: not a limit on its
//   own. One about as long is the race itself, and is taken.
// - The hint: a close before half the timeout the server announced is more
//   likely a restart or an error than a limit (servers honour the hint they
//   send): not a limit on its own either.
// - A burst: closes within BURST_WINDOW ms of each other, or a close and a
//   request in flight failing (a fault), are one event. Several sockets
//   closing at once are a restart or a drain, not a limit: whatever the
//   burst's first close taught is undone. Their idle times agreeing (sockets
//   freed together, closed together at the limit) make them one held
//   observation; differing, or with a fault, they teach nothing.
// - Agreement: two idle times agree when they differ by at most
//   max(AGREE_MIN_MS, AGREE_FRACTION of the larger).
// - A contradicted observation, or one early against a confirmed limit, is
//   held: a second observation that agrees with it (at another moment,
//   within CANDIDATE_LIFE), or a collision after longer idle, makes it a
//   confirmed limit.
// - Any other first observation sets a tentative limit; a second that agrees
//   confirms it. A close later than the limit (beyond agreement) raises it,
//   to a tentative limit: the server kept a socket that long.
// - A learned limit caps every socket of its origin, and is tried: the
//   first socket to reach it leaves the pool but stays open, a probe. If the
//   server closes the probe, that is an observation (it agrees: confirmed).
//   If the probe is still open at its bound, the limit was wrong: it is
//   forgotten (held, in case the server drops idle connections without a
//   word and a later collision agrees), and the probe goes back to the pool.
//   A tentative limit's probe waits TRIAL_FACTOR times the limit, so that
//   the verdict comes before the next sockets reach it. A tentative limit a
//   failed request alone set (a reset looks the same) caps only the probe:
//   the other sockets reaching it meanwhile stay. A confirmed limit's probe,
//   the whole free timeout the socket would have had without it, at least as
//   long as a tentative one's (or PROBE_BOUND_FACTOR times the limit, at
//   least PROBE_BOUND_MIN_MS, where that is unbounded).
// - A reuse that got its response after longer than the limit (beyond
//   agreement: a socket freed before the limit was learned) refutes it too.
// - A free socket whose deadline a forgotten limit set stays in the pool
//   for the time it is now allowed.

const { TRIAL_EXTRA_MIN_MS } = require('./free_timeout');

const BURST_WINDOW = 50; // ms
const AGREE_MIN_MS = 20;
const AGREE_FRACTION = 0.1;
// A close before this share of the announced timeout is not a limit alone.
const HINT_TRUST = 0.5;
// A close is contradicted by a reuse seen alive only when it came this much
// earlier: ALIVE_SLACK of the idle time, at least ALIVE_SLACK_MIN_MS. Within
// that, the two are one rhythm across the limit (a request sent a round trip
// later meets the close): the collision is taken, as the first of a race.
const ALIVE_SLACK = 0.05;
const ALIVE_SLACK_MIN_MS = 5;
// How long a held observation waits for a second one: CANDIDATE_LIFE_FACTOR
// times its idle time, at least CANDIDATE_LIFE_MIN_MS.
const CANDIDATE_LIFE_FACTOR = 10;
const CANDIDATE_LIFE_MIN_MS = 60000;

/** True when two idle times are the same limit, give or take timer jitter. */
function agree(a, b) {
  return Math.abs(a - b) <= Math.max(AGREE_MIN_MS, AGREE_FRACTION * Math.max(a, b));
}


/** One origin's learning. Read by the caller (limit, confirmed); written only here. */
class OriginLimit {
  limit = undefined; // ms, in force
  confirmed = false;
  fromCollision = false; // a tentative limit a failed request alone set
  candidate = undefined; // an observation held (ms idle)
  candidateAt = -Infinity;
  burstAt = -Infinity; // when the current burst's last close came
  burstIdle = 0; // the idle time of the burst's first close
  burstMin = 0; // the shortest idle time in the burst
  burstSize = 0;
  burstRestart = false;
  before = null; // the record before the current burst began

  save() {
    return {
      limit: this.limit, confirmed: this.confirmed, fromCollision: this.fromCollision, candidate: this.candidate, candidateAt: this.candidateAt,
    };
  }

  restore(saved) {
    this.limit = saved.limit;
    this.confirmed = saved.confirmed;
    this.fromCollision = saved.fromCollision;
    this.candidate = saved.candidate;
    this.candidateAt = saved.candidateAt;
  }

  set(limit, confirmed, fromCollision = false) {
    this.limit = limit;
    this.confirmed = confirmed;
    this.fromCollision = fromCollision;
    this.candidate = undefined;
    this.candidateAt = -Infinity;
  }

  hold(idle, now) {
    this.candidate = idle;
    this.candidateAt = now;
  }

  /** The held observation, if it is recent enough to count and agrees with `idle`. */
  heldAgrees(idle, now) {
    return this.#heldNow(now) && agree(idle, this.candidate);
  }

  /** The held observation, if it is recent enough to count and at most `idle`. */
  heldBelow(idle, now) {
    return this.#heldNow(now) && this.candidate <= idle;
  }

  #heldNow(now) {
    const held = this.candidate;
    return held !== undefined && now - this.candidateAt <= Math.max(CANDIDATE_LIFE_MIN_MS, CANDIDATE_LIFE_FACTOR * held);
  }
}

const ms = (n) => `${Math.round(n)} ms`;

/**
 * What an observation did. `outcome`: 'learned' (a tentative limit),
 * 'confirmed', 'raised', 'lowered', 'held', 'refused', 'burst', 'restart',
 * 'refuted', 'ignored'; `why` says why in words; `resetAlive`: the caller
 * forgets the longest idle time it saw alive (a limit below it is now
 * accepted: the server changed).
 */
function result(outcome, why, resetAlive = false) {
  return { outcome, why, resetAlive };
}

const IGNORED = result('ignored', 'closed within a millisecond of its response');

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

  /** Origins with a record (cheap: lets the caller skip get()). */
  get size() {
    return this.#origins.size;
  }

  /** The origin's record (OriginLimit), or undefined. Marks the origin used. */
  get(origin) {
    const state = this.#origins.get(origin);
    if (state === undefined) return undefined;
    this.#origins.delete(origin);
    this.#origins.set(origin, state);
    return state;
  }

  /** The origin's record, or undefined, leaving the LRU order as it is. */
  peek(origin) {
    return this.#origins.get(origin);
  }

  /** The limit in force for `origin` in ms, or undefined. */
  limitOf(origin) {
    return this.#origins.get(origin)?.limit;
  }

  /**
   * The server of `origin` closed a socket idle for `fact.idleMs`, at
   * `fact.now` (a monotonic time).
   * @param {string} origin
   * @param {{ idleMs: number, now: number, collision?: boolean,
   *   hinted?: number, aliveMs?: number }} fact `collision`: found by a
   *   request sent on it; `hinted`: the server's Keep-Alive timeout in ms;
   *   `aliveMs`: the longest idle time after which a socket of the origin
   *   was seen alive
   * @returns {{ outcome: string, why: string, resetAlive: boolean }}
   */
  observe(origin, fact) {
    const idle = fact.idleMs;
    // A close within a millisecond of the response is not an idle limit.
    if (!(idle >= 1)) return IGNORED;
    const now = fact.now;
    const state = this.#touch(origin);
    if (now - state.burstAt <= BURST_WINDOW) return this.#joinBurst(origin, state, now, idle);
    this.#openBurst(state, now, idle, false);
    return ServerLimits.#weigh(state, fact);
  }

  /**
   * A request in flight on a socket of `origin` failed as the socket closed,
   * at `now`, and it was not a collision: with closes at the same moment, a
   * restart.
   */
  fault(origin, now) {
    const state = this.#touch(origin);
    if (now - state.burstAt <= BURST_WINDOW) return this.#joinBurst(origin, state, now, NaN);
    this.#openBurst(state, now, NaN, true);
    return result('restart', 'a request in flight failed as its connection closed');
  }

  #openBurst(state, now, idle, restart) {
    state.before = state.save();
    state.burstAt = now;
    state.burstIdle = idle;
    state.burstMin = idle;
    state.burstSize = 1;
    state.burstRestart = restart;
  }

  // A close (idle: NaN for a fault) within BURST_WINDOW of the last: several
  // at once are not a limit. What the burst's first close did is undone;
  // closes that agree are held, as one observation; any other is a restart.
  #joinBurst(origin, state, now, idle) {
    state.burstAt = now;
    state.burstSize++;
    if (idle < state.burstMin) state.burstMin = idle;
    if (!state.burstRestart && !agree(idle, state.burstIdle)) state.burstRestart = true;
    state.restore(state.before);
    if (state.burstRestart) {
      this.#dropIfEmpty(origin, state);
      return result('restart', `a restart: ${state.burstSize} closes at once${Number.isNaN(idle) ? ', a request in flight among them' : ', at different idle times'}`);
    }
    if (state.limit !== undefined && agree(state.burstIdle, state.limit)) {
      if (!state.confirmed) state.set(Math.min(state.limit, state.burstMin), true);
      return result('confirmed', `${state.burstSize} sockets closed at once after ${ms(state.burstIdle)} idle, as the limit says`);
    }
    if (state.heldAgrees(state.burstMin, now)) {
      // A batch like one held before: the same limit twice.
      state.set(Math.min(state.burstMin, state.candidate), true);
      return result('confirmed', `${state.burstSize} sockets closed at once after ${ms(state.burstIdle)} idle, as a close held before`);
    }
    state.hold(state.burstMin, now);
    return result('burst', `${state.burstSize} sockets closed at once after ${ms(state.burstIdle)} idle: held until a later close agrees`);
  }

  // A single observation, weighed against the evidence.
  static #weigh(state, fact) {
    const idle = fact.idleMs;
    const now = fact.now;
    const limit = state.limit;
    if (limit !== undefined && agree(idle, limit)) {
      state.set(Math.min(limit, idle), true);
      return result('confirmed', `a close after ${ms(idle)} idle agrees with the limit`);
    }
    if (limit !== undefined && idle > limit) {
      state.set(idle, false);
      return result('raised', `the server kept a socket ${ms(idle)}`);
    }
    // No limit yet, or a close earlier than the limit.
    const contradiction = ServerLimits.#contradiction(idle, fact);
    if (fact.collision && state.heldBelow(idle, now)) {
      // A request failed after longer than a close held: a server that drops
      // idle connections without a word fails every request past its limit.
      const held = state.candidate;
      state.set(held, true);
      return result(limit === undefined ? 'confirmed' : 'lowered', `a request failed after ${ms(idle)} idle, past a close held after ${ms(held)}`, true);
    }
    if (state.heldAgrees(idle, now)) {
      const lower = Math.min(idle, state.candidate);
      state.set(lower, true);
      return result(limit === undefined ? 'confirmed' : 'lowered', `two closes agree, after ${ms(lower)} idle`, contradiction !== null);
    }
    if (contradiction !== null) {
      state.hold(idle, now);
      return result('refused', contradiction);
    }
    if (limit === undefined) {
      state.set(idle, false, fact.collision === true);
      return result('learned', `${fact.collision ? 'a request failed' : 'the server closed a socket'} after ${ms(idle)} idle (tentative)`);
    }
    if (!state.confirmed) {
      state.set(idle, false, fact.collision === true);
      return result('lowered', `${fact.collision ? 'a request failed' : 'the server closed a socket'} after ${ms(idle)} idle (tentative)`);
    }
    state.hold(idle, now);
    return result('held', `one close after ${ms(idle)} idle, below the confirmed limit: held until another agrees`);
  }

  // Why an observation cannot be a limit on its own, or null.
  static #contradiction(idle, fact) {
    const alive = fact.aliveMs;
    if (alive !== undefined && alive > 0 && idle < alive - Math.max(ALIVE_SLACK_MIN_MS, ALIVE_SLACK * alive)) {
      return `contradicted by a reuse after ${ms(alive)}`;
    }
    const hinted = fact.hinted;
    if (hinted !== undefined && idle < hinted * HINT_TRUST) return `far below the announced timeout of ${ms(hinted)}`;
    return null;
  }

  /**
   * A socket of `origin` was seen alive after `idleMs` ms idle (a reuse that
   * got its response, or a probe still open at its bound), beyond the limit
   * in force: the limit is wrong and is forgotten. Returns the result, or
   * null when the limit stands (there is none, or `idleMs` agrees with it).
   */
  refute(origin, idleMs, now, probe = false) {
    const state = this.#origins.get(origin);
    if (state === undefined || state.limit === undefined) return null;
    const limit = state.limit;
    // A probe open a few ms past the limit (a millisecond of timer rounding
    // aside) shows it wrong: its bound is past the limit by design, unless
    // the free timeout cut it short. A reuse must be beyond agreement.
    if (probe ? idleMs + 1 < limit + TRIAL_EXTRA_MIN_MS : idleMs <= limit || agree(idleMs, limit)) return null;
    state.set(undefined, false);
    state.hold(limit, now);
    return result('refuted', probe ? `a probe was still open after ${ms(idleMs)} idle` : `contradicted by a reuse after ${ms(idleMs)}`);
  }

  #touch(origin) {
    let state = this.#origins.get(origin);
    if (state === undefined) state = new OriginLimit();
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

module.exports = { ServerLimits, agree, BURST_WINDOW };
