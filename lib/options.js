'use strict';

// Options are validated and normalised once, at construction, into a new
// frozen object. The caller's object is only read, never written.
const { ms } = require('humanize-ms');
const { InvalidOptionTypeError, InvalidOptionValueError } = require('./errors');
const { warnDeprecated } = require('./deprecate');
const { proxyOptions } = require('./proxy');

const { MAX_TIMER } = require('./clock');

// The grammar of the `ms` package behind humanize-ms. Checking it first keeps
// humanize-ms from printing a warning to stderr for strings it cannot parse.
const DURATION = /^-?(?:\d+)?\.?\d+ *(?:milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)?$/i;

const DURATION_TEXT = 'a number of milliseconds or a duration string such as \'30s\'';

/** A duration in ms from a number or a humanized string; undefined stays undefined. */
function duration(name, value, { max = MAX_TIMER } = {}) {
  if (value === undefined || value === null) return undefined;
  let msecs = value;
  if (typeof value === 'string') {
    if (value.length > 100 || !DURATION.test(value)) {
      throw new InvalidOptionTypeError(name, DURATION_TEXT, value);
    }
    msecs = ms(value);
  } else if (typeof value !== 'number') {
    throw new InvalidOptionTypeError(name, DURATION_TEXT, value);
  }
  if (Number.isNaN(msecs) || msecs < 0 || msecs > max) {
    throw new InvalidOptionValueError(name, `a duration from 0 to ${max} ms`, value);
  }
  return msecs;
}

function boolean(name, value) {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new InvalidOptionTypeError(name, 'a boolean', value);
  return value;
}

/** A count of at least `min`: an integer, or Infinity where allowed. */
function count(name, value, min, hint = '') {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number') throw new InvalidOptionTypeError(name, 'a number', value);
  if (!(value >= min) || (!Number.isInteger(value) && value !== Infinity)) {
    throw new InvalidOptionValueError(name, `an integer >= ${min} or Infinity${hint}`, value);
  }
  return value;
}

// Options this module owns; everything else passes through to http(s).Agent.
const OWN = new Set([
  'keepAlive', 'keepAliveMsecs', 'freeSocketTimeout', 'timeout', 'socketActiveTTL',
  'serverTimeoutMargin', 'learnServerTimeout', 'maxSockets', 'maxFreeSockets',
  'keepAliveTimeout', 'freeSocketKeepAliveTimeout', 'maxQueue', 'queueTimeout',
  // Never passed to core: Node 22.21+/24.5+ would proxy on its own with proxyEnv.
  'proxy', 'noProxy', 'proxyEnv',
]);

/**
 * Validates the caller's options and returns a new frozen object: every
 * option the caller gave, plus defaults and normalised durations. It is what
 * the base http(s).Agent is constructed with.
 */
