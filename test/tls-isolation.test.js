'use strict';

// Requests whose TLS identity options differ never share a socket, and TLS
// sessions are never resumed across server names. Sharing would let a request
// ride a connection authenticated (or verified) differently from what it asked
// for: without its client certificate, with someone else's, or to a server its
// own CA, checks or protocol limits would have refused.
//
// Each case makes request A, lets its socket go back to the pool, then makes
// request B, which differs from A in one option only. B must get a connection
// of its own, shaped by its own options (or fail, where its options must make
// it fail). Then A again, which must reuse A's socket: proof that the pool
// would have handed the socket out, had the names been the same.
const assert = require('node:assert/strict');
const https = require('node:https');
const tls = require('node:tls');
const { HttpsAgent, constants } = require('../');
const { createHttpsServer, fixtures } = require('./support/servers');
const { request, waitFor } = require('./support/request');
const { loadClients } = require('./support/clients');

const { SOCKET_NAME } = constants;

// What the server saw of the connection a request came on.
function describeConnection(req, res) {
  req.resume();
  const socket = req.socket;
  const peer = socket.getPeerCertificate();
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({
    client: peer && peer.subject ? peer.subject.CN : null,
    servername: socket.servername || null,
    protocol: socket.getProtocol(),
    cipher: socket.getCipher().name,
    resumed: socket.isSessionReused(),
  }));
}

const CLIENT_CN = 'steady-agent client';
const TLS12_CIPHER_A = 'ECDHE-RSA-AES128-GCM-SHA256';
const TLS12_CIPHER_B = 'ECDHE-RSA-AES256-GCM-SHA384';
const TLS12_DHE_CIPHER = 'DHE-RSA-AES128-GCM-SHA256';

