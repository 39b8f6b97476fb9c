'use strict';

// The marks on the error of a request that failed on a reused socket before
// any byte of its response (issue 24.1), and the free sockets closed after a
// stale collision (issue 24.2). Real servers on loopback, http and https:
// Node's http.Server over TCP connections the test can reset or end under a
// request (support/reset_server.js).
const assert = require('node:assert/strict');
const http = require('node:http');
const https = require('node:https');
const { PROTOCOLS } = require('./support/agents');
const { closeAfterEach } = require('./support/cleanup');
const { createResetServer } = require('./support/reset_server');
const { startProxy } = require('./support/proxy');
const { fixtures } = require('./support/servers');
const { request, requestError, delay, waitFor } = require('./support/request');

const MARKS = ['reusedSocket', 'socketIdleMs', 'socketRequests', 'staleSocket', 'replayable'];
const IDLE = 30; // ms between the requests that make a socket idle
// Beyond the stale window's ceiling (lib/stale_judgement.js): a server that
// held the request this long was processing it.
const SLOW = 1100;

const marksOf = (err) => Object.fromEntries(MARKS.filter((key) => key in err).map((key) => [key, err[key]]));

/**
 * What the server does with the request numbered `failOn` on a connection:
 * 'reset' (TCP RST: ECONNRESET), 'end' (FIN: 'socket hang up'), 'partial'
 * (the start of a status line, then RST), 'slow-reset' (RST after SLOW ms).
 * Every other request is answered "ok".
 */
function failing(how, failOn) {
  return (req, res, conn) => {
    req.resume();
    if (conn.index !== failOn) {
      res.end('ok');
      return;
    }
    if (how === 'reset') conn.reset();
    else if (how === 'end') conn.end();
    else if (how === 'partial') {
      req.socket.write('HTTP/1.1 200 O');
      setTimeout(conn.reset, 20);
    } else if (how === 'slow-reset') setTimeout(conn.reset, SLOW);
  };
}

/** `n` requests one after another, IDLE ms apart, on one agent: the last one's error. */
async function lastFails(server, agent, n, options = {}) {
  for (let i = 1; i < n; i++) {
    assert.equal((await request(server.url('/'), { agent })).body, 'ok');
    await delay(IDLE);
  }
  return requestError(request(server.url('/'), { agent, ...options }));
}

