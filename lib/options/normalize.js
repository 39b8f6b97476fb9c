'use strict';

// Options are validated and normalised once, at construction, into a new
// frozen object. The caller's object is only read, never written.
const { inspect } = require('node:util');
const { InvalidOptionTypeError, InvalidOptionValueError } = require('../errors');
const { warnDeprecated } = require('./deprecate');
const { warnNearMisses } = require('./typos');
const { normalizeProxyOptions } = require('../proxy/options');

const { MAX_TIMER } = require('../timers/clock');
const { SOCKET_NAME } = require('../constants');
const { duration, boolean, count, countFromString, DURATION_TEXT } = require('./grammar');


// Options this module owns; everything else passes through to http(s).Agent.
const OWN = new Set([
  'keepAlive', 'keepAliveMsecs', 'freeSocketTimeout', 'timeout', 'socketActiveTTL',
  'serverTimeoutMargin', 'learnServerTimeout', 'maxSockets', 'maxFreeSockets',
  'keepAliveTimeout', 'freeSocketKeepAliveTimeout', 'maxQueue', 'queueTimeout',
  'connectTimeout', 'tcpKeepAlive',
  // Never passed to core: Node 22.21+/24.5+ would proxy on its own with proxyEnv.
  'proxy', 'noProxy', 'proxyEnv',
  'dns',
]);

// The options a misspelled key is compared with: ours,
// and core's agent options the README documents.
const DOCUMENTED = new Set([...OWN, 'maxTotalSockets', 'scheduling', 'autoSelectFamily', 'autoSelectFamilyAttemptTimeout']);

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
  normalized.timeout = activeTimeoutOption(input.timeout) ?? defaultTimeout(freeSocketTimeout);
  normalized.socketActiveTTL = duration('socketActiveTTL', input.socketActiveTTL, { max: Number.MAX_SAFE_INTEGER }) ?? 0;
  normalized.serverTimeoutMargin = duration('serverTimeoutMargin', input.serverTimeoutMargin) ?? 1000;
  normalized.learnServerTimeout = boolean('learnServerTimeout', input.learnServerTimeout) ?? true;

  // 0 is a trap for both: core's agent reads it as its default.
  const maxSockets = count('maxSockets', input.maxSockets, 1,
    ' (Node\'s agent would read 0 as Infinity: no limit)');
  if (maxSockets !== undefined) normalized.maxSockets = maxSockets;
  const maxFreeSockets = count('maxFreeSockets', input.maxFreeSockets, 1,
    ' (Node\'s agent would read 0 as 256; to keep no idle sockets, set keepAlive: false)');
  if (maxFreeSockets !== undefined) normalized.maxFreeSockets = maxFreeSockets;
  // Bounds on the wait behind maxSockets; 0 waits never / is off.
  normalized.maxQueue = count('maxQueue', input.maxQueue, 0) ?? Infinity;
  normalized.queueTimeout = duration('queueTimeout', input.queueTimeout) ?? 0;
  // A new socket's time to be ready; 0 is off.
  normalized.connectTimeout = duration('connectTimeout', input.connectTimeout) ?? 0;
  // TCP keep-alive probes from the moment a socket connects.
  normalized.tcpKeepAlive = boolean('tcpKeepAlive', input.tcpKeepAlive) ?? true;
  happyEyeballsOptions(input, normalized);
  // maxTotalSockets and scheduling pass through: core's constructor validates
  // them, and code written for core's agent expects core's error classes.
  // Only a count string becomes its number first (core refuses any string).
  if (typeof input.maxTotalSockets === 'string') {
    normalized.maxTotalSockets = countFromString(input.maxTotalSockets) ?? input.maxTotalSockets;
  }
  // Proxy settings (lib/proxy): validated here, resolved by the agent.
  const proxy = normalizeProxyOptions(input);
  if (proxy !== undefined) normalized.proxy = proxy;
  // The dns option: an agent without it never loads lib/dns/.
  if (input.dns !== undefined && input.dns !== null && input.dns !== false) {
    const dns = require('./dns_settings').dnsSettings(input.dns);
    if (dns !== null) normalized.dns = dns;
  }

  // Node 24+ derives its own idle timeout from the Keep-Alive hint with this
  // buffer; keep it in step with ours.
  if (normalized.agentKeepAliveTimeoutBuffer === undefined) {
    normalized.agentKeepAliveTimeoutBuffer = normalized.serverTimeoutMargin;
  }
  warnNearMisses(input, DOCUMENTED);
  return Object.freeze(normalized);
}

