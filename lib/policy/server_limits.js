'use strict';

// What each server allows an idle connection, learned by counting. Pure: it
// is given facts (idle times a socket survived or died at, the server's
// hint, the time) and returns verdicts; it holds no socket and reads no
// clock. The learning engine (learning_engine.js) is its only caller.
//
// Per origin, a small histogram of idle times: how often a socket survived
// that long (a reuse that got its response, a probe still open) and how
// often one died there (the server closed it in the pool or as a probe, or
// a request sent on it failed before any byte of its response). A real idle
// limit kills nearly every socket that idles past it and none that idles
// less; a fault (a restart, a reset request) kills one now and then at
// whatever idle time the traffic has. So a close at t is believed only where
// the deaths about t outweigh half the survivals at t or longer (those well
// past t count twice, and past the server's own close of an idle socket at
// all: no limit at t allows them), and a limit
// is confirmed only by two trials of it (its probe, or a socket idle as long,
// dying there). Agreement alone proves nothing: at a steady rhythm every
// fault comes at the same idle time.
//
// The states and what moves them (each row is a test in
// test/server-limits.test.js):
//
// | state        | fact                                          | when                                   | next              | outcome   |
// |--------------|-----------------------------------------------|----------------------------------------|-------------------|-----------|
// | any          | a close at t                                  | survivals at t or longer dominate      | as it was         | refused   |
// | any          | a close at t < HINT_TRUST of the hint          | however many agree                     | as it was         | refused   |
// | any          | a close at t < MIN_LIMIT_MS                   | however many agree                     | as it was         | refused   |
// | unknown      | a close at t                                  | deaths dominate                        | tentative t       | learned   |
// | tentative L  | a trial: its probe, or a socket idle L, dies about L | the first                       | tentative L       | held      |
// | tentative L  | a trial                                       | the second                             | confirmed L       | confirmed |
// | tentative L  | a close below L, not a trial                  | deaths dominate                        | tentative t       | lowered   |
// | confirmed L  | a close below L                               | one close near t                       | confirmed L       | held      |
// | confirmed L  | a close below L                               | closes agree near t, outnumber survivals | confirmed t     | lowered   |
// | confirmed L  | a close past L, not its probe                 | the closes at L still dominate         | as it was         | held      |
// | confirmed L  | its probe closed past L                       | -                                      | tentative t       | raised    |
// | limit L      | a close past L                                | deaths dominate                        | tentative t       | raised    |
// | any          | closes within BURST_WINDOW, agreeing          | one close: a trial at most             | as before         | burst     |
// | any          | a burst at other idle times, or with a request in flight | teaches nothing             | as before         | restart   |
// | limit L      | a reuse answered well past L, a probe open past L | -                                  | unknown           | refuted   |
// | limit L      | its trial lapsed (no probe kept: undici)      | -                                      | unknown, L lapsed | refuted   |
// | unknown, L lapsed | a reuse answered past L                  | beyond agreement                       | unknown           | (none)    |
// | unknown, L lapsed, was tentative | a request that cannot be sent again kept off a socket past L | the DOUBT_KEPT_OFF-th | unknown | (none) |
// | unknown, L lapsed | a close at L or past it                  | deaths dominate                        | confirmed L       | confirmed |
// | any          | a close the agent made                        | -                                      | as it was         | (none)    |
//
// Every close weighed decays the counts, so a server that changed is
// believed after a few closes, and the histogram stays small: at most
// MAX_BUCKETS idle times, its total weight at most HISTORY.

const { TUNING } = require('./learning_tuning');
const { Evidence, agree } = require('./idle_evidence');

const STATES = Object.freeze({ UNKNOWN: 'unknown', TENTATIVE: 'tentative', CONFIRMED: 'confirmed' });

const ms = (n) => `${Math.round(n)} ms`;
const times = (n) => {
  const rounded = Math.round(n * 10) / 10;
  return rounded === 1 ? '1 time' : `${rounded} times`;
};

/** One origin's learning. Read by the engine (limit, confirmed, state); written only here. */
class OriginLimit {
  limit = undefined; // ms, in force
  confirmed = false;
  fromCollision = false; // a tentative limit a failed request alone set
  refuted = undefined; // ms: a limit whose trial lapsed, with nothing seen either way
  lapsedConfirmed = false; // that limit was confirmed when it lapsed
  keptOff = 0; // requests that cannot be sent again kept off sockets past it since
  trials = 0; // deaths that bore the tentative limit out
  evidence = new Evidence();
  burstAt = -Infinity; // when the current burst's last close came
  burstIdle = 0; // the idle time of the burst's first close
  burstSize = 0;
  burstRestart = false;
  burstBucket = null; // where the burst's first close was counted
  before = null; // the limit before the current burst began

