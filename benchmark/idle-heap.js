'use strict';

// What an idle socket weighs, by kind of object: the heap-per-idle-socket
// figure of many-origins.js taken apart. For each agent, a client process
// (--expose-gc) sends one GET to each of N origins (host names that one
// lookup maps to 127.0.0.1, one backend process, as in many-origins.js),
// so that the pool holds N idle sockets, one per origin, and writes a heap
// snapshot before the requests and one after (each after forced garbage
// collections). The objects of the second snapshot not in the first,
// grouped by V8's type and constructor name, are divided by N. Objects
// outside the JavaScript heap (the native side of each TCP handle) are
// left out, so the total is what process.memoryUsage().heapUsed counts.
//
//   node benchmark/idle-heap.js
//   BENCH_IDLE_ORIGINS=5000 BENCH_AGENTS=steady-agent,node-keepalive node benchmark/idle-heap.js
//   BENCH_IDLE_CLOSE_LISTENER=0 node benchmark/idle-heap.js
//
// Like many-origins.js, the client listens to each socket's 'close'
// (BENCH_IDLE_CLOSE_LISTENER=0: it does not), which gives every agent's
// sockets an array of 'close' listeners.
//
// The rows shown differ by at least BENCH_IDLE_MIN_BYTES (4) bytes per
// socket between the first two agents (with one agent: weigh that much);
// the last column is the first agent less the second.
const { fork } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const v8 = require('node:v8');
const { findCandidate } = require('./lib/agents');
const { startServer, runMain, track } = require('./lib/processes');
const { count, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');

const AGENTS = ['steady-agent', 'node-keepalive', 'agentkeepalive'];
const CONCURRENCY = 100;
const WARMUP = 300;

function lookup(hostname, options, callback) {
  if (options && options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}

const onClose = () => {};

/**
 * A GET to `host`; the socket stays in the pool (no timeout within the run).
 * With `closeListener`, a 'close' listener on the socket, as many-origins.js
 * counts closes with.
 */
function get(agent, port, host, closeListener) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, path: '/', agent, lookup }, (res) => {
      res.on('end', resolve);
      res.on('error', reject);
      res.resume();
    });
    if (closeListener) req.once('socket', (socket) => socket.once('close', onClose));
    req.on('error', reject);
    req.end();
  });
}

async function burst(agent, port, prefix, n, closeListener) {
  let next = 0;
  const worker = async () => {
    while (next < n) await get(agent, port, `${prefix}${next++}.origins.test`, closeListener);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

function snapshotAfterGc(file) {
  global.gc();
  global.gc();
  v8.writeHeapSnapshot(file);
}

/** Bytes and counts of a heap snapshot's objects, by "type name" (strings and numbers by type alone). */
function weigh(file) {
  const snapshot = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { node_fields: fields, node_types: [types] } = snapshot.snapshot.meta;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const { nodes, strings } = snapshot;
  const groups = new Map();
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]];
    // The native side of handles, and the snapshot's own bookkeeping.
    if (type === 'synthetic' || type === 'native') continue;
    const named = type === 'object' || type === 'closure' || type === 'array' || type === 'hidden';
    const key = named ? `${type} ${strings[nodes[i + nameAt]].slice(0, 40)}` : type;
    const group = groups.get(key) ?? { bytes: 0, count: 0 };
    group.bytes += nodes[i + sizeAt];
    group.count++;
    groups.set(key, group);
  }
  return groups;
}

