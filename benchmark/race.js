'use strict';

// Scenario 5, keep-alive race: servers (each its own process) close a
// connection idle for exactly their limit. An agent that reuses a socket at
// about the moment the server closes it fails the request; an agent that
// knows the limit opens a new connection instead, and reuses wherever the
// server allows it. Three servers:
//
// - hinted: announces `Keep-Alive: timeout=<hint>` and closes at that limit.
//   Each attempt (a fresh agent) sends a request, waits hint seconds plus an
//   offset spread evenly over ±spread ms, and sends again; then once more a
//   quarter of the hint later (where the server allows reuse).
// - node: Node's own http.Server, keepAliveTimeout = hint seconds (it sends
//   the Keep-Alive hint itself); attempts as for hinted.
// - hintless: announces nothing and closes connections idle for <idle> ms.
//   Each attempt (a fresh agent: one origin) sends a request, then ROUNDS
//   times waits the limit plus its offset and sends again, then waits half
//   the limit and sends once more (where the server allows reuse). An agent
//   that learns can lose at most its first collision.
// - restart: a hintless server with a 5 s limit; each attempt opens 3
//   connections, the server closes every idle connection 200 ms later (a
//   restart, or server.closeIdleConnections() while draining), then each
//   attempt sends 30 requests 50 ms apart.
// - deploy and reset (one fault, at three rhythms, on two servers): Node's
//   http.Server announcing its 5 s limit, and a silent server closing at
//   5 s. Each attempt (a fresh agent, started a fraction of the rhythm after
//   the one before) sends a request every 50, 250 or 1000 ms. deploy: the
//   server closes every connection, idle or busy, 2.4 rhythms in
//   (server.closeAllConnections()); reset: the server destroys the socket of
//   each attempt's fifth request. The second table shows requests failed and
//   new connections beyond each attempt's first: Node's agent needs one.
// - flaky and deploys (many faults, the same servers and rhythms): flaky,
//   the server destroys the socket of every tenth request of each attempt
//   (the fourth of each ten, as Node's server in issue 38's report); deploys,
//   the server closes every connection twice, 2.4 and 9.4 rhythms in.
//
// On loopback the server's FIN reaches the client within microseconds, so the
// race window would be almost nil; real networks make it one round trip wide.
// The requests therefore go through the delay proxy (servers/delay-proxy.js),
// `latency` ms each way: a request sent less than one round trip before the
// server's close meets a closed socket. Attempts run in parallel batches.
//
// The table shows, per server and agent, requests failed and requests sent on
// a reused socket (counted by the server: requests minus connections that
// served one). On steady-agent's rows, a column more: the requests lost when
// the same attempts go through steady-agent/retry, with each client it
// serves (request() for plain http, axios with axios-retry, got, node-fetch),
// and how many were sent again.
//
//   node benchmark/race.js
//   BENCH_RACE_ATTEMPTS=144 BENCH_RACE_HINT=2 BENCH_RACE_SPREAD=10 BENCH_RACE_LATENCY=5 node benchmark/race.js
//   BENCH_RACE_SCENARIOS=hintless,restart BENCH_RACE_IDLE=2000 node benchmark/race.js
//   BENCH_RACE_SCENARIOS=deploy,reset BENCH_RACE_FAULT_ATTEMPTS=4 node benchmark/race.js
//   BENCH_RACE_SCENARIOS=flaky,deploys node benchmark/race.js
//
// Then the same servers and attempts through fetch and undici (a third and
// a fourth table): Node's fetch, steady-agent/fetch, undici.request with
// undici's Agent, with its interceptors.retry, and with createDispatcher
// (undici 7 where Node allows, else 6), each attempt a fresh dispatcher.
// Added latency: how much longer than the candidate's fastest request of the
// scenario a request took (a resend, a retry's wait, a new connection).
// BENCH_RACE_CLIENTS=agents or =dispatchers runs only those.
//
//   BENCH_RACE_CLIENTS=dispatchers node benchmark/race.js
const http = require('node:http');
// Before anything loads npm's undici: steady-agent/fetch and Node's fetch keep the bundled one.
const { dispatcherCandidates } = require('./lib/dispatchers');
const SteadyAgent = require('..');
const { candidates, createClient } = require('./lib/agents');
const { loadRetryClients } = require('./lib/retry_clients');
const { startServer, runMain } = require('./lib/processes');
const { count, envNumber, sleep } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario } = require('./lib/results');

