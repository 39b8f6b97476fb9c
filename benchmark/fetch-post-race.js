'use strict';

// POSTs around a silent server's idle limit (issue 39, "Done when"): the
// hintless race server (servers/race-server.js, its own process) announces
// nothing and closes a connection idle for exactly LIMIT ms after its last
// response; the delay proxy (servers/delay-proxy.js) gives the path LATENCY
// ms each way, so a request sent less than a round trip before the server's
// close meets a closed connection. A POST that meets one is lost: no client
// may send it again without an Idempotency-Key, and none is given here.
//
// Each run: for each client, INSTANCES fresh instances in parallel, each
// sending REQUESTS POSTs (a small JSON body) one after another: the first at
// once, each next one an idle gap after the previous response was read. The
// gaps of a run's instances together are spread evenly over LIMIT ± SPREAD
// ms (instance k takes every INSTANCES-th of them, from the k-th), each
// instance's in a shuffled order, so that every instance meets gaps on both
// sides of the limit, in an order that differs per run and per instance and
// is the same for every client. A client that learns the limit loses at most
// its first collision; one that does not loses every request sent inside
// the race window.
//
// Clients (BENCH_POST_CLIENTS, comma-separated, all by default):
//   agent       HttpAgent with http.request (the reference)
//   fetch       createFetch() from steady-agent/fetch
//   openai      the openai SDK with fetch: createFetch(), maxRetries: 0,
//               POSTing /v1/chat/completions
//   node-fetch  Node's own fetch, a fresh dispatcher of the bundled undici
//               per instance (for contrast: it does not learn)
// The clients run at the same time, against one server and one proxy; the
// server tells their requests apart by the first segment of the path, and
// counts each one's requests and connections.
//
//   node benchmark/fetch-post-race.js
//   BENCH_POST_RUNS=5 BENCH_POST_CLIENTS=fetch,openai node benchmark/fetch-post-race.js
//   BENCH_POST_SPREAD=30 BENCH_POST_LATENCY=10 node benchmark/fetch-post-race.js
//   DEBUG=steady-agent BENCH_POST_RUNS=1 BENCH_POST_CLIENTS=fetch node benchmark/fetch-post-race.js
const http = require('node:http');
// Before anything loads npm's undici: steady-agent/fetch and Node's fetch keep the bundled one.
const { createFetch } = require('../lib/fetch');
const { BundledAgent } = require('./lib/dispatchers');
const { HttpAgent } = require('..');
const { startServer, runMain } = require('./lib/processes');
const { envNumber, sleep } = require('./lib/stats');
const { printTable } = require('./lib/table');

const RUNS = envNumber('BENCH_POST_RUNS', 5);
const INSTANCES = Math.max(1, envNumber('BENCH_POST_INSTANCES', 4));
const REQUESTS = Math.max(2, envNumber('BENCH_POST_REQUESTS', 24));
const LIMIT = envNumber('BENCH_POST_LIMIT', 1000);
const SPREAD = envNumber('BENCH_POST_SPREAD', 50);
const LATENCY = envNumber('BENCH_POST_LATENCY', 5);
const CLIENT_IDS = (process.env.BENCH_POST_CLIENTS || 'agent,fetch,openai,node-fetch').split(',').map((s) => s.trim());
const REQUEST_TIMEOUT_MS = 10000;
// The clients start this far apart, so that their instances' requests do
// not all reach the proxy in the same turn.
const STAGGER_MS = 37;

const BODY = JSON.stringify({ model: 'race-model', messages: [{ role: 'user', content: 'hello' }] });
const HEADERS = { 'content-type': 'application/json' };

/** A small deterministic PRNG (mulberry32): the same gaps for every client of a run. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The idle gaps of instance `k` in run `run`: its share of INSTANCES ×
 * (REQUESTS - 1) gaps spread evenly over LIMIT ± SPREAD, in whole
 * milliseconds (timers have 1 ms resolution), shuffled.
 */
