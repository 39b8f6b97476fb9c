'use strict';

// How long a socket may stay idle, from every limit: the free timeout the
// caller set (or what is left of its TTL), the server's Keep-Alive hint and
// the limit learned for its origin (server_limits.js learns it). Pure: facts
// in, a decision out; the agent applies it to a socket, and a second
// transport can call it the same way.

const { TUNING } = require('./learning_tuning');

const {
  MARGIN_FRACTION, MARGIN_FLOOR_MS, MARGIN_FLOOR_CAP, TRIAL_FACTOR, TRIAL_EXTRA_MIN_MS,
} = TUNING;

/**
 * The margin before a learned limit. (A hinted limit keeps the whole
 * serverTimeoutMargin, as Node's agentKeepAliveTimeoutBuffer does.)
 */
function learnedMargin(limit, serverTimeoutMargin) {
  const floor = Math.min(MARGIN_FLOOR_MS, MARGIN_FLOOR_CAP * limit);
  const margin = Math.max(MARGIN_FRACTION * limit, floor);
  return margin < serverTimeoutMargin ? margin : serverTimeoutMargin;
}

/**
 * How long a socket whose idle time a learned limit capped may stay open as
 * a probe, in ms of idle time: TRIAL_FACTOR times the limit, at least
 * TRIAL_EXTRA_MIN_MS beyond it, tentative or confirmed. It may outlast the
 * free timeout: the probe is out of the pool, and a trial cut short could
 * never show the limit wrong. A probe still open then has shown it wrong,
 * confirmed or not: faults at one phase of a steady rhythm can confirm a
 * limit, and every request opens a connection until its probe says so.
 * @param {number} limit the learned limit
 */
function probeBound(limit) {
  return Math.max(limit * TRIAL_FACTOR, limit + TRIAL_EXTRA_MIN_MS);
}

/**
 * The learned limit that caps a socket of an origin, in ms, or undefined. A
 * limit set by a request that failed (a collision) alone may be a reset, not
 * a limit: while its probe tries it, the other sockets keep the deadline they
 * would have without it. Any other limit caps every socket.
 * @param {OriginLimit|undefined} learned the origin's record
 * @param {boolean} probing a probe of the origin is out
 */
function capOf(learned, probing) {
  if (learned === undefined) return undefined;
  if (probing && learned.fromCollision && !learned.confirmed) return undefined;
  return learned.limit;
}

/**
 * How long a socket may stay idle, in ms, and which limit decided it:
 * 'hint', 'learned', or null (`uncapped` did).
 * @param {number} uncapped the free timeout from options, the per-socket
 *   override and the TTL (Infinity: no limit)
 * @param {number|undefined} hinted the server's Keep-Alive timeout in ms
 * @param {number|undefined} learned the learned limit that caps it (capOf)
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
 * A free socket's deadline came (its allowance was `allowedMs` ms of idle
 * time): what now, given the limits as they are now (they may have changed
 * since it was freed). Returns { action: 'expire' } (close it),
 * { action: 'probe', bound } (take it out of the pool, open until `bound` ms
 * idle), or { action: 'wait', timeout } (it may stay idle `timeout` ms in
 * all, longer than it was allowed: a limit was forgotten or is being tried).
 * @param {number} uncapped as for idleAllowance
 * @param {number|undefined} hinted the server's Keep-Alive timeout in ms
 * @param {OriginLimit|undefined} learned the origin's record
 * @param {boolean} probing a probe of the origin is out
 * @param {number} margin serverTimeoutMargin
 * @param {number} allowedMs the idle time its deadline allowed
 */
function atDeadline(uncapped, hinted, learned, probing, margin, allowedMs) {
  const cap = capOf(learned, probing);
  const allowed = idleAllowance(uncapped, hinted, cap, margin);
  if (allowed.timeout > allowedMs + 1) return { action: 'wait', timeout: allowed.timeout };
  if (allowed.limitedBy === 'learned' && !probing) {
    return { action: 'probe', bound: probeBound(cap) };
  }
  return { action: 'expire' };
}

module.exports = { idleAllowance, atDeadline, capOf, learnedMargin, probeBound, TRIAL_EXTRA_MIN_MS };
