'use strict';

// The pool events on diagnostics_channel (lib/events.js), and why sockets
// close (lib/close_reasons.js): every channel and every close reason, over
// real http and https servers on loopback.
const assert = require('node:assert/strict');
const net = require('node:net');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer } = require('./support/servers');
const { createScriptedServer, rawResponse } = require('./support/raw');
const { request, waitFor } = require('./support/request');
const { watchAgent } = require('./support/channels');
const { CLOSE_REASONS } = require('../lib/state/close_reasons');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);

/** A port nothing listens on: a server's, once it has closed. */
async function closedPort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

for (const protocol of PROTOCOLS) {
  const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');

  describe(`diagnostics_channel events (${protocol})`, () => {
    let server;
    let agent;
    let watch;

    afterEach(async () => {
      if (watch) watch.stop();
      if (agent) agent.destroy();
      if (server) await server.close();
      watch = null;
      agent = null;
      server = null;
    });

    /** Starts a watched agent; the close events of its sockets come in watch.of('socket:close'). */
    function start(options) {
      agent = createAgent(protocol, options);
      watch = watchAgent(agent);
      return agent;
    }

    const closes = () => watch.of('socket:close');

    /** The one close event, checked against getStats(); returns it. */
    async function closedFor(reason, { requests }) {
      await waitFor(() => closes().length === 1);
      const [closed] = closes();
      assert.equal(closed.reason, reason);
      assert.equal(closed.requests, requests);
      assert.equal(typeof closed.lifetimeMs, 'number');
      assert.ok(closed.lifetimeMs >= 0);
      assert.equal(closed.socket.destroyed, true);
      const stats = agent.getStats().origins[closed.origin];
      assert.deepEqual(stats.closeReasons, { [reason]: 1 });
      assert.equal(stats.socketsClosed, 1);
      return closed;
    }

    describe('socket:create, socket:free, socket:reuse, server-idle-limit', () => {
      it('two requests on one socket: create, the announced limit, free, reuse, free', async () => {
        server = await createServer(protocol); // Keep-Alive: timeout=30
        start();
        const first = await request(server.url('/1'), { agent });
        await waitFor(() => freeCount(agent) === 1);
        const second = await request(server.url('/2'), { agent });
        await waitFor(() => freeCount(agent) === 1);

        assert.deepEqual(watch.all.map((event) => event.name),
          ['socket:create', 'server-idle-limit', 'socket:free', 'socket:reuse', 'socket:free']);
        const [created] = watch.of('socket:create');
        assert.equal(created.agent, agent);
        assert.equal(created.socket, first.socket);
        assert.deepEqual(Object.keys(agent.getCurrentStatus().freeSockets), [created.origin]);
        assert.equal(created.host, '127.0.0.1');
        assert.equal(created.port, server.port);

        const [limit] = watch.of('server-idle-limit');
        assert.deepEqual({ ms: limit.ms, source: limit.source, origin: limit.origin }, { ms: 30000, source: 'announced', origin: created.origin });
        assert.equal(limit.socket, undefined);

        for (const free of watch.of('socket:free')) {
          assert.equal(free.socket, first.socket);
          assert.equal(free.origin, created.origin);
          // 4 s default, shorter than the 30 s hint less the 1 s margin.
          assert.equal(free.freeTimeoutMs, 4000);
          assert.equal(free.limitedBy, 'freeSocketTimeout');
        }

        const [reused] = watch.of('socket:reuse');
        assert.equal(reused.socket, second.socket);
        assert.equal(second.socket, first.socket);
        assert.equal(reused.origin, created.origin);
        assert.equal(typeof reused.idleMs, 'number');
        assert.ok(reused.idleMs >= 0);
      });

      it('socket:free limitedBy \'hint\': the server\'s Keep-Alive timeout less the margin', async () => {
        server = await createServer(protocol, undefined, { keepAliveTimeout: 3000 });
        start();
        await request(server.url(), { agent });
        await waitFor(() => watch.of('socket:free').length === 1);
        const [free] = watch.of('socket:free');
        assert.equal(free.limitedBy, 'hint');
        assert.equal(free.freeTimeoutMs, 2000);
      });

      it('socket:free limitedBy \'ttl\': what is left of socketActiveTTL', async () => {
        server = await createServer(protocol);
        start({ socketActiveTTL: 20000, freeSocketTimeout: 0 });
        await request(server.url(), { agent });
        await waitFor(() => watch.of('socket:free').length === 1);
        const [free] = watch.of('socket:free');
        assert.equal(free.limitedBy, 'ttl');
        assert.ok(free.freeTimeoutMs > 0 && free.freeTimeoutMs <= 20000, String(free.freeTimeoutMs));
      });

      it('a server that closes idle sockets unannounced: server-close, the learned limit, then limitedBy \'learned\'', async () => {
        server = await createScriptedServer(protocol, { idleTimeout: 150 });
        start({ serverTimeoutMargin: 0, freeSocketTimeout: 60000 });
        await request(server.url('/1'), { agent });
        const closed = await closedFor(CLOSE_REASONS.SERVER_CLOSE, { requests: 1 });

        const learned = watch.of('server-idle-limit').filter((event) => event.source === 'learned');
        assert.equal(learned.length, 1);
        assert.equal(learned[0].origin, closed.origin);
        assert.ok(learned[0].ms > 0);
        assert.equal(agent.getStats().origins[closed.origin].serverIdleTimeout.learned, learned[0].ms);

        await request(server.url('/2'), { agent });
        await waitFor(() => watch.of('socket:free').length === 2);
        const free = watch.of('socket:free')[1];
        assert.equal(free.limitedBy, 'learned');
        // The limit is measured on a sub-millisecond clock; the event reports whole ms.
        assert.equal(Math.round(free.freeTimeoutMs), learned[0].ms);
      });
    });

    describe('request:queued and request:dequeued', () => {
      it('requests behind maxSockets: queued with the request, dequeued with the socket and waitedMs', async () => {
        server = await createServer(protocol);
        start({ maxSockets: 1 });
        const results = await Promise.all([1, 2, 3].map((i) => request(server.url(`/${i}`), { agent })));
        const queued = watch.of('request:queued');
        assert.deepEqual(queued.map((event) => event.request), [results[1].req, results[2].req]);
        const dequeued = watch.of('request:dequeued');
        assert.deepEqual(dequeued.map((event) => event.request), [results[1].req, results[2].req]);
        for (const event of dequeued) {
          assert.equal(event.socket, results[0].socket);
          assert.equal(typeof event.waitedMs, 'number');
          assert.ok(event.waitedMs >= 0);
          assert.equal(event.origin, queued[0].origin);
        }
        // A socket handed straight from one request to the next, never idle.
        assert.deepEqual(watch.of('socket:reuse').map((event) => event.idleMs), [0, 0]);
      });
    });

    describe('socket:close reasons', () => {
      it('\'free-timeout\': idle in the pool for freeSocketTimeout', async () => {
        server = await createServer(protocol);
        start({ freeSocketTimeout: 50 });
        await request(server.url(), { agent });
        await closedFor(CLOSE_REASONS.FREE_TIMEOUT, { requests: 1 });
        assert.equal(Object.values(agent.getStats().origins)[0].timeouts, 1);
      });

      it('\'ttl\': socketActiveTTL ran out while it served a request', async () => {
        server = await createServer(protocol, (req, res) => setTimeout(() => res.end('late'), 30));
        start({ socketActiveTTL: 10 });
        await request(server.url(), { agent });
        await closedFor(CLOSE_REASONS.TTL, { requests: 1 });
      });

      it('\'keep-alive-max\': the server allows no further request (max=0)', async () => {
        server = await createScriptedServer(protocol, { respond: () => rawResponse('ok', { 'Keep-Alive': 'timeout=5, max=0' }) });
        start();
        await request(server.url(), { agent });
        await closedFor(CLOSE_REASONS.KEEP_ALIVE_MAX, { requests: 1 });
      });

      it('\'error\': the connection is refused', async () => {
        const port = await closedPort();
        start();
        await assert.rejects(request(`${protocol}//127.0.0.1:${port}/`, { agent }), { code: 'ECONNREFUSED' });
        const closed = await closedFor(CLOSE_REASONS.ERROR, { requests: 0 });
        assert.equal(agent.getStats().origins[closed.origin].errors, 1);
      });

      it('\'active-timeout\': the server does not answer within timeout', async () => {
        let answer;
        server = await createScriptedServer(protocol, { respond: () => new Promise((resolve) => { answer = resolve; }) });
        start({ timeout: 100 });
        await assert.rejects(request(server.url(), { agent }), { code: 'ERR_SOCKET_TIMEOUT' });
        const closed = await closedFor(CLOSE_REASONS.ACTIVE_TIMEOUT, { requests: 0 });
        assert.equal(agent.getStats().origins[closed.origin].timeouts, 1);
        answer(null);
      });

      it('\'not-kept\': the server answered Connection: close', async () => {
        server = await createServer(protocol, (req, res) => {
          res.setHeader('connection', 'close');
          res.end('bye');
        });
        start();
        await request(server.url(), { agent });
        await closedFor(CLOSE_REASONS.NOT_KEPT, { requests: 0 });
      });

      it('\'not-kept\': the pool is full (maxFreeSockets)', async () => {
        server = await createServer(protocol);
        start({ maxFreeSockets: 1 });
        await Promise.all([1, 2].map((i) => request(server.url(`/${i}`), { agent })));
        await closedFor(CLOSE_REASONS.NOT_KEPT, { requests: 1 });
        assert.equal(freeCount(agent), 1);
      });

      it('\'unusable\': a pooled socket found closed when a request picks it', async () => {
        server = await createServer(protocol);
        start();
        const first = await request(server.url('/1'), { agent });
        await waitFor(() => freeCount(agent) === 1);
        first.socket.end(); // our own half-close: no longer writable
        const second = await request(server.url('/2'), { agent });
        assert.notEqual(second.socket, first.socket);
        await closedFor(CLOSE_REASONS.UNUSABLE, { requests: 1 });
      });

      it('\'destroy\': agent.destroy() closes a free socket', async () => {
        server = await createServer(protocol);
        start();
        await request(server.url(), { agent });
        await waitFor(() => freeCount(agent) === 1);
        agent.destroy();
        await closedFor(CLOSE_REASONS.DESTROY, { requests: 1 });
      });

      it('\'destroy\': agent.destroy() closes an active socket', async () => {
        let answer;
        server = await createScriptedServer(protocol, { respond: () => new Promise((resolve) => { answer = resolve; }) });
        start();
        const pending = request(server.url(), { agent });
        await waitFor(() => answer !== undefined);
        agent.destroy();
        // Sent and waiting for its response: 'socket hang up', as with Node's agent.
        await assert.rejects(pending, { code: 'ECONNRESET', message: 'socket hang up' });
        await closedFor(CLOSE_REASONS.DESTROY, { requests: 0 });
        answer(null);
      });

      it('\'aborted\': the caller destroys its request before the response', async () => {
        let answer;
        server = await createScriptedServer(protocol, { respond: () => new Promise((resolve) => { answer = resolve; }) });
        start();
        const req = mod.request(server.url(), { agent });
        req.on('error', () => {});
        req.end();
        await waitFor(() => answer !== undefined);
        req.destroy();
        await closedFor(CLOSE_REASONS.ABORTED, { requests: 0 });
        answer(null);
      });

      it('\'upgrade\': the socket left the agent for an upgrade, and its new owner closed it', async () => {
        server = await createServer(protocol);
        server.server.on('upgrade', (req, socket) => {
          socket.on('error', () => {});
          socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
        });
        start();
        const upgraded = await new Promise((resolve, reject) => {
          const req = mod.request(server.url(), { agent, headers: { Connection: 'Upgrade', Upgrade: 'echo' } });
          req.on('upgrade', (res, socket) => resolve(socket));
          req.on('error', reject);
          req.end();
        });
        upgraded.destroy();
        await closedFor(CLOSE_REASONS.UPGRADE, { requests: 0 });
      });
    });
  });
}

