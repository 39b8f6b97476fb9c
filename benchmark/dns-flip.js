'use strict';

// DNS flip: a service moves while traffic flows. Under constant load (C
// requests always in flight, each answered after a delay, maxSockets C) to
// `svc.bench`, whose A record (TTL 1 s) names 127.0.0.2, the record flips to
// 127.0.0.3 (a second backend on the same port); the old backend keeps
// serving for a while and then goes away (its connections cut, as a stopped
// instance's are). Per
// agent: the time from the flip until every request reaches the new
// address, requests sent to the old address after the flip, requests lost
// (failed), connections opened and DNS queries asked.
//
// Every agent asks the same DNS server (its own process, test/support's
// dns2 server): steady-agent through `dns: { resolver }`, Node's agent and
// agentkeepalive through a `lookup` that asks it on every new connection
// (as a system resolver honouring the TTL would), undici's DNS interceptor
// through a `lookup` that asks it and, like dns.lookup, gives no TTL, and
// steady-agent/undici's createDispatcher (the same undici) through
// `dns: { resolver }`.
//
//   node benchmark/dns-flip.js
//   BENCH_DNS_ROUNDS=1 BENCH_AGENTS=steady-agent,node-keepalive node benchmark/dns-flip.js
const http = require('node:http');
const AgentKeepAlive = require('agentkeepalive');
const SteadyAgent = require('..');
const { versionOf } = require('./lib/agents');
const { startServer, runMain } = require('./lib/processes');
const { resolverFor, lookupFor } = require('./lib/dns_client');
const { median, fixed, count, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario } = require('./lib/results');
const { now } = require('../lib/timers/clock');
const { createDispatcher } = require('../lib/undici');

const rounds = envNumber('BENCH_DNS_ROUNDS', 5);
const concurrency = envNumber('BENCH_DNS_CONCURRENCY', 4);
const pauseMs = envNumber('BENCH_DNS_PAUSE', 0);
const serverDelayMs = envNumber('BENCH_DNS_SERVER_DELAY', 10);
const ttl = envNumber('BENCH_DNS_TTL', 1);
const warmupMs = envNumber('BENCH_DNS_WARMUP', 2000);
const drainMs = envNumber('BENCH_DNS_DRAIN', 6000);
const windowMs = envNumber('BENCH_DNS_WINDOW', 10000);
const HOST = 'svc.bench';
const OLD = '127.0.0.2';
const NEW = '127.0.0.3';
const REQUEST_TIMEOUT_MS = 5000;

const CANDIDATES = [
  {
    id: 'steady-agent',
    label: () => 'steady-agent dns: { resolver }',
    create: (resolver) => agentClient(new SteadyAgent({ maxSockets: concurrency, dns: { resolver } })),
  },
  {
    id: 'node-keepalive',
    label: () => 'http.Agent keepAlive:true',
    create: (resolver) => agentClient(new http.Agent({ keepAlive: true, maxSockets: concurrency, lookup: lookupFor(resolver) })),
  },
  {
    id: 'agentkeepalive',
    label: () => `agentkeepalive ${versionOf('agentkeepalive')} socketActiveTTL: 5s`,
    create: (resolver) => agentClient(new AgentKeepAlive({ maxSockets: concurrency, socketActiveTTL: '5s', lookup: lookupFor(resolver) })),
  },
  {
    id: 'undici',
    label: () => `undici ${versionOf('undici')} interceptors.dns`,
    create: (resolver) => undiciClient(resolver),
  },
  {
    id: 'steady-undici',
    label: () => `undici ${versionOf('undici')} createDispatcher dns: { resolver }`,
    create: (resolver) => dispatcherClient(createDispatcher(require('undici'), { maxSockets: concurrency, dns: { resolver } })),
  },
];

function agentClient(agent) {
  return {
    get(port) {
      return new Promise((resolve) => {
        const req = http.get({ host: HOST, port, path: '/', agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
          res.on('end', () => resolve({ served: res.headers['x-served-by'] }));
          res.on('error', (error) => resolve({ error }));
          res.resume();
        });
        req.on('timeout', () => req.destroy(new Error('request timed out')));
        req.on('error', (error) => resolve({ error }));
      });
    },
    close: () => agent.destroy(),
  };
}

