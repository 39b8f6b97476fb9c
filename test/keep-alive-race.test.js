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
const LIMIT = 1000; // the server's idle limit, ms (Keep-Alive: timeout=1)
const MARGIN = 500; // serverTimeoutMargin

/** One request; resolves with null on success, or with what went wrong. */
function attempt(url, agent) {
  return request(url, { agent }).then(
    (res) => (res.body === 'ok' ? null : `unexpected body ${JSON.stringify(res.body)}`),
    (err) => `${err.code || err.name}: ${err.message}`,
  );
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
  describe(`keep-alive race (${protocol})`, () => {
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

    it(`a server that closes at an unannounced limit: 0 requests lost after the first learned close, reusing at ${LIMIT} ±${SPREAD} ms`, async () => {
      server = await createScriptedServer(protocol, { idleTimeout: LIMIT });
      agent = createAgent(protocol, { serverTimeoutMargin: MARGIN });

      // Learn: one socket left idle until the server closes it.
      const started = Date.now();
      const first = await request(server.url('/'), { agent });
      assert.equal(first.body, 'ok');
      await waitFor(() => server.connections[0].closed && first.socket.destroyed);
      await waitFor(() => Object.keys(agent.serverIdleTimeouts).length === 1);
      const [learned] = Object.values(agent.serverIdleTimeouts);
      assert.ok(learned > MARGIN && learned <= Date.now() - started, `learned ${learned} ms`);
      assert.equal(server.closedBy('server'), 1);

      const failures = await race(server.url('/'), agent, LIMIT);

      assert.deepEqual(failures, []);
      assert.equal(server.dropped, 0);
      await waitFor(() => server.connections.every((conn) => conn.closed));
      // After learning, every idle socket left the pool before the server's
      // limit; the server closed only the first and the probes (the sockets
      // kept open out of the pool to check the limit, one at a time: two
      // trials confirm it, then at most two a round, one ending as the
      // next starts).
      assert.ok(server.closedBy('server') <= 1 + 2 * (ROUNDS + 1), `closed by the server: ${server.closedBy('server')}`);
      assert.equal(agent.getCurrentStatus().errorSocketCount, 0);
    });
  });
}