  get state() {
    if (this.limit === undefined) return STATES.UNKNOWN;
    return this.confirmed ? STATES.CONFIRMED : STATES.TENTATIVE;
  }

  restore([limit, confirmed, fromCollision, trials]) {
    this.set(limit, confirmed, fromCollision);
    this.trials = trials;
  }

  set(limit, confirmed, fromCollision = false) {
    if (limit !== this.limit || confirmed) this.trials = 0;
    if (limit !== undefined) this.refuted = undefined;
    this.limit = limit;
    this.confirmed = confirmed;
    this.fromCollision = fromCollision;
  }
}

/**
 * Whether a close after `idle` confirms the limit in force. On a tentative
 * limit, that is the trial's verdict: its probe, or a socket that idled as
 * long as the limit, died about there. On a confirmed one, more of the
 * same. A close earlier than that is as likely another fault.
 */
function confirms(state, idle, probe) {
  const limit = state.limit;
  return limit !== undefined && agree(idle, limit) && (state.confirmed || probe || idle >= limit);
}

/**
 * What a fact did. `outcome`: 'learned' (a tentative limit), 'confirmed',
 * 'raised', 'lowered', 'held', 'refused', 'burst', 'restart', 'refuted';
 * `why` says why in words.
 */
const result = (outcome, why) => ({ outcome, why });

/**
 * Learned idle limits per origin. Bounded: the least recently used origin is
 * dropped once `capacity` origins are known.
 */
class ServerLimits {
  #origins = new Map();
  // Origins with a limit in force: while none has, the deadlines need no look.
  #inForce = 0;
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

  /** Origins with a record (cheap: lets the caller skip peek()). */
  get size() {
    return this.#origins.size;
  }

  /** The origin's record (OriginLimit), or undefined, leaving the LRU order as it is. */
  peek(origin) {
    return this.#origins.get(origin);
  }

  /** Whether any origin has a limit in force (cheap). */
  get anyInForce() {
    return this.#inForce > 0;
  }

  /** The limit in force for `origin` in ms, or undefined. */
  limitOf(origin) {
    return this.#inForce > 0 ? this.#origins.get(origin)?.limit : undefined;
  }

