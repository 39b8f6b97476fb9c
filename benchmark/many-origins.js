'use strict';

// Scenario: many origins, each used once (a crawler, a webhook sender). The
// client sends one GET to each of N origins and then leaves the N sockets
// idle in the pool until the agent's free-socket timeout closes them. What
// that draining costs the client, per socket closed, is measured twice:
//
// - spread: the N requests are sent at even intervals over BENCH_MANY_SPREAD
//   ms, so the sockets' deadlines are spread over as long;
// - at once: the N requests are sent as fast as BENCH_MANY_CONCURRENCY allows;
//   once all are answered the client sleeps (outside its event loop) until
//   every deadline has passed, so all N are due in the same turn.
//
// The CPU time of the client process (process.cpuUsage(), user + system) is
// taken from the moment the last response has been read (spread) or the
// sleep ends (at once) until the last socket has closed, and divided by N.
// The at-once run also weighs the pool: heap after forced GC with the N free
// sockets, less the heap before them, over N.
//
// The origins are host names (o0.origins.test, o1.origins.test, ...) that
// one per-request `lookup` maps to 127.0.0.1, all served by one backend
// process on one loopback port. Pools are named host:port, so each name is
// an origin of its own to every agent, and each gets its own socket. Servers
// on N loopback ports would cost N listening sockets and, at 10,000, a
// backend holding 20,000 descriptors; 127.0.0.x addresses would need a
// backend listening beyond 127.0.0.1. The lookup answers at once and is the
// same function for every agent: it is part of connecting, which is not
// measured.
//
// The agents: steady-agent and agentkeepalive with freeSocketTimeout T,
// Node's http.Agent({ keepAlive: true, timeout: T }) (Node closes a free
// socket only on a socket timeout: without `timeout` it would keep them
// until the server closes them). The backend never closes an idle
// connection and sends no Keep-Alive hint (keepAliveTimeout 0), so the
// agent's own timeout closes every socket. Each agent runs in its own
// process (this file with --client, --expose-gc), with its own backend.
// First a warm-up runs the same code paths: an agent of the same class with
// a short timeout sends to BENCH_MANY_WARMUP other origins and drains them;
// the agent measured is made afterwards.
//
//   node benchmark/many-origins.js
//   BENCH_MANY_ORIGINS=3000 BENCH_AGENTS=steady-agent,node-keepalive node benchmark/many-origins.js
//   BENCH_MANY_PATTERNS=spread BENCH_MANY_ROUNDS=3 node benchmark/many-origins.js --save
const { fork } = require('node:child_process');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { candidates, findCandidate } = require('./lib/agents');
const { startServer, runMain, track } = require('./lib/processes');
const { median, fixed, count, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario, commandLine } = require('./lib/results');

const BASELINE = 'node-keepalive';
const AGENTS = ['steady-agent', 'node-keepalive', 'agentkeepalive'];
const PATTERNS = ['spread', 'at once'];
const ORIGIN_SUFFIX = '.origins.test';
// A client run that has not reported by then is killed: the scenario fails
// instead of hanging. Long: on a loaded 2-core machine Node's agent took two
// minutes to close 10,000 sockets due at once (each of its socket timeouts
// looks for the socket in every pool).
const CLIENT_TIMEOUT_MS = 15 * 60 * 1000;
// After every deadline has passed, the pool must be empty within this long.
const DRAIN_GRACE_MS = 10 * 60 * 1000;
// The warm-up agent's timeout: its sockets are drained before the measured
// agent is made.
const WARMUP_TIMEOUT_MS = 200;

// ---------------------------------------------------------------------------
// The client, one process per agent and pattern.

