'use strict';

// The fault soak: tens of thousands of requests, 64 in flight over at most 32
// sockets, against a server (test/support/fault_server.js, in a child process)
// that drops connections, answers too late, closes, cuts bodies, announces a
// one-second idle limit or answers 500, while the client aborts about 2% of
// its requests at random moments. Afterwards nothing is lost, nothing leaks.
//
//   STEADY_SOAK_REQUESTS  number of requests (default 20000)
//   STEADY_SOAK_SEED      seed of the fault plan (default below; printed in
//                         the test title, so a failure names its seed)
const assert = require('node:assert/strict');
const { fork } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');
const { HttpAgent } = require('../');
const { delay, waitFor } = require('./support/request');

const REQUESTS = Number(process.env.STEADY_SOAK_REQUESTS) || 20000;
// Decimal or 0x-hex, as the test title prints it.
const SEED = (process.env.STEADY_SOAK_SEED ? Number(process.env.STEADY_SOAK_SEED) : 0x5eed1e55) >>> 0;
const IN_FLIGHT = 64;
const MAX_SOCKETS = 32;
const MAX_FREE_SOCKETS = 16;
const CLIENT_TIMEOUT = 200; // ms; the server's /slow answers after 400 ms
const ABORT_RATE = 0.02;
// A request that makes no progress for this long is reported as stuck.
const STALL_LIMIT = 15000;
const HEAP_GROWTH_LIMIT = 8 * 1024 * 1024;

// The fault mix: [path, weight].
const KINDS = [
  ['/ok', 50],
  ['/drop', 8],
  ['/slow', 5],
  ['/close', 10],
  ['/cut', 8],
  ['/ka1', 9],
  ['/500', 10],
];

// Moments at which the client aborts a request.
const ABORT_MOMENTS = ['sync', 'tick', 'socket', 'response', 'timer'];