/** The pool part of a SOCKET_NAME, 'sock[<id>#<pool>]'. */
function poolOf(socket) {
  return /^sock\[\d+#(.*)\]$/.exec(socket[SOCKET_NAME])[1];
}

// Each case: options of A and B (on top of `ca: fixtures.ca` unless they set
// ca), and either what the server must see of B's connection, or the error B
// must get (assert.rejects' object form). `server` picks a server with other
// options.
const cases = [
  {
    option: 'ca',
    a: { ca: fixtures.ca },
    b: { ca: fixtures.otherCa },
    bFails: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
  },
  {
    option: 'cert',
    a: { key: fixtures.clientKey },
    b: { key: fixtures.clientKey, cert: fixtures.clientCert },
    aSees: { client: null },
    bSees: { client: CLIENT_CN },
  },
  {
    option: 'key',
    a: { cert: fixtures.clientCert },
    b: { cert: fixtures.clientCert, key: fixtures.clientKey },
    aSees: { client: null },
    bSees: { client: CLIENT_CN },
  },
  {
    option: 'pfx',
    a: { passphrase: fixtures.clientPfxPassphrase },
    b: { passphrase: fixtures.clientPfxPassphrase, pfx: fixtures.clientPfx },
    aSees: { client: null },
    bSees: { client: CLIENT_CN },
  },
  {
    option: 'passphrase',
    a: { pfx: fixtures.clientPfx, passphrase: fixtures.clientPfxPassphrase },
    b: { pfx: fixtures.clientPfx, passphrase: 'not-the-passphrase' },
    aSees: { client: CLIENT_CN },
    bFails: { message: /mac verify failure|bad decrypt/i },
  },
  {
    option: 'servername',
    a: { servername: 'localhost' },
    b: { servername: 'alt.localhost' },
    aSees: { servername: 'localhost' },
    bSees: { servername: 'alt.localhost' },
  },
  {
    option: 'rejectUnauthorized',
    a: { ca: fixtures.otherCa, rejectUnauthorized: false },
    b: { ca: fixtures.otherCa, rejectUnauthorized: true },
    bFails: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
  },
  {
    option: 'rejectUnauthorized (left to its default, true)',
    a: { ca: fixtures.otherCa, rejectUnauthorized: false },
    b: { ca: fixtures.otherCa },
    bFails: { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' },
  },
  {
    option: 'checkServerIdentity',
    a: { checkServerIdentity: () => undefined },
    b: { checkServerIdentity: () => new Error('not the pinned certificate') },
    bFails: { message: 'not the pinned certificate' },
    // Node 26+ (its https.Agent#keepSocketAlive) never pools a socket made
    // with a per-request checkServerIdentity; older versions do.
    mayNotPool: true,
  },
  {
    // A pinning check must never be bypassed through a socket verified
    // without it: against a request that gives none, it is an identity.
    option: 'checkServerIdentity (a caller\'s own, against none)',
    a: {},
    b: { checkServerIdentity: () => new Error('not the pinned certificate') },
    bFails: { message: 'not the pinned certificate' },
  },
  {
    option: 'minVersion',
    server: { maxVersion: 'TLSv1.2' },
    a: { minVersion: 'TLSv1.2' },
    b: { minVersion: 'TLSv1.3' },
    aSees: { protocol: 'TLSv1.2' },
    bFails: { code: 'EPROTO', message: /protocol version/ },
  },
  {
    option: 'maxVersion',
    a: { maxVersion: 'TLSv1.2' },
    b: { maxVersion: 'TLSv1.3' },
    aSees: { protocol: 'TLSv1.2' },
    bSees: { protocol: 'TLSv1.3' },
  },
  {
    option: 'ciphers',
    a: { maxVersion: 'TLSv1.2', ciphers: TLS12_CIPHER_A },
    b: { maxVersion: 'TLSv1.2', ciphers: TLS12_CIPHER_B },
    aSees: { cipher: TLS12_CIPHER_A },
    bSees: { cipher: TLS12_CIPHER_B },
  },
  {
    // A request that demands a large Diffie-Hellman group must not ride a
    // connection that accepted the server's smaller one.
    option: 'minDHSize',
    server: { dhparam: 'auto', maxVersion: 'TLSv1.2', ciphers: TLS12_DHE_CIPHER },
    a: { maxVersion: 'TLSv1.2', ciphers: TLS12_DHE_CIPHER },
    b: { maxVersion: 'TLSv1.2', ciphers: TLS12_DHE_CIPHER, minDHSize: 8192 },
    aSees: { cipher: TLS12_DHE_CIPHER },
    bFails: { code: 'ERR_TLS_DH_PARAM_SIZE' },
  },
];

function pick(object, keys) {
  return Object.fromEntries(keys.map((key) => [key, object[key]]));
}

describe('TLS isolation', () => {
  let servers = [];
  let agents = [];

  afterEach(async () => {
    for (const agent of agents) agent.destroy();
    agents = [];
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
  });

  async function newServer(options = {}, handler = describeConnection) {
    // Client certificates are asked for, and accepted from any issuer: the
    // server reports what it got instead of refusing.
    const server = await createHttpsServer(handler, { requestCert: true, rejectUnauthorized: false, ...options });
    servers.push(server);
    return server;
  }

  function newAgent(options) {
    const agent = new HttpsAgent(options);
    agents.push(agent);
    return agent;
  }

  async function get(server, agent, options) {
    const res = await request(server.url('/'), { ca: fixtures.ca, ...options, agent });
    return { ...res, seen: JSON.parse(res.body) };
  }

  describe('requests that differ in one identity option never share a socket', () => {
    for (const spec of cases) {
      it(spec.option, async () => {
        const server = await newServer(spec.server);
        const agent = newAgent();

        const a = await get(server, agent, spec.a);
        if (spec.aSees) assert.deepEqual(pick(a.seen, Object.keys(spec.aSees)), spec.aSees, 'A\'s connection');
        const inPool = () => agent.freeSockets[poolOf(a.socket)]?.includes(a.socket) === true;
        await waitFor(() => inPool() || a.socket.destroyed);
        const pooled = inPool();
        if (!spec.mayNotPool) assert.ok(pooled, 'A\'s socket went back to the pool');

        if (spec.bFails) {
          await assert.rejects(get(server, agent, spec.b), spec.bFails, 'B must not be served on A\'s connection');
          if (pooled) assert.ok(inPool(), 'A\'s socket is still pooled: it was there for the taking');
        } else {
          const b = await get(server, agent, spec.b);
          assert.notEqual(b.socket, a.socket, 'B got A\'s socket');
          assert.equal(b.reusedSocket, false);
          assert.notEqual(poolOf(b.socket), poolOf(a.socket), 'pool names');
          assert.deepEqual(pick(b.seen, Object.keys(spec.bSees)), spec.bSees, 'B\'s connection');
          assert.equal(server.accepted, 2);
        }

        // A again: back on A's socket.
        if (!pooled) return;
        const again = await get(server, agent, spec.a);
        assert.equal(again.socket, a.socket, 'A\'s socket was reusable');
        assert.equal(again.reusedSocket, true);
      });
    }
  });

  it('requests with equal options in new objects do share a socket', async () => {
    const server = await newServer();
    const agent = newAgent();
    const options = () => ({
      ca: [String(fixtures.ca)],
      key: Buffer.from(fixtures.clientKey),
      cert: `${fixtures.clientCert}`,
      servername: 'localhost',
      minVersion: 'TLSv1.2',
    });

    const first = await get(server, agent, options());
    await waitFor(() => agent.freeSockets[poolOf(first.socket)]?.length === 1);
    const second = await get(server, agent, options());

    assert.equal(second.socket, first.socket);
    assert.equal(second.reusedSocket, true);
    assert.equal(second.seen.client, CLIENT_CN);
    assert.equal(server.accepted, 1);
  });

  describe('Node\'s own checkServerIdentity is no identity: it is what a request without one gets', () => {
    it('a request passing tls.checkServerIdentity shares the pool and socket of one passing none', async () => {
      const server = await newServer();
      const agent = newAgent();
      const none = await get(server, agent, {});
      await waitFor(() => agent.freeSockets[poolOf(none.socket)]?.includes(none.socket) === true);
      const own = await get(server, agent, { checkServerIdentity: tls.checkServerIdentity });
      assert.equal(own.socket, none.socket);
      assert.equal(own.reusedSocket, true);
      assert.equal(server.accepted, 1);
    });

    it('got (which passes it on every request) and https.get share one connection on one HttpsAgent', async () => {
      const clients = await loadClients();
      // got 14 where Node allows it, else got 13.
      const got = clients['got 14 (agent: { http, https })'] ?? clients['got 13 (agent: { http, https })'];
      const server = await newServer();
      const agent = newAgent({ ca: fixtures.ca });
      const viaHttps = () => new Promise((resolve, reject) => {
        https.get(server.url('/'), { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.req.reusedSocket));
        }).on('error', reject);
      });
      const statuses = [];
      const pooled = () => waitFor(() => Object.values(agent.freeSockets).flat().length === 1);
      statuses.push((await got(server.url('/'), agent)).status);
      await pooled();
      assert.equal(await viaHttps(), true, 'https.get reused got\'s connection');
      await pooled();
      statuses.push((await got(server.url('/'), agent)).status);
      await pooled();
      assert.deepEqual(statuses, [200, 200]);
      assert.equal(server.accepted, 1, 'one connection for both clients');
      assert.equal(agent.createSocketCount, 1);
      assert.equal(Object.keys(agent.freeSockets).length, 1, 'one pool');
    });
  });

  describe('TLS sessions are not resumed across server names', () => {
    for (const version of ['TLSv1.3', 'TLSv1.2']) {
      it(`${version}: a new connection resumes the session of its own server name only`, async () => {
        // Every answer closes its connection, so each request needs a new
        // one, which may resume the session the agent cached for its pool.
        const server = await newServer({}, (req, res) => {
          res.setHeader('connection', 'close');
          describeConnection(req, res);
        });
        const agent = newAgent({ maxVersion: version });

        async function connect(servername) {
          const created = agent.createSocketCount;
          const res = await get(server, agent, { servername });
          assert.equal(agent.createSocketCount, created + 1, 'a new connection');
          assert.equal(res.seen.protocol, version);
          // (A server resuming a TLS 1.2 session does not report the name.)
          if (!res.seen.resumed) assert.equal(res.seen.servername, servername);
          assert.equal(res.socket.servername, servername);
          await waitFor(() => agent.closeSocketCount === agent.createSocketCount);
          return res.seen.resumed;
        }

        assert.equal(await connect('localhost'), false, 'first connection to localhost');
        assert.equal(await connect('alt.localhost'), false,
          'alt.localhost must not resume the session made for localhost');
        // The check can see a resumption: each name resumes its own session.
        assert.equal(await connect('localhost'), true, 'second connection to localhost');
        assert.equal(await connect('alt.localhost'), true, 'second connection to alt.localhost');
        assert.equal(server.accepted, 4);
      });
    }
  });
});