function gapsOf(run, k) {
  const n = INSTANCES * (REQUESTS - 1);
  const all = Array.from({ length: n }, (_, i) => Math.round(LIMIT - SPREAD + (2 * SPREAD * i) / (n - 1)));
  const gaps = all.filter((_, i) => i % INSTANCES === k);
  const next = random(run * 1000 + k + 1);
  for (let i = gaps.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [gaps[i], gaps[j]] = [gaps[j], gaps[i]];
  }
  return gaps;
}

/** `promise`, or a rejection after REQUEST_TIMEOUT_MS. */
function bounded(promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), REQUEST_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What failed, by its code: the error's, or its causes' (fetch and the SDK wrap the socket's). */
function errorName(err) {
  const names = [];
  for (let e = err, depth = 0; e && depth < 4; e = e.cause, depth++) {
    if (e.code) return `${names.concat(e.code).join(' < ')}`;
    names.push(e.constructor?.name || e.name);
  }
  return err.message;
}

/** POSTs through http.request on `agent`; resolves once the response is read. */
function agentPost(agent, url) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...HEADERS, 'content-length': Buffer.byteLength(BODY) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

async function fetchPost(fetch, url, dispatcher) {
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body: BODY, ...(dispatcher ? { dispatcher } : {}) });
  await res.text();
  if (res.status !== 200) throw new Error(`status ${res.status}`);
}

/** Each client: a label, and make(origin) -> { post(), close() }, a fresh instance. */
const CLIENTS = {
  agent: {
    label: 'HttpAgent + http.request',
    make(origin) {
      const agent = new HttpAgent();
      return { post: () => agentPost(agent, `${origin}/agent/post`), close: async () => agent.destroy() };
    },
  },
  fetch: {
    label: 'steady-agent/fetch createFetch()',
    make(origin) {
      const fetch = createFetch();
      return { post: () => fetchPost(fetch, `${origin}/fetch/post`), close: () => fetch.close() };
    },
  },
  openai: {
    label: 'openai SDK, fetch: createFetch(), maxRetries: 0',
    make(origin) {
      const OpenAI = require('openai');
      const fetch = createFetch();
      const client = new OpenAI({ apiKey: 'bench-key', baseURL: `${origin}/openai/v1`, fetch, maxRetries: 0, timeout: REQUEST_TIMEOUT_MS });
      const ask = { model: 'race-model', messages: [{ role: 'user', content: 'hello' }] };
      return {
        async post() {
          const answer = await client.chat.completions.create(ask);
          if (answer.choices?.[0]?.message?.content !== 'ok') throw new Error('unexpected answer');
        },
        close: () => fetch.close(),
      };
    },
  },
  'node-fetch': {
    label: `Node's fetch (bundled undici ${process.versions.undici}), a fresh Agent`,
    available: BundledAgent !== undefined,
    make(origin) {
      const dispatcher = new BundledAgent();
      return { post: () => fetchPost(fetch, `${origin}/node-fetch/post`, dispatcher), close: () => dispatcher.destroy() };
    },
  },
};

/** One instance of `client`: a POST at once, then one after each gap; resolves with the errors. */
async function instance(client, origin, gaps) {
  const one = client.make(origin);
  const errors = [];
  try {
    for (let i = 0; i <= gaps.length; i++) {
      if (i > 0) await sleep(gaps[i - 1]);
      try {
        await bounded(one.post());
      } catch (err) {
        errors.push({ request: i, gap: i > 0 ? gaps[i - 1] : 0, name: errorName(err) });
      }
    }
  } finally {
    await one.close();
  }
  return errors;
}

/** One run of every client at once: per client, each instance's errors. */
async function run(number, ids, origin) {
  const results = await Promise.all(ids.map(async (id, c) => {
    await sleep(c * STAGGER_MS);
    const perInstance = await Promise.all(Array.from({ length: INSTANCES }, (_, k) => instance(CLIENTS[id], origin, gapsOf(number, k))));
    return [id, perInstance];
  }));
  return Object.fromEntries(results);
}

