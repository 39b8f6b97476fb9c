'use strict';

// The tuning constants of learning a server's idle limit, in one table: the
// counting (server_limits.js, idle_evidence.js), the margins and the probes
// (free_timeout.js). docs/keep-alive-race.md says what each rule does.

/** Every tuning constant of the learning, in one table. */
const TUNING = Object.freeze({
  // ---- counting (server_limits.js, idle_evidence.js) ----
  /** ms: closes this close together are one event */
  BURST_WINDOW: 10,
  /** two idle times agree within max(AGREE_MIN_MS, AGREE_FRACTION of the larger) */
  AGREE_MIN_MS: 5,
  AGREE_FRACTION: 0.1,
  /**
   * A survival counts against a close at t when it lasted at least t less
   * max(SURVIVE_SLACK_MIN_MS, SURVIVE_SLACK of t): a request that went out a
   * round trip earlier than the one that met the close.
   */
  SURVIVE_SLACK: 0.05,
  SURVIVE_SLACK_MIN_MS: 5,
  /**
   * A close is believed when deaths about as long weigh more than DOMINANCE
   * times the survivals as long or longer: a limit kills nearly every socket
   * idle past it (half of them, in a race across it), a fault one in many.
   */
  DOMINANCE: 0.5,
  /**
   * A survival longer than t, beyond agreement, weighs this many reuses
   * against a close at t: a limit at t lets no socket idle that long, where
   * a reuse just short of it may have won the race.
   */
  FAR_SURVIVAL_WEIGHT: 2,
  /**
   * ms: a close sooner than this after a response is a fault, however many
   * agree: no server keeps idle connections so briefly, and its probe, at a
   * rhythm faster than a new connection's handshake, costs a connection for
   * every request until it ends.
   */
  MIN_LIMIT_MS: 50,
  /** lowering a confirmed limit takes deaths outweighing survivals by this */
  LOWER_DOMINANCE: 1,
  /** the weight of closes near t that lowers a confirmed limit to t: more than one close */
  CONFIRM_WEIGHT: 1.5,
  /**
   * Trials that confirm a tentative limit: its probe (or a socket idle as
   * long) died about there this many times. One may be a second fault.
   */
  CONFIRM_TRIALS: 2,
  /**
   * Requests that cannot be sent again (the undici transport) kept off
   * sockets idle past a lapsed tentative limit before it is no longer in
   * doubt for them either: each costs a connection where the limit was a
   * reset, and one sent there instead risks a loss where it was real.
   */
  DOUBT_KEPT_OFF: 12,
  /** every close weighed multiplies older counts by this */
  DECAY: 0.85,
  /**
   * a close before this share of the announced timeout is not believed,
   * however many agree: servers honour their hint, and Node's agent keeps
   * a socket to within a second of it
   */
  HINT_TRUST: 0.75,
  /** the histogram's resolution: each octave of idle times in this many buckets (about 4.4% apart) */
  BUCKETS_PER_OCTAVE: 16,
  MAX_BUCKETS: 24,
  /** counts are halved when their total passes this */
  HISTORY: 64,
  // ---- margins and probes (free_timeout.js) ----
  /**
   * The margin before a learned limit grows with it (MARGIN_FRACTION of
   * it), so that a rhythm at 80% of the limit keeps reusing, with a floor
   * for timer lateness and round trips (MARGIN_FLOOR_MS, but at most
   * MARGIN_FLOOR_CAP of the limit, for limits of a few tens of ms), and
   * never more than serverTimeoutMargin.
   */
  MARGIN_FRACTION: 0.15,
  MARGIN_FLOOR_MS: 25,
  MARGIN_FLOOR_CAP: 0.18,
  /** a limit's probe stays open TRIAL_FACTOR times the limit, at least TRIAL_EXTRA_MIN_MS beyond it */
  TRIAL_FACTOR: 1.5,
  TRIAL_EXTRA_MIN_MS: 5,
});

module.exports = { TUNING };