const hint = envNumber('BENCH_RACE_HINT', 2);
const idleLimit = envNumber('BENCH_RACE_IDLE', 2000);
const attempts = envNumber('BENCH_RACE_ATTEMPTS', 72);
const hintlessAttempts = envNumber('BENCH_RACE_HINTLESS_ATTEMPTS', 24);
const restartAttempts = envNumber('BENCH_RACE_RESTART_ATTEMPTS', 12);
const spread = envNumber('BENCH_RACE_SPREAD', 10);
const batchSize = Math.max(1, envNumber('BENCH_RACE_BATCH', 24));
const latency = envNumber('BENCH_RACE_LATENCY', 5);
const ROUNDS = 4;
const RESTART_LIMIT = 5000;
const RESTART_AFTER = 200;
const RESTART_REQUESTS = 30;
const RESTART_GAP = 50;
const SCENARIOS = (process.env.BENCH_RACE_SCENARIOS || 'hinted,node,hintless,restart,deploy,reset,flaky,deploys').split(',').map((s) => s.trim());
const FAULTS = ['deploy', 'reset', 'flaky', 'deploys'];
// When each fault scenario's server closes every connection, in rhythms from the first request.
const RESTARTS_AT = { deploy: [2.4], deploys: [2.4, 9.4] };
// Whether the server resets request i of an attempt.
const RESETS = { reset: (i) => i === 4, flaky: (i) => i % 10 === 3 };
const FAULT_NOTES = {
  deploy: 'the server closes every connection 2.4 rhythms in',
  reset: 'the server destroys the socket of each attempt\'s fifth request',
  flaky: 'the server destroys the socket of every tenth request of each attempt (the fourth of each ten)',
  deploys: 'the server closes every connection twice, 2.4 and 9.4 rhythms in',
};

/** The path of request `i` of a fault attempt: /reset where the fault resets it. */
const faultPath = (fault, i) => (RESETS[fault]?.(i) ? '/reset' : '/');

/** The fault's restarts, each when it is due: resolves when the last is done. */
function restartsOf(fault, rhythm, server) {
  return Promise.all((RESTARTS_AT[fault] ?? []).map((at) => sleep(at * rhythm).then(() => server.call('restart'))));
}
const FAULT_RHYTHMS = [50, 250, 1000];
// Requests per attempt, per fault and rhythm: a flaky backend's every tenth
// request reset needs several tens, two deploys 9.4 rhythms and more.
const ONE_FAULT_REQUESTS = { 50: 40, 250: 16, 1000: 10 };
const FAULT_REQUESTS = {
  deploy: ONE_FAULT_REQUESTS, reset: ONE_FAULT_REQUESTS, flaky: { 50: 40, 250: 40, 1000: 20 }, deploys: { 50: 40, 250: 16, 1000: 14 },
};
const FAULT_LIMIT_S = 5;
const faultAttempts = envNumber('BENCH_RACE_FAULT_ATTEMPTS', 4);
const CLIENTS = process.env.BENCH_RACE_CLIENTS || 'agents,dispatchers';
// A request this much slower than the candidate's fastest counts as delayed.
const DELAYED_MS = 50;
// steady-agent closes an idle socket serverTimeoutMargin (default 1000 ms)
// before the announced limit, so with a 1 s hint it would keep nothing; a
// smaller margin is given then (or whenever BENCH_RACE_MARGIN is set).
const margin = process.env.BENCH_RACE_MARGIN
  ? envNumber('BENCH_RACE_MARGIN', 1000)
  : (hint <= 1 ? 500 : undefined);
