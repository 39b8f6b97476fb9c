'use strict';

// The keep-alive race: a server closes an idle connection just as the client
// reuses it, and the request dies with ECONNRESET / 'socket hang up'. The
// agent knows when the server will close (its Keep-Alive hint, or the idle
// limit it learned) and closes first, so no request is lost.
//
// Each test runs LANES clients side by side. A lane makes a request, then
// ROUNDS times waits for the server's idle limit plus its own offset (the
// offsets spread evenly over -SPREAD..+SPREAD ms) and makes the next one. The
// tests count failed requests; they measure no time.
const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createScriptedServer, rawResponse } = require('./support/raw');
const { request, delay, waitFor } = require('./support/request');

const LANES = 24;
const ROUNDS = 3;
const SPREAD = 10; // ms either side of the limit
// The agent measures a socket's idle time from when its process read the
// response, the server from when it wrote it. On a busy machine this process
// (the server's too) reads it late, by several hundred ms at times: the
// margin before the server's limit must cover that, as on any client whose
// event loop lags.
const LIMIT = 2000; // the server's idle limit, ms (Keep-Alive: timeout=2)
const MARGIN = 1000; // serverTimeoutMargin (the default)
// The unannounced limit, ms: the agent keeps sockets a quarter of a learned
// limit less, at most serverTimeoutMargin (docs/keep-alive-race.md): 1000 ms.
const UNANNOUNCED_LIMIT = 4000;

/** One request; resolves with null on success, or with what went wrong. */
function attempt(url, agent) {
  return request(url, { agent }).then(
    (res) => (res.body === 'ok' ? null : `unexpected body ${JSON.stringify(res.body)}`),
    (err) => `${err.code || err.name}: ${err.message}`,
  );
}

/** Whether a socket of `agent`'s pool has local port `port`. */
function inPool(agent, port) {
  return Object.values(agent.freeSockets).some((free) => free.some((socket) => socket.localPort === port));
}

/**
 * LANES lanes of 1 + ROUNDS requests each; every wait between two requests of
 * a lane is `wait` plus the lane's offset. Resolves with the failures.
 */
async function race(url, agent, wait) {
  const failures = [];
  const lane = async (i) => {
    const offset = -SPREAD + (2 * SPREAD * i) / (LANES - 1);
    const first = await attempt(url, agent);
    if (first !== null) failures.push(`lane ${i} first request: ${first}`);
    for (let round = 1; round <= ROUNDS; round++) {
      await delay(wait + offset);
      const failure = await attempt(url, agent);
      if (failure !== null) failures.push(`lane ${i} (offset ${offset.toFixed(1)} ms) round ${round}: ${failure}`);
    }
  };
  await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i)));
  return failures;
}

for (const protocol of PROTOCOLS) {
  describe(`keep-alive race (${protocol})`, function () {
    this.timeout(30 * LIMIT);
    let server;
    let agent;

    afterEach(async () => {
      if (agent) agent.destroy();
      agent = null;
      if (server) await server.close();
      server = null;
    });

    // Node's own parser is anchored at the start of the header and misses the
    // second form; Node and agentkeepalive lose requests to both.
    for (const header of [`timeout=${LIMIT / 1000}`, `max=100, timeout=${LIMIT / 1000}`]) {
      it(`'Keep-Alive: ${header}', server closes at that limit: 0 of ${LANES * (ROUNDS + 1)} requests lost, reusing at ${LIMIT} ±${SPREAD} ms`, async () => {
        server = await createScriptedServer(protocol, {
          respond: () => rawResponse('ok', { 'Keep-Alive': header }),
          idleTimeout: LIMIT,
        });
        agent = createAgent(protocol, { serverTimeoutMargin: MARGIN });

        const failures = await race(server.url('/'), agent, LIMIT);

        assert.deepEqual(failures, []);
        assert.equal(server.dropped, 0);
        // Once every connection has closed: the agent closed each one before
        // the server could.
        await waitFor(() => server.connections.every((conn) => conn.closed));
        assert.equal(server.closedBy('server'), 0, 'connections the server closed first');
        await waitFor(() => agent.requestCount === LANES * (ROUNDS + 1));
        assert.equal(agent.getCurrentStatus().errorSocketCount, 0);
      });
    }

    it(`reusing around the agent's own cutoff (${LIMIT - MARGIN} ±${SPREAD} ms): reused or replaced, never lost`, async () => {
      server = await createScriptedServer(protocol, {
        respond: () => rawResponse('ok', { 'Keep-Alive': `timeout=${LIMIT / 1000}` }),
        idleTimeout: LIMIT,
      });
      agent = createAgent(protocol, { serverTimeoutMargin: MARGIN });

      const failures = await race(server.url('/'), agent, LIMIT - MARGIN);

      assert.deepEqual(failures, []);
      assert.equal(server.dropped, 0);
      await waitFor(() => server.connections.every((conn) => conn.closed));
      assert.equal(server.closedBy('server'), 0, 'connections the server closed first');
      assert.equal(agent.getCurrentStatus().errorSocketCount, 0);
    });

    it(`a server that closes at an unannounced limit: 0 requests lost after the first learned close, reusing at ${UNANNOUNCED_LIMIT} ±${SPREAD} ms`, async function () {
      this.timeout(30 * UNANNOUNCED_LIMIT);
      const waitLimit = { limit: 3 * UNANNOUNCED_LIMIT };
      // The connections the server closed while the agent still had them in
      // its pool, to hand to the next request.
      const closedInPool = [];
      server = await createScriptedServer(protocol, {
        idleTimeout: UNANNOUNCED_LIMIT,
        onIdleClose: (conn) => {
          if (conn.id > 0 && inPool(agent, conn.tcp.remotePort)) closedInPool.push(conn.id);
        },
      });
      // A free timeout of the agent's own beyond the limit, so that the
      // server closes the first socket, not the agent.
      agent = createAgent(protocol, { freeSocketTimeout: 2 * UNANNOUNCED_LIMIT });

      // Learn: one socket left idle until the server closes it.
      const started = Date.now();
      const first = await request(server.url('/'), { agent });
      assert.equal(first.body, 'ok');
      await waitFor(() => server.connections[0].closed && first.socket.destroyed, waitLimit);
      await waitFor(() => Object.keys(agent.serverIdleTimeouts).length === 1);
      const [learned] = Object.values(agent.serverIdleTimeouts);
      assert.ok(learned > UNANNOUNCED_LIMIT / 2 && learned <= Date.now() - started, `learned ${learned} ms`);
      assert.equal(server.closedBy('server'), 1);

      const failures = await race(server.url('/'), agent, UNANNOUNCED_LIMIT);

      assert.deepEqual(failures, []);
      assert.equal(server.dropped, 0);
      await waitFor(() => server.connections.every((conn) => conn.closed), waitLimit);
      // After learning, every idle socket left the pool before the server's
      // limit: the server closed the first, and probes (the socket kept open
      // out of the pool to check the limit), never one the pool offered.
      // (How many probes depends on how far apart the lanes drift, which a
      // busy machine decides.)
      assert.deepEqual(closedInPool, [], 'connections the server closed while in the pool');
      assert.ok(server.closedBy('server') >= 2, 'the server closed a probe');
      assert.equal(agent.getCurrentStatus().errorSocketCount, 0);
    });
  });
}