/** The client: { rows: { key: bytes per socket }, heapPerSocket }. */
async function runClient({ agent: id, port, origins, closeListener }) {
  if (typeof global.gc !== 'function') throw new Error('the client needs --expose-gc');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'idle-heap-'));
  try {
    // The same code paths once, by an agent that then goes.
    const warm = findCandidate(id).create('http', id === 'node-keepalive' ? { timeout: 600000 } : { freeSocketTimeout: 600000 });
    await burst(warm, port, 'w', WARMUP, closeListener);
    warm.destroy();
    const agent = findCandidate(id).create('http', id === 'node-keepalive' ? { timeout: 600000 } : { freeSocketTimeout: 600000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    snapshotAfterGc(path.join(dir, 'before.heapsnapshot'));
    const before = process.memoryUsage().heapUsed;
    await burst(agent, port, 'o', origins, closeListener);
    snapshotAfterGc(path.join(dir, 'after.heapsnapshot'));
    const after = process.memoryUsage().heapUsed;
    const idle = Object.values(agent.freeSockets).reduce((sum, list) => sum + list.length, 0);
    if (idle !== origins) throw new Error(`${id}: ${idle} idle sockets for ${origins} origins`);
    const was = weigh(path.join(dir, 'before.heapsnapshot'));
    const rows = {};
    for (const [key, { bytes }] of weigh(path.join(dir, 'after.heapsnapshot'))) {
      rows[key] = (bytes - (was.get(key)?.bytes ?? 0)) / origins;
    }
    agent.destroy();
    return { rows, heapPerSocket: (after - before) / origins };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function runOne(options) {
  return new Promise((resolve, reject) => {
    const child = track(fork(__filename, ['--client', JSON.stringify(options)], {
      execArgv: ['--expose-gc', '--max-old-space-size=4096'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }));
    let result = null;
    child.on('message', (message) => {
      if (message && message.type === 'result') result = message.result;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (result && code === 0) resolve(result);
      else reject(new Error(`${options.agent}: client exited with ${signal || `code ${code}`} and no result`));
    });
  });
}

async function main() {
  const origins = envNumber('BENCH_IDLE_ORIGINS', 2000);
  const minBytes = envNumber('BENCH_IDLE_MIN_BYTES', 4);
  const closeListener = envNumber('BENCH_IDLE_CLOSE_LISTENER', 1) !== 0;
  const ids = (process.env.BENCH_AGENTS || 'steady-agent,node-keepalive').split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = ids.filter((id) => !AGENTS.includes(id));
  if (unknown.length || ids.length === 0) throw new Error(`BENCH_AGENTS: unknown agent(s) ${unknown.join(', ')}; known: ${AGENTS.join(', ')}`);
  const results = [];
  for (const id of ids) {
    const backend = await startServer('backend', { protocol: 'http', keepAliveTimeout: 0 });
    try {
      results.push(await runOne({ agent: id, port: backend.port, origins, closeListener }));
    } finally {
      await backend.stop();
    }
  }
  // First agent less the second (or the first alone), per kind of object.
  const margin = (key) => (results[0].rows[key] ?? 0) - (results.length > 1 ? results[1].rows[key] ?? 0 : 0);
  const keys = [...new Set(results.flatMap((r) => Object.keys(r.rows)))]
    .filter((key) => Math.abs(margin(key)) >= minBytes)
    .sort((a, b) => margin(b) - margin(a));
  const bytes = (value) => (value ?? 0).toFixed(1);
  const columns = ['objects (V8 type, constructor)', ...ids.map((id) => `${id} bytes/socket`)];
  if (results.length > 1) columns.push(`${ids[0]} − ${ids[1]}`);
  const difference = (values) => (results.length > 1 ? [bytes((values[0] ?? 0) - (values[1] ?? 0))] : []);
  const rows = keys.map((key) => {
    const values = results.map((r) => r.rows[key]);
    return [key, ...values.map(bytes), ...difference(values)];
  });
  const totals = results.map((r) => Object.values(r.rows).reduce((sum, v) => sum + v, 0));
  rows.push(['all objects', ...totals.map(bytes), ...difference(totals)]);
  const heap = results.map((r) => r.heapPerSocket);
  rows.push(['heapUsed after GC, per socket', ...heap.map((v) => count(v)), ...difference(heap)]);
  printTable({
    title: `Heap per idle socket, ${count(origins)} idle sockets (one per origin${closeListener ? ', a \'close\' listener on each' : ''}), by kind of object`,
    columns,
    rows,
  });
}

if (process.argv[2] === '--client') {
  runClient(JSON.parse(process.argv[3])).then((result) => {
    process.send({ type: 'result', result }, () => process.exit(0));
  }, (err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  runMain(main);
}