const REQUEST_TIMEOUT_MS = 10000;

/** Offsets in whole milliseconds (timers have 1 ms resolution), evenly over ±spread. */
function offsets(n) {
  return Array.from({ length: n }, (_, i) => (
    n === 1 ? 0 : Math.round(-spread + (2 * spread * i) / (n - 1))));
}

function getOnce(client) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(new Error('timed out')), REQUEST_TIMEOUT_MS);
    client.get((err, status) => {
      clearTimeout(timer);
      resolve(err || (status === 200 ? null : new Error(`status ${status}`)));
    });
  });
}

function errorName(err) {
  return err.code || err.message;
}

// steady-agent/retry's clients, as race.js names them (node-fetch: v3; v2
// goes through the same wrapper), loaded once by main().
const RETRY_CLIENTS = { 'http.request': 'http.request (request())', axios: 'axios + axios-retry', got: 'got', 'node-fetch': 'node-fetch v3' };
let retryClients = null;

function clientFor(candidate, port) {
  if (candidate.dispatcher !== undefined) return dispatcherClient(candidate, port);
  const agentOptions = candidate.id === 'steady-agent' && margin !== undefined ? { serverTimeoutMargin: margin } : {};
  if (candidate.retry === undefined) return createClient(candidate, { protocol: 'http', port, agentOptions });
  // steady-agent through one of steady-agent/retry's clients: get() as createClient's.
  const agent = new SteadyAgent(agentOptions);
  const send = retryClients[RETRY_CLIENTS[candidate.retry]];
  const options = { agent, retry: { onRetry: () => { candidate.retried++; } } };
  const url = `http://127.0.0.1:${port}/`;
  return {
    get(cb) {
      send(url, options).then((res) => cb(null, res.status), (err) => cb(err));
    },
    close() {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

/** steady-agent through `client` of steady-agent/retry, as a candidate of runScenario's. */
function retryCandidate(client) {
  return { id: `steady-agent+retry:${client}`, retry: client, retried: 0, label: () => `steady-agent + steady-agent/retry (${client})` };
}

/** Sends one request per wait (a first one without), recording the errors. */
async function sequence(client, waits) {
  const errors = [];
  for (const wait of waits) {
    if (wait > 0) await sleep(wait);
    const err = await getOnce(client);
    if (err) errors.push(err);
  }
  return errors;
}

// Each scenario: how its attempts run, and how many requests each sends.
const SCENARIO = {
  hinted: {
    server: { hint },
    label: `hinted (Keep-Alive: timeout=${hint}), 2 requests ${hint * 1000} ms ±${spread} ms apart, then one ${hint * 250} ms later`,
    attempts,
    async run(candidate, port) {
      const all = offsets(attempts);
      const batches = Math.ceil(attempts / batchSize);
      const results = [];
      // Batch k takes every batches-th attempt, so each batch spans the whole spread.
      for (let b = 0; b < batches; b++) {
        const batch = all.filter((_, i) => i % batches === b);
        results.push(...await Promise.all(batch.map(async (offset) => {
          const client = clientFor(candidate, port);
          try {
            return await sequence(client, [0, hint * 1000 + offset, hint * 250]);
          } finally {
            await client.close();
          }
        })));
      }
      return results;
    },
  },
  node: {
    server: { hint, node: true },
    label: `Node's http.Server (keepAliveTimeout ${hint * 1000} ms, which it announces), as hinted`,
    attempts,
    run: (candidate, port) => SCENARIO.hinted.run(candidate, port),
  },
  hintless: {
    server: { hint: 0, idle: idleLimit },
    label: `hintless (closes at ${idleLimit} ms), ${ROUNDS} requests ${idleLimit} ms ±${spread} ms apart, then one ${idleLimit / 2} ms later`,
    attempts: hintlessAttempts,
    async run(candidate, port) {
      return Promise.all(offsets(hintlessAttempts).map(async (offset) => {
        const client = clientFor(candidate, port);
        try {
          const waits = [0, ...Array.from({ length: ROUNDS }, () => idleLimit + offset), idleLimit / 2];
          return await sequence(client, waits);
        } finally {
          await client.close();
        }
      }));
    },
  },
  restart: {
    server: { hint: 0, idle: RESTART_LIMIT },
    label: `restart (hintless, ${RESTART_LIMIT} ms limit): 3 connections, all closed by the server ${RESTART_AFTER} ms later, then ${RESTART_REQUESTS} requests ${RESTART_GAP} ms apart`,
    attempts: restartAttempts,
    async run(candidate, port, server, network) {
      const clients = Array.from({ length: restartAttempts }, () => clientFor(candidate, port));
      try {
        const first = await Promise.all(clients.map((client) => Promise.all([0, 1, 2].map(() => getOnce(client)))));
        await sleep(RESTART_AFTER);
        await network.call('reset');
        const closed = await server.call('drain');
        // The closes reach the client `latency` ms later, unless the machine
        // is busy: then the proxy gets the CPU later than that, and a request
        // sent meanwhile meets a closed connection whatever the agent (the
        // race no agent can prevent, which this scenario is not about).
        await network.call('closesForwarded', closed);
        await sleep(4 * latency);
        const after = await Promise.all(clients.map((client) => sequence(client, Array.from(
          { length: RESTART_REQUESTS }, (_, i) => (i === 0 ? 0 : RESTART_GAP)))));
        return first.map((errors, i) => errors.filter(Boolean).concat(after[i]));
      } finally {
        await Promise.all(clients.map((client) => client.close()));
      }
    },
  },
};

const requestsPer = {
  hinted: 3,
  node: 3,
  hintless: ROUNDS + 2,
  restart: 3 + RESTART_REQUESTS,
};

/** One run of `candidate` through the scenario: what failed, and what the server counted. */
async function measure(id, candidate, server, network) {
  await server.call('reset');
  const results = await SCENARIO[id].run(candidate, network.port, server, network);
  const stats = await server.call('reset');
  const failed = results.reduce((sum, errors) => sum + errors.length, 0);
  const worst = results.reduce((max, errors) => Math.max(max, errors.length), 0);
  const codes = {};
  for (const errors of results) {
    for (const err of errors) codes[errorName(err)] = (codes[errorName(err)] || 0) + 1;
  }
  return { failed, worst, stats, codes };
}

async function runScenario(id, list) {
  const scenario = SCENARIO[id];
  const { server, network } = await raceServers(scenario.server);
  const rows = [];
  const raw = {};
  const requests = scenario.attempts * requestsPer[id];
  try {
    for (const candidate of list) {
      const { failed, worst, stats, codes } = await measure(id, candidate, server, network);
      rows.push([
        id,
        candidate.label('http'),
        `${failed} / ${requests}`,
        count(worst),
        `${stats.requests - stats.usedConnections} / ${requests}`,
        count(stats.connections),
        Object.entries(codes).map(([name, n]) => `${name} ×${n}`).join(', ') || '-',
        candidate.id === 'steady-agent' ? await withRetry(id, server, network, raw) : '-',
      ]);
      raw[`${id}/${candidate.id}`] = { failed, worst, server: stats, codes };
      console.log(`${id}, ${candidate.label('http')}: ${failed} of ${requests} requests failed, `
        + `${stats.requests - stats.usedConnections} on reused sockets, ${stats.connections} connections`);
    }
  } finally {
    await network.stop();
    await server.stop();
  }
  return { rows, raw };
}

/**
 * The scenario's attempts again, steady-agent through each client of
 * steady-agent/retry: the cell of the "lost with steady-agent/retry" column.
 */
async function withRetry(id, server, network, raw) {
  const requests = SCENARIO[id].attempts * requestsPer[id];
  const cells = [];
  for (const client of Object.keys(RETRY_CLIENTS)) {
    const candidate = retryCandidate(client);
    const { failed, stats, codes } = await measure(id, candidate, server, network);
    raw[`${id}/${candidate.id}`] = { failed, retried: candidate.retried, server: stats, codes };
    console.log(`${id}, ${candidate.label()}: ${failed} of ${requests} requests failed, ${candidate.retried} sent again`);
    cells.push(`${client} ${failed}`);
  }
  return `${cells.join(', ')} (of ${requests} each)`;
}

// ---- one fault: a deploy or one reset request --------------------------------------

/** One request through `agent`: 'N' (a new connection), 'R' (reused) or 'E' (failed). */
function faultGet(agent, port, path) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('E'), REQUEST_TIMEOUT_MS);
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => { clearTimeout(timer); resolve(req.reusedSocket ? 'R' : 'N'); });
      res.on('error', () => { clearTimeout(timer); resolve('E'); });
    });
    req.on('error', () => { clearTimeout(timer); resolve('E'); });
  });
}

