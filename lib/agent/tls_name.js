'use strict';

// Names for https socket pools. Node's https.Agent#getName concatenates the
// TLS options, private key and certificate text included, and that name is
// the key of agent.sockets/freeSockets/requests, of the TLS session cache and
// of everything built on them (agentkeepalive's getCurrentStatus() leaks the
// client's private key this way). We name an https pool by its readable
// origin, `host:port:localAddress`, plus a short stable digest of the options
// that make one TLS connection different from another.
//
// Which options those are is not a list kept here by hand: it is asked of the
// running Node's own https getName (nodeKeys below), so that whatever a Node
// version keys its pools by, a later one included, keeps our pools apart too.
// To it we add the options of tls.connect that change what a client accepts,
// which some Node versions do not key by (Node 26 and 18 leave out
// allowPartialTrustChain, minDHSize, requestOCSP, pskCallback, session...).
const http = require('node:http');
const https = require('node:https');
const tls = require('node:tls');
const { createHash } = require('node:crypto');
const { TLS_ACCEPTANCE_OPTIONS } = require('../options/tls_options');

const httpGetName = http.Agent.prototype.getName;

// The options the origin part (core's http getName) already holds, and the
// server name, which is keyed only where it differs from the host.
const ORIGIN_OPTIONS = new Set(['host', 'port', 'localAddress', 'family', 'socketPath', 'servername']);

/**
 * The option keys (names and Symbols) a getName function reads, found by
 * calling it on an object that records every read: first with every option
 * absent, then with every key seen set, which shows the keys read only
 * beside another (Node reads `passphrase` only with `key` or `pfx`).
 */
function keysRead(getName) {
  const seen = new Set();
  const recorder = (valueOf) => new Proxy(Object.create(null), {
    get(_target, key) {
      seen.add(key);
      return valueOf(key);
    },
  });
  const call = (valueOf) => {
    try {
      getName.call(https.globalAgent, recorder(valueOf));
    } catch {
      // A value of the probe's that a future Node refuses: the keys read so far still count.
    }
  };
  call(() => undefined);
  const first = new Set(seen);
  call((key) => (first.has(key) && !ORIGIN_OPTIONS.has(key) ? 'probe' : undefined));
  return seen;
}

/** Every key an https pool is kept apart by, on the running Node. */
function identityKeys(getName = https.Agent.prototype.getName) {
  const keys = [...TLS_ACCEPTANCE_OPTIONS];
  for (const key of keysRead(getName)) {
    if (!ORIGIN_OPTIONS.has(key) && !keys.includes(key)) keys.push(key);
  }
  return keys;
}

// Read once, when this module loads: Node's getName reads the same keys for
// the life of the process. Symbols among them are Node's own (Node 22+ marks
// a request with a check of its own by a per-request number).
const IDENTITY_OPTIONS = identityKeys();
const CHECK_SERVER_IDENTITY = IDENTITY_OPTIONS.indexOf('checkServerIdentity');

// How many values were hashed, for the test that shows a request's name
// hashes nothing it hashed before.
let hashed = 0;
const hash = (text) => {
  hashed++;
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
};

// Fingerprints of option values, each tagged with its kind so that no two
// kinds can meet (a number and a string's hash, say). Strings are cached by
// value (bounded), Buffers, functions and other objects by identity, so that
// a request's name costs a few map lookups rather than hashing certificates
// each time. A Buffer changed in place after its first request keeps its
// first fingerprint: give a changed certificate a new Buffer.
//
// A string and a Buffer of the same bytes get the same fingerprint, where
// Node's keys tell them apart: tls.connect reads both as the same PEM or
// DER bytes, so sharing a pool between them is safe. So is sharing between
// `null` and an option left out (the value is skipped): tls.connect treats
// a null option as not given.
const stringPrints = new Map();
const objectPrints = new WeakMap();
const digests = new Map();
const CACHE_LIMIT = 1024;
let nextObjectId = 0;

function remember(map, key, value) {
  if (map.size >= CACHE_LIMIT) map.clear();
  map.set(key, value);
  return value;
}

function fingerprint(value) {
  switch (typeof value) {
    case 'string':
      return stringPrints.get(value) ?? remember(stringPrints, value, `s${hash(value)}`);
    case 'number':
      return `n${value}`;
    case 'boolean':
      return value ? 'T' : 'F';
    case 'function':
      return objectPrints.get(value) ?? identityPrint(value);
    case 'object':
      // Arrays and plain objects are read again on every request (a caller
      // may change one in place); their elements are cached as above.
      if (Array.isArray(value)) return `a[${value.map(fingerprint).join(',')}]`;
      if (isPlain(value)) {
        // e.g. key or pfx entries: { pem, passphrase } or { buf, passphrase }
        return `p{${Object.keys(value).sort().map((key) => `${key}=${fingerprint(value[key])}`).join(',')}}`;
      }
      return objectPrints.get(value) ?? objectPrint(value);
    default:
      // Symbols and bigints: a symbol by identity, through its description
      // and a number of its own.
      return typeof value === 'symbol' ? symbolPrint(value) : `${typeof value}:${String(value)}`;
  }
}

function isPlain(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function identityPrint(value) {
  const print = `o${++nextObjectId}`;
  objectPrints.set(value, print);
  return print;
}

function objectPrint(value) {
  if (!ArrayBuffer.isView(value)) return identityPrint(value); // a SecureContext, a KeyObject
  const print = `s${hash(Buffer.from(value.buffer, value.byteOffset, value.byteLength))}`;
  objectPrints.set(value, print);
  return print;
}

const symbolPrints = new Map();
function symbolPrint(value) {
  return symbolPrints.get(value) ?? remember(symbolPrints, value, `y${++nextObjectId}`);
}

// The identity part of a name: each key's value, fingerprinted, behind its
// index. Made once, as a function that reads each key by a constant name:
// V8 reads an absent option that way in about a third of the instructions
// a key taken from a list costs, and a request reads every key. The source
// holds only the keys, each quoted by JSON.stringify (Symbols by index).
const identityOf = new Function('keys', 'fingerprint', 'nodeCheck', `return function identityOf(options) {
  let identity = '';
  let value;
${IDENTITY_OPTIONS.map((key, i) => `  value = options[${typeof key === 'string' ? JSON.stringify(key) : `keys[${i}]`}];
  if (value !== undefined && value !== null${i === CHECK_SERVER_IDENTITY ? ' && value !== nodeCheck()' : ''}) identity += '${i}=' + fingerprint(value) + ';';`).join('\n')}
  return identity;
};`)(IDENTITY_OPTIONS, fingerprint, () => tls.checkServerIdentity);

/** The pool name for an https request: origin plus TLS digest, no secrets. */
function tlsSafeName(agent, options) {
  const origin = httpGetName.call(agent, options);
  // Node's own check is what tls.connect() runs when none is given (got
  // passes it on every request): no identity of its own (identityOf skips
  // it). The live property, since tls.connect() reads it at connect time. A
  // caller's own check (pinning) still gets a pool no request verified
  // without it can share.
  let identity = identityOf(options);
  // Node keys on the SNI name only where it differs from the host.
  const servername = options.servername;
  if (servername && servername !== options.host) identity += `sni=${fingerprint(servername)};`;
  if (identity === '') return origin;
  const digest = digests.get(identity) ?? remember(digests, identity, `tls-${hash(identity).slice(0, 12)}`);
  return `${origin}:${digest}`;
}

module.exports = { tlsSafeName, identityKeys, hashCount: () => hashed };
