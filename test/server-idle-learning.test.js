'use strict';

// Servers that close idle connections without announcing it. When the server
// closes a socket that sat idle in the pool ('end' or 'close' while free, not
// a socket the agent closed), the agent records how long it sat; per origin
// it keeps the shortest such time and caps that origin's free-socket timeout
// at it minus serverTimeoutMargin. agent.serverIdleTimeouts
// shows what it learned; learnServerTimeout: false turns learning off.
const assert = require('node:assert/strict');
const { constants } = require('..');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createScriptedServer, poolOf, rawResponse } = require('./support/raw');
const { request, delay, waitFor } = require('./support/request');
const { createServer } = require('./support/servers');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);
const inPool = (agent, socket) => Object.values(agent.freeSockets).some((list) => list.includes(socket));

describe('learnServerTimeout option', () => {
  for (const protocol of PROTOCOLS) {
    it(`must be a boolean, or 1/0 or their strings (${protocol})`, () => {
      assert.throws(() => createAgent(protocol, { learnServerTimeout: 'yes' }),
        { name: 'InvalidOptionTypeError', code: 'ERR_INVALID_ARG_TYPE', option: 'learnServerTimeout' });
      assert.throws(() => createAgent(protocol, { learnServerTimeout: 2 }),
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

        const learned = agent.serverIdleTimeouts;
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
      const [learned] = Object.values(agent.serverIdleTimeouts);

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
      const [after] = Object.values(agent.serverIdleTimeouts);
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
      const [before] = Object.values(agent.serverIdleTimeouts);
      await learnFrom(server);
      const learned = agent.serverIdleTimeouts;
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

      const learned = agent.serverIdleTimeouts;
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
      assert.deepEqual(agent.serverIdleTimeouts, {});
    });

    it('does not learn from a connection the server closes while it is busy', async () => {
      // The server drops the request: the socket was active, not idle.
      const server = await createScriptedServer(protocol, { respond: () => null });
      servers.push(server);
      agent = createAgent(protocol);
      await assert.rejects(request(server.url('/'), { agent }));
      await waitFor(() => agent.closeSocketCount === 1);
      assert.deepEqual(agent.serverIdleTimeouts, {});
    });

    it('learnServerTimeout: false learns nothing and caps nothing', async () => {
      const server = await silent(600);
      agent = createAgent(protocol, { learnServerTimeout: false, serverTimeoutMargin: 300, freeSocketTimeout: 4000 });
      await learnFrom(server);
      assert.deepEqual(agent.serverIdleTimeouts, {});

      const second = await request(server.url('/'), { agent });
      await waitFor(() => server.connections[1].closed);
      assert.equal(server.connections[1].closedBy, 'server', 'the server closed it again');
      await waitFor(() => second.socket.destroyed);
      assert.deepEqual(agent.serverIdleTimeouts, {});
    });

    it('closes far below a Keep-Alive hint are counted, never believed: the hint stands, as with Node\'s agent', async () => {
      // The server announces timeout=5 but closes after 700 ms idle. At a
      // steady rhythm a restart's or a reset's closes agree as well as a
      // limit's would, and a limit believed below the rhythm opens a
      // connection a request: below 3/4 of the hint, the hint is believed.
      const server = await createScriptedServer(protocol, {
        respond: () => rawResponse('ok', { 'Keep-Alive': 'timeout=5' }),
        idleTimeout: 700,
      });
      servers.push(server);
      agent = createAgent(protocol, { serverTimeoutMargin: 200 });
      for (let i = 0; i < 3; i++) await learnFrom(server);
      assert.deepEqual(agent.serverIdleTimeouts, {}, 'not a limit, however many agree');
      const { serverIdleTimeout } = Object.values(agent.getStats().origins)[0];
      assert.equal(serverIdleTimeout.announced, 5000);
      assert.equal(serverIdleTimeout.learned, null);
      assert.ok(serverIdleTimeout.evidence.some((row) => row.died > 1), JSON.stringify(serverIdleTimeout.evidence));
    });
  });
}

// What is not an idle limit, and limits that correct themselves. Each test
// counts connections and failures; none measures a duration.
for (const protocol of PROTOCOLS) {
  describe(`learning that cannot be fooled (${protocol})`, () => {
    const servers = [];
    let agent;

    afterEach(async () => {
      if (agent) agent.destroy();
      agent = null;
      await Promise.all(servers.splice(0).map((server) => server.close()));
    });

    async function scripted(options) {
      const server = await createScriptedServer(protocol, options);
      servers.push(server);
      return server;
    }

    /** The server closes every connection it holds at once (a restart, or a drain). */
    function drain(server) {
      for (const conn of server.connections) {
        if (conn.closed) continue;
        conn.closedBy ??= 'server';
        conn.socket.destroy();
      }
    }

    /**
     * One request, then, `idleMs` after its socket went free, the server
     * drains (closes every connection): one early close, which a learning
     * agent takes for a (wrong) idle limit.
     */
    async function drainAfterIdle(server, idleMs) {
      await request(server.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      await delay(idleMs);
      drain(server);
    }

    /** A request whose socket then reaches the learned limit and leaves the pool as a probe. */
    async function probed(server) {
      const res = await request(server.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      await waitFor(() => freeCount(agent) === 0);
      return res;
    }

    /**
     * Three sockets freed 150 ms apart (paths /0, /150, /300 answer after
     * that many ms), all closed together 200 ms later by `closeAll`: nothing
     * is learned, and 30 requests 50 ms apart then open at most 2 connections.
     */
    async function assertRestartTeachesNothing(server, closeAll) {
      await Promise.all([0, 150, 300].map((ms) => request(server.url(`/${ms}`), { agent })));
      await waitFor(() => freeCount(agent) === 3);
      await delay(200);
      closeAll();
      await waitFor(() => agent.closeSocketCount === 3);
      assert.deepEqual(agent.serverIdleTimeouts, {});

      const failures = await steady(server, 30, 50);
      assert.deepEqual(failures, []);
      assert.ok(server.accepted - 3 <= 2, `${server.accepted - 3} new connections`);
    }

    /** `count` requests, `gap` ms apart; resolves with the failures. */
    async function steady(server, count, gap) {
      const failures = [];
      for (let i = 0; i < count; i++) {
        if (i > 0) await delay(gap);
        await request(server.url(`/${i}`), { agent }).then(
          (res) => { if (res.body !== 'ok') failures.push(res.body); },
          (err) => failures.push(`${i}: ${err.code || err.message}`),
        );
      }
      return failures;
    }

    // A server with a 5 s idle limit and no hint, whose responses come after
    // the delay in their path: three sockets freed 150 ms apart.
    const delayed = () => scripted({
      idleTimeout: 5000,
      respond: async ({ path }) => {
        await delay(Number(path.slice(1)) || 0);
        return rawResponse('ok');
      },
    });

    it('a restart closing idle sockets of differing idle times together teaches nothing: 30 requests 50 ms apart then use 1 new connection', async () => {
      const server = await delayed();
      agent = createAgent(protocol);
      await assertRestartTeachesNothing(server, () => drain(server));
    });

    it('Node\'s own server draining (server.closeIdleConnections()) teaches nothing either', async () => {
      const node = await createServer(protocol, (req, res) => {
        req.resume();
        setTimeout(() => res.end('ok'), Number(req.url.slice(1)) || 0);
      }, { keepAliveTimeout: 5000 });
      servers.push(node);
      agent = createAgent(protocol);
      await assertRestartTeachesNothing(node, () => node.server.closeIdleConnections());
    });

    it('a single early close (one idle socket drained at 200 ms) does not end keep-alive: 30 requests 50 ms apart, at most 2 new connections', async () => {
      const server = await scripted({ idleTimeout: 5000 });
      agent = createAgent(protocol);
      await drainAfterIdle(server, 200);
      await waitFor(() => agent.closeSocketCount === 1);

      const failures = await steady(server, 30, 50);
      assert.deepEqual(failures, []);
      assert.ok(server.accepted - 1 <= 2, `${server.accepted - 1} new connections`);
    });

    it('a wrong (too low) limit is forgotten within one freeSocketTimeout, and sockets are reused again', async () => {
      const server = await scripted({ idleTimeout: 5000 });
      agent = createAgent(protocol, { freeSocketTimeout: 1000 });
      await drainAfterIdle(server, 200);
      await waitFor(() => Object.keys(agent.serverIdleTimeouts).length === 1);

      // The next socket reaches the wrong limit, leaves the pool as a probe,
      // and outlives it: the server keeps it open for freeSocketTimeout.
      const probe = await probed(server);
      const status = agent.getCurrentStatus();
      assert.equal(probe.socket.destroyed, false, 'the probe is open');
      assert.equal(total(status.freeSockets) + total(status.sockets), 0, 'a probe is neither free nor active');
      await waitFor(() => probe.socket.destroyed && server.connections[1].closed);
      assert.deepEqual(agent.serverIdleTimeouts, {}, 'forgotten');
      assert.equal(server.closedBy('client'), 1, 'the agent ended the probe');

      const before = server.accepted;
      const failures = await steady(server, 5, 400);
      assert.deepEqual(failures, []);
      assert.equal(server.accepted - before, 1, 'one socket for all five: 400 ms gaps are within freeSocketTimeout again');
    });

    it('a low limit is forgotten when its probe outlives it; the next close teaches the real one', async () => {
      // Connection 0 is closed after 200 ms idle, later ones after 1000 ms.
      const server = await scripted({ idleTimeout: (conn) => (conn.id === 0 ? 200 : 1000) });
      agent = createAgent(protocol, { freeSocketTimeout: 4000 });
      await request(server.url('/'), { agent });
      await waitFor(() => server.connections[0].closed);
      await waitFor(() => Object.keys(agent.serverIdleTimeouts).length === 1);
      const [low] = Object.values(agent.serverIdleTimeouts);

      // The probe, still open at 1.5 times the limit, closes: the limit was wrong.
      const probe = await request(server.url('/'), { agent });
      // The server sees the close a moment after the agent made it.
      await waitFor(() => probe.socket.destroyed && server.connections[1].closed, { limit: 8000 });
      assert.equal(server.connections[1].closedBy, 'client');
      assert.deepEqual(agent.serverIdleTimeouts, {});

      const next = await request(server.url('/'), { agent });
      await waitFor(() => next.socket.destroyed && server.connections[2].closed, { limit: 8000 });
      assert.equal(server.connections[2].closedBy, 'server');
      const [learned] = Object.values(agent.serverIdleTimeouts);
      assert.ok(learned > low + 500, `learned ${learned} ms after ${low} ms`);
    });

    it('a correct limit stays: the probe is closed by the server at the same limit', async () => {
      const server = await scripted({ idleTimeout: 600 });
      agent = createAgent(protocol);
      for (let i = 0; i < 3; i++) {
        const res = await request(server.url('/'), { agent });
        await waitFor(() => res.socket.destroyed);
      }
      assert.equal(server.closedBy('server'), 3);
      const [limit] = Object.values(agent.serverIdleTimeouts);
      assert.ok(limit >= 500 && limit < 1500, `limit ${limit} ms`);
      // Gaps within the limit's allowance reuse one socket.
      const before = server.accepted;
      assert.deepEqual(await steady(server, 5, 200), []);
      assert.equal(server.accepted - before, 1);
    });

    it('agent.destroy() closes a probe', async () => {
      const server = await scripted({ idleTimeout: 5000 });
      agent = createAgent(protocol);
      await drainAfterIdle(server, 100);
      await waitFor(() => Object.keys(agent.serverIdleTimeouts).length === 1);
      const probe = await probed(server);
      assert.equal(probe.socket.destroyed, false);
      agent.destroy();
      await waitFor(() => server.connections[1].closed);
      assert.equal(server.connections[1].closedBy, 'client');
      assert.equal(probe.socket.destroyed, true);
    });

    it('a 300 ms limit with requests 100 ms apart: at most 3 connections for 30 requests', async () => {
      const server = await scripted({ idleTimeout: 300 });
      agent = createAgent(protocol);
      const first = await request(server.url('/'), { agent });
      await waitFor(() => first.socket.destroyed);
      assert.equal(Object.keys(agent.serverIdleTimeouts).length, 1);

      const before = server.accepted;
      assert.deepEqual(await steady(server, 30, 100), []);
      assert.ok(server.accepted - before <= 3, `${server.accepted - before} connections`);
    });

    // The server closes a connection when a request comes after it sat idle
    // for 300 ms or more, as a middlebox that drops idle connections without
    // a word: the request fails before any byte of its response, and a probe
    // sees nothing (it is still open at its bound). The first collision sets
    // a tentative limit, the probe wrongly forgets it, and the next
    // collision, counted with the first, sets it again: no probe can confirm
    // it, but the requests after it keep within it.
    for (const how of ['fin', 'reset']) {
      it(`learns from the collisions themselves: at most two requests lost (server ${how})`, async () => {
        const lastReply = new Map();
        const server = await scripted({
          respond: (req, conn) => {
            const last = lastReply.get(conn);
            if (last !== undefined && performance.now() - last >= 300) {
              if (how === 'reset') conn.tcp.resetAndDestroy();
              return null;
            }
            lastReply.set(conn, performance.now());
            return rawResponse('ok');
          },
        });
        agent = createAgent(protocol);
        assert.deepEqual(await steady(server, 1, 0), []);
        const failures = await steady(server, 6, 450);
        assert.ok(failures.length >= 1 && failures.length <= 2, `failures: ${failures.join(', ')}`);
        assert.match(failures[0], /^1: (ECONNRESET|EPIPE|socket hang up)/);
        const [learned] = Object.values(agent.serverIdleTimeouts);
        assert.ok(learned >= 400, `learned ${learned} ms`);
      });
    }

    it('learnServerTimeout: false: no collision learned, no probe', async () => {
      const server = await scripted({ idleTimeout: 5000 });
      agent = createAgent(protocol, { learnServerTimeout: false });
      await drainAfterIdle(server, 100);
      await waitFor(() => agent.closeSocketCount === 1);
      assert.deepEqual(agent.serverIdleTimeouts, {});
      assert.deepEqual(await steady(server, 3, 200), []);
      assert.equal(server.accepted, 2);
    });
  });
}