/** One attempt: a fresh agent, a request every `rhythm` ms; its line of N/R/E. */
async function faultAttempt(candidate, port, fault, rhythm, startAfter) {
  await sleep(startAfter);
  const agent = candidate.create('http', {}, `http://127.0.0.1:${port}`);
  let line = '';
  try {
    const started = performance.now();
    for (let i = 0; i < FAULT_REQUESTS[fault][rhythm]; i++) {
      await sleep(Math.max(0, started + i * rhythm - performance.now()));
      line += await faultGet(agent, port, faultPath(fault, i));
    }
  } finally {
    agent.destroy();
  }
  return line;
}

/** A race server with `options`, behind the delay proxy. */
async function raceServers(options) {
  const server = await startServer('race-server', options);
  const network = await startServer('delay-proxy', { targetPort: server.port, delay: latency });
  return { server, network };
}

/**
 * The fault scenarios' server (Node's, announcing its 5 s, or a silent one)
 * behind the delay proxy, its restart run once. Fresh server processes and
 * a candidate's first requests run cold: the first candidate's requests
 * then stayed in flight longer, and more of them met the deploy than the
 * same candidate's ran second. So the servers are warmed here, and each
 * candidate before its row (warm()).
 */
async function faultServers(kind) {
  const servers = await raceServers(kind === 'node' ? { hint: FAULT_LIMIT_S, node: true } : { hint: 0, idle: FAULT_LIMIT_S * 1000 });
  await servers.server.call('restart');
  return servers;
}