function normalizeOptions(input) {
  if (input === undefined || input === null) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidOptionTypeError('options', 'an object', input);
  }

  let freeSocketTimeout = duration('freeSocketTimeout', input.freeSocketTimeout);
  const keepAliveTimeout = duration('keepAliveTimeout', input.keepAliveTimeout);
  const freeSocketKeepAliveTimeout = duration('freeSocketKeepAliveTimeout', input.freeSocketKeepAliveTimeout);
  if (input.keepAliveTimeout !== undefined) warnDeprecated('keepAliveTimeout');
  if (input.freeSocketKeepAliveTimeout !== undefined) warnDeprecated('freeSocketKeepAliveTimeout');
  freeSocketTimeout ??= freeSocketKeepAliveTimeout ?? keepAliveTimeout ?? 4000;

  const normalized = { __proto__: null };
  for (const key of Object.keys(input)) {
    if (!OWN.has(key)) normalized[key] = input[key];
  }

  normalized.keepAlive = boolean('keepAlive', input.keepAlive) ?? true;
  // The initial delay of TCP keep-alive probes, not a timer: any non-negative
  // number goes, as with core's agent (which is given Infinity in its tests).
  normalized.keepAliveMsecs = duration('keepAliveMsecs', input.keepAliveMsecs, { max: Infinity }) ?? 1000;
  normalized.freeSocketTimeout = freeSocketTimeout;
  // The default never exceeds the largest timer, even for a freeSocketTimeout of days.
  normalized.timeout = duration('timeout', input.timeout) ?? Math.min(Math.max(freeSocketTimeout * 2, 8000), MAX_TIMER);
  normalized.socketActiveTTL = duration('socketActiveTTL', input.socketActiveTTL, { max: Number.MAX_SAFE_INTEGER }) ?? 0;
  normalized.serverTimeoutMargin = duration('serverTimeoutMargin', input.serverTimeoutMargin) ?? 1000;
  normalized.learnServerTimeout = boolean('learnServerTimeout', input.learnServerTimeout) ?? true;

  const maxSockets = count('maxSockets', input.maxSockets, 1);
  if (maxSockets !== undefined) normalized.maxSockets = maxSockets;
  const maxFreeSockets = count('maxFreeSockets', input.maxFreeSockets, 1,
    ' (to keep no idle sockets, set keepAlive: false)');
  if (maxFreeSockets !== undefined) normalized.maxFreeSockets = maxFreeSockets;
  // Bounds on the wait behind maxSockets (lib/queue_bounds.js); 0 waits never / is off.
  normalized.maxQueue = count('maxQueue', input.maxQueue, 0) ?? Infinity;
  normalized.queueTimeout = duration('queueTimeout', input.queueTimeout) ?? 0;
  // maxTotalSockets and scheduling pass through: core's constructor validates
  // them, and code written for core's agent expects core's error classes.
  // Proxy settings (lib/proxy): validated here, resolved by the agent.
  const proxy = proxyOptions(input);
  if (proxy !== undefined) normalized.proxy = proxy;

  // Node 24+ derives its own idle timeout from the Keep-Alive hint with this
  // buffer; keep it in step with ours.
  if (normalized.agentKeepAliveTimeoutBuffer === undefined) {
    normalized.agentKeepAliveTimeoutBuffer = normalized.serverTimeoutMargin;
  }
  return Object.freeze(normalized);
}

// Options that core's agent reads only in its constructor, or never.
const CONSTRUCTION_ONLY = new Set([
  'keepAliveMsecs', 'serverTimeoutMargin',
  'learnServerTimeout', 'maxSockets', 'maxFreeSockets', 'maxTotalSockets', 'scheduling',
  'agentKeepAliveTimeoutBuffer', 'proxy', 'maxQueue', 'queueTimeout',
]);

// Options read again each time a socket goes free or active: a write to
// `agent.options.<name>` after construction governs the next socket, as in
// agentkeepalive. Validated on write, like the constructor's.
const LIVE = Object.freeze({
  freeSocketTimeout: (value) => duration('freeSocketTimeout', value) ?? 4000,
  socketActiveTTL: (value) => duration('socketActiveTTL', value, { max: Number.MAX_SAFE_INTEGER }) ?? 0,
});

/**
 * What `agent.options` becomes once core's constructor has read it. Core
 * copies every own property of agent.options into each request's options (a
 * copy of a dictionary-mode object: the cost grows with every key it holds,
 * enumerable or not). So the new object holds as its own properties only
 * what requests need, the keys of core's copy minus the construction-only
 * ones, and reaches those (`agent.options.freeSocketTimeout`) through its
 * prototype. Neither is frozen: a caller may still set a key, as on core's.
 * `timeout` is an own property that the agent reads where it arms a socket;
 * the LIVE ones are accessors on the prototype over `config`, the agent's
 * own settings.
 */
function agentOptions(coreCopy, config) {
  const constructionOnly = { __proto__: null };
  const options = { __proto__: constructionOnly };
  for (const key of Object.keys(coreCopy)) {
    if (Object.hasOwn(LIVE, key)) {
      const parse = LIVE[key];
      Object.defineProperty(constructionOnly, key, {
        get() { return config[key]; },
        set(value) { config[key] = parse(value); },
        enumerable: true,
        configurable: true,
      });
    } else if (CONSTRUCTION_ONLY.has(key)) {
      constructionOnly[key] = coreCopy[key];
    } else {
      options[key] = coreCopy[key];
    }
  }
  return options;
}

module.exports = { normalizeOptions, agentOptions };
