'use strict';

// Scenario 4, Nagle: a POST whose body is written in two pieces, `write()`
// and then `end()` on the next tick, as streaming code often does. Without
// TCP_NODELAY the second piece waits for the ACK of the first, which the
// server delays (~40 ms on Linux) because it is waiting for the rest of the
// body. Sequential requests over one connection per agent (a new one per
// request without keep-alive), the agents taking turns, over http and https.
//
//   node benchmark/nagle.js
//   BENCH_NAGLE_REQUESTS=50 node benchmark/nagle.js
const { candidates, createClient, moduleFor } = require('./lib/agents');
const { startServer, runMain } = require('./lib/processes');
const { median, percentile, fixed, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario } = require('./lib/results');
const { ca } = require('./lib/tls');

const requests = envNumber('BENCH_NAGLE_REQUESTS', 30);
const warmup = envNumber('BENCH_NAGLE_WARMUP', 5);
const PIECE_BYTES = 64;
const FIRST = Buffer.alloc(PIECE_BYTES, 'a');
const SECOND = Buffer.alloc(PIECE_BYTES, 'b');
const HEADERS = { 'content-type': 'application/octet-stream', 'content-length': String(PIECE_BYTES * 2) };
const REQUEST_TIMEOUT_MS = 10000;

function postViaAgent(client, port, protocol) {
  const mod = moduleFor(protocol);
  const options = { host: '127.0.0.1', port, method: 'POST', path: '/', headers: HEADERS, agent: client.agent };
  return () => new Promise((resolve, reject) => {
    const req = mod.request(options, (res) => {
      res.on('end', () => resolve(res.statusCode));
      res.on('error', reject);
      res.resume();
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.write(FIRST);
    process.nextTick(() => req.end(SECOND));
  });
}

function postViaPool(client) {
  async function* body() {
    yield FIRST;
    await new Promise((resolve) => process.nextTick(resolve));
    yield SECOND;
  }
  return async () => {
    const res = await client.agent.request({
      path: '/', method: 'POST', headers: HEADERS, body: body(), headersTimeout: REQUEST_TIMEOUT_MS,
    });
    await res.body.dump();
    return res.statusCode;
  };
}

function createPoster(candidate, protocol, port) {
  const agentOptions = { maxSockets: 1 };
  if (protocol === 'https') agentOptions.ca = ca;
  const client = createClient(candidate, { protocol, port, agentOptions });
  const post = client.kind === 'pool' ? postViaPool(client) : postViaAgent(client, port, protocol);
  return { candidate, client, post, times: [] };
}

async function timedPost(poster) {
  const start = process.hrtime.bigint();
  const status = await poster.post();
  if (status !== 200) throw new Error(`${poster.client.label}: status ${status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function main() {
  const list = candidates();
  const results = new Map(list.map((c) => [c.id, {}]));
  for (const protocol of ['http', 'https']) {
    const backend = await startServer('backend', { protocol });
    const posters = list.map((candidate) => createPoster(candidate, protocol, backend.port));
    try {
      for (const poster of posters) {
        for (let i = 0; i < warmup; i++) await poster.post();
      }
      // Interleaved, the order rotated each step, so no agent owns the quiet
      // or the noisy moments.
      for (let i = 0; i < requests; i++) {
        for (let j = 0; j < posters.length; j++) {
          const poster = posters[(i + j) % posters.length];
          poster.times.push(await timedPost(poster));
        }
      }
      for (const { candidate, times } of posters) {
        results.get(candidate.id)[protocol] = times;
        console.log(`${protocol.padEnd(5)} ${candidate.label(protocol).padEnd(30)} median ${fixed(median(times), 2)} ms, `
          + `p90 ${fixed(percentile(times, 90), 2)} ms`);
      }
    } finally {
      await Promise.all(posters.map(({ client }) => client.close()));
      await backend.stop();
    }
  }

  const rows = list.map((candidate) => {
    const r = results.get(candidate.id);
    return [
      candidate.label('http').replace(/^http\./, 'http(s).'),
      fixed(median(r.http), 2),
      fixed(percentile(r.http, 90), 2),
      fixed(median(r.https), 2),
      fixed(percentile(r.https, 90), 2),
    ];
  });
  const table = {
    title: `Nagle: POST written in two ${PIECE_BYTES}-byte pieces, ${requests} sequential requests`,
    columns: ['agent', 'http median ms', 'http p90 ms', 'https median ms', 'https p90 ms'],
    rows,
  };
  printTable(table);
  saveScenario({
    id: 'nagle',
    title: 'Nagle (two-piece POST)',
    summary: 'A POST with Content-Length whose body is written with write() and then end() on the next tick; '
      + 'latency of sequential requests over a kept-alive connection (a new one per request without keep-alive).',
    params: { requests, warmup, pieceBytes: PIECE_BYTES, node: process.version },
    tables: [table],
    notes: [
      'undici gets the same body as an async iterator that yields the second piece on the next tick.',
      'A median near 40 ms is Nagle\'s algorithm waiting for the server\'s delayed ACK: the socket does not have TCP_NODELAY set.',
    ],
    raw: Object.fromEntries(results),
  });
}

runMain(main);
