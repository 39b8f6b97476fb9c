'use strict';

// Scenario: client instructions per request. The CPU-time figures of
// client-cost.js swing by tens of percent on a shared 2-core machine;
// instruction counts under valgrind do not. For each agent, a small client
// (this file run with --client) sends W warm-up GETs and then N more to a
// backend in another process, under `valgrind --tool=callgrind`. It runs
// twice, with N = A and N = B; the difference of the two totals divided by
// B − A is the cost of one request, with startup, module loading, most of the
// JIT warm-up and exit subtracted. Two modes (BENCH_IC_INFLIGHT, default
// both): one request in flight, and 50 (see DEFAULT_MODES for a third).
//
// The count must not depend on how fast the client runs: valgrind slows it
// some 50 times, and a busy machine by as much again. V8 runs on one thread
// with a fixed GC schedule and random seed (CLIENT_FLAGS), and TurboFan's own
// work is not counted. Then:
//
// One in flight: the client sends one request at a time (its event loop does
// the same steps for every request, whenever the response comes). Five runs
// of one commit, loaded machine and idle, gave 137.8k to 138.7k per request
// (0.65% apart, standard deviation 0.25%, where they were 12% apart before),
// and 200 iterations of a loop added to the agent's per-request path showed
// as +3.3k. What is left grows with the run (totals of identical runs differ
// by up to 0.4%: glibc malloc and V8's string table lookups do more or less
// work), so a longer B − A does not make it smaller.
//
// 50 in flight: sent as they come back (one new request per response), how
// many responses one event-loop turn handled depended on timing, and with it
// the loop's own work per request, V8's type feedback and what TurboFan
// compiled (203 functions in one run, 214 in the next): 1.6% between two
// runs. So the client sends fixed batches: 50 requests, each on a socket
// from the pool; once all 50 are written it blocks (in the last one's
// 'finish', before the loop polls again) until the backend says it has
// answered all 50; its next poll then reads all 50 responses, and once the
// last one is read (and its socket back in the pool) it sends the next 50.
// The backend (servers/backend.js, `batch`) holds its answers until the
// whole batch has arrived and says so through a FIFO, one per client run.
// Every batch is the same steps in the same order, at any speed: five runs
// of one commit, the machine's load from 7 to 12, gave 135.0k to 135.3k per
// request (0.24% apart, standard deviation 0.10%). The
// timeouts are long (LONG_MS): none fires, however slow the client runs.
//
//   node benchmark/instructions.js
//   BENCH_IC_INFLIGHT=50 BENCH_PROTOCOLS=http node benchmark/instructions.js
//   BENCH_PROTOCOLS=http BENCH_AGENTS=steady-agent,node-keepalive node benchmark/instructions.js
//   BENCH_PROTOCOLS=http BENCH_AGENTS=steady-agent,steady-agent-watched node benchmark/instructions.js
//   BENCH_IC_A=500 BENCH_IC_B=2500 node benchmark/instructions.js
//   BENCH_IC_RUNS=3 BENCH_IC_INFLIGHT=50 BENCH_PROTOCOLS=https node benchmark/instructions.js   (lowest of 3: see measureBest)
//   BENCH_IC_V8_FLAGS=--max-semi-space-size=8 BENCH_IC_INFLIGHT=50 BENCH_PROTOCOLS=https node benchmark/instructions.js
//   BENCH_IC_PROFILE_DIR=/tmp/cg BENCH_IC_INFLIGHT=50 node benchmark/instructions.js   (keeps the profiles:
//     node benchmark/callgrind-diff.js /tmp/cg steady-agent node-keepalive http 50)
//   benchmark/compare-instructions.sh main HEAD      (two commits, same harness)
const { spawn, spawnSync } = require('node:child_process');
const diagnosticsChannel = require('node:diagnostics_channel');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { candidates, createClient, findCandidate, moduleFor } = require('./lib/agents');
const { startServer, runMain, track } = require('./lib/processes');
const { runLoad, watchStalls } = require('./lib/load');
const { fixed, count, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario, commandLine } = require('./lib/results');
const { ca } = require('./lib/tls');

