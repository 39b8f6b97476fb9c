'use strict';

// Pool names for https: a readable origin plus a digest of the TLS identity
// options, computed from every kind of value the options can hold.
const assert = require('node:assert/strict');
const https = require('node:https');
const tls = require('node:tls');
const fc = require('fast-check');
const { HttpsAgent, HttpAgent } = require('..');
const { tlsSafeName, identityKeys, hashCount } = require('../lib/agent/tls_name');
const { fixtures } = require('./support/servers');

const RUNS = Number(process.env.PROPS_RUNS || 2000);
const SEED = Number(process.env.PROPS_SEED || 20261128);

describe('https pool names (lib/tls_name.js)', () => {
  let agent;
  beforeEach(() => { agent = new HttpsAgent(); });
  afterEach(() => agent.destroy());

  const base = { host: 'localhost', port: 8443 };
  const name = (extra) => tlsSafeName(agent, { ...base, ...extra });

  it('is the bare origin without TLS identity options', () => {
    assert.equal(name({}), 'localhost:8443:');
    assert.equal(name({ servername: 'localhost' }), 'localhost:8443:', 'SNI equal to the host adds nothing');
  });

  it('adds a 12-hex digest, stable for equal values and different for different ones', () => {
    const a = name({ ca: fixtures.ca });
    assert.match(a, /^localhost:8443::tls-[0-9a-f]{12}$/);
    assert.equal(name({ ca: `${fixtures.ca}` }), a);
    assert.notEqual(name({ ca: fixtures.otherCa }), a);
    assert.notEqual(name({ ca: fixtures.ca, servername: 'alt.localhost' }), a);
  });

  it('fingerprints Buffers by content and arrays by their elements', () => {
    const buffer = name({ cert: Buffer.from(fixtures.clientCert) });
    assert.equal(name({ cert: Buffer.from(fixtures.clientCert) }), buffer);
    assert.notEqual(name({ cert: Buffer.from(fixtures.serverCert) }), buffer);
    const list = name({ ca: [fixtures.ca, fixtures.otherCa] });
    assert.equal(name({ ca: [fixtures.ca, fixtures.otherCa] }), list);
    assert.notEqual(name({ ca: [fixtures.otherCa, fixtures.ca] }), list);
  });

  it('fingerprints pfx entries ({ buf, passphrase }) by content', () => {
    const entry = () => [{ buf: fixtures.clientPfx, passphrase: 'a' }];
    assert.equal(name({ pfx: entry() }), name({ pfx: entry() }));
    assert.notEqual(name({ pfx: [{ buf: fixtures.clientPfx, passphrase: 'b' }] }), name({ pfx: entry() }));
    const nullProto = Object.assign(Object.create(null), { buf: fixtures.clientPfx });
    assert.match(name({ pfx: [nullProto] }), /:tls-/);
  });

  it('tells numbers, booleans and functions apart; functions by identity', () => {
    assert.notEqual(name({ rejectUnauthorized: false }), name({ rejectUnauthorized: true }));
    assert.notEqual(name({ secureOptions: 1 }), name({ secureOptions: 2 }));
    const check = () => undefined;
    const same = () => undefined;
    assert.equal(name({ checkServerIdentity: check }), name({ checkServerIdentity: check }));
    assert.notEqual(name({ checkServerIdentity: same }), name({ checkServerIdentity: check }));
  });

  it('gives Node\'s own checkServerIdentity, the one a request without any gets, no identity', () => {
    assert.equal(name({ checkServerIdentity: tls.checkServerIdentity }), name({}));
    assert.equal(name({ ca: fixtures.ca, checkServerIdentity: tls.checkServerIdentity }), name({ ca: fixtures.ca }));
    // A caller's own check, even one that calls Node's, is an identity.
    const pinned = (host, cert) => tls.checkServerIdentity(host, cert);
    assert.notEqual(name({ checkServerIdentity: pinned }), name({}));
  });

  it('treats other objects (a SecureContext) by identity', () => {
    class Context {}
    const context = new Context();
    assert.equal(name({ secureContext: context }), name({ secureContext: context }));
    assert.notEqual(name({ secureContext: new Context() }), name({ secureContext: context }));
  });

  it('handles values of any other type', () => {
    assert.notEqual(name({ sigalgs: Symbol('x') }), name({}));
    assert.equal(name({ ciphers: null }), name({}));
  });

  it('hashes a certificate or key once, not on every request', () => {
    // Each request's options a new object (https.request makes one), its
    // values the caller's own: the strings, Buffers and array of a client's
    // configuration.
    const cert = Buffer.from(fixtures.clientCert);
    const ca = [fixtures.ca, Buffer.from(fixtures.otherCa)];
    const options = () => ({ ca, cert, key: fixtures.clientKey, minDHSize: 2048, pskCallback: assert.ok });
    const first = name(options());
    const before = hashCount();
    for (let i = 0; i < 100; i++) assert.equal(name(options()), first);
    assert.equal(hashCount(), before, 'nothing hashed again');
  });

  it('stays bounded: caches are cleared past their limit and names stay right', () => {
    const first = name({ ciphers: 'cipher-0' });
    for (let i = 0; i < 1100; i++) name({ ciphers: `cipher-${i}` });
    assert.equal(name({ ciphers: 'cipher-0' }), first);
  });

  it('getName() works without options, as core\'s does', () => {
    assert.equal(agent.getName(), 'localhost::');
    const http = new HttpAgent();
    try {
      assert.equal(http.getName(), 'localhost::');
    } finally {
      http.destroy();
    }
  });

  it('separates every option this Node\'s own https getName separates, without a list kept by hand', () => {
    // What Node reads, found by asking Node (as the agent does), against a
    // getName that reads one more option than any Node has: it is kept apart.
    const future = function getName(options) {
      return `${https.Agent.prototype.getName.call(this, options)}:${options.futureOption ?? ''}`;
    };
    const keys = identityKeys(future);
    assert.ok(keys.includes('futureOption'), 'a key a later Node reads is found');
    assert.ok(!keys.includes('host') && !keys.includes('port'), 'the origin\'s keys stay in the origin part');
    for (const key of ['allowPartialTrustChain', 'minDHSize', 'requestOCSP', 'ALPNProtocols', 'certificateCompression', 'pskCallback', 'session']) {
      assert.ok(keys.includes(key), key);
    }
  });

  it('names every line of the issue\'s reproduction apart, as Node 22.23.5 and 24.22.3 do', () => {
    const extras = [{}, { allowPartialTrustChain: true }, { minDHSize: 512 }, { requestOCSP: true }, { pskCallback: () => null }];
    const names = extras.map((extra) => agent.getName({ host: 'h', port: 443, ...extra }));
    assert.equal(new Set(names).size, extras.length, names.join(' '));
  });
});