/** undici's Agent with its DNS interceptor, or null where this undici has none. */
function undiciClient(resolver) {
  const undici = require('undici');
  if (typeof undici.interceptors?.dns !== 'function') return null;
  // As the interceptor's default (dns.lookup): every address, no TTL, so
  // that it keeps each answer for its maxTTL (10 s by default).
  const lookup = (origin, _options, callback) => {
    resolver.resolve4(origin.hostname, (err, addresses) => {
      callback(err, err ? undefined : addresses.map((address) => ({ address, family: 4 })));
    });
  };
  return dispatcherClient(new undici.Agent({ connections: concurrency }).compose(undici.interceptors.dns({ lookup })));
}

/** Requests through an undici dispatcher, as agentClient's. */
function dispatcherClient(dispatcher) {
  return {
    async get(port) {
      try {
        const res = await dispatcher.request({
          origin: `http://${HOST}:${port}`, path: '/', method: 'GET',
          headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS,
        });
        await res.body.dump();
        return { served: res.headers['x-served-by'] };
      } catch (error) {
        return { error };
      }
    },
    close: () => dispatcher.destroy(),
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One agent through one flip: what every request got, from the flip's point of view. */
async function run(candidate, dnsServer) {
  await dnsServer.call('set', HOST, { A: [OLD], ttl });
  const old = await startServer('backend', { host: OLD, servedBy: true, delay: serverDelayMs });
  const next = await startServer('backend', { host: NEW, port: old.port, servedBy: true, delay: serverDelayMs });
  const resolver = resolverFor(dnsServer.port);
  const client = candidate.create(resolver);
  if (client === null) {
    await Promise.all([old.stop(), next.stop()]);
    return null;
  }
  const queriesBefore = await dnsServer.call('queries', HOST);
  const records = [];
  let running = true;
  let flipAt = Infinity;
  const worker = async () => {
    while (running) {
      const start = now();
      const outcome = await client.get(old.port);
      records.push({ start: start - flipAt, served: outcome.served ?? null, error: outcome.error ?? null });
      if (pauseMs > 0) await sleep(pauseMs);
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  try {
    // At a random moment within one TTL after the warm-up: a flip in step
    // with the agents' own timers would flatter whichever refreshes then.
    await sleep(warmupMs + Math.random() * ttl * 1000);
    // Requests started before this count from -Infinity: not after the flip.
    flipAt = now();
    await dnsServer.call('set', HOST, { A: [NEW], ttl });
    await sleep(drainMs);
    await old.call('shutdown');
    await sleep(windowMs - drainMs);
  } finally {
    running = false;
    await Promise.all(workers);
    await client.close();
  }
  const connections = (await old.call('stats')).connections + (await next.call('stats')).connections;
  const queries = (await dnsServer.call('queries', HOST)) - queriesBefore;
  await Promise.all([old.stop(), next.stop()]);
  return summarize(records, connections, queries);
}

function summarize(records, connections, queries) {
  const after = records.filter((r) => r.start >= 0).sort((a, b) => a.start - b.start);
  // The first request from which on every request went to the new address.
  let k = after.length;
  while (k > 0 && after[k - 1].served === NEW) k--;
  const switchMs = k === after.length ? null : after[k].start;
  return {
    switchMs,
    oldAfterFlip: after.filter((r) => r.served === OLD).length,
    lost: records.filter((r) => r.error !== null).length,
    errors: [...new Set(records.filter((r) => r.error !== null).map((r) => r.error.code ?? r.error.message))],
    requests: records.length,
    connections,
    queries,
  };
}

async function main() {
  let list = CANDIDATES;
  const only = process.env.BENCH_AGENTS;
  if (only) {
    const wanted = only.split(',').map((s) => s.trim());
    list = list.filter((c) => wanted.includes(c.id));
  }
  const dnsServer = await startServer('dns');
  const results = new Map(list.map((c) => [c.id, []]));
  const unavailable = new Set();
  try {
    for (let round = 0; round < rounds; round++) {
      for (let j = 0; j < list.length; j++) {
        const candidate = list[(round + j) % list.length];
        if (unavailable.has(candidate.id)) continue;
        const result = await run(candidate, dnsServer);
        if (result === null) {
          unavailable.add(candidate.id);
          console.log(`${candidate.label()}: not available with this undici on Node ${process.version}`);
          continue;
        }
        results.get(candidate.id).push(result);
        console.log(`round ${round + 1} ${candidate.label().padEnd(48)} all on new after ${result.switchMs === null ? 'never' : `${fixed(result.switchMs / 1000, 2)} s`}, `
          + `${result.oldAfterFlip} to old after the flip, ${result.lost} lost${result.errors.length ? ` (${result.errors.join(', ')})` : ''}, `
          + `${result.requests} requests, ${result.connections} connections, ${result.queries} DNS queries`);
      }
    }
  } finally {
    await dnsServer.stop();
  }

  const rows = list.map((candidate) => {
    const runs = results.get(candidate.id);
    if (runs.length === 0) return [candidate.label(), 'n/a', 'n/a', 'n/a', 'n/a', 'n/a'];
    const never = runs.some((r) => r.switchMs === null);
    return [
      candidate.label(),
      never ? `never (within ${windowMs / 1000} s)` : fixed(median(runs.map((r) => r.switchMs)) / 1000, 2),
      count(median(runs.map((r) => r.oldAfterFlip))),
      count(median(runs.map((r) => r.lost))),
      count(median(runs.map((r) => r.connections))),
      count(median(runs.map((r) => r.queries))),
    ];
  });
  const table = {
    title: `DNS flip: ${concurrency} requests in flight (the server answers after ${serverDelayMs} ms${pauseMs > 0 ? `, then a ${pauseMs} ms pause` : ''}); the A record (TTL ${ttl} s) flips from ${OLD} to ${NEW}; `
      + `the old backend goes away ${drainMs / 1000} s later; medians of ${rounds} round(s)`,
    columns: ['agent', 'all on new address after, s', 'requests to old address after flip', 'requests lost',
      'connections opened', 'DNS queries'],
    rows,
  };
  printTable(table);
  saveScenario({
    id: 'dns-flip',
    title: 'DNS flip (a service moves under load)',
    summary: 'Constant load on a name whose A record flips to another address; how long the agent keeps sending to the old '
      + 'address, and what it loses when the old address goes away.',
    params: { rounds, concurrency, pauseMs, serverDelayMs, ttlS: ttl, warmupMs, drainMs, windowMs, node: process.version },
    tables: [table],
    notes: [
      'steady-agent: `dns: { resolver }` (a dns.Resolver asking the benchmark\'s DNS server), every other setting its default.',
      'Node\'s agent and agentkeepalive: a `lookup` asking the same server on every new connection, as a system resolver that honours the TTL would.',
      'undici: `Agent().compose(interceptors.dns({ lookup }))`, the lookup asking the same server and giving no TTL, as dns.lookup gives none: it keeps an answer for its maxTTL (10 s).',
      `The flip comes at a random moment within one TTL after a ${warmupMs / 1000} s warm-up. `
        + `"all on new address after": from the flip to the first request from which on every request was answered by ${NEW}. `
        + `Requests lost: failed requests: cut when the old backend went away (${drainMs / 1000} s after the flip), `
        + `or without an answer within the ${REQUEST_TIMEOUT_MS / 1000} s request timeout.`,
      'agentkeepalive\'s lost requests are of the second kind, and come from socketActiveTTL itself, not from DNS: '
        + 'with maxSockets reached and requests sent back to back, some requests given a socket that its TTL closes get no answer '
        + '(the same happens against a single server, without DNS). They also end its "all on new address" time.',
    ],
    raw: Object.fromEntries(results),
  });
}

runMain(main);