const VALGRIND = 'valgrind';
const BASELINE = 'node-keepalive';
const PROTOCOLS = ['http', 'https'];
// The modes (BENCH_IC_INFLIGHT): requests in flight, and for batches the
// sockets they share, "<in flight>/<sockets>" (sockets: as many as in flight
// when not given). One: each request is sent when the previous one is done.
// More: in fixed batches (see the top). "50": every request of a batch takes
// a socket from the pool, the path of a pool without a limit (maxSockets
// Infinity, the default, grows to the requests in flight). "50/25", not run
// unless asked for: half of each batch waits in the agent's queue behind
// maxSockets and gets a socket handed over on 'free' (the path of a pool at
// its limit).
const DEFAULT_MODES = ['1', '50'];
// Request counts per mode. One in flight: a long warm-up (with 5000, the last
// two TurboFan compiles fell between N = A and N = B). In batches the client
// does the same work in fewer event-loop turns, and V8 has tiered up within
// the first 2000 requests.
const COUNTS = {
  single: { warmup: ['BENCH_IC_WARMUP', 8000], a: ['BENCH_IC_A', 1000], b: ['BENCH_IC_B', 16000] },
  batch: { warmup: ['BENCH_IC_BATCH_WARMUP', 4000], a: ['BENCH_IC_BATCH_A', 1000], b: ['BENCH_IC_BATCH_B', 9000] },
};
// The pool may grow to the requests in flight; one request at a time reuses
// one socket (the next request is sent once the previous socket is free).
const MAX_SOCKETS = 50;
// No timeout may fire, however slow the client runs: on a machine loaded by
// some 20 processes, a client under valgrind got a fiftieth of a core, and a
// batch of 50 outlived the agent's 8 s active timeout, a socket idle between
// two requests the backend's 5 s keepAliveTimeout. So the backend keeps idle
// connections (and announces it, Keep-Alive: timeout=600), and the agents
// that arm timeouts by default (steady-agent, agentkeepalive: 4 s free, 8 s
// active) get long ones: the same calls, with other numbers. Node's agent
// arms none by default and gets nothing: a `timeout` would add work.
const LONG_MS = 10 * 60 * 1000;
const ARMS_TIMEOUTS = new Set(['steady-agent', 'steady-agent-watched', 'agentkeepalive']);
// V8 flags of the client. --single-threaded: no background threads, so JIT
// and GC work is done at the same point of every run. --no-memory-reducer and
// --heap-growing-percent=30: heap growth and the memory reducer no longer
// follow the wall clock (the reducer's timer ran some 40 times a run, more on
// a slower run). --max-semi-space-size=4: the new space grows as V8 grows it,
// from 1 MB, to at most 4 MB. --random-seed: the same Math.random() and hash
// seeds in every run. With --single-threaded alone, the totals of three
// one-at-a-time runs (4000 requests) spread over 0.22%; with the clock's part
// of the GC schedule fixed (by --predictable-gc-schedule then) and the seed,
// over 0.01%. With these flags, three pairs of each agent gave per-request
// figures within 0.11% of one another at one in flight over http, within
// 0.5% at 50 over https.
//
// Not --predictable-gc-schedule, which fixes the same things but also starts
// the new space at its largest. V8 decides to allocate an allocation site's
// objects in the old space for good ("tenure") only while the new space is at
// its largest, so with that flag the first scavenge, which falls in the first
// batch (50 TLS handshakes, nearly everything alive), could tenure a site
// whose objects were all alive just then (--trace-pretenuring: 393 of 393,
// "undecided => tenure"; with V8's own sizing the same count gives "maybe
// tenure", and later counts "don't tenure"). From then on those objects, dead
// in the old space, kept young ones alive through scavenges, and with them
// each batch's requests: over https at 50 in flight, 29 MB promoted against
// 1.4 MB, and four mark-compacts in the window against none. It happened for
// steady-agent, agentkeepalive and Node's own agent given a `timeout`, not for
// Node's agent without one; with V8's own sizing, for none of them. A start-up
// accident of the flag, not a cost of the agents (benchmark README, Reading
// the numbers).
//
// BENCH_IC_V8_FLAGS adds flags of its own (space-separated), e.g.
// --max-semi-space-size=8: where the collections fall against the batches
// moves with the new space's size.
const EXTRA_FLAGS = (process.env.BENCH_IC_V8_FLAGS || '').split(/\s+/).filter(Boolean);
const badFlag = EXTRA_FLAGS.find((flag) => !/^--[a-z0-9-_]+(=[^\s]*)?$/i.test(flag));
if (badFlag !== undefined) throw new Error(`BENCH_IC_V8_FLAGS: not a V8 flag: ${JSON.stringify(badFlag)}`);
const CLIENT_FLAGS = ['--single-threaded', '--no-memory-reducer', '--heap-growing-percent=30', '--max-semi-space-size=4', '--random-seed=1', ...EXTRA_FLAGS];
// Agents without keep-alive open a connection per request: millions of
// instructions each over TLS, so 24000 of them would take an hour under
// valgrind. A tenth of the requests (warm-up included) measures them just as
// well, the difference between the two runs being that much larger than the
// run-to-run jitter.
const NO_KEEPALIVE_SCALE = 0.1;

