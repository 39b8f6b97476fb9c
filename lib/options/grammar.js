'use strict';

// The value grammar every option is read with: durations, booleans and
// counts, from numbers or from strings (options often come from the
// environment). A leaf: the agent's options, the dns option and
// steady-agent/retry read values with it, and nothing else loads with it.
const { ms } = require('humanize-ms');
const { InvalidOptionTypeError, InvalidOptionValueError } = require('../errors');
const { MAX_TIMER } = require('../timers/clock');

// The grammar of the `ms` package behind humanize-ms. Checking it first keeps
// humanize-ms from printing a warning to stderr for strings it cannot parse.
const DURATION = /^-?(?:\d+)?\.?\d+ *(?:milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)?$/i;

const DURATION_TEXT = 'a number of milliseconds or a duration string such as \'30s\'';

// Options often come from the environment (process.env.MAX_SOCKETS is '10'),
// so a string whose meaning is clear is accepted for every kind of option
// below, with surrounding whitespace ignored. A number in any other notation
// ('1e3', '0x10') or an empty string is refused, never read as 0.

/**
 * A duration in ms: a number, or a string of milliseconds or of the `ms`
 * package's grammar ('10', '30s', '1.5 minutes'). Undefined and null stay
 * undefined; the range is 0 to `max`.
 */
function duration(name, value, { max = MAX_TIMER } = {}) {
  if (value === undefined || value === null) return undefined;
  let msecs = value;
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.length > 100 || !DURATION.test(text)) {
      throw new InvalidOptionTypeError(name, DURATION_TEXT, value);
    }
    msecs = ms(text);
  } else if (typeof value !== 'number') {
    throw new InvalidOptionTypeError(name, DURATION_TEXT, value);
  }
  if (Number.isNaN(msecs) || msecs < 0 || msecs > max) {
    throw new InvalidOptionValueError(name, `a duration from 0 to ${max} ms`, value);
  }
  return msecs;
}

const BOOLEANS = new Map([['true', true], ['false', false], ['1', true], ['0', false]]);

/**
 * A boolean: true or false, 1 or 0, or the strings 'true', 'false' (in any
 * case), '1' and '0'. Undefined and null stay undefined.
 */
function boolean(name, value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  let flag;
  if (typeof value === 'string') flag = BOOLEANS.get(value.trim().toLowerCase());
  else if (typeof value === 'number') flag = BOOLEANS.get(String(value));
  if (flag === undefined) {
    throw new InvalidOptionTypeError(name, 'a boolean (or \'true\', \'false\', 1, 0)', value);
  }
  return flag;
}

/** The number a count string stands for ('10', ' 10 ', 'Infinity'), or undefined. */
function countFromString(value) {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  return text.toLowerCase() === 'infinity' ? Infinity : undefined;
}

/**
 * A count of at least `min`: an integer or Infinity, as a number or a string
 * of decimal digits ('10', 'Infinity'). Undefined and null stay undefined.
 * `messageSuffix` is appended to the RangeError's message for 0: what to do instead.
 */
function count(name, value, min, messageSuffix = '') {
  if (value === undefined || value === null) return undefined;
  const number = typeof value === 'string' ? countFromString(value) : value;
  if (typeof number !== 'number') {
    throw new InvalidOptionTypeError(name, 'a number, or a string of decimal digits such as \'10\'', value);
  }
  if (number >= min && (Number.isInteger(number) || number === Infinity)) return number;
  // Each kind of wrong number is told what is wrong with it; the remark on
  // how core reads 0 is for 0 alone.
  let expected = `an integer >= ${min} or Infinity`;
  if (number === 0) expected += messageSuffix;
  else if (number >= min) expected = `a whole number (an integer >= ${min}) or Infinity, not a fraction`;
  else if (!Number.isNaN(number)) expected = `at least ${min} (an integer >= ${min} or Infinity)`;
  throw new InvalidOptionValueError(name, expected, value);
}

module.exports = { duration, boolean, count, countFromString, DURATION_TEXT };
