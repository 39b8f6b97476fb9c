'use strict';

// A restart on a busy machine (issue 37): benchmark/race.js's restart
// scenario, with two busy processes beside it. The hintless race server
// (benchmark/servers/race-server.js, limit LIMIT ms) behind the delay proxy
// (LATENCY ms each way), each in its own process, as in race.js. AGENTS
// fresh agents each open CONNECTIONS connections; AFTER ms later the server
// closes every idle connection at once (a restart, or a drain); then each
// agent sends REQUESTS requests GAP ms apart. Each round runs steady-agent
// and Node's agent, in turn first; the test counts the requests each loses
// and measures no time.
//
// The requests after the restart wait until the proxy has passed every
// close on to the client: on a busy machine the proxy gets the CPU late, and
// a request sent before the close reaches the client meets a closed
// connection whatever the agent (the race no agent can prevent, where
// race.js's steady-agent rows, run first on server processes just started,
// lost requests that Node's rows, run later, did not).
const assert = require('node:assert/strict');
const http = require('node:http');
const { HttpAgent } = require('steady-agent');
const { startServer } = require('../benchmark/lib/processes');
const { startBusy } = require('./support/busy');
const { delay } = require('./support/request');

const LIMIT = 5000;
const LATENCY = 5;
const AGENTS = 12;
const CONNECTIONS = 3;
const AFTER = 200;
const REQUESTS = 10;
const GAP = 50;
const ROUNDS = 3;

const CANDIDATES = {
  'steady-agent': () => new HttpAgent(),
  "Node's agent": () => new http.Agent({ keepAlive: true }),
};

/** One GET through `agent`: null, or what went wrong. */
function get(agent, port) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? null : `status ${res.statusCode}`));
      res.on('error', (err) => resolve(err.code || err.message));
    });
    req.on('error', (err) => resolve(err.code || err.message));
  });
}

describe(`a restart on a busy machine: ${AGENTS} agents, ${CONNECTIONS} connections each, all closed at once, then ${REQUESTS} requests ${GAP} ms apart`, function () {
  this.timeout(180000);
  let busy;
  let server;
  let network;

  before(async () => {
    server = await startServer('race-server', { hint: 0, idle: LIMIT });
    network = await startServer('delay-proxy', { targetPort: server.port, delay: LATENCY });
    busy = await startBusy(2);
  });

  after(async () => {
    if (busy) await busy.stop();
    if (network) await network.stop();
    if (server) await server.stop();
  });

  /** One run of the scenario: the failures, the connections the restart closed, the server's counts. */
  async function restart(create) {
    const port = network.port;
    const agents = Array.from({ length: AGENTS }, create);
    const failures = [];
    const record = (i, n, failure) => { if (failure !== null) failures.push(`agent ${i} request ${n}: ${failure}`); };
    try {
      await server.call('reset');
      await Promise.all(agents.map(async (agent, i) => {
        const first = await Promise.all(Array.from({ length: CONNECTIONS }, () => get(agent, port)));
        first.forEach((failure, n) => record(i, n, failure));
      }));
      await delay(AFTER);
      await network.call('reset');
      const closed = await server.call('drain');
      await network.call('closesForwarded', closed);
      await delay(4 * LATENCY);
      await Promise.all(agents.map(async (agent, i) => {
        for (let n = 0; n < REQUESTS; n++) {
          if (n > 0) await delay(GAP);
          record(i, CONNECTIONS + n, await get(agent, port));
        }
      }));
      return { failures, closed, stats: await server.call('reset') };
    } finally {
      for (const agent of agents) agent.destroy();
    }
  }

  it(`steady-agent loses no more requests than Node's agent, over ${ROUNDS} rounds beside two busy processes`, async () => {
    const lost = { 'steady-agent': [], "Node's agent": [] };
    const names = Object.keys(CANDIDATES);
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 === 0 ? names : names.slice().reverse()) {
        const { failures, closed, stats } = await restart(CANDIDATES[name]);
        // The restart happened: every connection was idle and closed, and
        // every agent needed a new one after it.
        assert.equal(closed, AGENTS * CONNECTIONS, `${name}, round ${round}: connections the restart closed`);
        assert.ok(stats.connections >= AGENTS * (CONNECTIONS + 1), `${name}, round ${round}: ${stats.connections} connections`);
        lost[name].push(...failures.map((failure) => `round ${round}: ${failure}`));
      }
    }
    assert.ok(lost['steady-agent'].length <= lost["Node's agent"].length,
      `steady-agent lost ${lost['steady-agent'].length}, Node's agent ${lost["Node's agent"].length}: ${JSON.stringify(lost, null, 1)}`);
  });
});
