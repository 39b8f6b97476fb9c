'use strict';

// Connections that never get going: refused, a name that does not resolve, a
// TLS handshake that fails (untrusted CA, wrong name, a server that hangs up
// or never answers). Each failure reaches the request as an error, is counted
// in createSocketErrorCount, leaves no socket behind, and does not strand the
// requests queued behind it for the same origin. TLS material that cannot be
// used at all fails before a socket exists, and leaves nothing behind either.
const assert = require('node:assert/strict');
const { HttpAgent, HttpsAgent } = require('../');
const { createHttpServer, createHttpsServer, createRawServer, tlsClientOptions, refusedPort, fixtures } = require('./support/servers');
const { request, waitFor } = require('./support/request');

// A resolver that cannot be reached answers EAI_AGAIN rather than ENOTFOUND;
// either way the name did not resolve.
const UNRESOLVED = ['ENOTFOUND', 'EAI_AGAIN'];

/** The request's error, or a failure if the request succeeded. */
async function failure(url, options) {
  try {
    const res = await request(url, options);
    assert.fail(`expected ${url} to fail, got ${res.status}`);
  } catch (err) {
    if (err instanceof assert.AssertionError) throw err;
    return err;
  }
}

/** Waits until every socket the agent made has closed, then checks none is left. */
async function assertNothingLeft(agent) {
  await waitFor(() => agent.closeSocketCount === agent.createSocketCount);
  // Core's maps have no prototype: compare their keys.
  assert.deepEqual(Object.keys(agent.sockets), [], 'origins in agent.sockets');
  assert.deepEqual(Object.keys(agent.freeSockets), [], 'origins in agent.freeSockets');
  assert.deepEqual(Object.keys(agent.requests), [], 'origins in agent.requests');
  const status = agent.getCurrentStatus();
  assert.deepEqual(status.sockets, {});
  assert.deepEqual(status.freeSockets, {});
  assert.deepEqual(status.requests, {});
}

function assertCode(err, codes) {
  assert.ok(codes.includes(err.code), `error code ${err.code} (${err.message}), expected one of ${codes.join(', ')}`);
}