// Over generated pairs of option sets: whatever Node's https.Agent keeps apart
// on the Node running the test, steady-agent keeps apart too; and every
// option of tls.connect that changes what a client accepts is kept apart on
// every Node, whether that Node's getName reads it or not. Values are drawn
// from small pools so that pairs often agree; no pool holds a string and a
// Buffer of the same bytes, or null, which the agent shares on purpose
// (lib/agent/tls_name.js says why).
describe('https pool names: the same separation as Node\'s agent (property)', () => {
  let ours;
  let core;
  before(() => {
    ours = new HttpsAgent();
    core = new https.Agent({ keepAlive: true });
  });
  after(() => {
    ours.destroy();
    core.destroy();
  });

  const fn1 = () => undefined;
  const fn2 = () => undefined;
  class Context {}
  const context1 = new Context();
  const context2 = new Context();
  const text = ['alpha', 'beta', fixtures.ca, fixtures.otherCa];
  const bytes = [Buffer.from('gamma'), Buffer.from('delta'), Buffer.from(fixtures.clientCert)];
  const VALUES = [
    ...text, ...bytes, fn1, fn2, context1, context2, true, false, 0, 1, 512, 2048,
    ['alpha', 'beta'], ['beta', 'alpha'], [bytes[0]], [{ pem: 'alpha', passphrase: 'p' }], [{ buf: bytes[1] }],
  ];
  // The test's own reading of what Node's getName reads (a Proxy records
  // every key asked for, with every option absent, then with each set), and
  // its own list of the options of tls.connect that change what a client
  // sends or accepts: independent of the agent's.
  const nodeReads = new Set();
  for (const filled of [false, true]) {
    const seen = [...nodeReads];
    const probe = new Proxy({}, {
      get: (_t, key) => {
        nodeReads.add(key);
        return filled && seen.includes(key) && !['host', 'port', 'servername', 'family', 'localAddress', 'socketPath'].includes(key) ? 'x' : undefined;
      },
    });
    try { https.Agent.prototype.getName.call(https.globalAgent, probe); } catch { /* the keys read so far count */ }
  }
  const TLS_CONNECT_ACCEPTANCE = [
    'ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'checkServerIdentity', 'secureContext',
    'allowPartialTrustChain', 'crl', 'minVersion', 'maxVersion', 'secureProtocol', 'secureOptions', 'ciphers',
    'sigalgs', 'ecdhCurve', 'minDHSize', 'session', 'requestOCSP', 'pskCallback', 'ALPNProtocols',
    'certificateCompression', 'privateKeyEngine', 'privateKeyIdentifier', 'clientCertEngine',
  ];
  const keys = [...new Set([...nodeReads, ...TLS_CONNECT_ACCEPTANCE])].filter((k) => !['family', 'socketPath'].includes(k));
  const value = fc.constantFrom(...VALUES);
  const optionSet = fc.dictionary(fc.constantFrom(...keys.filter((k) => typeof k === 'string' && !['host', 'port', 'servername'].includes(k))), value, { maxKeys: 4 })
    .chain((set) => fc.record({
      set: fc.constant(set),
      host: fc.constantFrom('h', 'i'),
      servername: fc.constantFrom(undefined, 'h', 'i', 's'),
      port: fc.constantFrom(443, 8443),
      perRequest: fc.constantFrom(undefined, 1, 2),
    }))
    .map(({ set, host, servername, port, perRequest }) => {
      const options = { ...set, host, port };
      if (servername !== undefined) options.servername = servername;
      // Node 22+ marks a request with a check of its own with a Symbol of its own.
      for (const key of keys) if (typeof key === 'symbol' && perRequest !== undefined) options[key] = perRequest;
      return options;
    });
  const nodeName = (options) => {
    try {
      return core.getName(options);
    } catch {
      return undefined; // a value this Node's getName cannot read: nothing to compare
    }
  };

  it(`keeps apart every pair Node's agent keeps apart (${RUNS} pairs, seed ${SEED})`, () => {
    fc.assert(fc.property(optionSet, optionSet, (a, b) => {
      const nodeA = nodeName(a);
      const nodeB = nodeName(b);
      if (nodeA === undefined || nodeB === undefined || nodeA === nodeB) return true;
      return ours.getName(a) !== ours.getName(b);
    }), { numRuns: RUNS, seed: SEED });
  });

  it(`keeps apart every pair that differs in an option changing what the client accepts (${RUNS} pairs)`, () => {
    const acceptance = fc.constantFrom(...TLS_CONNECT_ACCEPTANCE.filter((k) => k !== 'checkServerIdentity'));
    fc.assert(fc.property(optionSet, acceptance, value, value, (base, key, x, y) => {
      fc.pre(x !== y);
      return ours.getName({ ...base, [key]: x }) !== ours.getName({ ...base, [key]: y });
    }), { numRuns: RUNS, seed: SEED });
  });

  it('shares a pool where the only difference is a string or a Buffer of the same bytes, or null', () => {
    const base = { host: 'h', port: 443 };
    assert.equal(ours.getName({ ...base, ca: fixtures.ca }), ours.getName({ ...base, ca: Buffer.from(fixtures.ca) }));
    assert.equal(ours.getName({ ...base, session: null }), ours.getName(base));
  });
});