// What watching costs: steady-agent with a subscriber on every one of its
// diagnostics_channel channels (each message is built and delivered; the
// subscriber only counts). Compare with the steady-agent row, nobody watching.
const WATCHED_CHANNELS = ['socket:create', 'socket:reuse', 'socket:free', 'socket:close',
  'server-idle-limit', 'request:queued', 'request:dequeued'];
const WATCHED = {
  ...findCandidate('steady-agent'),
  id: 'steady-agent-watched',
  messages: 0,
  label: () => 'steady-agent, every channel subscribed',
  create(protocol, options) {
    for (const name of WATCHED_CHANNELS) diagnosticsChannel.subscribe(`steady-agent:${name}`, () => { WATCHED.messages++; });
    return findCandidate('steady-agent').create(protocol, options);
  },
};
const candidateById = (id) => (id === WATCHED.id ? WATCHED : findCandidate(id));

// ---------------------------------------------------------------------------
// The client, run under valgrind: one agent, W + N requests, then exit.

/**
 * Options (JSON in argv[3]): { agent, protocol, port, warmup, requests,
 * concurrency, sockets, signal }. Prints one JSON line { completed, errors,
 * firstError } covering every request, so the parent can reject a run in
 * which requests failed.
 */
async function runClient(options) {
  const { agent, protocol, port, warmup, requests, concurrency, sockets } = options;
  const agentOptions = { maxSockets: sockets };
  if (ARMS_TIMEOUTS.has(agent)) Object.assign(agentOptions, { freeSocketTimeout: LONG_MS, timeout: LONG_MS });
  if (protocol === 'https') agentOptions.ca = ca;
  const client = createClient(candidateById(agent), { protocol, port, agentOptions });
  let warm;
  let load;
  if (concurrency === 1) {
    warm = await runLoad(client.get, warmup, concurrency);
    load = await runLoad(client.get, requests, concurrency);
  } else {
    const send = batchGet(moduleFor(protocol), { host: '127.0.0.1', port, path: '/', agent: client.agent });
    const batches = { size: concurrency, sockets, waitForAnswers: answersSignal(options.signal) };
    warm = await runBatches(send, warmup, batches);
    load = await runBatches(send, requests, batches);
  }
  const errors = warm.errors + load.errors;
  const firstError = warm.firstError || load.firstError;
  process.stdout.write(`${JSON.stringify({
    completed: warm.completed + load.completed,
    errors,
    firstError: firstError ? String(firstError.code || firstError.message) : null,
  })}\n`);
  // No close(): tearing the pool down would only add instructions to both
  // runs alike; exiting at once keeps the totals about the requests.
  process.exit(0);
}

