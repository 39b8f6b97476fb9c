'use strict';

// steady-agent/retry against the keep-alive race (issue 24, "Done when"):
// the hintless race server (benchmark/servers/race-server.js) closes a
// connection idle for LIMIT ms and announces nothing, so a fresh agent
// cannot know when; the delay proxy (benchmark/servers/delay-proxy.js) gives
// the path LATENCY ms each way, so a request sent less than a round trip
// before the server's close meets a closed connection, as on a real network.
// Each in its own process, as in benchmark/race.js. AGENTS fresh agents each
// send REQUESTS requests, LIMIT ms apart give or take their own offset
// (spread evenly over ±SPREAD ms): without retrying, each agent may lose its
// first collision. Through the retry helpers, every client loses none.
const assert = require('node:assert/strict');
const { HttpAgent } = require('steady-agent');
const { startServer } = require('../benchmark/lib/processes');
const { loadRetryClients, RETRY_CLIENT_NAMES } = require('./support/retry_clients');
const { delay } = require('./support/request');

const LIMIT = 300;
const LATENCY = 10;
const SPREAD = 20;
const AGENTS = 20;
const REQUESTS = 5;
const TRIES = 3;

describe(`steady-agent/retry against the hintless race server (${LIMIT} ms limit, ${LATENCY} ms each way)`, function () {
  this.timeout(60000);
  let clients;
  let server;
  let network;

  before(async () => {
    clients = await loadRetryClients();
    server = await startServer('race-server', { hint: 0, idle: LIMIT });
    network = await startServer('delay-proxy', { targetPort: server.port, delay: LATENCY });
    // Each client's code compiled once before its timing matters, each on
    // an agent of its own: one agent shared by them all could, on a slow
    // machine, reuse a socket the server had just closed, unretried.
    for (const name of RETRY_CLIENT_NAMES) {
      const agent = new HttpAgent();
      try {
        await clients[name](`http://127.0.0.1:${network.port}/`, { agent });
      } finally {
        agent.destroy();
      }
    }
  });

  after(async () => {
    if (network) await network.stop();
    if (server) await server.stop();
  });

  for (const name of RETRY_CLIENT_NAMES) {
    it(`${name}: 0 of ${AGENTS * REQUESTS} requests lost`, async () => {
      // A run without a collision would prove nothing; on a busy machine
      // the lanes can drift off the limit's moment: then the test runs
      // again, at most TRIES times, and every run must lose nothing.
      let retries = 0;
      for (let run = 1; run <= TRIES && retries === 0; run++) retries += await lanes(name, run);
      assert.ok(retries > 0, `no request met a closed connection in ${TRIES} runs`);
    });
  }

  /** One run of every lane through client `name`: asserts nothing was lost; resolves with the requests sent again. */
  async function lanes(name, run) {
    await server.call('reset');
    const url = `http://127.0.0.1:${network.port}/`;
    const failures = [];
    let retries = 0;
    const retry = { onRetry: () => { retries++; } };
    await Promise.all(Array.from({ length: AGENTS }, async (_, lane) => {
      const offset = Math.round(-SPREAD + (2 * SPREAD * lane) / (AGENTS - 1));
      const agent = new HttpAgent();
      try {
        for (let i = 0; i < REQUESTS; i++) {
          if (i > 0) await delay(LIMIT + offset);
          try {
            const res = await clients[name](url, { agent, retry });
            if (res.status !== 200) failures.push(`agent ${lane} request ${i}: status ${res.status}`);
          } catch (err) {
            failures.push(`agent ${lane} request ${i}: ${err.code} ${err.message}`);
          }
        }
      } finally {
        agent.destroy();
      }
    }));
    const stats = await server.call('reset');

    assert.deepEqual(failures, [], `run ${run}`);
    assert.equal(stats.requests, AGENTS * REQUESTS, `run ${run}: requests the server answered: each once`);
    return retries;
  }
});