  // Keeps #inForce: `state` had a limit before a fact (`had`), and may not now.
  #counted(state, had, verdict) {
    const has = state.limit !== undefined;
    if (has !== had) this.#inForce += has ? 1 : -1;
    return verdict;
  }

  /**
   * A socket of `origin` survived `idleMs` of idle time: a reuse that got its
   * response, or (`probe`) a probe still open at its bound. Past the limit
   * in force (beyond agreement; for a probe, past it at all, a millisecond
   * of timer rounding aside) the limit is wrong and is forgotten: returns
   * the result then, or null.
   */
  survived(origin, idleMs, probe = false, probeSlack = 0) {
    // Within a millisecond, a socket handed on from request to request: no idle time to speak of.
    if (!(idleMs >= 1)) return null;
    const state = this.#touch(origin);
    state.evidence.survived(idleMs);
    const limit = state.limit;
    if (limit === undefined) {
      // A lapsed limit a socket outlived is no longer in doubt: it was wrong.
      if (state.refuted !== undefined && idleMs > state.refuted && !agree(idleMs, state.refuted)) state.refuted = undefined;
      return null;
    }
    if (probe ? idleMs + 1 < limit + probeSlack : idleMs <= limit || agree(idleMs, limit)) return null;
    state.refuted = undefined;
    state.set(undefined, false);
    this.#inForce--;
    return result('refuted', probe ? `a probe was still open after ${ms(idleMs)} idle` : `a reuse after ${ms(idleMs)} idle got its response`);
  }

  /**
   * The trial of `origin`'s limit ended with nothing confirming it, where no
   * socket could be kept open to see (the undici transport): the limit is
   * forgotten, and the next sockets idle past it. Nothing survived, so
   * nothing is counted; a socket that then dies about there confirms it.
   */
  lapse(origin) {
    const state = this.#origins.get(origin);
    if (state === undefined || state.limit === undefined) return null;
    state.refuted = state.limit;
    state.lapsedConfirmed = state.confirmed;
    state.keptOff = 0;
    state.set(undefined, false);
    this.#inForce--;
    return result('refuted', 'no close confirmed it within its trial');
  }

  /**
   * The limit of `origin` a request that cannot be sent again keeps to (ms,
   * or undefined): the one in force, capping other sockets or not, or one
   * whose trial lapsed, until a socket outlives it, a limit is learned, or
   * (a tentative one) DOUBT_KEPT_OFF requests were kept off sockets past it.
   */
  doubted(origin) {
    const state = this.#origins.get(origin);
    if (state === undefined) return undefined;
    if (state.limit !== undefined) return state.limit;
    if (state.refuted === undefined || !(state.lapsedConfirmed || state.keptOff < TUNING.DOUBT_KEPT_OFF)) return undefined;
    return state.refuted;
  }

  /** A request that cannot be sent again was kept off a socket past the lapsed limit: true when that ended the doubt. */
  keptOff(origin) {
    const state = this.#origins.get(origin);
    if (state === undefined || state.limit !== undefined || state.refuted === undefined || state.lapsedConfirmed) return false;
    return ++state.keptOff === TUNING.DOUBT_KEPT_OFF;
  }

  /**
   * The server of `origin` closed a socket idle for `fact.idleMs`, at
   * `fact.now` (a monotonic time).
   * @param {string} origin
   * @param {{ idleMs: number, now: number, collision?: boolean, hinted?: number, probe?: boolean }} fact
   *   `collision`: found by a request sent on it; `hinted`: the server's
   *   Keep-Alive timeout in ms; `probe`: it was the origin's probe
   * @returns {{ outcome: string, why: string }|null} null: a close within a
   *   millisecond of its response, not an idle limit
   */
  died(origin, fact) {
    const idle = fact.idleMs;
    if (!(idle >= 1)) return null;
    const now = fact.now;
    const state = this.#touch(origin, true);
    const had = state.limit !== undefined;
    if (now - state.burstAt <= TUNING.BURST_WINDOW) return this.#counted(state, had, this.#joinBurst(state, now, idle));
    state.before = [state.limit, state.confirmed, state.fromCollision, state.trials];
    state.burstAt = now;
    state.burstIdle = idle;
    state.burstSize = 1;
    state.burstRestart = false;
    state.burstBucket = state.evidence.died(idle);
    const weighed = ServerLimits.#weigh(state, idle, fact);
    state.evidence.decay();
    return this.#counted(state, had, weighed);
  }

  /**
   * A request in flight on a socket of `origin` failed as the socket closed,
   * at `now`, and it was not a collision: a fault. With closes at the same
   * moment, a restart; alone, it teaches nothing.
   */
  fault(origin, now) {
    const state = this.#touch(origin, true);
    if (now - state.burstAt <= TUNING.BURST_WINDOW) return this.#counted(state, state.limit !== undefined, this.#joinBurst(state, now, NaN));
    state.before = [state.limit, state.confirmed, state.fromCollision, state.trials];
    state.burstAt = now;
    state.burstIdle = NaN;
    state.burstSize = 1;
    state.burstRestart = true;
    state.burstBucket = null;
    return result('restart', 'a request in flight failed as its connection closed');
  }

  // A close (idle: NaN for a fault) within BURST_WINDOW of the last: one
  // event. Its first close's verdict is undone; closes that agree count as
  // that one close and may confirm what other closes showed, never set a
  // limit alone; any other burst is a restart and teaches nothing.
  #joinBurst(state, now, idle) {
    state.burstAt = now;
    state.burstSize++;
    if (!state.burstRestart && !agree(idle, state.burstIdle)) {
      state.burstRestart = true;
      if (state.burstBucket !== null) state.evidence.undo(state.burstBucket);
      state.burstBucket = null;
    }
    state.restore(state.before);
    const size = state.burstSize;
    if (state.burstRestart) {
      return result('restart', `a restart: ${size} closes at once${Number.isNaN(idle) ? ', a request in flight among them' : ', at different idle times'}`);
    }
    const first = state.burstIdle;
    const [survived, died] = state.evidence.around(first);
    if (confirms(state, first, false) && died > TUNING.DOMINANCE * survived && ServerLimits.#borneOut(state)) {
      state.set(Math.min(first, state.limit), true);
      return result('confirmed', `${size} sockets closed at once after ${ms(first)} idle, as the limit says`);
    }
    return result('burst', `${size} sockets closed at once after ${ms(first)} idle: counted as one close`);
  }

  // One more trial bore the limit out: whether that confirms it.
  static #borneOut(state) {
    if (state.confirmed) return true;
    state.trials++;
    return state.trials >= TUNING.CONFIRM_TRIALS;
  }

  // A single close at `idle`, weighed against the counts.
  static #weigh(state, idle, fact) {
    const hinted = fact.hinted;
    const what = fact.collision ? 'a request failed' : 'the server closed a socket';
    if (idle < TUNING.MIN_LIMIT_MS) {
      return result('refused', `${what} after ${ms(idle)} idle, sooner than any server's idle limit: a fault`);
    }
    if (hinted !== undefined && idle < hinted * TUNING.HINT_TRUST && !confirms(state, idle, fact.probe === true)) {
      // Servers honour the hint they send: a close far below it is a fault,
      // however many agree there. At a steady rhythm faults agree (a
      // restart's closes of idle sockets as much as resets), and a limit
      // believed below the rhythm opens a connection a request, each open
      // to a restart that Node's agent, reusing, escapes. Node's agent
      // believes the hint alone; so does this, below HINT_TRUST of it.
      return result('refused', `${what} after ${ms(idle)} idle, far below the announced timeout of ${ms(hinted)}: a fault`);
    }
    const [survived, died] = state.evidence.around(idle, fact.collision === true);
    if (!(died > TUNING.DOMINANCE * survived)) {
      return result('refused', `${what} after ${ms(idle)} idle, where reuses survived as long ${times(survived)} and sockets died ${times(died)}: a fault`);
    }
    const limit = state.limit;
    const refuted = state.refuted;
    if (limit === undefined && refuted !== undefined && agree(idle, refuted) && idle >= refuted) {
      state.set(Math.min(idle, refuted), true);
      return result('confirmed', `${what} after ${ms(idle)} idle, as long as a limit whose trial lapsed: it was right`);
    }
    if (limit === undefined) {
      state.set(idle, false, fact.collision === true);
      return result('learned', `${what} after ${ms(idle)} idle (tentative: a probe will tell)`);
    }
    if (confirms(state, idle, fact.probe === true)) {
      if (!ServerLimits.#borneOut(state)) {
        return result('held', `${what} after ${ms(idle)} idle, as the tentative limit says (${state.trials} of ${TUNING.CONFIRM_TRIALS} trials)`);
      }
      state.set(Math.min(limit, idle), true);
      return result('confirmed', `${what} after ${ms(idle)} idle, as the limit says, and no reuse survived as long`);
    }
    if (idle > limit) {
      // A later close raises a tentative limit: the server kept a socket
      // that long. A confirmed one stands where its closes still outweigh
      // the survivals there: one late close (a server whose timers ran
      // late) is not a better bound than many early ones.
      // Its probe is another matter: kept past the limit to try it, it lived
      // to t, which no limit at L allows; the closes at L were faults.
      const [survivedAt, diedAt] = state.evidence.around(limit);
      if (state.confirmed && fact.probe !== true && diedAt > TUNING.DOMINANCE * survivedAt) {
        return result('held', `${what} after ${ms(idle)} idle, later than the limit; the closes at ${ms(limit)} still stand`);
      }
      state.set(idle, false);
      return result('raised', `the server kept a socket ${ms(idle)}`);
    }
    if (!state.confirmed) {
      state.set(idle, false, fact.collision === true);
      return result('lowered', `${what} after ${ms(idle)} idle (tentative: a probe will tell)`);
    }
    if (died > TUNING.LOWER_DOMINANCE * survived && state.evidence.diedNear(idle) >= TUNING.CONFIRM_WEIGHT) {
      state.set(idle, true);
      return result('lowered', `closes agree after ${ms(idle)} idle, below the confirmed limit, and no reuse survived as long`);
    }
    return result('held', `one close after ${ms(idle)} idle, below the confirmed limit: counted, not believed yet`);
  }

  // The origin's record, made if needed. A close marks it used (the least
  // recently used is the one dropped); a survival, on every reuse, does not.
  #touch(origin, used = false) {
    let state = this.#origins.get(origin);
    if (state === undefined) {
      state = new OriginLimit();
      this.#origins.set(origin, state);
      if (this.#origins.size > this.#capacity) this.#evictOldest();
    } else if (used) {
      this.#origins.delete(origin);
      this.#origins.set(origin, state);
    }
    return state;
  }

  #evictOldest() {
    const [oldest, dropped] = this.#origins.entries().next().value;
    this.#origins.delete(oldest);
    if (dropped.limit !== undefined) this.#inForce--;
    if (dropped.limit !== undefined && this.#onEvict !== undefined) this.#onEvict(oldest);
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

module.exports = { ServerLimits, Evidence, agree, TUNING, STATES };