describe('connection failures', () => {
  const servers = [];
  const agents = [];

  afterEach(async () => {
    for (const agent of agents.splice(0)) agent.destroy();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  function track(agent) {
    agents.push(agent);
    return agent;
  }

  // Each failure: how to get a URL (and request options) that fail, the agent
  // options it needs, and the error codes the request may get.
  const failures = [
    {
      title: 'connection refused',
      protocols: ['http:', 'https:'],
      async setup(protocol) {
        return { url: `${protocol}//127.0.0.1:${await refusedPort()}/`, options: tlsClientOptions };
      },
      codes: ['ECONNREFUSED'],
    },
    {
      title: 'a name that does not resolve (nothing.invalid)',
      protocols: ['http:', 'https:'],
      async setup(protocol) {
        return { url: `${protocol}//nothing.invalid:${await refusedPort()}/`, options: tlsClientOptions };
      },
      codes: UNRESOLVED,
    },
    {
      title: 'a TLS handshake with a certificate from an untrusted CA',
      protocols: ['https:'],
      async setup() {
        const server = await createHttpsServer();
        servers.push(server);
        return { url: server.url('/'), options: { ca: fixtures.otherCa } };
      },
      codes: ['UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
      handshake: true,
    },
    {
      title: 'a TLS handshake with a certificate for another name',
      protocols: ['https:'],
      async setup() {
        const server = await createHttpsServer();
        servers.push(server);
        return { url: server.url('/'), options: { ca: fixtures.ca, servername: 'other.example' } };
      },
      codes: ['ERR_TLS_CERT_ALTNAME_INVALID'],
      handshake: true,
    },
    {
      title: 'a server that hangs up before the TLS handshake',
      protocols: ['https:'],
      async setup() {
        // Plain TCP: accepts, then closes without a word of TLS.
        const server = await createRawServer((socket) => socket.destroy());
        servers.push(server);
        return { url: `https://127.0.0.1:${server.port}/`, options: tlsClientOptions };
      },
      codes: ['ECONNRESET'],
    },
    {
      title: 'a server that never answers the TLS handshake',
      protocols: ['https:'],
      async setup() {
        // Plain TCP: accepts and stays silent, until the agent's timeout
        // (short: five requests wait it out one after another, while the
        // healthy origin's handshake on loopback takes a few ms).
        const server = await createRawServer((socket) => socket.on('error', () => {}));
        servers.push(server);
        return { url: `https://127.0.0.1:${server.port}/`, options: tlsClientOptions };
      },
      agentOptions: { timeout: 200 },
      codes: ['ERR_SOCKET_TIMEOUT'],
      timeouts: true,
    },
  ];

  // TLS material that cannot make a secure context fails before any socket
  // exists (Node's own agent throws from https.request() itself; the helper
  // takes a throw or an 'error' event alike).
  describe('TLS options that cannot make a secure context', () => {
    const unusable = [
      ['a pfx with the wrong passphrase', { pfx: fixtures.clientPfx, passphrase: 'wrong' }, /mac verify failure|bad decrypt/i],
      ['a key that does not match the certificate', { key: fixtures.serverKey, cert: fixtures.clientCert }, /key values mismatch/i],
    ];
    for (const [title, options, message] of unusable) {
      it(`${title}: the request fails and leaves no pool behind`, async () => {
        const server = await createHttpsServer();
        servers.push(server);
        const agent = track(new HttpsAgent({ maxSockets: 1 }));

        const errors = await Promise.all([1, 2, 3].map(() => failure(server.url('/'), { ca: fixtures.ca, ...options, agent })));

        for (const err of errors) assert.match(err.message, message);
        assert.equal(agent.createSocketCount, 0, 'no socket was made');
        // Core's addRequest creates the pool's entry in agent.sockets before
        // createConnection throws, and nothing removes it.
        assert.deepEqual(Object.keys(agent.sockets), [], 'origins in agent.sockets');
        assert.deepEqual(agent.getCurrentStatus().sockets, {}, 'getCurrentStatus().sockets');
        assert.deepEqual(Object.keys(agent.requests), [], 'origins in agent.requests');
        // The agent still serves the same server with usable options.
        const res = await request(server.url('/after'), { ca: fixtures.ca, agent });
        assert.equal(res.body, 'ok GET /after');
      });
    }
  });

  for (const { title, protocols, setup, codes, handshake, agentOptions, timeouts } of failures) {
    for (const protocol of protocols) {
      describe(`${title} (${protocol.slice(0, -1)})`, () => {
        function newAgent(options = {}) {
          const all = { ...agentOptions, ...options };
          return track(protocol === 'https:' ? new HttpsAgent(all) : new HttpAgent(all));
        }

        it('reaches the request as an error, counted in createSocketErrorCount, leaving no socket', async () => {
          const { url, options } = await setup(protocol);
          const agent = newAgent();

          const err = await failure(url, { ...options, agent });

          assertCode(err, codes);
          assert.equal(agent.createSocketCount, 1);
          assert.equal(agent.createSocketErrorCount, 1, 'createSocketErrorCount');
          assert.equal(agent.errorSocketCount, 0, 'errorSocketCount counts errors after connect only');
          assert.equal(agent.requestCount, 0);
          assert.equal(agent.timeoutSocketCount, timeouts ? 1 : 0, 'timeoutSocketCount');
          await assertNothingLeft(agent);
          assert.equal(agent.getCurrentStatus().createSocketErrorCount, 1);
        });

        it('fails every request queued behind maxSockets: 1, none left waiting', async () => {
          const { url, options } = await setup(protocol);
          const agent = newAgent({ maxSockets: 1 });

          const pending = Array.from({ length: 5 }, () => failure(url, { ...options, agent }));
          // Four of them wait for the one socket the origin may have.
          assert.equal(agent.getCurrentStatus().requests[Object.keys(agent.requests)[0]], 4);
          const errors = await Promise.all(pending);

          for (const err of errors) assertCode(err, codes);
          // Each queued request got a connection of its own once the previous
          // one failed, and each of those failed the same way.
          assert.equal(agent.createSocketCount, 5);
          assert.equal(agent.createSocketErrorCount, 5, 'createSocketErrorCount');
          assert.equal(agent.errorSocketCount, 0);
          await assertNothingLeft(agent);
        });

        it('does not keep a healthy origin waiting behind it (maxTotalSockets: 1)', async () => {
          const { url, options } = await setup(protocol);
          const healthy = protocol === 'https:' ? await createHttpsServer() : await createHttpServer();
          servers.push(healthy);
          const agent = newAgent({ maxTotalSockets: 1 });

          const failed = Array.from({ length: 3 }, () => failure(url, { ...options, agent }));
          const served = request(healthy.url('/fine'), { ...tlsClientOptions, agent });
          const [errors, res] = await Promise.all([Promise.all(failed), served]);

          for (const err of errors) assertCode(err, codes);
          assert.equal(res.status, 200);
          assert.equal(res.body, 'ok GET /fine');
          assert.equal(agent.createSocketErrorCount, 3);
          res.socket.destroy();
          await assertNothingLeft(agent);
        });

        if (handshake) {
          it('pools nothing from a failed handshake: the next request fails the same way', async () => {
            const { url, options } = await setup(protocol);
            const agent = newAgent();

            const first = await failure(url, { ...options, agent });
            const second = await failure(url, { ...options, agent });

            assertCode(first, codes);
            assertCode(second, codes);
            assert.equal(agent.createSocketCount, 2);
            assert.equal(agent.createSocketErrorCount, 2);
            await assertNothingLeft(agent);
          });
        }
      });
    }
  }
});
