'use strict';

// Happy Eyeballs: a new connection to a host name with two addresses, one
// of them unreachable. A DNS server (dns2, its own process) answers
// `eyeballs.bench` with 127.0.0.2 and 127.0.0.3; on one port:
//
// - first drops: 127.0.0.2 drops SYNs (a full accept queue, the child of
//   test/support/blackhole.js), 127.0.0.3 serves (a backend process);
// - late first: 127.0.0.2 answers late (the same child, released 300 ms
//   after the request began, so its SYN is answered on the retransmission
//   Linux sends about 1 s after it), 127.0.0.3 drops SYNs.
//
// Each run is a fresh client (a new connection), the time from the request
// to its response, with a limit of BENCH_HE_LIMIT ms. Node's agent and
// undici's Agent use Node's autoSelectFamily (one address at a time, each
// given up after autoSelectFamilyAttemptTimeout, 250 ms); steady-agent
// (HttpAgent, steady-agent/fetch's createFetch) races them (RFC 8305) with
// the same 250 ms Connection Attempt Delay. Every client asks the same DNS
// server: steady-agent through `dns: { resolver }`, the others through a
// `lookup` asking it.
//
//   node benchmark/happy-eyeballs.js
//   BENCH_HE_RUNS=5 BENCH_AGENTS=steady-agent,node-keepalive node benchmark/happy-eyeballs.js
const http = require('node:http');
const SteadyAgent = require('..');
const { createFetch } = require('../lib/fetch');
const { versionOf } = require('./lib/agents');
const { startServer, runMain } = require('./lib/processes');
const { resolverFor, lookupFor } = require('./lib/dns_client');
const { median, percentile, fixed, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario } = require('./lib/results');
const { now } = require('../lib/timers/clock');
const { startBlackhole } = require('../test/support/blackhole');

const dropRuns = envNumber('BENCH_HE_RUNS', 20);
const lateRuns = envNumber('BENCH_HE_LATE_RUNS', 5);
const limitMs = envNumber('BENCH_HE_LIMIT', 5000);
const releaseMs = envNumber('BENCH_HE_RELEASE', 300);
const DELAY = 250;
const HOST = 'eyeballs.bench';
const FIRST = '127.0.0.2';
const SECOND = '127.0.0.3';

const CANDIDATES = [
  {
    id: 'node-keepalive',
    label: () => `http.Agent keepAlive:true, autoSelectFamilyAttemptTimeout: ${DELAY}`,
    create: (resolver) => agentClient(new http.Agent({
      keepAlive: true, autoSelectFamily: true, autoSelectFamilyAttemptTimeout: DELAY, lookup: lookupFor(resolver),
    })),
  },
  {
    id: 'undici',
    label: () => `undici ${versionOf('undici')} Agent, autoSelectFamilyAttemptTimeout: ${DELAY}`,
    create: (resolver) => {
      const undici = require('undici');
      const dispatcher = new undici.Agent({
        connect: { autoSelectFamily: true, autoSelectFamilyAttemptTimeout: DELAY, lookup: lookupFor(resolver) },
      });
      return {
        async get(url, signal) {
          const res = await undici.request(url, { dispatcher, signal });
          await res.body.dump();
        },
        close: () => dispatcher.destroy(),
      };
    },
  },
  {
    id: 'steady-agent',
    label: () => 'steady-agent dns: { resolver }',
    create: (resolver) => agentClient(new SteadyAgent({ autoSelectFamily: true, dns: { resolver } })),
  },
  {
    id: 'steady-fetch',
    label: () => 'steady-agent/fetch createFetch, dns: { resolver }',
    create: (resolver) => {
      const fetch = createFetch({ autoSelectFamily: true, dns: { resolver } });
      return {
        async get(url, signal) {
          await (await fetch(url, { signal })).arrayBuffer();
        },
        close: () => fetch.close(),
      };
    },
  },
];

function agentClient(agent) {
  return {
    get(url, signal) {
      return new Promise((resolve, reject) => {
        const req = http.get(url, { agent, signal }, (res) => {
          res.on('end', resolve);
          res.on('error', reject);
          res.resume();
        });
        req.on('error', reject);
      });
    },
    close: () => agent.destroy(),
  };
}

/** One request on a fresh client: ms to the response, or null past the limit (or failed: `error`). */
async function once(candidate, resolver, port, onStart) {
  const client = candidate.create(resolver);
  const signal = AbortSignal.timeout(limitMs);
  const started = now();
  const pending = client.get(`http://${HOST}:${port}/`, signal);
  onStart?.();
  try {
    await pending;
    return { ms: now() - started };
  } catch (error) {
    return { ms: null, error: signal.aborted ? null : (error.cause?.code ?? error.code ?? error.message) };
  } finally {
    await client.close();
  }
}

