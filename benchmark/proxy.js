'use strict';

// Scenario 1, proxy (the classic agentkeepalive benchmark): autocannon drives
// 60 connections at a proxy process, which forwards every request to a
// backend process (5 ms delay by default) through the agent under test,
// maxSockets 50. Each agent has its own backend and proxy processes. The
// agents take turns in rounds, the order rotated each round, and the table
// shows each figure's median over the rounds, so that a burst of load from
// elsewhere on the machine does not land on one agent only.
//
//   node benchmark/proxy.js
//   BENCH_DURATION=10 BENCH_PROXY_ROUNDS=5 BENCH_PROXY_DELAY=0 node benchmark/proxy.js
const autocannon = require('autocannon');
const { candidates } = require('./lib/agents');
const { startServer, runMain } = require('./lib/processes');
const { median, fixed, count, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario } = require('./lib/results');

const duration = envNumber('BENCH_DURATION', 4);
const rounds = Math.max(1, envNumber('BENCH_PROXY_ROUNDS', 5));
const warmup = envNumber('BENCH_WARMUP', 2);
const delay = envNumber('BENCH_PROXY_DELAY', 5);
const connections = envNumber('BENCH_CONNECTIONS', 60);
const maxSockets = envNumber('BENCH_MAX_SOCKETS', 50);

function cannon(url, seconds, showProgress) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections, duration: seconds, pipelining: 1 }, (err, result) => {
      if (err) reject(err);
      else resolve(result);
    });
    // autocannon's progress bar on a terminal; elsewhere the line per step printed by main().
    if (showProgress && process.stderr.isTTY) {
      autocannon.track(instance, { renderResultsTable: false, renderLatencyTable: false });
    }
  });
}

async function startPair(candidate) {
  const backend = await startServer('backend', { protocol: 'http', delay });
  const proxy = await startServer('proxy', { agent: candidate.id, backendPort: backend.port, maxSockets });
  return { candidate, backend, proxy, url: `http://127.0.0.1:${proxy.port}/`, runs: [] };
}

async function main() {
  const list = candidates();
  const pairs = [];
  try {
    for (const candidate of list) pairs.push(await startPair(candidate));
    for (const pair of pairs) {
      if (warmup > 0) {
        console.log(`warm-up ${warmup} s: ${pair.candidate.label('http')}`);
        await cannon(pair.url, warmup, false);
      }
    }
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < pairs.length; i++) {
        const pair = pairs[(i + round) % pairs.length];
        const label = pair.candidate.label('http');
        const result = await cannon(pair.url, duration, true);
        pair.runs.push(result);
        console.log(`round ${round + 1}/${rounds} ${label}: ${count(result.requests.average)} req/s, `
          + `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.errors} errors`);
      }
    }

    const baseline = pairs.find((p) => p.candidate.id === 'node-keepalive');
    const rows = [];
    const raw = {};
    for (const pair of pairs) {
      const backendStats = await pair.backend.call('stats');
      const status = await pair.proxy.call('status');
      const runs = pair.runs;
      const mid = (pick) => median(runs.map(pick));
      raw[pair.candidate.id] = {
        runs: runs.map((r) => ({
          requestsPerSecond: r.requests.average,
          latency: { p50: r.latency.p50, p97_5: r.latency.p97_5, p99: r.latency.p99, max: r.latency.max },
          errors: r.errors,
          timeouts: r.timeouts,
          non2xx: r.non2xx,
        })),
        backendConnections: backendStats.connections,
        proxyErrors: status.errors,
        proxyFirstError: status.firstError,
        agentStatus: status.agent,
      };
      // Per round, against Node's keep-alive agent in the same round.
      const ratio = baseline
        ? fixed(median(runs.map((r, i) => r.requests.average / baseline.runs[i].requests.average)), 2)
        : 'n/a';
      rows.push([
        pair.candidate.label('http'),
        count(mid((r) => r.requests.average)),
        ratio,
        fixed(mid((r) => r.latency.p50), 0),
        fixed(mid((r) => r.latency.p97_5), 0),
        fixed(mid((r) => r.latency.p99), 0),
        count(runs.reduce((a, r) => a + r.errors, 0)),
        count(runs.reduce((a, r) => a + r.non2xx, 0)),
        count(backendStats.connections),
        status.agent ? count(status.agent.createSocketCount) : 'n/a',
      ]);
    }
    const table = {
      title: `Proxy: ${connections} connections, backend delay ${delay} ms, maxSockets ${maxSockets}, `
        + `${rounds} rounds of ${duration} s per agent`,
      columns: [
        'agent', 'req/s', 'req/s ratio vs Node keep-alive', 'p50 ms', 'p97.5 ms', 'p99 ms', 'errors', 'non-2xx',
        'sockets opened (backend count)', 'createSocketCount',
      ],
      rows,
    };
    printTable(table);
    saveScenario({
      id: 'proxy',
      title: 'Proxy',
      summary: 'autocannon (as a library) drives connections at a proxy process that forwards each request through '
        + 'the agent under test to a backend process; req/s and latency as autocannon measures them at the proxy.',
      params: { duration, rounds, warmup, connections, delay, maxSockets },
      tables: [table],
      notes: [
        `req/s and latency: the median over ${rounds} rounds of ${duration} s; the agents take turns, the order rotated each round. The ratio is the median over the rounds of the agent's req/s divided by http.Agent keepAlive:true's in the same round. Errors and non-2xx: summed over the rounds.`,
        `Sockets opened: connections the backend accepted from the proxy over the warm-up (${warmup} s) and every round; createSocketCount is the agent's own getCurrentStatus() where it has one. Between two rounds of one agent its sockets sit idle while the other agents run, longer than the backend's 5 s keep-alive timeout and steady-agent's 4 s freeSocketTimeout, so a keep-alive agent opens up to ${maxSockets} sockets per round.`,
        'Errors are autocannon\'s (connection errors and timeouts); a failed forward shows as a 502 in non-2xx.',
        'http.Agent keepAlive:false has no maxSockets (see benchmark/README.md); the autocannon connections bound its concurrency.',
      ],
      raw,
    });
  } finally {
    for (const pair of pairs) {
      await pair.proxy.stop();
      await pair.backend.stop();
    }
  }
}

runMain(main);
