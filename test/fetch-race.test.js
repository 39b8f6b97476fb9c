'use strict';

// steady-agent/fetch against the keep-alive race (issue 33, "Done when"):
// the hintless race server (benchmark/servers/race-server.js) closes a
// connection idle for LIMIT ms and announces nothing; the delay proxy gives
// the path LATENCY ms each way, so a request sent less than a round trip
// before the server's close meets a closed connection. Each in its own
// process, as in benchmark/race.js. INSTANCES fresh createFetch instances,
// each with LANES lanes of REQUESTS requests, LIMIT ms apart give or take
// the lane's own offset (spread evenly over ±SPREAD ms across all lanes).
const assert = require('node:assert/strict');
const { createFetch } = require('steady-agent/fetch');
const { startServer } = require('../benchmark/lib/processes');
const { delay } = require('./support/request');

const LIMIT = 300;
const LATENCY = 10;
const SPREAD = 20;
const INSTANCES = 4;
const LANES = 4;
const REQUESTS = 6;
const TOTAL = INSTANCES * LANES * REQUESTS;
const TRIES = 3;

describe(`steady-agent/fetch against the hintless race server (${LIMIT} ms limit, ${LATENCY} ms each way)`, function () {
  this.timeout(60000);
  let server;
  let network;

  before(async () => {
    server = await startServer('race-server', { hint: 0, idle: LIMIT });
    network = await startServer('delay-proxy', { targetPort: server.port, delay: LATENCY });
    // fetch's own code compiled before its timing matters, on a fetch of its own.
    const warm = createFetch();
    try {
      await (await warm(`http://127.0.0.1:${network.port}/`)).text();
    } finally {
      await warm.close();
    }
  });

  after(async () => {
    if (network) await network.stop();
    if (server) await server.stop();
  });

  it(`loses 0 of ${TOTAL} requests over ${INSTANCES} fresh instances, each applied once`, async () => {
    // A run without a collision would prove nothing; on a busy machine the
    // lanes can drift off the limit's moment: then the test runs again, at
    // most TRIES times, and every run must lose nothing.
    let collisions = 0;
    for (let run = 1; run <= TRIES && collisions === 0; run++) collisions += await instances(run);
    assert.ok(collisions > 0, `no request met a closed connection in ${TRIES} runs`);
  });

  /** One run of every instance: asserts nothing was lost; resolves with the collisions. */
  async function instances(run) {
    await server.call('reset');
    const url = `http://127.0.0.1:${network.port}/`;
    const failures = [];
    let collisions = 0;
    const lanes = INSTANCES * LANES;
    await Promise.all(Array.from({ length: INSTANCES }, async (_, instance) => {
      const fetch = createFetch();
      try {
        await Promise.all(Array.from({ length: LANES }, async (__, lane) => {
          const index = instance * LANES + lane;
          const offset = Math.round(-SPREAD + (2 * SPREAD * index) / (lanes - 1));
          for (let i = 0; i < REQUESTS; i++) {
            if (i > 0) await delay(LIMIT + offset);
            try {
              const res = await fetch(url);
              await res.text();
              if (res.status !== 200) failures.push(`lane ${index} request ${i}: status ${res.status}`);
            } catch (err) {
              failures.push(`lane ${index} request ${i}: ${err.message} (${err.cause?.code})`);
            }
          }
        }));
        // Each attempt took a new socket or a reused one; the requests that
        // failed are the attempts beyond those that finished.
        for (const origin of Object.values(fetch.getStats().origins)) {
          collisions += origin.socketsCreated + origin.reusedRequests - origin.requests;
        }
      } finally {
        await fetch.close();
      }
    }));
    const stats = await server.call('reset');

    assert.deepEqual(failures, [], `run ${run}`);
    assert.equal(stats.requests, TOTAL, `run ${run}: requests the server answered: each once`);
    return collisions;
  }
});
