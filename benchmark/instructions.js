'use strict';

// Scenario: client instructions per request. The CPU-time figures of
// client-cost.js swing by tens of percent on a shared 2-core machine;
// instruction counts under valgrind do not. For each agent, a small client
// (this file run with --client) sends W warm-up GETs and then N more, one at
// a time, to a backend in another process, under
// `valgrind --tool=callgrind`. It runs twice, with N = A and N = B; the
// difference of the two totals divided by B − A is the cost of one request,
// with startup, module loading, most of the JIT warm-up and exit subtracted.
//
// The count must not depend on how fast the client runs: valgrind slows it
// some 50 times, and a busy machine by as much again. So the client sends one
// request at a time (its event loop does the same steps for every request,
// whenever the response comes), V8 runs on one thread with a fixed GC
// schedule and random seed (CLIENT_FLAGS), and TurboFan's own work is not
// counted. Five runs of one commit, loaded machine and idle, then gave 137.8k
// to 138.7k per request (0.65% apart, standard deviation 0.25%, where they
// were 12% apart before), and 200 iterations of a loop added to the agent's
// per-request path showed as +3.3k. What is left grows with the run (totals
// of identical runs differ by up to 0.4%: glibc malloc and V8's string table
// lookups do more or less work), so a longer B − A does not make it smaller.
//
//   node benchmark/instructions.js
//   BENCH_PROTOCOLS=http BENCH_AGENTS=steady-agent,node-keepalive node benchmark/instructions.js
//   BENCH_PROTOCOLS=http BENCH_AGENTS=steady-agent,steady-agent-watched node benchmark/instructions.js
//   BENCH_IC_A=500 BENCH_IC_B=2500 node benchmark/instructions.js
//   benchmark/compare-instructions.sh main HEAD      (two commits, same harness)
const { spawn, spawnSync } = require('node:child_process');
const diagnosticsChannel = require('node:diagnostics_channel');
const { candidates, createClient, findCandidate } = require('./lib/agents');
const { startServer, runMain, track } = require('./lib/processes');
const { runLoad } = require('./lib/load');
const { fixed, count, envNumber } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario, commandLine } = require('./lib/results');
const { ca } = require('./lib/tls');

const VALGRIND = 'valgrind';
const BASELINE = 'node-keepalive';
const PROTOCOLS = ['http', 'https'];
// One request in flight. With 50, how many responses one event-loop turn
// handled depended on timing, so JIT feedback did too: two runs of one commit
// compiled 203 and 214 functions with TurboFan (76 and 87 deopts) and
// differed by 1.6% in total, and on a loaded machine a request waiting behind
// 49 others under valgrind outlived the agent's 8 s socket timeout.
const CONCURRENCY = 1;
// The pool may grow as in the other scenarios; one request at a time reuses
// one socket (the next request is sent once the previous socket is free).
const MAX_SOCKETS = 50;
// V8 flags of the client. --single-threaded: no background threads, so JIT
// and GC work is done at the same point of every run. --predictable-gc-schedule:
// heap growth and the memory reducer no longer follow the wall clock (the
// reducer's timer ran some 40 times a run, more on a slower run).
// --random-seed: the same Math.random() and hash seeds in every run. With
// --single-threaded alone, the totals of three one-at-a-time runs (4000
// requests) spread over 0.22%; with all three flags over 0.01%.
const CLIENT_FLAGS = ['--single-threaded', '--predictable-gc-schedule', '--random-seed=1'];
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
 * Options (JSON in argv[3]): { agent, protocol, port, warmup, requests, concurrency }.
 * Prints one JSON line { completed, errors, firstError } covering every
 * request, so the parent can reject a run in which requests failed.
 */
