'use strict';

// Servers that close idle connections without announcing it. When the server
// closes a socket that sat idle in the pool ('end' or 'close' while free, not
// a socket the agent closed), the agent records how long it sat; per origin
// it keeps the shortest such time and caps that origin's free-socket timeout
// at it minus serverTimeoutMargin. getCurrentStatus().serverIdleTimeouts
// shows what it learned; learnServerTimeout: false turns learning off.
const assert = require('node:assert/strict');
const { constants } = require('..');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createScriptedServer, poolOf, rawResponse } = require('./support/raw');
const { request, waitFor } = require('./support/request');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);
const inPool = (agent, socket) => Object.values(agent.freeSockets).some((list) => list.includes(socket));

describe('learnServerTimeout option', () => {
  for (const protocol of PROTOCOLS) {
    it(`must be a boolean (${protocol})`, () => {
      assert.throws(() => createAgent(protocol, { learnServerTimeout: 'yes' }),
        { name: 'InvalidOptionTypeError', code: 'ERR_INVALID_ARG_TYPE', option: 'learnServerTimeout' });
      assert.throws(() => createAgent(protocol, { learnServerTimeout: 1 }),
        { code: 'ERR_INVALID_ARG_TYPE', option: 'learnServerTimeout' });
    });
  }
});