/** mulberry32: a small seeded PRNG, so a failing run can be replayed. */
function prng(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The fault and the abort (if any) of every request, fixed by the seed. */
function makePlan(count, seed) {
  const random = prng(seed);
  const totalWeight = KINDS.reduce((sum, [, weight]) => sum + weight, 0);
  const kind = new Uint8Array(count);
  const abort = new Uint8Array(count); // 0: no abort, else 1 + index in ABORT_MOMENTS
  const abortDelay = new Uint16Array(count);
  for (let i = 0; i < count; i++) {
    let pick = random() * totalWeight;
    let k = 0;
    while (pick >= KINDS[k][1]) pick -= KINDS[k++][1];
    kind[i] = k;
    if (random() < ABORT_RATE) {
      abort[i] = 1 + Math.floor(random() * ABORT_MOMENTS.length);
      abortDelay[i] = Math.floor(random() * 300);
    }
  }
  return { kind, abort, abortDelay };
}

/**
 * Runs the plan through the agent, IN_FLIGHT requests at a time. Returns the
 * signals each request produced, counted per request:
 *   responses  'response' events
 *   ends       the response body ended ('end' on the response)
 *   reqErrors  'error' on the request
 *   resErrors  'error' on the response
 *   closes     'close' on the request
 *   late       a 'response' after the request had already failed
 * and a sample of outcomes per kind.
 */
async function runPlan(agent, port, plan) {
  const count = plan.kind.length;
  const signals = {
    responses: new Uint8Array(count),
    ends: new Uint8Array(count),
    reqErrors: new Uint8Array(count),
    resErrors: new Uint8Array(count),
    closes: new Uint8Array(count),
    late: new Uint8Array(count),
  };
  const outcomes = KINDS.map(() => new Map()); // outcome text -> count
  const note = (i, text) => {
    const map = outcomes[plan.kind[i]];
    map.set(text, (map.get(text) ?? 0) + 1);
  };
  const active = new Set();
  let next = 0;
  let progress = 0;

  function one(i) {
    return new Promise((resolve) => {
      active.add(i);
      let abortTimer;
      const moment = plan.abort[i] === 0 ? null : ABORT_MOMENTS[plan.abort[i] - 1];
      const settled = () => signals.ends[i] + signals.reqErrors[i] + signals.resErrors[i] > 0;
      const abort = () => {
        if (!settled()) req.destroy();
      };

      const req = http.request({
        host: '127.0.0.1',
        port,
        path: KINDS[plan.kind[i]][0],
        agent,
      }, (res) => {
        signals.responses[i]++;
        if (signals.reqErrors[i] > 0) signals.late[i]++;
        res.on('data', () => {});
        res.on('end', () => {
          signals.ends[i]++;
          if (moment === null) note(i, `status ${res.statusCode}`);
        });
        res.on('error', (err) => {
          signals.resErrors[i]++;
          if (moment === null && signals.reqErrors[i] === 0) note(i, `response ${err.code}`);
        });
        if (moment === 'response') abort();
      });
      req.on('error', (err) => {
        signals.reqErrors[i]++;
        if (moment === null) note(i, `request ${err.code}`);
      });
      req.on('close', () => {
        signals.closes[i]++;
        clearTimeout(abortTimer);
        active.delete(i);
        progress++;
        resolve();
      });
      req.end();

      if (moment === 'sync') abort();
      else if (moment === 'tick') process.nextTick(abort);
      else if (moment === 'socket') req.once('socket', () => setImmediate(abort));
      else if (moment === 'timer') abortTimer = setTimeout(abort, plan.abortDelay[i]);
    });
  }

  async function lane() {
    while (next < count) await one(next++);
  }

  // A request that never closes would hang its lane for ever: report it.
  let watchdog;
  const stalled = new Promise((_, reject) => {
    let seen = -1;
    watchdog = setInterval(() => {
      if (progress !== seen) {
        seen = progress;
        return;
      }
      const stuck = [...active].slice(0, 10).map((i) => `#${i} ${KINDS[plan.kind[i]][0]}`);
      reject(new Error(`no request closed for ${STALL_LIMIT} ms; open: ${stuck.join(', ')} ` +
        `(seed ${SEED}); status ${JSON.stringify(agent.getCurrentStatus())}`));
    }, STALL_LIMIT);
  });
  try {
    await Promise.race([
      Promise.all(Array.from({ length: IN_FLIGHT }, lane)),
      stalled,
    ]);
  } finally {
    clearInterval(watchdog);
  }
  return { signals, outcomes };
}

/** Asserts that every request produced exactly one outcome. */
function assertSettledOnce(signals, label) {
  const bad = [];
  const count = signals.closes.length;
  for (let i = 0; i < count && bad.length < 10; i++) {
    const ends = signals.ends[i];
    const failures = signals.reqErrors[i] + signals.resErrors[i];
    // Core reports a connection failure in the middle of a body on both the
    // request and the response: that is one failure, one settlement. Two
    // errors on the same object, a body that ends and also fails, a response
    // to a request that had already failed, or no outcome at all are not.
    const once = signals.closes[i] === 1 &&
      signals.responses[i] <= 1 &&
      signals.late[i] === 0 &&
      signals.reqErrors[i] <= 1 &&
      signals.resErrors[i] <= 1 &&
      ((ends === 1 && failures === 0) || (ends === 0 && failures >= 1));
    if (!once) {
      bad.push(`#${i}: responses ${signals.responses[i]}, ends ${ends}, request errors ` +
        `${signals.reqErrors[i]}, response errors ${signals.resErrors[i]}, closes ${signals.closes[i]}`);
    }
  }
  assert.deepEqual(bad, [], `${label}: requests that did not settle exactly once (seed ${SEED})`);
}

function openFds() {
  return fs.readdirSync('/proc/self/fd').length;
}

// `--expose-gc` is not among mocha's options here; the flag still exposes
// `gc` in a context created after it is set.
function getGc() {
  if (typeof global.gc === 'function') return global.gc;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc');
}

async function settledHeap(gc) {
  for (let i = 0; i < 3; i++) {
    await delay(20);
    gc();
  }
  return process.memoryUsage().heapUsed;
}

function sum(perOrigin) {
  return Object.values(perOrigin).reduce((total, n) => total + n, 0);
}

function startServer() {
  const child = fork(path.join(__dirname, 'support', 'fault_server.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`fault server exited (${code}) before listening`)));
    child.once('message', (message) => resolve(message.port));
  });
  return { child, port };
}

function serverStats(child) {
  return new Promise((resolve) => {
    const onMessage = (message) => {
      if (message.type !== 'stats') return;
      child.removeListener('message', onMessage);
      resolve(message);
    };
    child.on('message', onMessage);
    child.send({ type: 'stats' });
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (child.connected) child.send({ type: 'close' });
    else child.kill('SIGKILL');
  });
}

describe('fault soak', function () {
  // Sized for CI at the default 20,000 requests; larger runs get more time.
  this.timeout(Math.max(120000, REQUESTS * 6));

  let server;
  let port;
  let agents = [];
  let uncaught = [];
  const onUncaught = (err) => uncaught.push(err);

  before(async () => {
    server = startServer();
    port = await server.port;
  });

  after(async () => {
    if (server) await stopServer(server.child);
    server = null;
  });

  beforeEach(() => {
    uncaught = [];
    process.on('uncaughtException', onUncaught);
  });

  afterEach(() => {
    process.removeListener('uncaughtException', onUncaught);
    for (const agent of agents) agent.destroy();
    agents = [];
  });

  function newAgent() {
    const agent = new HttpAgent({
      maxSockets: MAX_SOCKETS,
      maxFreeSockets: MAX_FREE_SOCKETS,
      timeout: CLIENT_TIMEOUT,
      // Keeps /ka1's sockets for up to 500 ms of their announced second.
      serverTimeoutMargin: 500,
    });
    agents.push(agent);
    return agent;
  }

  it(`${REQUESTS} requests, ${IN_FLIGHT} in flight, maxSockets ${MAX_SOCKETS}, seed 0x${SEED.toString(16)}: ` +
    'each settles once, no socket, descriptor or memory leak', async () => {
    const gc = getGc();
    const measureFds = fs.existsSync('/proc/self/fd');

    // A short run first, on its own agent, so that whatever the process
    // allocates once (timer lists, parser pools, compiled code) is in the
    // baseline rather than counted as growth.
    const warmupAgent = newAgent();
    const warmup = await runPlan(warmupAgent, port, makePlan(1000, SEED ^ 0xffff));
    assertSettledOnce(warmup.signals, 'warm-up');
    warmupAgent.destroy();
    await waitFor(() => warmupAgent.closeSocketCount === warmupAgent.createSocketCount);

    const fdsBefore = measureFds ? openFds() : 0;
    const heapBefore = await settledHeap(gc);

    const agent = newAgent();
    const plan = makePlan(REQUESTS, SEED);
    const { signals, outcomes } = await runPlan(agent, port, plan);

    // Sockets of failed requests leave agent.sockets on 'close', a tick or
    // more after the request's own 'close'.
    await waitFor(() => sum(agent.getCurrentStatus().sockets) === 0 &&
      sum(agent.getCurrentStatus().requests) === 0, { limit: 10000 }).catch(() => {});

    assert.deepEqual(uncaught, [], 'uncaught exceptions during the soak');
    assertSettledOnce(signals, 'soak');

    const status = agent.getCurrentStatus();
    assert.deepEqual(status.sockets, {}, 'agent.sockets after the soak');
    assert.deepEqual(status.requests, {}, 'agent.requests after the soak');
    // (Core's maps have no prototype; compare their keys.)
    assert.deepEqual(Object.keys(agent.sockets), [], 'origins in agent.sockets');
    assert.deepEqual(Object.keys(agent.requests), [], 'origins in agent.requests');
    for (const [origin, free] of Object.entries(agent.freeSockets)) {
      assert.ok(free.length <= MAX_FREE_SOCKETS, `${free.length} free sockets for ${origin}`);
      for (const socket of free) assert.ok(!socket.destroyed, 'a destroyed socket in freeSockets');
    }
    const stillOpen = sum(status.freeSockets) + sum(status.sockets);
    assert.equal(status.createSocketCount - status.closeSocketCount, stillOpen,
      `createSocketCount ${status.createSocketCount} - closeSocketCount ${status.closeSocketCount} ` +
      'is the number of sockets still open');

    // The server agrees: the connections it still has open are the client's
    // pooled ones (its side of a closed connection closes a moment later).
    let stats = await serverStats(server.child);
    for (let tries = 0; stats.open !== stillOpen && tries < 200; tries++) {
      await delay(50);
      stats = await serverStats(server.child);
    }
    assert.equal(stats.open, stillOpen, 'connections the server still has open');
    assert.ok(stats.accepted <= warmupAgent.createSocketCount + status.createSocketCount,
      'the server never saw a connection the agents did not count');

    // Every fault did happen, and did what it should.
    const sample = (kind) => outcomes[KINDS.findIndex(([p]) => p === kind)];
    assert.ok(sample('/ok').get('status 200') > 0, 'some /ok requests succeeded');
    assert.ok(sample('/close').get('status 200') > 0, 'some /close requests succeeded');
    assert.ok(sample('/ka1').get('status 200') > 0, 'some /ka1 requests succeeded');
    assert.ok(sample('/500').get('status 500') > 0, 'some /500 requests got their 500');
    assert.ok(sample('/slow').get('request ERR_SOCKET_TIMEOUT') > 0, 'some /slow requests timed out');
    assert.ok(sample('/cut').get('response ECONNRESET') > 0, 'some /cut bodies failed');
    assert.equal(sample('/cut').get('status 200'), undefined, 'a cut body never ends as a success');
    assert.equal(sample('/drop').get('status 200'), undefined, 'a dropped request never succeeds');
    assert.ok(sample('/drop').get('request ECONNRESET') > 0, 'some /drop requests failed');
    assert.ok(status.timeoutSocketCount > 0, 'timeoutSocketCount counts the timeouts');
    assert.ok(status.requestCount > 0 && status.requestCount <= REQUESTS, 'requestCount');

    agent.destroy();
    await waitFor(() => agent.closeSocketCount === agent.createSocketCount, { limit: 10000 });
    assert.deepEqual(agent.getCurrentStatus().freeSockets, {});
    assert.deepEqual(agent.getCurrentStatus().sockets, {});

    if (measureFds) {
      assert.equal(openFds(), fdsBefore, 'open file descriptors after destroy()');
    }
    const heapAfter = await settledHeap(gc);
    const growth = heapAfter - heapBefore;
    assert.ok(growth < HEAP_GROWTH_LIMIT,
      `heap grew by ${(growth / 1048576).toFixed(1)} MB over ${REQUESTS} requests`);
  });
});
