'use strict';

// Scenario 6, the axios measurement reproduced: axios makes sequential HTTPS
// requests through a TCP proxy that delays every chunk by `delay` ms each way
// (servers/delay-proxy.js), with and without a keep-alive agent. A reused
// connection costs one round trip per request; a new one pays the TCP and TLS
// handshakes again.
//
//   node benchmark/axios-latency.js
//   BENCH_AXIOS_DELAY=50 BENCH_AXIOS_REQUESTS=10 BENCH_AXIOS_REPS=5 node benchmark/axios-latency.js
const axios = require('axios');
const { candidates } = require('./lib/agents');
const { startServer, runMain } = require('./lib/processes');
const { median, fixed, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario } = require('./lib/results');
const { ca } = require('./lib/tls');

const delay = envNumber('BENCH_AXIOS_DELAY', 20);
const requests = Math.max(2, envNumber('BENCH_AXIOS_REQUESTS', 10));
const reps = Math.max(1, envNumber('BENCH_AXIOS_REPS', 3));
const REQUEST_TIMEOUT_MS = 10000;

/** One run: a fresh agent, `requests` sequential GETs; latency of each in ms. */
async function run(candidate, url) {
  const agent = candidate.create('https', { ca });
  try {
    const times = [];
    for (let i = 0; i < requests; i++) {
      const start = process.hrtime.bigint();
      const res = await axios.get(url, {
        httpsAgent: agent,
        proxy: false,
        timeout: REQUEST_TIMEOUT_MS,
        responseType: 'text',
      });
      if (res.status !== 200) throw new Error(`${candidate.id}: status ${res.status}`);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    return times;
  } finally {
    agent.destroy();
  }
}

async function main() {
  const backend = await startServer('backend', { protocol: 'https' });
  const network = await startServer('delay-proxy', { targetPort: backend.port, delay });
  try {
    const url = `https://127.0.0.1:${network.port}/`;
    const rows = [];
    const raw = {};
    for (const candidate of candidates()) {
      const label = candidate.label('https');
      if (candidate.kind === 'pool') {
        rows.push([label, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a']);
        continue;
      }
      await run(candidate, url); // warm-up, not recorded
      await backend.call('reset');
      const runs = [];
      for (let r = 0; r < reps; r++) {
        const times = await run(candidate, url);
        const server = await backend.call('reset');
        runs.push({ times, connections: server.connections, resumed: server.resumed });
        console.log(`${label}: run ${r + 1}/${reps}: first ${fixed(times[0], 1)} ms, `
          + `then ${times.slice(1).map((t) => fixed(t, 0)).join(' ')} ms; ${server.connections} connections`);
      }
      raw[candidate.id] = runs;
      rows.push([
        label,
        fixed(median(runs.map((r) => r.times[0])), 1),
        fixed(median(runs.flatMap((r) => r.times.slice(1))), 1),
        fixed(median(runs.map((r) => r.times.reduce((a, b) => a + b, 0))), 0),
        fixed(median(runs.map((r) => r.connections)), 0),
        fixed(median(runs.map((r) => r.resumed)), 0),
      ]);
    }
    const table = {
      title: `axios, ${requests} sequential HTTPS requests, ${delay} ms delay each way (RTT ${2 * delay} ms)`,
      columns: [
        'agent', '1st request ms', `requests 2–${requests} ms (median)`, `all ${requests} ms`,
        'connections per run', 'of which TLS resumed',
      ],
      rows,
    };
    printTable(table);
    saveScenario({
      id: 'axios-latency',
      title: 'The axios measurement, reproduced',
      summary: `axios (http adapter) makes ${requests} sequential HTTPS requests through a TCP proxy that delays every `
        + `chunk by ${delay} ms each way; a new connection also pays one round trip for the TCP handshake.`,
      params: { delay, requests, reps },
      tables: [table],
      notes: [
        `Medians over ${reps} runs, each with a fresh agent (after one unrecorded warm-up run per agent).`,
        'undici: n/a, axios\'s http adapter takes a Node agent (httpsAgent), not an undici dispatcher.',
        'Without an httpsAgent axios uses https.globalAgent, which keeps connections alive since Node 19.',
      ],
      raw,
    });
  } finally {
    await network.stop();
    await backend.stop();
  }
}

runMain(main);