/**
 * GET / through a Node agent: written() once the request has been handed to
 * the kernel, done(err, status) once its response has been read. As
 * lib/agents.js's get(), with one options object for every request.
 */
function batchGet(mod, options) {
  return function send(written, done) {
    let settled = false;
    const finish = (err, status) => {
      if (settled) return;
      settled = true;
      done(err, status);
    };
    const req = mod.request(options, (res) => {
      res.on('end', () => finish(null, res.statusCode));
      res.on('error', finish);
      res.resume();
    });
    req.on('finish', written);
    req.on('error', finish);
    req.end();
  };
}

/** Blocks until the backend says it has answered the batch (one byte on the FIFO). */
function answersSignal(fifo) {
  const fd = fs.openSync(fifo, fs.constants.O_RDONLY);
  const byte = Buffer.alloc(1);
  return function waitForAnswers() {
    if (fs.readSync(fd, byte, 0, 1, null) !== 1) throw new Error(`the backend closed ${fifo}`);
  };
}

/**
 * Sends `total` requests in batches of `size` over `sockets` sockets. The
 * batch is sent; whenever another `sockets` requests have been written (all
 * those that have a socket), the thread blocks until the backend has answered
 * them, so the next poll finds every one of those responses, whatever the
 * speed of either process. With fewer sockets than requests, the others wait
 * in the agent's queue and are written as the responses free the sockets.
 * Once the last response of the batch has been read, the next batch is sent
 * from a setImmediate, when every socket is back in the pool. `total` is a
 * multiple of `size`, and `size` of `sockets`. Resolves with { completed,
 * errors, firstError }; rejects when no batch completes for STALL_MS.
 */
function runBatches(send, total, { size, sockets, waitForAnswers }) {
  // Long: a batch took over a minute on a machine loaded by some 20 processes.
  const STALL_MS = LONG_MS;
  return new Promise((resolve, reject) => {
    let completed = 0;
    let errors = 0;
    let firstError = null;
    const watchdog = watchStalls('batches', () => completed, total, STALL_MS, reject);

    let written = 0;
    let answered = 0;
    // Blocking here, in the 'finish' of the last request written, holds the
    // loop before it polls again: the responses cannot have been read yet,
    // since the backend answers none before the last one has arrived.
    const onWritten = () => {
      if (++written % sockets === 0) waitForAnswers();
    };
    const onDone = (err, status) => {
      if (err || status !== 200) {
        errors++;
        if (!firstError) firstError = err || new Error(`status ${status}`);
      }
      completed++;
      if (++answered < size) return;
      // From a setImmediate: the socket of this last response goes back to
      // the pool only after this callback.
      if (completed < total) setImmediate(sendBatch);
      else {
        clearInterval(watchdog);
        resolve({ completed, errors, firstError });
      }
    };
    function sendBatch() {
      written = 0;
      answered = 0;
      for (let i = 0; i < size; i++) send(onWritten, onDone);
    }
    if (total === 0) {
      clearInterval(watchdog);
      resolve({ completed: 0, errors: 0, firstError: null });
      return;
    }
    sendBatch();
  });
}

// ---------------------------------------------------------------------------
// The parent: a backend per run, then two valgrind runs per agent.

/** Why valgrind cannot be used, or null when it can. */
function valgrindMissing() {
  const probe = spawnSync(VALGRIND, ['--version'], { encoding: 'utf8' });
  if (probe.error) return `${VALGRIND} not found on PATH (${probe.error.code || probe.error.message})`;
  if (probe.status !== 0) return `\`${VALGRIND} --version\` exited with code ${probe.status}`;
  return null;
}

