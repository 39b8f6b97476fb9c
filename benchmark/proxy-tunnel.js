'use strict';

// Scenario: https requests through a local proxy (the `proxy` package, in its
// own process) to an https backend (in another), by agents that tunnel with
// CONNECT: steady-agent (`proxy` option), hpagent's HttpsProxyAgent (the
// usual keep-alive-with-proxy answer today), and Node's own https.Agent with
// `proxyEnv` where the Node version has it (22.21+, 24.5+). Each run uses a
// fresh agent: R requests, C in flight, maxSockets M, so tunnels opened shows
// how each agent fills its pool. Runs alternate between the agents, the order
// rotated each round; the table shows each figure's median over the rounds.
// CPU is the client process's user+system time per request.
//
//   node benchmark/proxy-tunnel.js
//   BENCH_TUNNEL_REQUESTS=5000 BENCH_TUNNEL_ROUNDS=7 node benchmark/proxy-tunnel.js
const https = require('node:https');
const { performance } = require('node:perf_hooks');
const { HttpsProxyAgent } = require('hpagent');
const { HttpsAgent } = require('..');
const { startServer, runMain } = require('./lib/processes');
const { runLoad } = require('./lib/load');
const { median, percentile, fixed, count, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario } = require('./lib/results');
const { ca } = require('./lib/tls');

const requests = envNumber('BENCH_TUNNEL_REQUESTS', 3000);
const rounds = Math.max(1, envNumber('BENCH_TUNNEL_ROUNDS', 5));
const concurrency = envNumber('BENCH_TUNNEL_CONCURRENCY', 10);
const maxSockets = envNumber('BENCH_TUNNEL_MAX_SOCKETS', 10);
const warmup = envNumber('BENCH_TUNNEL_WARMUP', 1000);

/** Node's http.Agent reads `proxyEnv` itself from 22.21 and 24.5 on. */
function nodeHasProxyEnv() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major >= 25 || (major === 24 && minor >= 5) || (major === 22 && minor >= 21);
}

function agents(proxyUrl) {
  const list = [
    {
      id: 'steady-agent',
      label: 'steady-agent HttpsAgent({ proxy })',
      create: () => new HttpsAgent({ proxy: proxyUrl, ca, maxSockets }),
    },
    {
      id: 'hpagent',
      label: 'hpagent HttpsProxyAgent({ keepAlive: true })',
      create: () => new HttpsProxyAgent({ proxy: proxyUrl, ca, keepAlive: true, maxSockets }),
    },
  ];
  if (nodeHasProxyEnv()) {
    list.push({
      id: 'node-proxyenv',
      label: 'https.Agent({ keepAlive: true, proxyEnv })',
      create: () => new https.Agent({ keepAlive: true, ca, maxSockets, proxyEnv: { HTTPS_PROXY: proxyUrl } }),
    });
  }
  return list;
}

async function run(candidate, url, proxy, backend, total) {
  const agent = candidate.create();
  const latencies = [];
  const get = (done) => {
    const started = performance.now();
    https.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => {
        latencies.push(performance.now() - started);
        done(null, res.statusCode);
      });
    }).on('error', (err) => done(err));
  };
  await proxy.call('reset');
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const result = await runLoad(get, total, concurrency);
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  agent.destroy();
  const stats = await proxy.call('reset');
  await proxy.call('dropConnections');
  await backend.call('dropConnections');
  if (result.errors > 0) throw new Error(`${candidate.id}: ${result.errors} errors, first: ${result.firstError?.message}`);
  return {
    rps: result.completed / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    tunnels: stats.tunnels,
    cpuPerRequest: (used.user + used.system) / result.completed,
  };
}

async function main() {
  const backend = await startServer('backend', { protocol: 'https' });
  const proxy = await startServer('connect-proxy');
  const proxyUrl = `http://127.0.0.1:${proxy.port}`;
  const url = `https://127.0.0.1:${backend.port}/`;
  const list = agents(proxyUrl);
  console.log(`proxy-tunnel: ${requests} requests per run, ${concurrency} in flight, maxSockets ${maxSockets}, ${rounds} rounds; `
    + `agents: ${list.map((c) => c.id).join(', ')}${nodeHasProxyEnv() ? '' : ' (this Node has no proxyEnv)'}`);
  for (const candidate of list) {
    console.log(`warm-up ${warmup} requests: ${candidate.id}`);
    await run(candidate, url, proxy, backend, warmup);
  }
  const runs = new Map(list.map((c) => [c.id, []]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < list.length; i++) {
      const candidate = list[(i + round) % list.length];
      const figures = await run(candidate, url, proxy, backend, requests);
      runs.get(candidate.id).push(figures);
      console.log(`round ${round + 1}/${rounds} ${candidate.id}: ${count(figures.rps)} req/s, `
        + `p50 ${fixed(figures.p50, 2)} ms, p99 ${fixed(figures.p99, 2)} ms, ${figures.tunnels} tunnels, `
        + `${fixed(figures.cpuPerRequest, 0)} µs CPU/req`);
    }
  }
  const pick = (id, key) => median(runs.get(id).map((r) => r[key]));
  const table = {
    title: 'https through a CONNECT proxy (medians over rounds)',
    columns: ['agent', 'req/s', 'p50 ms', 'p99 ms', 'tunnels opened', 'CPU µs/req'],
    rows: list.map((c) => [
      c.label,
      count(pick(c.id, 'rps')),
      fixed(pick(c.id, 'p50'), 2),
      fixed(pick(c.id, 'p99'), 2),
      count(pick(c.id, 'tunnels')),
      fixed(pick(c.id, 'cpuPerRequest'), 0),
    ]),
  };
  printTable(table);
  const notes = [];
  if (!nodeHasProxyEnv()) notes.push(`Node ${process.versions.node} has no proxyEnv (22.21+/24.5+): that row is absent.`);
  saveScenario({
    id: 'proxy-tunnel',
    title: 'HTTPS through a proxy (CONNECT tunnels)',
    summary: 'Requests to an https backend through a local CONNECT proxy (the `proxy` package), each in its own process: '
      + 'steady-agent against hpagent and Node\'s own agent with proxyEnv; a fresh agent per run, so "tunnels opened" '
      + 'shows how each agent fills a pool of maxSockets.',
    params: { requests, rounds, concurrency, maxSockets, warmup },
    tables: [table],
    notes,
  });
}

runMain(main);
