'use strict';

// CPU per request of the fetch and undici front doors, each side by side
// with its baseline in one process: steady-agent/fetch against Node's own
// fetch (its global dispatcher), and undici.request through createDispatcher
// against undici's own Agent (npm's undici 6 here). The backend runs in its
// own process. Every round runs the four clients once, in an order rotated
// by one each round; the result is the median over rounds of each pair's
// ratio of CPU µs per request (process.cpuUsage(), user + system).
//
// BENCH_PROTOCOL=https runs it over TLS (the fixture certificates; Node's own
// fetch trusts their CA through NODE_EXTRA_CA_CERTS, set by re-running this
// file). BENCH_NEW_EVERY=N asks for /close every Nth request: the server
// answers it with `Connection: close`, so that new connections (over TLS,
// handshakes, resumed where the client keeps sessions) are in the mix.
//
//   node benchmark/fetch-cost.js
//   BENCH_REQUESTS=4000 BENCH_ROUNDS=21 node benchmark/fetch-cost.js
//   BENCH_PROTOCOL=https BENCH_NEW_EVERY=20 node benchmark/fetch-cost.js
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
// steady-agent/fetch before npm's undici: it finds the bundled undici's Agent.
const { createFetch } = require('../lib/fetch');
const undici = require('undici');
const { HttpAgent, HttpsAgent } = require('..');
const { createDispatcher } = require('../lib/undici');
const { runMain, startServer } = require('./lib/processes');
const { median, fixed, envNumber } = require('./lib/stats');

const REQUESTS = envNumber('BENCH_REQUESTS', 2000);
const ROUNDS = envNumber('BENCH_ROUNDS', 21);
const CONCURRENCY = envNumber('BENCH_CONCURRENCY', 50);
const WARMUP = envNumber('BENCH_WARMUP_REQUESTS', 2000);
const PROTOCOL = process.env.BENCH_PROTOCOL === 'https' ? 'https' : 'http';
const NEW_EVERY = envNumber('BENCH_NEW_EVERY', 0);
const CA_FILE = path.join(__dirname, '..', 'test', 'fixtures', 'ca.pem');

if (PROTOCOL === 'https' && process.env.NODE_EXTRA_CA_CERTS !== CA_FILE) {
  // Node reads NODE_EXTRA_CA_CERTS at startup only.
  const child = spawnSync(process.execPath, process.argv.slice(1), { stdio: 'inherit', env: { ...process.env, NODE_EXTRA_CA_CERTS: CA_FILE } });
  process.exit(child.status ?? 1);
}

// Requests that failed, per client: a request that meets a connection the
// server is closing (the /close ones) may fail on a client that does not
// send it again. Counted, not fatal: the cost is what is measured.
const failures = {};

/** Sends `n` requests, `concurrency` in flight, through `clients[name]`; returns CPU µs per request. */
async function run(name, send, url, n) {
  let next = 0;
  const closeUrl = new URL('/close', url).href;
  const start = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n) {
      next++;
      await send(NEW_EVERY > 0 && next % NEW_EVERY === 0 ? closeUrl : url).catch(() => {
        failures[name] = (failures[name] ?? 0) + 1;
      });
    }
  }));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

runMain(async () => {
  const backend = await startServer('backend', { protocol: PROTOCOL });
  const url = `${PROTOCOL}://127.0.0.1:${backend.port}/`;
  const tls = PROTOCOL === 'https' ? { ca: require('./lib/tls').ca } : {};
  const steadyFetch = createFetch({ maxSockets: CONCURRENCY, ...tls });
  const undiciAgent = new undici.Agent({ connections: CONCURRENCY, connect: tls });
  const steadyDispatcher = createDispatcher(undici, { maxSockets: CONCURRENCY, ...tls });
  const httpAgent = new (PROTOCOL === 'https' ? HttpsAgent : HttpAgent)({ maxSockets: CONCURRENCY, ...tls });
  const clients = {
    'node fetch': async (target) => { await (await fetch(target)).arrayBuffer(); },
    'steady-agent/fetch': async (target) => { await (await steadyFetch(target)).arrayBuffer(); },
    'undici.request + Agent': async (target) => { await (await undici.request(target, { dispatcher: undiciAgent })).body.arrayBuffer(); },
    'undici.request + createDispatcher': async (target) => { await (await undici.request(target, { dispatcher: steadyDispatcher })).body.arrayBuffer(); },
    // The agent's own request, without undici: what the fallback adds to.
    'http.request + HttpAgent': (target) => new Promise((resolve, reject) => {
      (PROTOCOL === 'https' ? https : http).get(target, { agent: httpAgent }, (res) => {
        res.on('data', () => {});
        res.on('end', resolve);
      }).on('error', reject);
    }),
  };
  const names = Object.keys(clients);
  for (const name of names) await run(name, clients[name], url, WARMUP);
  const perRound = Object.fromEntries(names.map((name) => [name, []]));
  const seen = Object.fromEntries(names.map((name) => [name, { connections: 0, resumed: 0 }]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length];
      await backend.call('reset');
      perRound[name].push(await run(name, clients[name], url, REQUESTS));
      const { connections, resumed } = await backend.call('stats');
      seen[name].connections += connections;
      seen[name].resumed += resumed;
    }
  }
  const ratio = (a, b) => median(perRound[a].map((value, round) => value / perRound[b][round]));
  console.log(`Node ${process.version}, undici ${require('undici/package.json').version}; ${PROTOCOL}; ${ROUNDS} rounds of ${REQUESTS} requests, ${CONCURRENCY} in flight${NEW_EVERY > 0 ? `, a new connection every ${NEW_EVERY} requests` : ''}`);
  for (const name of names) {
    const { connections, resumed } = seen[name];
    const tls = PROTOCOL === 'https' ? `, ${resumed} of them resumed` : '';
    const failed = failures[name] ? `; ${failures[name]} failed` : '';
    console.log(`${name.padEnd(36)} ${fixed(median(perRound[name]))} µs/request (median); ${connections} connections in all${tls}${failed}`);
  }
  console.log(`steady-agent/fetch / node fetch: ${fixed(ratio('steady-agent/fetch', 'node fetch'), 3)}`);
  console.log(`createDispatcher / undici Agent: ${fixed(ratio('undici.request + createDispatcher', 'undici.request + Agent'), 3)}`);
  await steadyFetch.close();
  await steadyDispatcher.close();
  await undiciAgent.close();
  httpAgent.destroy();
});