describe('diagnostics_channel events: no subscriber, no message', () => {
  it('an agent nobody watches still keeps its stats', async () => {
    const server = await createServer('http:');
    const agent = createAgent('http:');
    try {
      await request(server.url(), { agent });
      const [origin] = Object.values(agent.getStats().origins);
      assert.equal(origin.socketsCreated, 1);
      assert.equal(origin.requests, 1);
    } finally {
      agent.destroy();
      await server.close();
    }
  });

  it('reuse after a subscriber came late reports idleMs null (the socket entered the pool unwatched)', async () => {
    const server = await createServer('http:');
    const agent = createAgent('http:');
    let watch;
    try {
      await request(server.url('/1'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      watch = watchAgent(agent, ['socket:reuse']);
      await request(server.url('/2'), { agent });
      assert.deepEqual(watch.of('socket:reuse').map((event) => event.idleMs), [null]);
    } finally {
      if (watch) watch.stop();
      agent.destroy();
      await server.close();
    }
  });

  it('a subscriber may unsubscribe itself while being called (Node 18\'s publish() would throw)', async () => {
    const dc = require('node:diagnostics_channel');
    const server = await createServer('http:');
    const agent = createAgent('http:');
    const seen = [];
    const onCreate = (message) => {
      seen.push(message.origin);
      dc.unsubscribe('steady-agent:socket:create', onCreate);
    };
    dc.subscribe('steady-agent:socket:create', onCreate);
    try {
      await request(server.url('/1'), { agent });
      await request(server.url('/2'), { agent, headers: { connection: 'close' } });
      await request(server.url('/3'), { agent });
      assert.equal(seen.length, 1);
      assert.equal(agent.createSocketCount, 2);
    } finally {
      dc.unsubscribe('steady-agent:socket:create', onCreate);
      agent.destroy();
      await server.close();
    }
  });

  it('lists every documented close reason, \'agent-close\' reserved for a future agent.close()', () => {
    assert.deepEqual(Object.values(CLOSE_REASONS).sort(), [
      'aborted', 'active-timeout', 'agent-close', 'destroy', 'dns', 'error', 'free-timeout',
      'keep-alive-max', 'not-kept', 'server-close', 'stale-peer', 'total-limit', 'ttl', 'unusable', 'upgrade',
    ]);
  });
});

describe('server-idle-limit: a learned limit forgotten to make room', () => {
  it('the 257th origin with a learned limit makes the agent forget the oldest: ms null', async function () {
    this.timeout(30000);
    // One server; 257 origins apart by local address (127.0.0.0/8 is all loopback).
    // Long enough that a loaded event loop still sees each socket go free
    // before the server closes it (at 20 ms, some closed with the response).
    const server = await createScriptedServer('http:', { idleTimeout: 250 });
    const agent = createAgent('http:', { serverTimeoutMargin: 0, freeSocketTimeout: 60000 });
    const watch = watchAgent(agent, ['server-idle-limit', 'socket:close']);
    const localAddress = (i) => `127.0.${1 + Math.floor(i / 200)}.${1 + (i % 200)}`;
    try {
      // 256 learned (the agent's capacity), in whatever order the servers close them.
      await Promise.all(Array.from({ length: 256 }, (_, i) => request(server.url(`/${i}`), { agent, localAddress: localAddress(i) })));
      await waitFor(() => watch.of('socket:close').length === 256);
      assert.equal(watch.of('server-idle-limit').filter((event) => event.ms === null).length, 0);
      await request(server.url('/256'), { agent, localAddress: localAddress(256) });
      await waitFor(() => watch.of('socket:close').length === 257);
      const learned = watch.of('server-idle-limit').filter((event) => event.source === 'learned');
      const forgotten = learned.filter((event) => event.ms === null);
      assert.equal(forgotten.length, 1);
      // The least recently learned is forgotten.
      assert.equal(forgotten[0].origin, learned[0].origin);
      assert.equal(learned.length, 258);
      assert.equal(agent.getStats().origins[forgotten[0].origin].serverIdleTimeout.learned, null);
    } finally {
      watch.stop();
      agent.destroy();
      await server.close();
    }
  });
});