// Happy Eyeballs (lib/connect): autoSelectFamily and the Connection Attempt
// Delay, as Node names them. Unset, they stay unset: Node's defaults hold,
// read at each connection. Set, they reach core's copies of the options
// (where the race reads them) and net (a connection not raced: a proxy's)
// as the values net takes.
function happyEyeballsOptions(input, normalized) {
  const autoSelectFamily = boolean('autoSelectFamily', input.autoSelectFamily);
  if (autoSelectFamily !== undefined) normalized.autoSelectFamily = autoSelectFamily;
  const delay = duration('autoSelectFamilyAttemptTimeout', input.autoSelectFamilyAttemptTimeout);
  if (delay === undefined) return;
  if (delay < 1) {
    throw new InvalidOptionValueError('autoSelectFamilyAttemptTimeout',
      'a duration of at least 1 ms (the Connection Attempt Delay; values under 10 are read as 10, as Node reads them)', input.autoSelectFamilyAttemptTimeout);
  }
  normalized.autoSelectFamilyAttemptTimeout = Math.ceil(delay);
}

// got's `timeout: { connect, request, ... }` is an object of phases; here
// `timeout` is one duration, and got's connect phase is connectTimeout.
function activeTimeoutOption(value) {
  if (value !== null && typeof value === 'object') {
    throw new InvalidOptionTypeError('timeout', `${DURATION_TEXT}: how long an active socket may be idle `
      + '(an object of phases is got\'s timeout; its connect phase is steady-agent\'s "connectTimeout")', value);
  }
  return duration('timeout', value);
}

// The default never exceeds the largest timer, even for a freeSocketTimeout of days.
function defaultTimeout(freeSocketTimeout) {
  return Math.min(Math.max(freeSocketTimeout * 2, 8000), MAX_TIMER);
}

// Options that core's agent reads only in its constructor, or never.
const CONSTRUCTION_ONLY = new Set([
  'keepAliveMsecs', 'serverTimeoutMargin',
  'learnServerTimeout', 'maxSockets', 'maxFreeSockets', 'maxTotalSockets', 'scheduling',
  'agentKeepAliveTimeoutBuffer', 'proxy', 'maxQueue', 'queueTimeout', 'dns',
  'connectTimeout', 'tcpKeepAlive',
]);

// Options read again each time a socket goes free or active: a write to
// `agent.options.<name>` after construction governs the next socket, as in
// agentkeepalive. Validated on write, like the constructor's, so that
// `agent.options.timeout = '5s'` is 5000 and 'abc' throws at the write, not
// from inside Node at the next request. Unset (undefined, null): the default.
const LIVE = Object.freeze({
  freeSocketTimeout: (value) => duration('freeSocketTimeout', value) ?? 4000,
  socketActiveTTL: (value) => duration('socketActiveTTL', value, { max: Number.MAX_SAFE_INTEGER }) ?? 0,
  timeout: (value, config) => activeTimeoutOption(value) ?? defaultTimeout(config.freeSocketTimeout),
});
// Of those, the ones core reads from each request's copy of agent.options
// (timeout: the socket's timeout as it connects), so they stay own properties.
const PER_REQUEST_LIVE = new Set(['timeout']);

/**
 * What `agent.options` becomes once core's constructor has read it. Core
 * copies every own property of agent.options into each request's options (a
 * copy of a dictionary-mode object: the cost grows with every key it holds,
 * enumerable or not). So the new object holds as its own properties only
 * what requests need, the keys of core's copy minus the construction-only
 * ones, and reaches those (`agent.options.freeSocketTimeout`) through its
 * prototype. Neither is frozen: a caller may still set a key, as on core's.
 * The LIVE ones are accessors over `config`, the agent's own settings: on
 * the prototype, except `timeout`, an own property that core copies and the
 * agent reads where it arms a socket.
 */
