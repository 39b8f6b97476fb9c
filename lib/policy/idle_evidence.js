'use strict';

// The evidence behind a learned idle limit: per origin, a small histogram of
// idle times sockets survived (a reuse that got its response, a probe still
// open) and died at (a close in the pool or as a probe, a collision).
// Bounded and decaying: at most MAX_BUCKETS idle times, halved when their
// total weight passes HISTORY, faded by DECAY at every close weighed.
// server_limits.js reads it; nothing else writes it.
const { TUNING } = require('./learning_tuning');

// A bucket per 1/BUCKETS_PER_OCTAVE of an octave of idle time, from integer
// operations only: a reuse counts its idle time on every request.
const { BUCKETS_PER_OCTAVE } = TUNING;
const SHIFT = Math.log2(BUCKETS_PER_OCTAVE);
function bucketOf(ms) {
  if (!(ms >= 1)) return 0;
  const whole = ms >= 0x7fffffff ? 0x7fffffff : ms | 0;
  const octave = 31 - Math.clz32(whole);
  const part = octave >= SHIFT ? (whole >>> (octave - SHIFT)) & (BUCKETS_PER_OCTAVE - 1) : (whole << (SHIFT - octave)) & (BUCKETS_PER_OCTAVE - 1);
  return octave * BUCKETS_PER_OCTAVE + part;
}

/** True when two idle times are the same limit, give or take timer jitter. */
function agree(a, b) {
  return Math.abs(a - b) <= Math.max(TUNING.AGREE_MIN_MS, TUNING.AGREE_FRACTION * Math.max(a, b));
}

const slackOf = (t) => Math.max(TUNING.SURVIVE_SLACK_MIN_MS, TUNING.SURVIVE_SLACK * t);

/** A bounded, decaying histogram of idle times survived and died at. */
class Evidence {
  // bucket -> [survived, died, the idle time last seen there, the longest survived there]
  #buckets = new Map();
  #total = 0;

  survived(t) {
    this.#add(t, 0, 1);
  }

  /** Adds a death at t; returns what to undo it with. */
  died(t) {
    return this.#add(t, 1, 0);
  }

  /** A close was weighed: every count fades a little. */
  decay() {
    for (const counts of this.#buckets.values()) {
      counts[0] *= TUNING.DECAY;
      counts[1] *= TUNING.DECAY;
    }
    this.#total *= TUNING.DECAY;
  }

  /** Takes back a death died() added and one decay() faded (a burst showed it a restart). */
  undo(bucket) {
    const counts = this.#buckets.get(bucket);
    if (counts === undefined) return;
    const weight = Math.min(counts[1], TUNING.DECAY);
    counts[1] -= weight;
    this.#total -= weight;
  }

  #add(t, died, survived) {
    const bucket = bucketOf(t);
    let counts = this.#buckets.get(bucket);
    if (counts === undefined) {
      if (this.#buckets.size >= TUNING.MAX_BUCKETS) this.#dropLightest();
      counts = [0, 0, t, 0];
      this.#buckets.set(bucket, counts);
    }
    counts[0] += survived;
    counts[1] += died;
    counts[2] = t;
    if (survived !== 0 && t > counts[3]) counts[3] = t;
    this.#total += 1;
    if (this.#total > TUNING.HISTORY) this.#halve();
    return bucket;
  }

  #dropLightest() {
    let lightest;
    let weight = Infinity;
    for (const [bucket, counts] of this.#buckets) {
      if (counts[0] + counts[1] < weight) {
        weight = counts[0] + counts[1];
        lightest = bucket;
      }
    }
    this.#buckets.delete(lightest);
    this.#total -= weight;
  }

  #halve() {
    this.#total = 0;
    for (const [bucket, counts] of this.#buckets) {
      counts[0] /= 2;
      counts[1] /= 2;
      if (counts[0] + counts[1] < 0.05) this.#buckets.delete(bucket);
      else this.#total += counts[0] + counts[1];
    }
  }

  /**
   * The weights that judge a close at t: [survived at t or longer, died at
   * about t]. Deaths much later (a probe kept past a limit) say nothing of t;
   * survivals much later weigh FAR_SURVIVAL_WEIGHT each.
   * `collision`: the close was found by a request sent after t idle, whose
   * survivals a little shorter count too (SURVIVE_SLACK: a reset at a
   * steady rhythm has reuses on both sides of it); the server closing an
   * idle socket is contradicted only by sockets that idled as long, timer
   * jitter aside (SURVIVE_SLACK_MIN_MS), since its limit allows every
   * shorter idle time, and no longer one: survivals in a bucket where one
   * lasted longer than t weigh FAR_SURVIVAL_WEIGHT then (the whole bucket:
   * it keeps only its longest survival, not each one).
   */
  around(t, collision = true) {
    const first = bucketOf(t - (collision ? slackOf(t) : TUNING.SURVIVE_SLACK_MIN_MS));
    const last = bucketOf(t + Math.max(TUNING.AGREE_MIN_MS, TUNING.AGREE_FRACTION * t));
    let survived = 0;
    let died = 0;
    for (const [bucket, counts] of this.#buckets) {
      if (bucket < first) continue;
      if (bucket <= last) died += counts[1];
      survived += bucket <= last && (collision || counts[3] <= t) ? counts[0] : TUNING.FAR_SURVIVAL_WEIGHT * counts[0];
    }
    return [survived, died];
  }

  /** The weight of deaths at idle times that agree with t. */
  diedNear(t) {
    let died = 0;
    for (const counts of this.#buckets.values()) if (agree(counts[2], t)) died += counts[1];
    return died;
  }

  /** The counts, shortest idle time first: [{ idleMs, survived, died }]. */
  toJSON() {
    const rows = [];
    for (const counts of this.#buckets.values()) {
      rows.push({ idleMs: Math.round(counts[2]), survived: Math.round(counts[0] * 10) / 10, died: Math.round(counts[1] * 10) / 10 });
    }
    return rows.sort((a, b) => a.idleMs - b.idleMs);
  }
}

module.exports = { Evidence, agree };