/** First drops, second serves: `dropRuns` new connections per agent. */
async function firstDrops(list, resolver) {
  const backend = await startServer('backend', { host: SECOND });
  const hole = await startBlackhole([FIRST], { port: backend.port });
  const results = new Map(list.map((c) => [c.id, []]));
  try {
    for (let run = 0; run < dropRuns; run++) {
      for (let j = 0; j < list.length; j++) {
        const candidate = list[(run + j) % list.length];
        results.get(candidate.id).push(await once(candidate, resolver, backend.port));
      }
    }
  } finally {
    await hole.close();
    await backend.stop();
  }
  return results;
}

/** First answers late, second drops: a held listener released `releaseMs` after each request began. */
async function lateFirst(list, resolver) {
  const results = new Map(list.map((c) => [c.id, []]));
  for (let run = 0; run < lateRuns; run++) {
    for (let j = 0; j < list.length; j++) {
      const candidate = list[(run + j) % list.length];
      const late = await startBlackhole([FIRST], { held: true, protocol: 'http:' });
      const drop = await startBlackhole([SECOND], { port: late.port });
      let timer = null;
      try {
        const result = await once(candidate, resolver, late.port, () => { timer = setTimeout(late.release, releaseMs); });
        results.get(candidate.id).push(result);
        console.log(`late first, run ${run + 1}: ${candidate.label().padEnd(64)} ${describe(result)}`);
      } finally {
        clearTimeout(timer);
        await drop.close();
        await late.close();
      }
    }
  }
  return results;
}

function describe(result) {
  if (result.ms !== null) return `${fixed(result.ms, 0)} ms`;
  return result.error === null ? `no connection within ${limitMs} ms` : `failed (${result.error})`;
}

function connected(runs) {
  return `${runs.filter((r) => r.ms !== null).length} / ${runs.length}`;
}

// Over the runs that connected (the "connected" column says how many).
function msOf(runs, stat) {
  const times = runs.filter((r) => r.ms !== null).map((r) => r.ms);
  return times.length === 0 ? `none within ${limitMs / 1000} s` : fixed(stat(times), 0);
}

async function main() {
  let list = CANDIDATES;
  const only = process.env.BENCH_AGENTS;
  if (only) {
    const wanted = only.split(',').map((s) => s.trim());
    list = list.filter((c) => wanted.includes(c.id));
  }
  const dnsServer = await startServer('dns', { records: { [HOST]: { A: [FIRST, SECOND], ttl: 3600 } } });
  const resolver = resolverFor(dnsServer.port);
  let drops;
  let late;
  try {
    drops = await firstDrops(list, resolver);
    for (const candidate of list) {
      console.log(`first drops: ${candidate.label().padEnd(64)} ${drops.get(candidate.id).map(describe).join(', ')}`);
    }
    late = await lateFirst(list, resolver);
  } finally {
    await dnsServer.stop();
  }

  const rows = list.map((candidate) => {
    const d = drops.get(candidate.id);
    const l = late.get(candidate.id);
    return [
      candidate.label(),
      msOf(d, median), msOf(d, (times) => percentile(times, 95)), msOf(d, (times) => Math.max(...times)), connected(d),
      msOf(l, median), connected(l),
    ];
  });
  const table = {
    title: `Happy Eyeballs: a new connection to a name with two addresses (${FIRST}, ${SECOND}); `
      + `${dropRuns} runs with the first dropping SYNs, ${lateRuns} with the first answering late and the second dropping; `
      + `each a fresh client, limit ${limitMs / 1000} s`,
    columns: ['agent', 'first drops: median ms', 'p95 ms', 'max ms', 'connected', 'late first: median ms', 'connected (late first)'],
    rows,
  };
  printTable(table);
  saveScenario({
    id: 'happy-eyeballs',
    title: 'Happy Eyeballs (a host with an unreachable address)',
    summary: 'A new connection to a name whose first address drops SYNs, or answers late while the second drops: '
      + 'Node\'s autoSelectFamily gives each attempt up after 250 ms; steady-agent races them (RFC 8305).',
    params: { dropRuns, lateRuns, limitMs, releaseMs, delayMs: DELAY, node: process.version },
    tables: [table],
    notes: [
      'Every client asks the benchmark\'s DNS server (dns2, its own process): steady-agent through `dns: { resolver }`, '
        + 'Node\'s agent and undici through a `lookup` asking it (every address, with `all: true`).',
      `A dropping address is a listener whose accept queue is full (the SYN is dropped, as by a firewall). The late one is the same, `
        + `released ${releaseMs} ms after the request began: its SYN is answered on Linux's first retransmission, about 1 s after it was sent.`,
      'Node\'s agent and undici use Node\'s autoSelectFamily with autoSelectFamilyAttemptTimeout 250: with the first address late, '
        + 'they give it up at 250 ms and wait on the second, which never answers. steady-agent starts the second after the same 250 ms '
        + 'and gives up neither; the first to connect wins.',
      `Loopback: the round trip is some 0.1 ms, so a figure near 250 ms is the Connection Attempt Delay (or Node's attempt timeout) itself.`,
    ],
    raw: { firstDrops: Object.fromEntries(drops), lateFirst: Object.fromEntries(late) },
  });
}

runMain(main);
