'use strict';

// What each option means to the second transport (steady-agent/fetch's
// createFetch and steady-agent/undici's createDispatcher). The agent hands
// a key it does not know to Node, where a socket or TLS option finds its
// use; here no key goes anywhere by itself, so every key is sorted before
// anything is made: the agent's options (applied with the agent's meaning,
// validated by the agent's normalisation), the socket and TLS options our
// connect() passes to net.connect / tls.connect, undici's own (handed to
// undici's Agent, createDispatcher only), and the rest, which throws,
// naming the option and why. A key whose value is undefined is not given.
const { UnsupportedOptionError } = require('../errors');
const { count, duration } = require('../options/grammar');
const { TLS_ACCEPTANCE_OPTIONS } = require('../options/tls_options');

// The agent's options the transport applies (lib/options/normalize.js
// validates them). keepAliveTimeout is the agent's deprecated alias of
// freeSocketTimeout for createFetch, and undici's name of it for
// createDispatcher (below).
const AGENT = new Set([
  'keepAlive', 'keepAliveMsecs', 'tcpKeepAlive', 'freeSocketTimeout', 'freeSocketKeepAliveTimeout', 'timeout',
  'socketActiveTTL', 'serverTimeoutMargin', 'learnServerTimeout', 'maxSockets', 'maxFreeSockets', 'maxTotalSockets',
  'maxQueue', 'queueTimeout', 'connectTimeout', 'proxy', 'noProxy', 'proxyEnv', 'dns',
  // https.Agent's: the TLS sessions kept per origin (./tls_sessions.js).
  'maxCachedSessions',
]);

// tls.connect's options, as https.Agent passes them on: every option that
// changes what the client accepts (lib/options/tls_options.js), so that
// none is dropped. They are the dispatcher's, never a request's (undici's
// dispatch options carry none), so one origin's connections all share them.
// ALPNProtocols is the transport's own: undici speaks http/1.1 on these sockets.
const TLS_OPTIONS = Object.freeze(TLS_ACCEPTANCE_OPTIONS.filter((key) => key !== 'ALPNProtocols'));

// net.connect's options connect() passes on (and servername, TLS's name to verify).
const NET_OPTIONS = Object.freeze(['family', 'hints', 'lookup', 'localAddress', 'autoSelectFamily', 'autoSelectFamilyAttemptTimeout', 'servername']);

const SOCKET = new Set([...TLS_OPTIONS, ...NET_OPTIONS]);

// The agent's (and Node's agent's) options no transport can apply, and why.
const REFUSED = Object.freeze({
  __proto__: null,
  scheduling: 'undici picks the idle connection a request goes on; there is no lifo or fifo to choose',
  agentKeepAliveTimeoutBuffer: 'it is Node\'s agent\'s name for the margin before a server\'s announced limit: use "serverTimeoutMargin"',
  ALPNProtocols: 'the transport speaks HTTP/1.1 only, and offers just that',
});

// undici's Agent options createDispatcher hands to undici's Agent as they are, with undici's meaning.
const UNDICI_PASSED = new Set([
  'headersTimeout', 'bodyTimeout', 'keepAliveMaxTimeout', 'maxHeaderSize', 'maxResponseSize', 'strictContentLength',
  'maxRequestsPerClient', 'clientTtl', 'maxRedirections', 'interceptors', 'maxOrigins',
]);

// undici's options that name one of the agent's: createDispatcher applies
// them as that option (the same meaning), and refuses both at once.
const UNDICI_ALIASES = Object.freeze({
  __proto__: null,
  connections: { agent: 'maxSockets', read: (value) => (value === null ? undefined : count('connections', value, 1)) },
  keepAliveTimeout: { agent: 'freeSocketTimeout', read: (value) => duration('keepAliveTimeout', value) },
  keepAliveTimeoutThreshold: { agent: 'serverTimeoutMargin', read: (value) => duration('keepAliveTimeoutThreshold', value) },
});

// undici's options the transport cannot apply, and why: it makes the
// sockets itself and follows one HTTP/1.1 request per socket at a time.
const UNDICI_REFUSED = Object.freeze({
  __proto__: null,
  connect: 'steady-agent makes the sockets: give TLS and socket options (ca, localAddress, ...) and "connectTimeout" at the top level',
  tls: 'steady-agent makes the sockets: give TLS options (ca, cert, ...) at the top level',
  factory: 'the transport needs undici\'s own pools under its Agent',
  socketPath: 'the transport connects over TCP only',
  allowH2: 'the transport speaks HTTP/1.1 only',
  useH2c: 'the transport speaks HTTP/1.1 only',
  maxConcurrentStreams: 'the transport speaks HTTP/1.1 only',
  pipelining: 'the transport sends one request per connection at a time (for no keep-alive, use "keepAlive: false")',
});

/**
 * Sorts the caller's options for `entry` ('createFetch' or
 * 'createDispatcher'): `{ agent, undici, timeoutGiven }`, new objects,
 * `agent` for the agent's normalisation (socket and TLS options included)
 * and `undici` for undici's Agent. Throws UnsupportedOptionError for a key
 * that cannot apply.
 */
function sortOptions(input, entry) {
  const agent = {};
  const undici = {};
  if (input === undefined || input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { agent: input, undici, timeoutGiven: false };
  }
  const dispatcher = entry === 'createDispatcher';
  for (const key of Object.keys(input)) {
    const value = input[key];
    if (value === undefined) continue;
    if (AGENT.has(key) || SOCKET.has(key)) {
      agent[key] = value;
    } else if (key === 'keepAliveTimeout' && !dispatcher) {
      agent[key] = value; // the agent's deprecated alias: normalisation warns
    } else if (REFUSED[key] !== undefined) {
      throw new UnsupportedOptionError(entry, key, REFUSED[key]);
    } else if (UNDICI_PASSED.has(key) || UNDICI_ALIASES[key] !== undefined || UNDICI_REFUSED[key] !== undefined) {
      if (!dispatcher) throw new UnsupportedOptionError(entry, key, 'it is undici\'s option, for createDispatcher(undici, options); createFetch takes the agent\'s options');
      if (UNDICI_REFUSED[key] !== undefined && !allowedAsDefault(key, value)) throw new UnsupportedOptionError(entry, key, UNDICI_REFUSED[key]);
      if (UNDICI_PASSED.has(key)) undici[key] = value;
    } else {
      throw new UnsupportedOptionError(entry, key, `it is not an option of the agent${dispatcher ? ' or of undici\'s Agent' : ''} that the transport knows`);
    }
  }
  if (dispatcher) {
    for (const key of Object.keys(UNDICI_ALIASES)) {
      if (input[key] === undefined) continue;
      const alias = UNDICI_ALIASES[key];
      if (input[alias.agent] !== undefined) {
        throw new UnsupportedOptionError(entry, key, `it is undici's name for "${alias.agent}", also given: give one of them`);
      }
      const value = alias.read(input[key]);
      if (value !== undefined) agent[alias.agent] = value;
    }
  }
  return { agent, undici, timeoutGiven: input.timeout !== undefined && input.timeout !== null };
}

/** undici's refused options at the one value that asks for what the transport does anyway. */
function allowedAsDefault(key, value) {
  return (key === 'allowH2' && value === false) || (key === 'pipelining' && value === 1);
}

module.exports = { sortOptions, TLS_OPTIONS, NET_OPTIONS, REFUSED, UNDICI_PASSED, UNDICI_ALIASES, UNDICI_REFUSED };