// steady-agent/fetch and steady-agent/undici take TLS options per instance,
// never per request: one instance's connections all share them, so there is
// no pool to keep apart, but every option must reach tls.connect.
describe('TLS options of steady-agent/fetch and steady-agent/undici reach every connection', () => {
  const { createFetch } = require('steady-agent/fetch');
  const { createDispatcher } = require('steady-agent/undici');
  const { UNDICI_MAJORS } = require('./support/fetch');
  let server;
  let closers = [];
  before(async () => {
    server = await createHttpsServer(describeConnection, { dhparam: 'auto', maxVersion: 'TLSv1.2', ciphers: TLS12_DHE_CIPHER });
  });
  after(() => server.close());
  afterEach(async () => {
    await Promise.all(closers.map((close) => close()));
    closers = [];
  });

  const dhe = { ca: fixtures.ca, maxVersion: 'TLSv1.2', ciphers: TLS12_DHE_CIPHER };
  const transports = [
    ['createFetch', (options) => {
      const fetch = createFetch(options);
      closers.push(() => fetch.close());
      return (url) => fetch(url);
    }],
    ...UNDICI_MAJORS.filter((entry) => entry.runs).map(({ major, load }) => [`createDispatcher (undici ${major})`, (options) => {
      const undici = load();
      const dispatcher = createDispatcher(undici, options);
      closers.push(() => dispatcher.close());
      return (url) => undici.fetch(url, { dispatcher });
    }]),
  ];
  for (const [name, make] of transports) {
    it(`${name}: minDHSize refuses the server's smaller group`, async () => {
      const plain = await make(dhe)(server.url('/'));
      assert.equal(JSON.parse(await plain.text()).cipher, TLS12_DHE_CIPHER);
      const err = await make({ ...dhe, minDHSize: 8192 })(server.url('/')).then(() => null, (e) => e);
      assert.ok(err, 'the request must fail');
      assert.equal(err.cause?.code, 'ERR_TLS_DH_PARAM_SIZE', String(err.cause ?? err));
    });
  }
});
