'use strict';

// A misspelled option (`freeSocketTimout`, `maxSocket`, `keepalive`) would
// pass through to core as an unknown key and leave the default in force. Keys
// we do not know must pass through (socket, TLS and request options), so a
// near miss of one of our options gets a warning, not an error: once per key
// per process, through process.emitWarning, at construction only. So does
// another library's name for one of our settings (`connectionTimeout`,
// undici's `keepAliveMaxTimeout`), with a message of its own: it is not a
// typo, and the setting it names is not applied (a name we do not own may
// mean something else to the code that passes it).

// The options of Node's own that an agent's options may carry, which are
// never a misspelling of ours even where they look close. From Node's docs
// (v18 to v26): net.createConnection()/socket.connect(), tls.connect() and
// tls.createSecureContext(), http.request(), and the http.Agent and
// https.Agent constructors.
const NODE_OPTIONS = new Set([
  // net.createConnection / socket.connect / new net.Socket
  'port', 'host', 'localAddress', 'localPort', 'family', 'hints', 'lookup', 'noDelay',
  'keepAlive', 'keepAliveInitialDelay', 'autoSelectFamily', 'autoSelectFamilyAttemptTimeout',
  'path', 'onread', 'fd', 'allowHalfOpen', 'readable', 'writable', 'signal', 'timeout', 'blockList',
  // tls.connect / tls.createSecureContext
  'socket', 'ca', 'cert', 'key', 'pfx', 'passphrase', 'sigalgs', 'ciphers', 'clientCertEngine',
  'crl', 'dhparam', 'ecdhCurve', 'honorCipherOrder', 'privateKeyEngine', 'privateKeyIdentifier',
  'maxVersion', 'minVersion', 'secureOptions', 'secureProtocol', 'sessionIdContext', 'ticketKeys',
  'sessionTimeout', 'enableTrace', 'rejectUnauthorized', 'pskCallback', 'ALPNProtocols',
  'servername', 'checkServerIdentity', 'session', 'requestOCSP', 'minDHSize', 'highWaterMark',
  'secureContext', 'allowPartialTrustChain',
  // http.request
  'agent', 'auth', 'createConnection', 'defaultPort', 'headers', 'hostname', 'insecureHTTPParser',
  'joinDuplicateHeaders', 'maxHeaderSize', 'method', 'protocol', 'setDefaultHeaders', 'setHost',
  'socketPath', 'uniqueHeaders',
  // http.Agent / https.Agent
  'keepAliveMsecs', 'agentKeepAliveTimeoutBuffer', 'maxSockets', 'maxTotalSockets',
  'maxFreeSockets', 'scheduling', 'proxyEnv', 'maxCachedSessions',
]);

/**
 * The optimal string alignment distance (Damerau-Levenshtein where no
 * substring is edited twice) between `a` and `b`, or `limit + 1` once it
 * is known to exceed `limit`.
 */
function editDistance(a, b, limit) {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  // Three rows of the table: two back (for transpositions), one back, this one.
  let before = null;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (before !== null && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, before[j - 2] + 1);
      }
      current.push(d);
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length];
}

// Edits allowed for a near miss, by the length of our option's name: two
// edits would take a short name too far ('proxy' is two from 'port', which
// is Node's anyway, and from 'pry', which is no one's).
const allowedEdits = (name) => (name.length <= 8 ? 1 : 2);

/**
 * The option of `ours` (an iterable of names) that `key` is a near miss of:
 * the same ignoring case, or within a few edits; else undefined. A key that
 * is one of ours or one of Node's options is no miss.
 */
function nearMiss(key, ours) {
  if (NODE_OPTIONS.has(key)) return undefined;
  const lower = key.toLowerCase();
  let best;
  let bestDistance = Infinity;
  for (const name of ours) {
    if (name === key) return undefined;
    const limit = allowedEdits(name);
    const distance = editDistance(lower, name.toLowerCase(), limit);
    if (distance <= limit && distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

// A near miss of a deprecated name is pointed at the name to use, not at
// the deprecated one (which would only earn a DeprecationWarning next).
const REPLACED = new Map([
  ['keepAliveTimeout', 'freeSocketTimeout'],
  ['freeSocketKeepAliveTimeout', 'freeSocketTimeout'],
]);

// Other libraries' names for our settings, by the key in lower case: who
// uses the name, and what to write instead. (`keepAliveTimeout`, undici's
// name too, is agentkeepalive 3's: it is applied, with a DeprecationWarning;
// got's `timeout` object is refused by the `timeout` option's own check.)
const SYNONYMS = new Map(Object.entries({
  connectiontimeout: ['another library\'s', 'calls it "connectTimeout" (the time a new connection has to be ready)'],
  idletimeout: ['another library\'s', 'calls it "freeSocketTimeout" (how long a free socket may stay idle in the pool)'],
  socketttl: ['another library\'s', 'calls it "socketActiveTTL" (the age after which a socket is not reused)'],
  ttl: ['another library\'s', 'calls it "socketActiveTTL" (the age after which a socket is not reused)'],
  proxyurl: ['another library\'s', 'calls it "proxy"'],
  keepalivemaxtimeout: ['undici\'s', 'has no such cap: "freeSocketTimeout" caps the idle time a server\'s Keep-Alive hint may give a socket'],
  timeouts: ['npm\'s agent\'s', 'takes them as separate options: "connectTimeout" (its connection), "timeout" (its idle: an active socket\'s idle time) and "freeSocketTimeout" (a free socket\'s idle time)'],
}));

const WARNING_CODE = 'STEADY_AGENT_UNKNOWN_OPTION';
const SYNONYM_CODE = 'STEADY_AGENT_OTHER_LIBRARY_OPTION';
const warned = new Set();

/**
 * Warns, once per key per process, of each key of `input` that is another
 * library's name for one of our settings, or a near miss of `ours`.
 */
function warnNearMisses(input, ours) {
  for (const key of Object.keys(input)) {
    if (warned.has(key) || ours.has(key)) continue;
    const synonym = SYNONYMS.get(key.toLowerCase());
    if (synonym !== undefined) {
      warned.add(key);
      const [library, advice] = synonym;
      process.emitWarning(`Option "${key}" is ${library} name; steady-agent ${advice}. "${key}" is not applied.`, { code: SYNONYM_CODE });
      continue;
    }
    const miss = nearMiss(key, ours);
    if (miss === undefined) continue;
    const suggestion = REPLACED.get(miss) ?? miss;
    warned.add(key);
    process.emitWarning(`Unknown option "${key}"; did you mean "${suggestion}"?`, { code: WARNING_CODE });
  }
}

module.exports = { warnNearMisses, nearMiss };
