'use strict';

// The order of a Happy Eyeballs race's attempts and when each starts (RFC
// 8305, sections 4 and 5): pure, no socket, no clock. The race
// (./happy_eyeballs.js) asks here and does what it is told.

// RFC 8305's recommended Connection Attempt Delay, and its floor: Node reads
// autoSelectFamilyAttemptTimeout values under 10 as 10, and so do we.
const DEFAULT_ATTEMPT_DELAY = 250;
const MIN_ATTEMPT_DELAY = 10;

/**
 * The addresses in the order they are tried: the families alternate,
 * starting with the family of the resolver's first answer, each family's
 * addresses in the resolver's order (a First Address Family Count of 1).
 * Duplicates are tried once. Returns a new array of the same objects.
 */
function interleave(addresses) {
  const seen = new Set();
  const first = [];
  const second = [];
  const firstFamily = addresses.length > 0 ? addresses[0].family : 4;
  for (const entry of addresses) {
    if (seen.has(entry.address)) continue;
    seen.add(entry.address);
    (entry.family === firstFamily ? first : second).push(entry);
  }
  const order = [];
  for (let i = 0; i < first.length || i < second.length; i++) {
    if (i < first.length) order.push(first[i]);
    if (i < second.length) order.push(second[i]);
  }
  return order;
}

/**
 * What the race does next. `event`: 'begin' (the race starts), 'delay' (the
 * Connection Attempt Delay passed without a connection) or 'failure' (an
 * attempt failed); `started`: attempts begun so far, of `total` addresses;
 * `pending`: attempts begun and still under way. Returns 'start' (begin the
 * next attempt now; the delay is armed again when addresses remain),
 * 'fail' (every attempt failed) or 'wait' (attempts are under way: the
 * first to connect wins; none is given up for being slow).
 */
function next(event, started, total, pending) {
  // A failure frees its turn: the next address need not wait out the delay.
  if (started < total) return 'start';
  if (event === 'failure' && pending === 0) return 'fail';
  return 'wait';
}

/** The Connection Attempt Delay from autoSelectFamilyAttemptTimeout (Node's floor applied), or the default. */
function attemptDelay(value, fallback = DEFAULT_ATTEMPT_DELAY) {
  if (typeof value !== 'number' || !(value >= 1)) return fallback;
  return Math.max(value, MIN_ATTEMPT_DELAY);
}

module.exports = { interleave, next, attemptDelay, DEFAULT_ATTEMPT_DELAY, MIN_ATTEMPT_DELAY };