/** Every origin's address: loopback, answered at once (see the top). */
function lookup(hostname, options, callback) {
  if (options && options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(null, '127.0.0.1', 4);
}

/** The agent under test, closing free sockets after `timeout` ms. */
function createAgent(id, timeout) {
  const options = id === 'node-keepalive' ? { timeout } : { freeSocketTimeout: timeout };
  return findCandidate(id).create('http', options);
}

/**
 * A GET to each of `names`, through `agent`. Counts the sockets' closes in
 * `closes` (closes.count, and closes.onAll() once closes.count reaches
 * closes.expected).
 */
function requester(agent, port, closes) {
  const onClose = () => {
    closes.count++;
    if (closes.count === closes.expected && closes.onAll) closes.onAll();
  };
  return function get(host, done) {
    const req = http.request({ host, port, path: '/', agent, lookup }, (res) => {
      res.on('end', () => done(res.statusCode === 200 ? null : new Error(`status ${res.statusCode}`)));
      res.on('error', done);
      res.resume();
    });
    req.once('socket', (socket) => socket.once('close', onClose));
    req.on('error', done);
    req.end();
  };
}

const names = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix}${i}${ORIGIN_SUFFIX}`);

/** Sends a GET to each name, `concurrency` at a time; resolves when all are answered. */
function burst(get, hosts, concurrency) {
  return new Promise((resolve, reject) => {
    let next = 0;
    let answered = 0;
    const onDone = (err) => {
      if (err) {
        reject(err);
        return;
      }
      answered++;
      if (next < hosts.length) get(hosts[next++], onDone);
      else if (answered === hosts.length) resolve();
    };
    if (hosts.length === 0) resolve();
    while (next < Math.min(concurrency, hosts.length)) get(hosts[next++], onDone);
  });
}

/**
 * Sends a GET to each name at even intervals over `spread` ms, at most
 * `concurrency` in flight; resolves when all are answered.
 */
function paced(get, hosts, spread, concurrency) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let next = 0;
    let answered = 0;
    const onDone = (err) => {
      if (err) {
        clearInterval(ticker);
        reject(err);
        return;
      }
      if (++answered === hosts.length) resolve();
      // Sends the requests that waited for one in flight to finish.
      else if (next < hosts.length) tick();
    };
    // Every few ms, the requests whose time has come (all of them once
    // `spread` has passed): the loop ends with the list. A client that has
    // fallen behind catches up no faster than `concurrency` allows: thousands
    // of connections opened at once overflow the backend's accept queue, and
    // the dropped ones are retried seconds later.
    const tick = () => {
      const due = Math.min(hosts.length, Math.floor(((performance.now() - started) / spread) * hosts.length) + 1);
      while (next < due && next - answered < concurrency) get(hosts[next++], onDone);
      if (next === hosts.length) clearInterval(ticker);
    };
    const ticker = setInterval(tick, 2);
    tick();
  });
}

/** Resolves once closes.count reaches `expected`; rejects after `limit` ms. */
function allClosed(closes, expected, limit) {
  return new Promise((resolve, reject) => {
    closes.expected = expected;
    if (closes.count >= expected) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      reject(new Error(`only ${closes.count} of ${expected} sockets closed within ${limit} ms`));
    }, limit);
    closes.onAll = () => {
      clearTimeout(timer);
      closes.onAll = null;
      resolve();
    };
  });
}

/** Heap in use after full garbage collections (twice: the first may leave finalised objects). */
function heapAfterGc() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

/** Blocks the thread (no CPU, no event loop) for `ms`. */
function sleepSync(ms) {
  if (ms > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const cpuMicros = (usage) => usage.user + usage.system;

/**
 * Options (JSON in argv[3]): { agent, port, origins, pattern, timeout,
 * spread, concurrency, warmup }. Resolves with its result.
 */
async function runClient({ agent: id, port, origins, pattern, timeout, spread, concurrency, warmup }) {
  if (typeof global.gc !== 'function') throw new Error('the client needs --expose-gc');
  const limit = timeout + spread + DRAIN_GRACE_MS;

  // Warm-up: the same steps over other origins, drained the same way, by an
  // agent of the same class that then goes (V8's feedback stays with the code).
  const warmCloses = { count: 0, expected: Infinity, onAll: null };
  const warmAgent = createAgent(id, WARMUP_TIMEOUT_MS);
  await burst(requester(warmAgent, port, warmCloses), names('w', warmup), concurrency);
  await allClosed(warmCloses, warmup, WARMUP_TIMEOUT_MS + DRAIN_GRACE_MS);
  warmAgent.destroy();

  const agent = createAgent(id, timeout);
  const closes = { count: 0, expected: Infinity, onAll: null };
  const get = requester(agent, port, closes);
  const heapBefore = heapAfterGc();

  const hosts = names('o', origins);
  const sendStarted = performance.now();
  if (pattern === 'spread') await paced(get, hosts, spread, concurrency);
  else await burst(get, hosts, concurrency);
  const lastFreed = performance.now();
  const sendMs = lastFreed - sendStarted;
  // A socket that closed before every request was answered would be drained
  // outside the measurement: the timeout must outlast sending. The parent
  // runs it again with a longer one.
  if (closes.count > 0) return { closedEarly: closes.count, sendMs };
  const heapWith = heapAfterGc();
  if (pattern === 'at once') {
    // Every deadline is at most `timeout` after the last response; Node's
    // timers and steady-agent's sweeper fire up to a millisecond late.
    sleepSync(lastFreed + timeout + 50 - performance.now());
  }
  const cpuBefore = process.cpuUsage();
  const drainStarted = performance.now();
  await allClosed(closes, origins, limit);
  const cpu = process.cpuUsage(cpuBefore);
  const drainMs = performance.now() - drainStarted;
  return {
    cpuMicros: cpuMicros(cpu),
    userMicros: cpu.user,
    systemMicros: cpu.system,
    drainMs,
    sendMs,
    closed: closes.count,
    heapBefore,
    heapWith,
    heapPerSocket: (heapWith - heapBefore) / origins,
  };
}

// ---------------------------------------------------------------------------
// The parent.

function selectedPatterns() {
  const raw = process.env.BENCH_MANY_PATTERNS;
  if (!raw) return PATTERNS;
  const wanted = raw.split(',').map((s) => s.trim().replace(/[-_]/g, ' ')).filter(Boolean);
  const unknown = wanted.filter((p) => !PATTERNS.includes(p));
  if (unknown.length) throw new Error(`BENCH_MANY_PATTERNS: unknown pattern(s) ${unknown.join(', ')}; known: spread, at-once`);
  return PATTERNS.filter((p) => wanted.includes(p));
}

/**
 * How long the requests to N origins are spread over, and the agents'
 * free-socket timeout. By default 1 ms per origin (2 s at least): a loaded
 * 2-core machine opened some 1,100 connections a second, so 10,000 in 2 s
 * would be sent late and spread over whatever that took. The timeout outlasts
 * sending by 3 s, so that no socket closes before the drain is measured.
 */
function timingFor(origins) {
  const spread = envNumber('BENCH_MANY_SPREAD', Math.max(2000, origins));
  const timeout = envNumber('BENCH_MANY_TIMEOUT', spread + 3000);
  if (!(spread > 0) || !(timeout > 0)) throw new Error('BENCH_MANY_SPREAD and BENCH_MANY_TIMEOUT must be positive');
  return { spread, timeout };
}

function selectedOrigins() {
  const raw = process.env.BENCH_MANY_ORIGINS || '1000,10000';
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  // Each origin is a socket in the client and one in the backend.
  const bad = list.filter((n) => !Number.isInteger(n) || n < 1 || n > 15000);
  if (bad.length || list.length === 0) throw new Error(`BENCH_MANY_ORIGINS must list whole numbers from 1 to 15000, got ${JSON.stringify(raw)}`);
  return list;
}

/** One client process: resolves with its result. */
function runOne(options) {
  return new Promise((resolve, reject) => {
    const child = track(fork(__filename, ['--client', JSON.stringify(options)], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }));
    let result = null;
    const timer = setTimeout(() => child.kill('SIGKILL'), CLIENT_TIMEOUT_MS);
    child.on('message', (message) => {
      if (message && message.type === 'result') result = message.result;
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (result && code === 0) resolve(result);
      else reject(new Error(`${options.agent} (${options.pattern}, ${options.origins} origins): client exited with ${signal || `code ${code}`} and no result`));
    });
  });
}

// Runs whose sending outlasted the timeout (some sockets closed before the
// drain was measured) are run again with a longer one, at most this often.
// What is measured does not depend on the timeout: at once, every deadline
// has passed when the drain starts; spread, the deadlines are as spread as
// the responses were.
const RETRIES = 2;

async function measureOne(options) {
  for (let attempt = 0; ; attempt++) {
    // A backend per run: its connections, and the client's TIME_WAITs, stay
    // with that run's port.
    const backend = await startServer('backend', { protocol: 'http', keepAliveTimeout: 0 });
    let result;
    try {
      result = await runOne({ ...options, port: backend.port });
      const stats = await backend.call('stats');
      const expected = options.origins + options.warmup;
      // One socket per origin, or the pool was not one per origin.
      if (stats.connections !== expected) throw new Error(`${options.agent}: ${stats.connections} connections for ${expected} origins`);
    } finally {
      await backend.stop();
    }
    if (result.closedEarly === undefined) return { ...result, timeout: options.timeout };
    const timeout = Math.max(options.timeout * 2, Math.ceil(result.sendMs) + 3000);
    const what = `${options.agent} (${options.pattern}, ${options.origins} origins): ${result.closedEarly} sockets closed while requests were still being sent `
      + `(${Math.round(result.sendMs)} ms, timeout ${options.timeout} ms)`;
    if (attempt === RETRIES) throw new Error(`${what}; raise BENCH_MANY_TIMEOUT`);
    console.log(`${what}: again with a timeout of ${timeout} ms`);
    options = { ...options, timeout };
  }
}

const perSocket = (result) => result.cpuMicros / result.closed;

function cpuTable(title, list, results) {
  const baseline = results.get(BASELINE);
  const base = baseline ? median(baseline.map(perSocket)) : NaN;
  return {
    title,
    columns: ['agent', 'CPU µs/socket closed', 'ratio vs Node keep-alive', 'CPU ms in all', 'sent in ms', 'drain ms'],
    rows: list.map((candidate) => {
      const runs = results.get(candidate.id);
      const micros = median(runs.map(perSocket));
      return [
        candidate.label('http'),
        fixed(micros, 1),
        baseline ? fixed(micros / base, 2) : 'n/a',
        count(median(runs.map((r) => r.cpuMicros)) / 1000),
        count(median(runs.map((r) => r.sendMs))),
        count(median(runs.map((r) => r.drainMs))),
      ];
    }),
  };
}

function heapTable(title, list, results) {
  const baseline = results.get(BASELINE);
  const base = baseline ? median(baseline.map((r) => r.heapPerSocket)) : NaN;
  return {
    title,
    columns: ['agent', 'heap bytes/socket', 'ratio vs Node keep-alive'],
    rows: list.map((candidate) => {
      const bytes = median(results.get(candidate.id).map((r) => r.heapPerSocket));
      return [candidate.label('http'), count(bytes), baseline ? fixed(bytes / base, 2) : 'n/a'];
    }),
  };
}

async function main() {
  const originsList = selectedOrigins();
  const patterns = selectedPatterns();
  const concurrency = envNumber('BENCH_MANY_CONCURRENCY', 100);
  const warmup = envNumber('BENCH_MANY_WARMUP', 500);
  const rounds = Math.max(1, envNumber('BENCH_MANY_ROUNDS', 1));
  if (!(concurrency >= 1)) throw new Error('BENCH_MANY_CONCURRENCY must be at least 1');
  const list = candidates({ include: AGENTS });
  if (list.length === 0) throw new Error(`BENCH_AGENTS selected none of ${AGENTS.join(', ')}`);
  console.log(`Many origins: ${originsList.join(' and ')} origins, each used once, then drained by the agent's timeout; `
    + `patterns: ${patterns.join(', ')} (at once: ${concurrency} in flight); warm-up ${warmup} origins; `
    + `${rounds} round(s); agents: ${list.map((c) => c.id).join(', ')}`);

  const tables = [];
  const raw = {};
  const timings = {};
  for (const origins of originsList) {
    const { spread, timeout } = timingFor(origins);
    timings[origins] = { spread, timeout };
    console.log(`${origins} origins: spread over ${spread} ms, free-socket timeout ${timeout} ms`);
    for (const pattern of patterns) {
      const results = new Map(list.map((c) => [c.id, []]));
      for (let round = 0; round < rounds; round++) {
        // The order rotates each round: no agent always runs first.
        const order = list.map((_, i) => list[(i + round) % list.length]);
        for (const candidate of order) {
          const result = await measureOne({ agent: candidate.id, origins, pattern, timeout, spread, concurrency, warmup });
          results.get(candidate.id).push(result);
          console.log(`${candidate.id}: ${origins} origins, ${pattern}: ${fixed(perSocket(result), 1)} µs CPU per socket closed `
            + `(${count(result.cpuMicros / 1000)} ms CPU, drained in ${count(result.drainMs)} ms, sent in ${count(result.sendMs)} ms)`
            + `${pattern === 'at once' ? `, heap ${count(result.heapPerSocket)} bytes per idle socket` : ''}`);
        }
      }
      const what = pattern === 'spread' ? `deadlines spread over ${Number((spread / 1000).toFixed(1))} s` : 'all due at once';
      const table = cpuTable(`Closing ${count(origins)} free sockets, ${what}`, list, results);
      printTable(table);
      tables.push(table);
      if (pattern === 'at once') {
        const heap = heapTable(`Heap per idle socket, ${count(origins)} free sockets`, list, results);
        printTable(heap);
        tables.push(heap);
      }
      raw[`${origins} ${pattern}`] = Object.fromEntries(results);
    }
  }

  saveScenario({
    id: 'many-origins',
    title: 'Many origins, each used once: draining the pool',
    summary: 'One client process per agent sends one GET to each of N origins (host names mapped to 127.0.0.1 by a per-request lookup, '
      + 'one backend process), then the agent\'s free-socket timeout closes the N idle sockets. Client CPU time (user + system) from the last '
      + 'response (spread) or from the moment every deadline has passed (at once) until the last socket has closed, per socket; and heap '
      + 'after forced GC with the N idle sockets, less the heap before them, per socket.',
    params: {
      origins: originsList.join('+'),
      patterns: patterns.join('+'),
      ...Object.fromEntries(originsList.flatMap((n) => [[`spreadMs@${n}`, timings[n].spread], [`timeoutMs@${n}`, timings[n].timeout]])),
      concurrency,
      warmup,
      rounds,
    },
    tables,
    notes: [
      `steady-agent and agentkeepalive with freeSocketTimeout T; Node's http.Agent with keepAlive and timeout T (Node closes a free socket on a socket timeout only); T = ${originsList.map((n) => `${count(timings[n].timeout)} ms at ${count(n)} origins`).join(', ')} (a run whose sending outlasted T runs again with T doubled; the T of each run is in raw). The backend never closes an idle connection and sends no Keep-Alive hint.`,
      `spread: the N requests are sent at even intervals over ${originsList.map((n) => `${count(timings[n].spread)} ms at ${count(n)} origins`).join(', ')}, so the deadlines are as spread. at once: sent ${concurrency} in flight; once all are answered the client sleeps (no CPU, event loop held) until every deadline has passed.`,
      'Each agent and pattern runs in its own process with its own backend, after a warm-up over other origins drained the same way. The CPU figures count the client process only, and move with the machine\'s load; the heap figures do not.',
      `Reproduce: \`${commandLine(['node', 'benchmark/many-origins.js'])}\``,
    ],
    raw,
  });
}

if (process.argv[2] === '--client') {
  // Exits once the parent has the result: the agent is not closed, and its
  // timers would keep nothing alive anyway.
  runClient(JSON.parse(process.argv[3])).then((result) => {
    process.send({ type: 'result', result }, () => process.exit(0));
  }, (err) => {
    console.error(err && err.stack ? err.stack : err);
    process.exit(1);
  });
} else {
  runMain(main);
}
