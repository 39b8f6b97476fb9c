'use strict';

// CPU per request of the fetch and undici front doors, each side by side
// with its baseline in one process: steady-agent/fetch against Node's own
// fetch (its global dispatcher), and undici.request through createDispatcher
// against undici's own Agent (npm's undici 6 here). The backend runs in its
// own process. Every round runs the four clients once, in an order rotated
// by one each round; the result is the median over rounds of each pair's
// ratio of CPU µs per request (process.cpuUsage(), user + system).
//
//   node benchmark/fetch-cost.js
//   BENCH_REQUESTS=4000 BENCH_ROUNDS=21 node benchmark/fetch-cost.js
const http = require('node:http');
// steady-agent/fetch before npm's undici: it finds the bundled undici's Agent.
const { createFetch } = require('../lib/fetch');
const undici = require('undici');
const { HttpAgent } = require('..');
const { createDispatcher } = require('../lib/undici');
const { runMain, startServer } = require('./lib/processes');
const { median, fixed, envNumber } = require('./lib/stats');

const REQUESTS = envNumber('BENCH_REQUESTS', 2000);
const ROUNDS = envNumber('BENCH_ROUNDS', 21);
const CONCURRENCY = envNumber('BENCH_CONCURRENCY', 50);
const WARMUP = envNumber('BENCH_WARMUP_REQUESTS', 2000);

/** Sends `n` requests, `concurrency` in flight, through `send(url)`; returns CPU µs per request. */
async function run(send, url, n) {
  let next = 0;
  const start = process.cpuUsage();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n) {
      next++;
      await send(url);
    }
  }));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

runMain(async () => {
  const backend = await startServer('backend', { protocol: 'http' });
  const url = `http://127.0.0.1:${backend.port}/`;
  const steadyFetch = createFetch({ maxSockets: CONCURRENCY });
  const undiciAgent = new undici.Agent({ connections: CONCURRENCY });
  const steadyDispatcher = createDispatcher(undici, { maxSockets: CONCURRENCY });
  const httpAgent = new HttpAgent({ maxSockets: CONCURRENCY });
  const clients = {
    'node fetch': async (target) => { await (await fetch(target)).arrayBuffer(); },
    'steady-agent/fetch': async (target) => { await (await steadyFetch(target)).arrayBuffer(); },
    'undici.request + Agent': async (target) => { await (await undici.request(target, { dispatcher: undiciAgent })).body.arrayBuffer(); },
    'undici.request + createDispatcher': async (target) => { await (await undici.request(target, { dispatcher: steadyDispatcher })).body.arrayBuffer(); },
    // The agent's own request, without undici: what the fallback adds to.
    'http.request + HttpAgent': (target) => new Promise((resolve, reject) => {
      http.get(target, { agent: httpAgent }, (res) => {
        res.on('data', () => {});
        res.on('end', resolve);
      }).on('error', reject);
    }),
  };
  const names = Object.keys(clients);
  for (const name of names) await run(clients[name], url, WARMUP);
  const perRound = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length];
      perRound[name].push(await run(clients[name], url, REQUESTS));
    }
  }
  const ratio = (a, b) => median(perRound[a].map((value, round) => value / perRound[b][round]));
  console.log(`Node ${process.version}, undici ${require('undici/package.json').version}; ${ROUNDS} rounds of ${REQUESTS} requests, ${CONCURRENCY} in flight`);
  for (const name of names) console.log(`${name.padEnd(36)} ${fixed(median(perRound[name]))} µs/request (median)`);
  console.log(`steady-agent/fetch / node fetch: ${fixed(ratio('steady-agent/fetch', 'node fetch'), 3)}`);
  console.log(`createDispatcher / undici Agent: ${fixed(ratio('undici.request + createDispatcher', 'undici.request + Agent'), 3)}`);
  await steadyFetch.close();
  await steadyDispatcher.close();
  await undiciAgent.close();
  httpAgent.destroy();
});
