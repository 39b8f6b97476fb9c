'use strict';

// Names for https socket pools. Node's https.Agent#getName concatenates the
// TLS options, private key and certificate text included, and that name is
// the key of agent.sockets/freeSockets/requests, of the TLS session cache and
// of everything built on them (agentkeepalive's getCurrentStatus() leaks the
// client's private key this way). We name an https pool by its readable
// origin, `host:port:localAddress`, plus a short stable digest of the options
// that make one TLS connection different from another.
const http = require('node:http');
const tls = require('node:tls');
const { createHash } = require('node:crypto');

const httpGetName = http.Agent.prototype.getName;

// Requests that differ in any of these never share a socket or a TLS session.
// Node's list, plus `passphrase` (Node counts it only with pfx),
// `checkServerIdentity` and `secureContext` (Node ignores both).
const IDENTITY_OPTIONS = [
  'ca', 'cert', 'clientCertEngine', 'ciphers', 'key', 'pfx', 'passphrase',
  'rejectUnauthorized', 'minVersion', 'maxVersion', 'secureProtocol', 'crl',
  'honorCipherOrder', 'ecdhCurve', 'dhparam', 'secureOptions', 'sessionIdContext',
  'sigalgs', 'privateKeyIdentifier', 'privateKeyEngine', 'checkServerIdentity',
  'secureContext',
];
const CHECK_SERVER_IDENTITY = IDENTITY_OPTIONS.indexOf('checkServerIdentity');

const hash = (text) => createHash('sha256').update(text).digest('hex').slice(0, 16);

// Fingerprints of option values. Strings are cached by value (bounded), objects
// and functions by identity, so that a request's name costs a few map lookups
// rather than hashing certificates each time.
const stringPrints = new Map();
const objectPrints = new WeakMap();
const digests = new Map();
const CACHE_LIMIT = 1024;
let nextFunctionId = 0;

function remember(map, key, value) {
  if (map.size >= CACHE_LIMIT) map.clear();
  map.set(key, value);
  return value;
}

function fingerprint(value) {
  switch (typeof value) {
    case 'string':
      return stringPrints.get(value) ?? remember(stringPrints, value, hash(value));
    case 'number':
    case 'boolean':
      return `${value}`;
    case 'function': {
      let print = objectPrints.get(value);
      if (print === undefined) objectPrints.set(value, print = `fn${++nextFunctionId}`);
      return print;
    }
    case 'object': {
      let print = objectPrints.get(value);
      if (print === undefined) objectPrints.set(value, print = objectFingerprint(value));
      return print;
    }
    default:
      return `${typeof value}:${String(value)}`;
  }
}

function objectFingerprint(value) {
  if (ArrayBuffer.isView(value)) return hash(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
  if (Array.isArray(value)) return hash(value.map(fingerprint).join(','));
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    // e.g. pfx entries: { buf, passphrase }
    return hash(Object.keys(value).sort().map((key) => `${key}=${fingerprint(value[key])}`).join(','));
  }
  // Anything else (a SecureContext) is its own identity.
  return `obj${++nextFunctionId}`;
}

/** The pool name for an https request: origin plus TLS digest, no secrets. */
function tlsSafeName(agent, options) {
  const origin = httpGetName.call(agent, options);
  let identity = '';
  for (let i = 0; i < IDENTITY_OPTIONS.length; i++) {
    const value = options[IDENTITY_OPTIONS[i]];
    if (value === undefined || value === null) continue;
    // Node's own check is what tls.connect() runs when none is given (got
    // passes it on every request): no identity of its own. The live property,
    // since tls.connect() reads it at connect time. A caller's own check
    // (pinning) still gets a pool no request verified without it can share.
    if (i === CHECK_SERVER_IDENTITY && value === tls.checkServerIdentity) continue;
    identity += `${i}=${fingerprint(value)};`;
  }
  // Node keys on the SNI name only where it differs from the host.
  const servername = options.servername;
  if (servername && servername !== options.host) identity += `sni=${fingerprint(servername)};`;
  if (identity === '') return origin;
  const digest = digests.get(identity) ?? remember(digests, identity, `tls-${hash(identity).slice(0, 12)}`);
  return `${origin}:${digest}`;
}

module.exports = { tlsSafeName };