// Requests each candidate sends before its row, WARM_WIDTH fresh clients at once.
const WARM_REQUESTS = 48;
const WARM_WIDTH = 8;

/** Runs `get` (one request of a fresh client: resolves when answered) WARM_REQUESTS times, WARM_WIDTH at once. */
async function warm(open) {
  await Promise.all(Array.from({ length: WARM_WIDTH }, async () => {
    const client = open();
    try {
      for (let i = 0; i < WARM_REQUESTS / WARM_WIDTH; i++) await client.get();
    } finally {
      await client.close();
    }
  }));
}

async function runFault(fault, kind, rhythm, list) {
  const { server, network } = await faultServers(kind);
  const rows = [];
  const raw = {};
  try {
    for (const candidate of list) {
      await warm(() => {
        const agent = candidate.create('http', {}, `http://127.0.0.1:${network.port}`);
        return { get: () => faultGet(agent, network.port, '/'), close: () => agent.destroy() };
      });
      await server.call('reset');
      const starts = Array.from({ length: faultAttempts }, (_, i) => (i * rhythm) / faultAttempts);
      const restart = restartsOf(fault, rhythm, server);
      const lines = await Promise.all(starts.map((at) => faultAttempt(candidate, network.port, fault, rhythm, at)));
      await restart;
      const failed = lines.reduce((n, line) => n + [...line].filter((c) => c === 'E').length, 0);
      const extra = lines.reduce((n, line) => n + Math.max(0, [...line].filter((c) => c === 'N').length - 1), 0);
      const requests = faultAttempts * FAULT_REQUESTS[fault][rhythm];
      const serverName = kind === 'node' ? `Node's server (timeout=${FAULT_LIMIT_S})` : `silent (${FAULT_LIMIT_S} s)`;
      rows.push([serverName, fault, `${rhythm} ms`, candidate.label('http'), `${failed} / ${requests}`, count(extra), lines[0]]);
      raw[`${fault}/${kind}/${rhythm}/${candidate.id}`] = { failed, requests, extraConnections: extra, lines };
      console.log(`${fault}, ${serverName}, every ${rhythm} ms, ${candidate.label('http')}: ${failed} failed, ${extra} new connections beyond each attempt's first (${lines.join(' ')})`);
    }
  } finally {
    await network.stop();
    await server.stop();
  }
  return { rows, raw };
}