for (const protocol of PROTOCOLS) {
  describe(`stale sockets: the marks on a request's error (${protocol})`, () => {
    const { keep, agentFor } = closeAfterEach();

    for (const [how, message] of [['reset', /ECONNRESET/], ['end', /^socket hang up$/]]) {
      it(`${how === 'reset' ? 'an ECONNRESET' : 'a \'socket hang up\''} collision: every field, code and message as without the agent`, async () => {
        const server = keep(await createResetServer(protocol, failing(how, 3)));
        const err = await lastFails(server, agentFor(protocol), 3);

        assert.equal(err.code, 'ECONNRESET');
        assert.match(err.message, message);
        assert.equal(err.reusedSocket, true);
        assert.ok(Number.isInteger(err.socketIdleMs) && err.socketIdleMs >= IDLE - 2, `socketIdleMs ${err.socketIdleMs}`);
        assert.equal(err.socketRequests, 2);
        assert.equal(err.staleSocket, true);
        assert.equal(err.replayable, true);

        // Node's own agent, same server, same requests: the same code and message.
        const other = keep(await createResetServer(protocol, failing(how, 3)));
        const Agent = protocol === 'https:' ? https.Agent : http.Agent;
        const nodeAgent = new Agent({ keepAlive: true, ca: fixtures.ca });
        try {
          const plain = await lastFails(other, nodeAgent, 3);
          assert.equal(plain.code, err.code);
          assert.equal(plain.message, err.message);
          assert.deepEqual(marksOf(plain), {});
        } finally {
          nodeAgent.destroy();
        }
      });
    }

    it('a POST without an idempotency key: stale, not replayable', async () => {
      const server = keep(await createResetServer(protocol, failing('reset', 2)));
      const err = await lastFails(server, agentFor(protocol), 2, { method: 'POST', body: 'x' });
      assert.deepEqual(marksOf(err), { ...marksOf(err), reusedSocket: true, socketRequests: 1, staleSocket: true, replayable: false });
    });

    for (const header of ['Idempotency-Key', 'x-idempotency-key']) {
      it(`a POST with ${header}, a PUT, a DELETE: replayable`, async () => {
        const server = keep(await createResetServer(protocol, failing('end', 2)));
        // An agent each: the first collision teaches an agent a short idle limit.
        const keyed = await lastFails(server, agentFor(protocol), 2, { method: 'POST', body: 'x', headers: { [header]: 'k-1' } });
        assert.equal(keyed.replayable, true);
        for (const method of ['PUT', 'DELETE']) {
          const err = await lastFails(server, agentFor(protocol), 2, { method });
          assert.equal(err.replayable, true, method);
        }
      });
    }

    it('a fresh socket: no mark', async () => {
      const server = keep(await createResetServer(protocol, failing('reset', 1)));
      const err = await lastFails(server, agentFor(protocol), 1);
      assert.equal(err.code, 'ECONNRESET');
      assert.deepEqual(marksOf(err), {});
    });

    it('after a byte of the response: no mark', async () => {
      const server = keep(await createResetServer(protocol, failing('partial', 2)));
      const err = await lastFails(server, agentFor(protocol), 2);
      assert.equal(err.code, 'ECONNRESET');
      assert.deepEqual(marksOf(err), {});
    });

    it(`a server that resets ${SLOW} ms after the request (it was processing it): reused, not stale, not replayable`, async () => {
      const server = keep(await createResetServer(protocol, failing('slow-reset', 2)));
      const err = await lastFails(server, agentFor(protocol), 2);
      assert.equal(err.code, 'ECONNRESET');
      assert.deepEqual(marksOf(err), { ...marksOf(err), reusedSocket: true, socketRequests: 1, staleSocket: false, replayable: false });
    });

    it('a request the caller destroys: no mark', async () => {
      const server = keep(await createResetServer(protocol, (req, res) => {
        req.resume();
        if (req.url !== '/hold') res.end('ok');
      }));
      const agent = agentFor(protocol);
      await request(server.url('/'), { agent });
      await delay(IDLE);
      const mod = protocol === 'https:' ? https : http;
      const err = await new Promise((resolve) => {
        const req = mod.get(server.url('/hold'), { agent });
        req.on('error', resolve);
        req.on('socket', () => setImmediate(() => req.destroy()));
      });
      assert.equal(err.message, 'socket hang up');
      assert.deepEqual(marksOf(err), {});
    });

    it('through a proxy: marked (https: the server resets the tunnel; http: the proxy closes its connection)', async () => {
      const server = keep(await createResetServer(protocol, failing('reset', 2)));
      const proxy = keep(await startProxy());
      // An http proxy answers a reset upstream with a 500 of its own: here
      // the proxy itself closes the connection the agent reused.
      let forwarded = 0;
      proxy.server.prependListener('request', (req) => {
        if (++forwarded === 2) req.socket.destroy();
      });
      const err = await lastFails(server, agentFor(protocol, { proxy: proxy.url() }), 2);
      assert.equal(err.code, 'ECONNRESET');
      assert.equal(err.reusedSocket, true);
      assert.equal(err.staleSocket, true);
      assert.equal(err.replayable, true);
    });
  });

  describe(`stale sockets: the older free sockets closed after a stale collision (${protocol})`, () => {
    const { keep, agentFor } = closeAfterEach();

    it('free sockets idle at least as long close (\'stale-peer\'); a younger one stays and serves the retry', async () => {
      let holding = null;
      let dying = null;
      const server = keep(await createResetServer(protocol, (req, res, conn) => {
        req.resume();
        if (req.url === '/hold') holding = () => res.end('ok');
        else if (req.url === '/die') dying = conn.reset;
        else res.end('ok');
      }));
      const agent = agentFor(protocol);
      // Three sockets, free together.
      await Promise.all([1, 2, 3].map(() => request(server.url('/'), { agent })));
      await waitFor(() => (agent.freeSockets[Object.keys(agent.freeSockets)[0]] ?? []).length === 3);
      await delay(IDLE);
      // The youngest serves /hold, the next /die; /hold's socket comes back
      // free, younger than /die's, before the server resets /die.
      const held = request(server.url('/hold'), { agent });
      const died = requestError(request(server.url('/die'), { agent }));
      await waitFor(() => holding !== null && dying !== null);
      holding();
      await held;
      const [pool] = Object.keys(agent.freeSockets);
      await waitFor(() => agent.freeSockets[pool]?.length === 2);
      const [oldest, youngest] = agent.freeSockets[pool];
      dying();
      const err = await died;

      assert.equal(err.staleSocket, true);
      assert.deepEqual(agent.freeSockets[pool], [youngest]);
      assert.ok(oldest.destroyed);
      await waitFor(() => agent.getStats().origins[pool].closeReasons['stale-peer'] === 1);
      const retried = await request(server.url('/'), { agent });
      assert.equal(retried.socket, youngest);
      assert.equal(server.connections.length, 3, 'no new connection');
    });

    it('a request that failed late (not stale) closes nothing', async () => {
      const server = keep(await createResetServer(protocol, failing('slow-reset', 2)));
      const agent = agentFor(protocol);
      await Promise.all([1, 2].map(() => request(server.url('/'), { agent })));
      await delay(IDLE);
      const err = await requestError(request(server.url('/'), { agent }));
      assert.equal(err.staleSocket, false);
      const [pool] = Object.keys(agent.freeSockets);
      assert.equal(agent.freeSockets[pool].length, 1);
      assert.equal(agent.getStats().origins[pool].closeReasons['stale-peer'], undefined);
    });
  });
}
