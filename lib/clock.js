'use strict';

// Monotonic time for every deadline and idle measure. Date.now() follows the
// wall clock, which steps (NTP, a VM resumed, a user changing the time): a
// step back of an hour would keep free sockets an hour past the server's
// limit and measure an idle time of minus an hour. performance.now() only
// moves forward, at the rate timers run.
//
// Only SOCKET_CREATED_TIME stays Date.now(): it is agentkeepalive's public
// contract, a wall-clock time a caller may print or compare with its own.
const { performance } = require('node:perf_hooks');

// The largest delay a Node timer accepts; a longer one fires after 1 ms
// (with a TimeoutOverflowWarning), so every timer is clamped to it.
const MAX_TIMER = 2 ** 31 - 1;

/**
 * Milliseconds on a monotonic clock, never less than 1: 0 stays free to mean
 * "no time" (a socket that is not idle).
 */
function now() {
  return performance.now() + 1;
}

/**
 * A delay for setTimeout: whole milliseconds, at least 1, at most MAX_TIMER.
 * Whole, because core keeps a list of timers per distinct delay, keyed by
 * the delay as a string: a fractional delay (a deadline on this clock, less
 * now) would make a new list, and print a double, at every arming. Rounded
 * up, because the loop's clock is in whole milliseconds: the timer fires no
 * later for it, and never before its deadline.
 */
function timerDelay(ms) {
  if (!(ms >= 1)) return 1;
  return ms > MAX_TIMER ? MAX_TIMER : Math.ceil(ms);
}

/**
 * A duration as people read it, in debug lines and getStats(): whole
 * milliseconds, or tenths below 10 ms, where the fraction still matters.
 * The clock's own doubles (751.9639245000001) stay inside.
 */
function roundMs(ms) {
  if (!Number.isFinite(ms)) return ms;
  return Math.abs(ms) < 10 ? Math.round(ms * 10) / 10 : Math.round(ms);
}

module.exports = { now, timerDelay, roundMs, MAX_TIMER };