function selectedList(name, known) {
  const raw = process.env[name];
  if (!raw) return known;
  const wanted = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((value) => !known.map(String).includes(value));
  if (unknown.length) throw new Error(`${name}: unknown value(s) ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return known.filter((value) => wanted.includes(String(value)));
}

/** The modes of BENCH_IC_INFLIGHT: { id, inFlight, sockets, label }. */
function selectedModes() {
  const raw = process.env.BENCH_IC_INFLIGHT;
  const ids = raw ? raw.split(',').map((s) => s.trim()).filter(Boolean) : DEFAULT_MODES;
  const modes = ids.map((id) => {
    const match = /^(\d+)(?:\/(\d+))?$/.exec(id);
    const inFlight = match ? Number(match[1]) : NaN;
    const sockets = match && match[2] !== undefined ? Number(match[2]) : inFlight;
    if (!(inFlight >= 1) || !(sockets >= 1) || (inFlight > 1 && inFlight % sockets !== 0) || (inFlight === 1 && match[2] !== undefined)) {
      throw new Error(`BENCH_IC_INFLIGHT: ${JSON.stringify(id)} is not <in flight> or <in flight>/<sockets> (sockets dividing the requests in flight), e.g. 1,50 or 50/25`);
    }
    if (inFlight === 1) return { id, inFlight, sockets: MAX_SOCKETS, label: '1 in flight' };
    const label = sockets === inFlight ? `${inFlight} in flight` : `${inFlight} in flight over ${sockets} sockets`;
    return { id, inFlight, sockets, label };
  });
  if (modes.length === 0) throw new Error('BENCH_IC_INFLIGHT selected no mode');
  return modes;
}

/** W, A and B for `inFlight` requests in flight, each a multiple of it. */
function countsFor({ inFlight }) {
  const knobs = inFlight === 1 ? COUNTS.single : COUNTS.batch;
  const counts = {};
  for (const [key, [name, fallback]] of Object.entries(knobs)) {
    const value = envNumber(name, fallback);
    if (!Number.isInteger(value / inFlight)) throw new Error(`${name} (${value}) must be a multiple of ${inFlight}, the requests in flight`);
    counts[key] = value;
  }
  if (!(counts.b > counts.a)) throw new Error(`${knobs.b[0]} (${counts.b}) must be greater than ${knobs.a[0]} (${counts.a})`);
  return counts;
}

/** The request counts for `candidate`: fewer for agents without keep-alive, still whole batches. */
function scaledFor(candidate, { warmup, a, b }, inFlight) {
  if (candidate.keepAlive !== false) return { warmup, a, b };
  const scale = (n) => Math.max(inFlight, Math.round((n * NO_KEEPALIVE_SCALE) / inFlight) * inFlight);
  return { warmup: scale(warmup), a: scale(a), b: Math.max(scale(b), scale(a) + inFlight) };
}

/**
 * Where callgrind writes the profile of one run: /dev/null (only the total
 * that valgrind prints on stderr matters), or with BENCH_IC_PROFILE_DIR a
 * file per agent, protocol, mode and N, which callgrind-diff.js compares.
 */
function profileFile({ agent, protocol, mode, requests }) {
  const dir = process.env.BENCH_IC_PROFILE_DIR;
  if (!dir) return '/dev/null';
  fs.mkdirSync(dir, { recursive: true });
  return path.join(path.resolve(dir), `callgrind.${agent}.${protocol}.${mode.replace('/', '-')}.${requests}.out`);
}

/**
 * Runs the client for `agent` under callgrind with `requests` measured
 * requests; resolves with { instructions, seconds, result }.
 */
function countInstructions(clientOptions) {
  const args = [
    '--tool=callgrind',
    `--callgrind-out-file=${profileFile(clientOptions)}`,
    // TurboFan's work is not counted (--toggle-collect turns counting off
    // inside the function, and would otherwise start with it off). It is
    // warm-up, not per-request work, and V8 picks the moment: with W = 5000 the
    // last 2 of 135 optimizing compiles (25 million instructions each) fell
    // between N = A and N = B and added 10k to every request. The code it
    // produces runs, and is counted, as before.
    '--toggle-collect=v8::internal::Runtime_CompileOptimized*',
    '--collect-atstart=yes',
    process.execPath,
    ...CLIENT_FLAGS,
    __filename,
    '--client',
    JSON.stringify(clientOptions),
  ];
  const started = Date.now();
  return new Promise((resolve, reject) => {
    // Tracked: killed if this process exits, and stopped by runMain when the
    // scenario fails (the other run of a pair would count on for a minute).
    const child = track(spawn(VALGRIND, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk) => { stderr += chunk; });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      const what = `${clientOptions.agent} (${clientOptions.protocol}, ${clientOptions.concurrency} in flight over ${clientOptions.sockets} sockets, ${clientOptions.requests} requests)`;
      const tail = () => stderr.trim().split('\n').slice(-15).join('\n');
      if (code !== 0) {
        reject(new Error(`valgrind run for ${what} failed (${signal || `exit code ${code}`}):\n${tail()}`));
        return;
      }
      const collected = /Collected\s*:\s*(\d+)/.exec(stderr);
      if (!collected) {
        reject(new Error(`no "Collected :" line in valgrind's output for ${what}:\n${tail()}`));
        return;
      }
      let result;
      try {
        result = JSON.parse(stdout.trim().split('\n').pop());
      } catch {
        reject(new Error(`the client for ${what} printed no result:\n${stdout}\n${tail()}`));
        return;
      }
      resolve({ instructions: Number(collected[1]), seconds: (Date.now() - started) / 1000, result });
    });
  });
}