async function runFaults(faults) {
  const list = candidates({ include: ['steady-agent', 'node-keepalive', 'agentkeepalive'] });
  const rows = [];
  const raw = {};
  for (const fault of faults) {
    for (const kind of ['node', 'hintless']) {
      for (const rhythm of FAULT_RHYTHMS) {
        const result = await runFault(fault, kind, rhythm, list);
        rows.push(...result.rows);
        Object.assign(raw, result.raw);
      }
    }
  }
  return {
    table: {
      title: `Faults: a deploy, one reset request, a flaky backend, two deploys (${faultAttempts} attempts, ${latency} ms latency each way)`,
      columns: ['server', 'fault', 'a request every', 'agent', 'failed requests', 'new connections beyond the first', 'first attempt (N new, R reused, E failed)'],
      rows,
    },
    raw,
  };
}

// ---- fetch and undici: the same servers through each dispatcher ----------------------

/** The steady-agent options of the agent rows (the margin), for steady-agent/fetch and createDispatcher. */
function steadyOptions() {
  return margin !== undefined ? { serverTimeoutMargin: margin } : {};
}

/** A dispatcher candidate as clientFor's clients: get(cb), close(); each request's time goes to candidate.ms. */
function dispatcherClient(candidate, port, path = '/') {
  const client = candidate.dispatcher.create(`http://127.0.0.1:${port}`, steadyOptions());
  return {
    get(cb) {
      client.get(path).then(({ error, ms }) => {
        candidate.ms.push(ms);
        cb(error, error ? undefined : 200);
      });
    },
    close: () => client.close(),
  };
}

/** `{ delayed, worst }`: requests more than DELAYED_MS slower than the fastest, and the most added. */
function addedLatency(times) {
  if (times.length === 0) return { delayed: 0, worst: 0 };
  const fastest = Math.min(...times);
  return { delayed: times.filter((ms) => ms - fastest > DELAYED_MS).length, worst: Math.round(Math.max(...times) - fastest) };
}

function dispatcherList() {
  return dispatcherCandidates().filter((c) => c.available).map((dispatcher) => ({
    id: dispatcher.id, dispatcher, ms: [], label: () => dispatcher.label,
  }));
}

async function runDispatcherScenario(id, list) {
  const scenario = SCENARIO[id];
  const { server, network } = await raceServers(scenario.server);
  const rows = [];
  const raw = {};
  const requests = scenario.attempts * requestsPer[id];
  try {
    for (const candidate of list) {
      candidate.ms = [];
      const { failed, worst, stats, codes } = await measure(id, candidate, server, network);
      const added = addedLatency(candidate.ms);
      rows.push([
        id, candidate.label(), `${failed} / ${requests}`, count(worst), `${stats.requests - stats.usedConnections} / ${requests}`,
        count(stats.connections), `${added.delayed} / ${requests}`, `${added.worst} ms`,
        Object.entries(codes).map(([name, n]) => `${name} ×${n}`).join(', ') || '-',
      ]);
      raw[`${id}/${candidate.id}`] = { failed, worst, server: stats, codes, added };
      console.log(`${id}, ${candidate.label()}: ${failed} of ${requests} requests failed, ${added.delayed} delayed by over ${DELAYED_MS} ms (at most ${added.worst} ms), `
        + `${stats.requests - stats.usedConnections} on reused sockets, ${stats.connections} connections`);
    }
  } finally {
    await network.stop();
    await server.stop();
  }
  return { rows, raw };
}