function agentOptions(coreCopy, config, agent) {
  const constructionOnly = { __proto__: null };
  // Not enumerable, on the prototype: core's copies of the options, and any
  // caller's spread of them, never carry it.
  Object.defineProperty(constructionOnly, inspect.custom, {
    value(depth, inspectOptions, inspectValue = inspect) {
      return inspectValue(effectiveOptions(this, agent), inspectOptions);
    },
  });
  const options = { __proto__: constructionOnly };
  for (const key of Object.keys(coreCopy)) {
    if (Object.hasOwn(LIVE, key)) {
      const parse = LIVE[key];
      Object.defineProperty(PER_REQUEST_LIVE.has(key) ? options : constructionOnly, key, {
        get() { return config[key]; },
        set(value) { config[key] = parse(value, config); },
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

// Options whose values are secret (TLS keys, credentials) or long (CA
// certificates): a printed agent shows that they are set, not what they are.
const HIDDEN = new Set([
  'key', 'cert', 'pfx', 'passphrase', 'ca', 'crl', 'auth', 'headers', 'session', 'ticketKeys',
  'privateKeyIdentifier', 'privateKeyEngine', 'clientCertEngine',
]);

// The settings a printed agent shows first, each with its value in force:
// given, defaulted, or (the pool sizes) core's reading of it.
const EFFECTIVE = [
  ['keepAlive', (options, agent) => agent.keepAlive],
  ['keepAliveMsecs', (options, agent) => agent.keepAliveMsecs],
  ['freeSocketTimeout'], ['timeout'], ['socketActiveTTL'], ['serverTimeoutMargin'], ['learnServerTimeout'],
  ['maxSockets', (options, agent) => agent.maxSockets],
  ['maxFreeSockets', (options, agent) => agent.maxFreeSockets],
  ['maxTotalSockets', (options, agent) => agent.maxTotalSockets],
  ['scheduling', (options, agent) => agent.scheduling],
  ['maxQueue'], ['queueTimeout'], ['connectTimeout'], ['tcpKeepAlive'],
  // The proxy's origin, never its credentials; of proxyEnv, the names read.
  ['proxy', (options) => options.proxy?.proxy?.origin],
  ['noProxy', (options) => options.proxy?.noProxy],
  ['proxyEnv', (options) => (options.proxy?.env === undefined ? undefined : Object.keys(options.proxy.env))],
];

/**
 * What util.inspect shows for agent.options (and so for a printed agent): a new
 * plain object of the settings in force, then every other option, with
 * secrets hidden. `options` is agent.options as it is now (a caller may have
 * written to it since construction).
 */
function effectiveOptions(options, agent) {
  const view = {};
  for (const [key, read] of EFFECTIVE) {
    const value = read === undefined ? options[key] : read(options, agent);
    if (value !== undefined) view[key] = value;
  }
  for (const key in options) {
    if (Object.hasOwn(view, key) || key === 'proxy') continue;
    const value = options[key];
    view[key] = HIDDEN.has(key) && value !== undefined && value !== null ? '[hidden]' : value;
  }
  return view;
}

/**
 * The options a direct createConnection call names its socket's pool by, in
 * any argument form: `(options[, callback])`, `(port[, host][, options][, callback])`.
 */
function connectionOptions(args) {
  const [port, host] = args;
  const given = args.find((arg) => arg !== null && typeof arg === 'object') ?? {};
  const options = { ...given };
  if (typeof port === 'number') options.port = port;
  if (typeof host === 'string') options.host = host;
  return options;
}

/**
 * The active timeout from agent.options.timeout, read where a socket is
 * armed: core reads it there too, and a caller may have changed it since
 * construction (`fallback`: the constructor's).
 */
function activeTimeout(options, fallback) {
  const timeout = options.timeout;
  if (typeof timeout !== 'number' || !(timeout >= 0)) return fallback;
  return timeout > MAX_TIMER ? MAX_TIMER : timeout;
}

/**
 * A socket's own free timeout (urllib sets `freeSocketTimeout` or
 * `freeSocketKeepAliveTimeout` on a socket), or `fallback`, the agent's.
 */
function socketFreeTimeout(socket, fallback, debug) {
  const own = socket.freeSocketTimeout ?? socket.freeSocketKeepAliveTimeout;
  if (typeof own === 'number' && own >= 0) return own;
  if (own !== undefined && debug.enabled) debug('%s per-socket freeSocketTimeout %o ignored: not a non-negative number', socket[SOCKET_NAME], own);
  return fallback;
}

module.exports = {
  normalizeOptions, agentOptions, count, duration, boolean, connectionOptions, activeTimeout, socketFreeTimeout,
};