/** A FIFO for the backend's "batch answered" byte; mkfifo(1), as Node has no mkfifo. */
function makeFifo(file) {
  const made = spawnSync('mkfifo', [file], { encoding: 'utf8' });
  if (made.error || made.status !== 0) {
    throw new Error(`mkfifo ${file} failed: ${made.error ? made.error.message : made.stderr.trim()}`);
  }
}

/**
 * The backend of one client run: its own process, so that the two runs of a
 * pair, in parallel, each have their batches answered on their own.
 */
async function startBackend(protocol, mode, dir, name) {
  const keepAliveTimeout = LONG_MS;
  if (mode.inFlight === 1) return { backend: await startServer('backend', { protocol, keepAliveTimeout }), signal: undefined };
  const signal = path.join(dir, `${name}.fifo`);
  makeFifo(signal);
  return { backend: await startServer('backend', { protocol, keepAliveTimeout, batch: mode.sockets, signal }), signal };
}

/**
 * The two runs of one agent, in parallel: valgrind serialises each client's
 * threads and counts instructions, not time, so sharing the cores changes
 * nothing but the wall clock.
 */
async function measure(candidate, { protocol, mode, counts }) {
  const { warmup, a, b } = scaledFor(candidate, counts, mode.inFlight);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'instructions-'));
  const backends = [];
  try {
    for (const name of ['a', 'b']) backends.push(await startBackend(protocol, mode, dir, name));
    const base = { agent: candidate.id, protocol, warmup, concurrency: mode.inFlight, sockets: mode.sockets, mode: mode.id };
    const run = ({ backend, signal }, requests) => countInstructions({ ...base, port: backend.port, signal, requests });
    // A failed run fails the scenario; runMain then stops the other run.
    const [runA, runB] = await Promise.all([run(backends[0], a), run(backends[1], b)]);
    const errors = runA.result.errors + runB.result.errors;
    if (errors) {
      const firstError = runA.result.firstError || runB.result.firstError;
      throw new Error(`${candidate.id} (${protocol}, ${mode.label}): ${errors} failed requests under valgrind (${firstError})`);
    }
    return {
      instructionsA: runA.instructions,
      instructionsB: runB.instructions,
      a,
      b,
      warmup,
      perRequest: (runB.instructions - runA.instructions) / (b - a),
      seconds: Math.max(runA.seconds, runB.seconds),
    };
  } finally {
    await Promise.all(backends.map(({ backend }) => backend.stop()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const thousands = (value) => `${fixed(value / 1000, 1)}k`;

/**
 * Batches need each request's 'finish': agents driven through http.request,
 * not undici's Pool; and, with fewer sockets than requests, a pool that
 * queues (Node's agent without keep-alive is made with maxSockets Infinity).
 */
function runsIn(candidate, mode) {
  if (mode.inFlight === 1) return true;
  if (candidate.kind !== 'agent') return false;
  return mode.sockets === mode.inFlight || candidate.keepAlive !== false;
}

/**
 * BENCH_IC_RUNS pairs per agent, and the one with the fewest instructions per
 * request. Over https at 50 in flight the count is bimodal: in some runs
 * (2 of 10 for steady-agent, 2 of 4 for Node's agent) a function V8 compiled
 * with TurboFan in the others stays in its baseline tier through part of the
 * measured window (more `*_Baseline` builtins and IC calls in the profile),
 * and the figure rises by 4-7% (steady-agent 185.0k-185.5k, or 193.2k and
 * 198.6k; Node's 221.5k-221.6k, or 227.8k and 231.1k). The lowest of three
 * is the all-optimized figure. http, and one in flight, showed no such runs.
 */
async function measureBest(candidate, options, runs) {
  let best = null;
  const perRequest = [];
  for (let i = 0; i < runs; i++) {
    const result = await measure(candidate, options);
    perRequest.push(result.perRequest);
    if (runs > 1) console.log(`${candidate.id} run ${i + 1} of ${runs}: ${count(Math.round(result.perRequest))} per request`);
    if (best === null || result.perRequest < best.perRequest) best = result;
  }
  return { ...best, runs: perRequest };
}

async function measureMode(protocol, mode, list) {
  const counts = countsFor(mode);
  const runs = Math.max(1, Math.round(envNumber('BENCH_IC_RUNS', 1)));
  const results = new Map();
  const measured = list.filter((candidate) => runsIn(candidate, mode));
  for (const candidate of measured) {
    console.log(`${candidate.id}: measuring (${protocol}, ${mode.label})…`);
    const result = await measureBest(candidate, { protocol, mode, counts }, runs);
    results.set(candidate.id, result);
    // compare-instructions.sh reads these lines.
    console.log(`${candidate.id}: ${count(Math.round(result.perRequest))} instructions/req (${protocol}, ${mode.label}; `
      + `${count(result.instructionsA)} at N=${result.a}, ${count(result.instructionsB)} at N=${result.b}, ${Math.round(result.seconds)} s)`);
  }
  const skipped = list.filter((candidate) => !runsIn(candidate, mode));
  if (skipped.length) console.log(`${skipped.map((c) => c.id).join(', ')}: not run at ${mode.label} (batches need each request's 'finish' event, and a pool that queues)`);
  const baseline = results.get(BASELINE);
  const rows = measured.map((candidate) => {
    const { perRequest } = results.get(candidate.id);
    return [
      candidate.label(protocol),
      thousands(perRequest),
      baseline ? fixed(perRequest / baseline.perRequest, 2) : 'n/a',
    ];
  });
  const table = {
    title: `Client instructions per request (${protocol}, ${mode.label})`,
    columns: ['agent', 'instructions/req', 'ratio vs Node keep-alive'],
    rows,
  };
  printTable(table);
  return { table, counts, raw: Object.fromEntries(results) };
}

async function main() {
  const missing = valgrindMissing();
  if (missing) {
    console.log(`instructions: skipped, ${missing}; this scenario counts instructions with valgrind --tool=callgrind. Nothing recorded.`);
    return;
  }
  const protocols = selectedList('BENCH_PROTOCOLS', PROTOCOLS);
  const modes = selectedModes();
  const modeCounts = new Map(modes.map((mode) => [mode, countsFor(mode)]));
  const list = candidates({ extra: [WATCHED] });
  if (list.length === 0) throw new Error('BENCH_AGENTS selected no agent');
  for (const [mode, { warmup, a, b }] of modeCounts) {
    console.log(`Instructions per request, ${mode.label}: ${warmup} warm-up requests, then ${a} or ${b} more `
      + `(maxSockets ${mode.sockets}), one valgrind run each`);
  }
  console.log(`Agents: ${list.map((c) => c.id).join(', ')}; protocols: ${protocols.join(', ')}`);

  const tables = [];
  const raw = {};
  for (const protocol of protocols) {
    raw[protocol] = {};
    for (const mode of modes) {
      const measured = await measureMode(protocol, mode, list);
      tables.push(measured.table);
      raw[protocol][mode.label] = measured.raw;
    }
  }

  const described = [...modeCounts].map(([mode, { warmup, a, b }]) => `${mode.label}: W=${warmup}, A=${a}, B=${b}`);
  saveScenario({
    id: 'instructions',
    title: 'Client instructions per request',
    summary: `One client process per agent sends W warm-up GET requests and then N more to a backend in another process, under valgrind --tool=callgrind; `
      + `instructions per request = (total at N=B − total at N=A) / (B − A), which subtracts startup and warm-up (${described.join('; ')}).`,
    params: {
      inFlight: modes.map((mode) => mode.id).join('+'),
      ...Object.fromEntries([...modeCounts].flatMap(([mode, counts]) => Object.entries(counts).map(([key, value]) => [`${key}@${mode.id}`, value]))),
      maxSockets: modes.map((mode) => mode.sockets).join('+'),
      runs: Math.max(1, Math.round(envNumber('BENCH_IC_RUNS', 1))),
      protocols: protocols.join('+'),
      ...(EXTRA_FLAGS.length > 0 ? { v8Flags: EXTRA_FLAGS.join(' ') } : {}),
    },
    tables,
    notes: [
      'Counts are user-space instructions of the client process, all threads included (valgrind runs them one at a time); work in the kernel (syscalls, TCP, loopback) is not counted, and neither is the backend.',
      `The client runs with ${CLIENT_FLAGS.join(' ')} (no V8 background threads, a GC schedule and seeds that do not follow the clock), and TurboFan's compile work is not counted. One in flight: each request is sent when the previous one is done; the per-request figure, a difference of two totals, repeats within about 0.5% (standard deviation 0.25%) even on a loaded machine, where the CPU-time ratios of client-cost.js swing by tens of percent.`,
      '50 in flight: fixed batches, each request on a socket from the pool (maxSockets 50). The client sends 50 requests; once all are written it blocks, before its event loop polls again, until the backend (which holds its answers until the whole batch has arrived) says it has answered all 50; the next poll then reads all 50 responses, and once the last socket is back in the pool the next batch goes. Every batch is the same steps whatever the speed of either process. How repeatable each mode is: benchmark/README.md, Reading the numbers. undici\'s Pool is not run in this mode (the batches need each request\'s \'finish\').',
      `No timeout fires, however slow the client runs: the backend keeps idle connections ${LONG_MS / 60000} minutes (and says so, Keep-Alive: timeout=${LONG_MS / 1000}), steady-agent and agentkeepalive get freeSocketTimeout and timeout of as long (the same calls as with their defaults), Node's agent no timeout (as by default).`,
      `Agents without keep-alive run a tenth of the requests (whole batches): each request opens a connection (and over TLS does a handshake), which under valgrind takes long; the per-request figures are comparable.`,
      'Instructions are not time: a cache miss or a syscall costs more than an add. The figure ranks the work each agent does in JavaScript and native user space per request.',
      `Reproduce: \`${commandLine(['node', 'benchmark/instructions.js'])}\` (needs valgrind, and minutes: a client under valgrind runs some 50 times slower than without).`,
    ],
    raw,
  });
}


if (process.argv[2] === '--client') {
  runClient(JSON.parse(process.argv[3])).catch((err) => {
    console.error(err && err.stack ? err.stack : err);
    process.exit(1);
  });
} else {
  runMain(main);
}