async function runClient(options) {
  const { agent, protocol, port, warmup, requests, concurrency } = options;
  const agentOptions = { maxSockets: MAX_SOCKETS };
  if (protocol === 'https') agentOptions.ca = ca;
  const client = createClient(candidateById(agent), { protocol, port, agentOptions });
  const warm = await runLoad(client.get, warmup, concurrency);
  const load = await runLoad(client.get, requests, concurrency);
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

// ---------------------------------------------------------------------------
// The parent: a backend, then two valgrind runs per agent.

/** Why valgrind cannot be used, or null when it can. */
function valgrindMissing() {
  const probe = spawnSync(VALGRIND, ['--version'], { encoding: 'utf8' });
  if (probe.error) return `${VALGRIND} not found on PATH (${probe.error.code || probe.error.message})`;
  if (probe.status !== 0) return `\`${VALGRIND} --version\` exited with code ${probe.status}`;
  return null;
}

function selectedProtocols() {
  const raw = process.env.BENCH_PROTOCOLS;
  if (!raw) return PROTOCOLS;
  const wanted = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((p) => !PROTOCOLS.includes(p));
  if (unknown.length) throw new Error(`BENCH_PROTOCOLS: unknown protocol(s) ${unknown.join(', ')}; known: ${PROTOCOLS.join(', ')}`);
  return PROTOCOLS.filter((p) => wanted.includes(p));
}

/**
 * Runs the client for `agent` under callgrind with `requests` measured
 * requests; resolves with { instructions, seconds, result }. The profile
 * goes to /dev/null: only the total that valgrind prints on stderr matters.
 */
function countInstructions(clientOptions) {
  const args = [
    '--tool=callgrind',
    '--callgrind-out-file=/dev/null',
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
      const what = `${clientOptions.agent} (${clientOptions.protocol}, ${clientOptions.requests} requests)`;
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

/** The request counts for `candidate`: fewer for agents without keep-alive. */
function countsFor(candidate, { warmup, a, b }) {
  if (candidate.keepAlive !== false) return { warmup, a, b };
  const scale = (n) => Math.max(1, Math.round(n * NO_KEEPALIVE_SCALE));
  return { warmup: scale(warmup), a: scale(a), b: Math.max(scale(b), scale(a) + 1) };
}

/**
 * The two runs of one agent, in parallel: valgrind serialises each client's
 * threads and counts instructions, not time, so sharing the cores changes
 * nothing but the wall clock.
 */
async function measure(candidate, { protocol, port, ...counts }) {
  const { warmup, a, b } = countsFor(candidate, counts);
  const base = { agent: candidate.id, protocol, port, warmup, concurrency: CONCURRENCY };
  // A failed run fails the scenario; runMain then stops the other run.
  const [runA, runB] = await Promise.all([
    countInstructions({ ...base, requests: a }),
    countInstructions({ ...base, requests: b }),
  ]);
  const errors = runA.result.errors + runB.result.errors;
  if (errors) {
    const firstError = runA.result.firstError || runB.result.firstError;
    throw new Error(`${candidate.id} (${protocol}): ${errors} failed requests under valgrind (${firstError})`);
  }
  return {
    instructionsA: runA.instructions,
    instructionsB: runB.instructions,
    a,
    b,
    perRequest: (runB.instructions - runA.instructions) / (b - a),
    seconds: Math.max(runA.seconds, runB.seconds),
  };
}

const thousands = (value) => `${fixed(value / 1000, 1)}k`;

async function measureProtocol(protocol, list, params) {
  const backend = await startServer('backend', { protocol });
  console.log(`${protocol}: backend ${protocol}://127.0.0.1:${backend.port} (pid ${backend.child.pid})`);
  const results = new Map();
  try {
    for (const candidate of list) {
      console.log(`${candidate.id}: measuring (${protocol})…`);
      const result = await measure(candidate, { protocol, port: backend.port, ...params });
      results.set(candidate.id, result);
      console.log(`${candidate.id}: ${count(Math.round(result.perRequest))} instructions/req (${protocol}; `
        + `${count(result.instructionsA)} at N=${result.a}, ${count(result.instructionsB)} at N=${result.b}, ${Math.round(result.seconds)} s)`);
    }
  } finally {
    await backend.stop();
  }
  const baseline = results.get(BASELINE);
  const rows = list.map((candidate) => {
    const { perRequest } = results.get(candidate.id);
    return [
      candidate.label(protocol),
      thousands(perRequest),
      baseline ? fixed(perRequest / baseline.perRequest, 2) : 'n/a',
    ];
  });
  const table = {
    title: `Client instructions per request (${protocol})`,
    columns: ['agent', 'instructions/req', 'ratio vs Node keep-alive'],
    rows,
  };
  printTable(table);
  return { table, raw: Object.fromEntries(results) };
}

async function main() {
  const missing = valgrindMissing();
  if (missing) {
    console.log(`instructions: skipped, ${missing}; this scenario counts instructions with valgrind --tool=callgrind. Nothing recorded.`);
    return;
  }
  const a = envNumber('BENCH_IC_A', 1000);
  const b = envNumber('BENCH_IC_B', 16000);
  const warmup = envNumber('BENCH_IC_WARMUP', 8000);
  if (!(b > a)) throw new Error(`BENCH_IC_B (${b}) must be greater than BENCH_IC_A (${a})`);
  const protocols = selectedProtocols();
  const list = candidates({ extra: [WATCHED] });
  if (list.length === 0) throw new Error('BENCH_AGENTS selected no agent');
  console.log(`Instructions per request: ${warmup} warm-up requests, then ${a} or ${b} more, `
    + `${CONCURRENCY} in flight (maxSockets ${MAX_SOCKETS}), one valgrind run each; agents: ${list.map((c) => c.id).join(', ')}`);

  const tables = [];
  const raw = {};
  for (const protocol of protocols) {
    const measured = await measureProtocol(protocol, list, { warmup, a, b });
    tables.push(measured.table);
    raw[protocol] = measured.raw;
  }

  saveScenario({
    id: 'instructions',
    title: 'Client instructions per request',
    summary: `One client process per agent sends ${warmup} warm-up GET requests and then N more, ${CONCURRENCY} in flight, `
      + 'to a backend in another process, under valgrind --tool=callgrind; instructions per request = '
      + `(total at N=${b} − total at N=${a}) / ${b - a}, which subtracts startup and warm-up.`,
    params: { a, b, warmup, concurrency: CONCURRENCY, maxSockets: MAX_SOCKETS, protocols: protocols.join('+') },
    tables,
    notes: [
      'Counts are user-space instructions of the client process, all threads included (valgrind runs them one at a time); work in the kernel (syscalls, TCP, loopback) is not counted, and neither is the backend.',
      `One request in flight, the client runs with ${CLIENT_FLAGS.join(' ')} (no V8 background threads, a GC schedule and seeds that do not follow the clock), and TurboFan's compile work is not counted: the per-request figure, a difference of two totals, repeats within about 0.5% (standard deviation 0.25%) even on a loaded machine, where the CPU-time ratios of client-cost.js swing by tens of percent on a shared machine.`,
      `Agents without keep-alive run a tenth of the requests (warm-up ${Math.round(warmup * NO_KEEPALIVE_SCALE)}, N=${Math.round(a * NO_KEEPALIVE_SCALE)} and ${Math.round(b * NO_KEEPALIVE_SCALE)}): each request opens a connection (and over TLS does a handshake), which under valgrind takes long; the per-request figures are comparable.`,
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