for (const protocol of PROTOCOLS) {
  describe(`learning a server's unannounced idle limit (${protocol})`, () => {
    const servers = [];
    let agent;

    afterEach(async () => {
      if (agent) agent.destroy();
      agent = null;
      await Promise.all(servers.splice(0).map((server) => server.close()));
    });

    /** A server that sends no Keep-Alive hint and closes connections idle for `idleTimeout`. */
    async function silent(idleTimeout, idleClose) {
      const server = await createScriptedServer(protocol, { idleTimeout, idleClose });
      servers.push(server);
      return server;
    }

    /** One request, then wait until the server closes the connection while it is free. */
    async function learnFrom(server) {
      const started = Date.now();
      const res = await request(server.url('/'), { agent });
      assert.equal(res.body, 'ok');
      const conn = server.connections[server.connections.length - 1];
      await waitFor(() => conn.closed);
      await waitFor(() => res.socket.destroyed && !inPool(agent, res.socket));
      assert.equal(conn.closedBy, 'server');
      return { res, waited: Date.now() - started };
    }

    for (const idleClose of ['destroy', 'end', 'reset']) {
      it(`records the idle time after which the server closed a pooled socket (server ${idleClose})`, async () => {
        const server = await silent(600, idleClose);
        agent = createAgent(protocol, { serverTimeoutMargin: 300 });
        const { res, waited } = await learnFrom(server);

        const learned = agent.getCurrentStatus().serverIdleTimeouts;
        const pool = poolOf(res.socket[constants.SOCKET_NAME]);
        assert.ok(pool.startsWith(`127.0.0.1:${server.port}:`), pool);
        assert.deepEqual(Object.keys(learned), [pool]);
        assert.equal(typeof learned[pool], 'number');
        assert.ok(learned[pool] > 0 && learned[pool] <= waited, `learned ${learned[pool]} ms, waited ${waited} ms`);
      });
    }

    // The next idle socket leaves the pool before the server's limit, so no
    // request can get it; it stays open as the origin's probe, and the
    // server closing it at the same limit confirms what was learned.
    it('caps that origin\'s free-socket timeout: the next idle socket leaves the pool before the server closes it', async () => {
      const server = await silent(800);
      agent = createAgent(protocol, { serverTimeoutMargin: 300, freeSocketTimeout: 4000 });
      await learnFrom(server);
      const [learned] = Object.values(agent.getCurrentStatus().serverIdleTimeouts);

      const second = await request(server.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      assert.equal(second.socket.destroyed, false, 'kept: the learned limit is above the margin');
      await waitFor(() => freeCount(agent) === 0);
      assert.equal(server.connections[1].closed, false, 'out of the pool before the server\'s limit');
      assert.equal(inPool(agent, second.socket), false);
      const third = await request(server.url('/'), { agent });
      assert.equal(third.reusedSocket, false, 'the probe is never handed out');
      await waitFor(() => server.connections[1].closed);
      assert.equal(server.connections[1].closedBy, 'server');
      const [after] = Object.values(agent.getCurrentStatus().serverIdleTimeouts);
      assert.ok(Math.abs(after - learned) <= 100, `the limit stays: ${learned} ms, then ${after} ms`);
    });

    it('a learned limit within the margin shortens keep-alive instead of ending it', async () => {
      const server = await silent(300);
      agent = createAgent(protocol, { serverTimeoutMargin: 1000 });
      await learnFrom(server);
      const a = await request(server.url('/'), { agent });
      const b = await request(server.url('/'), { agent });
      assert.ok(b.socket === a.socket, 'the same socket');
      assert.equal(b.reusedSocket, true);
      assert.equal(server.accepted, 2);
      assert.equal(server.closedBy('server'), 1);
    });

    it('keeps the shortest idle time seen: a server that closes sooner lowers the limit', async () => {
      // Connection 0 is closed after 1000 ms idle, later ones after 400 ms:
      // the cap learned from the first (about 1000 - 100) does not save the
      // second from the shorter limit, and the agent learns the lower one.
      const server = await createScriptedServer(protocol, {
        idleTimeout: (conn) => (conn.id === 0 ? 1000 : 400),
      });
      servers.push(server);
      agent = createAgent(protocol, { serverTimeoutMargin: 100 });

      await learnFrom(server);
      const [before] = Object.values(agent.getCurrentStatus().serverIdleTimeouts);
      await learnFrom(server);
      const learned = agent.getCurrentStatus().serverIdleTimeouts;
      assert.equal(Object.keys(learned).length, 1);
      const [after] = Object.values(learned);
      assert.ok(after < before, `learned ${after} ms after ${before} ms`);
      assert.equal(server.closedBy('server'), 2);
    });

    it('learns per origin: another origin\'s sockets keep the full freeSocketTimeout', async () => {
      const closing = await silent(500);
      const patient = await silent(0);
      agent = createAgent(protocol, { serverTimeoutMargin: 200, freeSocketTimeout: 4000 });
      const kept = await request(patient.url('/'), { agent });
      await learnFrom(closing);

      const learned = agent.getCurrentStatus().serverIdleTimeouts;
      assert.deepEqual(Object.keys(learned).map((pool) => pool.startsWith(`127.0.0.1:${closing.port}:`)), [true]);
      const again = await request(patient.url('/'), { agent });
      assert.ok(again.socket === kept.socket, 'the patient origin\'s socket outlived the other origin\'s limit');
      assert.equal(again.reusedSocket, true);
    });

    it('does not learn from a socket the agent timed out itself', async () => {
      const server = await silent(5000);
      agent = createAgent(protocol, { freeSocketTimeout: 200 });
      const res = await request(server.url('/'), { agent });
      await waitFor(() => res.socket.destroyed && agent.closeSocketCount === 1);
      await waitFor(() => server.connections[0].closed);
      assert.equal(server.connections[0].closedBy, 'client');
      assert.equal(agent.getCurrentStatus().timeoutSocketCount, 1);
      assert.deepEqual(agent.getCurrentStatus().serverIdleTimeouts, {});
    });

    it('does not learn from a connection the server closes while it is busy', async () => {
      // The server drops the request: the socket was active, not idle.
      const server = await createScriptedServer(protocol, { respond: () => null });
      servers.push(server);
      agent = createAgent(protocol);
      await assert.rejects(request(server.url('/'), { agent }));
      await waitFor(() => agent.closeSocketCount === 1);
      assert.deepEqual(agent.getCurrentStatus().serverIdleTimeouts, {});
    });

    it('learnServerTimeout: false learns nothing and caps nothing', async () => {
      const server = await silent(600);
      agent = createAgent(protocol, { learnServerTimeout: false, serverTimeoutMargin: 300, freeSocketTimeout: 4000 });
      await learnFrom(server);
      assert.deepEqual(agent.getCurrentStatus().serverIdleTimeouts, {});

      const second = await request(server.url('/'), { agent });
      await waitFor(() => server.connections[1].closed);
      assert.equal(server.connections[1].closedBy, 'server', 'the server closed it again');
      await waitFor(() => second.socket.destroyed);
      assert.deepEqual(agent.getCurrentStatus().serverIdleTimeouts, {});
    });

    it('a learned limit lowers a larger Keep-Alive hint too (smallest limit wins)', async () => {
      // The server announces timeout=5 but closes after 700 ms idle.
      const server = await createScriptedServer(protocol, {
        respond: () => rawResponse('ok', { 'Keep-Alive': 'timeout=5' }),
        idleTimeout: 700,
      });
      servers.push(server);
      agent = createAgent(protocol, { serverTimeoutMargin: 200 });
      await learnFrom(server);
      await request(server.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      await waitFor(() => freeCount(agent) === 0);
      assert.equal(server.connections[1].closed, false, 'out of the pool before the server\'s 700 ms');
    });
  });
}