/** One fault attempt through a dispatcher: a request every `rhythm` ms; its line of '.' (answered) and 'E' (failed). */
async function dispatcherFaultAttempt(candidate, port, fault, rhythm, startAfter) {
  await sleep(startAfter);
  const client = candidate.dispatcher.create(`http://127.0.0.1:${port}`, {});
  let line = '';
  try {
    const started = performance.now();
    for (let i = 0; i < FAULT_REQUESTS[fault][rhythm]; i++) {
      await sleep(Math.max(0, started + i * rhythm - performance.now()));
      const { error, ms } = await client.get(faultPath(fault, i));
      candidate.ms.push(ms);
      line += error ? 'E' : '.';
    }
  } finally {
    await client.close();
  }
  return line;
}

async function runDispatcherFault(fault, kind, rhythm, list) {
  const { server, network } = await faultServers(kind);
  const rows = [];
  const raw = {};
  try {
    for (const candidate of list) {
      await warm(() => {
        const client = candidate.dispatcher.create(`http://127.0.0.1:${network.port}`, {});
        return { get: () => client.get('/'), close: () => client.close() };
      });
      candidate.ms = [];
      await server.call('reset');
      const starts = Array.from({ length: faultAttempts }, (_, i) => (i * rhythm) / faultAttempts);
      const restart = restartsOf(fault, rhythm, server);
      const lines = await Promise.all(starts.map((at) => dispatcherFaultAttempt(candidate, network.port, fault, rhythm, at)));
      await restart;
      const stats = await server.call('reset');
      const failed = lines.reduce((n, line) => n + [...line].filter((c) => c === 'E').length, 0);
      const extra = Math.max(0, stats.connections - faultAttempts);
      const requests = faultAttempts * FAULT_REQUESTS[fault][rhythm];
      const added = addedLatency(candidate.ms);
      const serverName = kind === 'node' ? `Node's server (timeout=${FAULT_LIMIT_S})` : `silent (${FAULT_LIMIT_S} s)`;
      rows.push([serverName, fault, `${rhythm} ms`, candidate.label(), `${failed} / ${requests}`, count(extra), `${added.delayed} / ${requests}`, `${added.worst} ms`]);
      raw[`${fault}/${kind}/${rhythm}/${candidate.id}`] = { failed, requests, extraConnections: extra, added, lines };
      console.log(`${fault}, ${serverName}, every ${rhythm} ms, ${candidate.label()}: ${failed} failed, ${extra} new connections beyond each attempt's first, `
        + `${added.delayed} delayed by over ${DELAYED_MS} ms (at most ${added.worst} ms)`);
    }
  } finally {
    await network.stop();
    await server.stop();
  }
  return { rows, raw };
}

/** The dispatcher tables: the race servers, then the faults. */
async function runDispatchers(ids, faults) {
  const list = dispatcherList();
  const rows = [];
  const faultRows = [];
  const raw = {};
  for (const id of ids) {
    const result = await runDispatcherScenario(id, list);
    rows.push(...result.rows);
    Object.assign(raw, result.raw);
  }
  for (const fault of faults) {
    for (const kind of ['node', 'hintless']) {
      for (const rhythm of FAULT_RHYTHMS) {
        const result = await runDispatcherFault(fault, kind, rhythm, list);
        faultRows.push(...result.rows);
        Object.assign(raw, result.raw);
      }
    }
  }
  const tables = [];
  if (rows.length > 0) {
    tables.push({
      title: `Keep-alive race through fetch and undici: ${latency} ms latency each way`,
      columns: ['server', 'client', 'failed requests', 'most failed in one attempt', 'requests on reused sockets', 'connections',
        `delayed over ${DELAYED_MS} ms`, 'most added latency', 'errors'],
      rows,
    });
  }
  if (faultRows.length > 0) {
    tables.push({
      title: `Faults through fetch and undici (${faultAttempts} attempts, ${latency} ms latency each way)`,
      columns: ['server', 'fault', 'a request every', 'client', 'failed requests', 'new connections beyond the first',
        `delayed over ${DELAYED_MS} ms`, 'most added latency'],
      rows: faultRows,
    });
  }
  return { tables, raw };
}

