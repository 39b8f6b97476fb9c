'use strict';

// Pool names for https: a readable origin plus a digest of the TLS identity
// options, computed from every kind of value the options can hold.
const assert = require('node:assert/strict');
const tls = require('node:tls');
const { HttpsAgent, HttpAgent } = require('..');
const { tlsSafeName } = require('../lib/agent/tls_name');
const { fixtures } = require('./support/servers');

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
});