function countCodes(errors, into) {
  for (const { name } of errors) into[name] = (into[name] || 0) + 1;
  return into;
}

const formatCodes = (codes) => Object.entries(codes).map(([name, n]) => `${name} ×${n}`).join(', ') || '-';

async function main() {
  for (const id of CLIENT_IDS) {
    if (!CLIENTS[id]) throw new Error(`BENCH_POST_CLIENTS: unknown client ${JSON.stringify(id)} (${Object.keys(CLIENTS).join(', ')})`);
  }
  const ids = CLIENT_IDS.filter((id) => CLIENTS[id].available !== false);
  const server = await startServer('race-server', { hint: 0, idle: LIMIT });
  const network = await startServer('delay-proxy', { targetPort: server.port, delay: LATENCY });
  const origin = `http://127.0.0.1:${network.port}`;
  const perRequest = INSTANCES * REQUESTS;
  console.log(`Node ${process.version} (bundled undici ${process.versions.undici}); ${RUNS} runs; per client and run ${INSTANCES} fresh instances, `
    + `${REQUESTS} POSTs each, gaps ${LIMIT} ms ± ${SPREAD} ms; silent server closing at ${LIMIT} ms idle, ${LATENCY} ms latency each way`);
  const rows = Object.fromEntries(ids.map((id) => [id, []]));
  const totals = Object.fromEntries(ids.map((id) => [id, { lost: 0, worst: 0, reused: 0, connections: 0, codes: {} }]));
  try {
    // Every client's code compiled before its timing matters.
    await Promise.all(ids.map((id) => instance(CLIENTS[id], origin, [1])));
    await server.call('reset');
    for (let r = 1; r <= RUNS; r++) {
      const results = await run(r, ids, origin);
      const stats = await server.call('reset');
      for (const id of ids) {
        const lost = results[id].map((errors) => errors.length);
        const sum = lost.reduce((a, b) => a + b, 0);
        const tag = stats.tags[id] ?? { requests: 0, connections: 0 };
        const codes = countCodes(results[id].flat(), {});
        const total = totals[id];
        total.lost += sum;
        total.worst = Math.max(total.worst, ...lost);
        total.reused += tag.requests - tag.connections;
        total.connections += tag.connections;
        countCodes(results[id].flat(), total.codes);
        const gaps = results[id].map((errors) => errors.map((e) => e.gap).join('/') || '-').join(' ');
        rows[id].push([String(r), lost.join(' '), `${sum} / ${perRequest}`, `${tag.requests - tag.connections}`, `${tag.connections}`, gaps, formatCodes(codes)]);
        console.log(`run ${r}, ${CLIENTS[id].label}: lost ${lost.join(' ')} (${sum} of ${perRequest}; gaps of the lost, ms: ${gaps}), `
          + `${tag.requests - tag.connections} on reused sockets, ${tag.connections} connections`);
      }
    }
  } finally {
    await network.stop();
    await server.stop();
  }
  printTable({
    title: `POSTs lost per instance (${INSTANCES} fresh instances a run, ${REQUESTS} POSTs each), Node ${process.version}`,
    columns: ['client', ...Array.from({ length: RUNS }, (_, r) => `run ${r + 1}`), 'lost', 'most in one instance'],
    rows: ids.map((id) => [CLIENTS[id].label, ...rows[id].map((row) => row[1]), `${totals[id].lost} / ${RUNS * perRequest}`, `${totals[id].worst}`]),
  });
  for (const id of ids) {
    const total = totals[id];
    printTable({
      title: `${CLIENTS[id].label}: POSTs lost per instance, ${RUNS} runs`,
      columns: ['run', 'lost per instance', 'lost', 'on reused sockets', 'connections', 'gaps of the lost, ms', 'errors'],
      rows: [...rows[id], ['all', `at most ${total.worst}`, `${total.lost} / ${RUNS * perRequest}`, `${total.reused}`, `${total.connections}`, '', formatCodes(total.codes)]],
    });
  }
}

runMain(main);