async function main() {
  retryClients = await loadRetryClients();
  const list = candidates();
  const rows = [];
  const raw = {};
  for (const id of SCENARIOS) {
    if (FAULTS.includes(id)) continue;
    if (!SCENARIO[id]) throw new Error(`unknown race scenario ${id} (hinted, node, hintless, restart, ${FAULTS.join(', ')})`);
    if (!CLIENTS.includes('agents')) continue;
    const result = await runScenario(id, list);
    rows.push(...result.rows);
    Object.assign(raw, result.raw);
  }
  const faults = FAULTS.filter((id) => SCENARIOS.includes(id));
  const faultResult = faults.length > 0 && CLIENTS.includes('agents') ? await runFaults(faults) : null;
  if (faultResult !== null) Object.assign(raw, faultResult.raw);
  const dispatchers = CLIENTS.includes('dispatchers')
    ? await runDispatchers(SCENARIOS.filter((id) => !FAULTS.includes(id)), faults)
    : { tables: [], raw: {} };
  Object.assign(raw, dispatchers.raw);
  const table = {
    title: `Keep-alive race: ${latency} ms latency each way`,
    columns: [
      'server', 'agent', 'failed requests', 'most failed in one attempt', 'requests on reused sockets',
      'connections', 'errors', 'lost with steady-agent/retry',
    ],
    rows,
  };
  if (rows.length > 0) printTable(table);
  if (faultResult !== null) printTable(faultResult.table);
  for (const dispatcherTable of dispatchers.tables) printTable(dispatcherTable);
  saveScenario({
    id: 'race',
    title: 'Keep-alive race',
    summary: 'Servers that close a connection idle for exactly their limit: announced (Keep-Alive: timeout), '
      + 'unannounced, and one that closes every idle connection at once (a restart). Requests failed and '
      + 'requests on reused sockets, per agent.',
    params: {
      hint, idleLimit, attempts, hintlessAttempts, restartAttempts, spread, batchSize, latency,
      rounds: ROUNDS, scenarios: SCENARIOS, steadyServerTimeoutMargin: margin ?? 'default (1000)', faultAttempts,
    },
    tables: [table, ...(faultResult === null ? [] : [faultResult.table]), ...dispatchers.tables],
    notes: Object.entries(SCENARIO).filter(([id]) => SCENARIOS.includes(id))
      .map(([id, s]) => `${id}: ${s.label}; ${s.attempts} attempts, each a fresh agent.`)
      .concat(faults.map((id) => `${id}: ${FAULT_NOTES[id]}; `
        + `${faultAttempts} attempts per rhythm, each a fresh agent; "new connections beyond the first" sums each attempt's new connections less its first.`))
      .concat([
        `Requests pass through a TCP proxy that delays every chunk, FIN and reset by ${latency} ms each way, so the race window is one round trip (${2 * latency} ms) wide, as on a real network.`,
        '"Requests on reused sockets" is counted by the server: requests minus the connections that served one.',
        '"Lost with steady-agent/retry": the same attempts, steady-agent through each client of steady-agent/retry '
          + '(request() for http.request, axios with axios-retry, got, node-fetch 3), each with its defaults: '
          + 'one retry, at once, of replayable errors only. The other agents mark no error, so the helpers resend nothing for them.',
      ]),
    raw,
  });
}

runMain(main);
