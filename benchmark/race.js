'use strict';

// Scenario 5, keep-alive race: the server (its own process) announces
// `Keep-Alive: timeout=<hint>` and destroys a connection idle for exactly that
// long. Each attempt sends a request, waits hint seconds plus an offset spread
// evenly over ±spread ms, and sends again. An agent that reuses the socket at
// about the moment the server closes it fails the second request; an agent
// that honours the hint with a margin opens a new connection instead.
//
// On loopback the server's FIN reaches the client within microseconds, so the
// race window would be almost nil; real networks make it one round trip wide.
// The requests therefore go through the delay proxy (servers/delay-proxy.js),
// `latency` ms each way: a request sent less than one round trip before the
// server's close meets a closed socket. Every attempt has its own agent;
// attempts run in parallel batches.
//
//   node benchmark/race.js
//   BENCH_RACE_ATTEMPTS=144 BENCH_RACE_HINT=2 BENCH_RACE_SPREAD=10 BENCH_RACE_LATENCY=5 node benchmark/race.js
const { candidates, createClient } = require('./lib/agents');
const { startServer, runMain } = require('./lib/processes');
const { count, envNumber, sleep } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { saveScenario } = require('./lib/results');

const hint = envNumber('BENCH_RACE_HINT', 2);
const attempts = envNumber('BENCH_RACE_ATTEMPTS', 72);
const spread = envNumber('BENCH_RACE_SPREAD', 10);
const batchSize = Math.max(1, envNumber('BENCH_RACE_BATCH', 24));
const latency = envNumber('BENCH_RACE_LATENCY', 5);
// steady-agent closes an idle socket serverTimeoutMargin (default 1000 ms)
// before the announced limit, so with a 1 s hint it would keep nothing; a
// smaller margin is given then (or whenever BENCH_RACE_MARGIN is set).
const margin = process.env.BENCH_RACE_MARGIN
  ? envNumber('BENCH_RACE_MARGIN', 1000)
  : (hint <= 1 ? 500 : undefined);
const REQUEST_TIMEOUT_MS = 10000;

/** Offsets in whole milliseconds (timers have 1 ms resolution), evenly over ±spread. */
function offsets() {
  return Array.from({ length: attempts }, (_, i) => (
    attempts === 1 ? 0 : Math.round(-spread + (2 * spread * i) / (attempts - 1))));
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

async function attempt(candidate, port, offset) {
  const agentOptions = candidate.id === 'steady-agent' && margin !== undefined ? { serverTimeoutMargin: margin } : {};
  const client = createClient(candidate, { protocol: 'http', port, agentOptions });
  try {
    const first = await getOnce(client);
    if (first) return { offset, firstError: first };
    await sleep(hint * 1000 + offset);
    return { offset, secondError: await getOnce(client) };
  } finally {
    await client.close();
  }
}

function errorName(err) {
  return err.code || err.message;
}

async function main() {
  const server = await startServer('race-server', { hint });
  const network = await startServer('delay-proxy', { targetPort: server.port, delay: latency });
  try {
    const list = candidates();
    const all = offsets();
    const batches = Math.ceil(attempts / batchSize);
    const rows = [];
    const raw = {};
    for (const candidate of list) {
      await server.call('reset');
      const outcomes = [];
      // Batch k takes every batches-th attempt, so each batch spans the whole spread.
      for (let b = 0; b < batches; b++) {
        const batch = all.filter((_, i) => i % batches === b);
        outcomes.push(...await Promise.all(batch.map((offset) => attempt(candidate, network.port, offset))));
        console.log(`${candidate.label('http')}: batch ${b + 1}/${batches} done`);
      }
      const stats = await server.call('reset');
      const failed = outcomes.filter((o) => o.secondError);
      const firstFailed = outcomes.filter((o) => o.firstError);
      const codes = {};
      for (const o of [...failed, ...firstFailed]) {
        const name = errorName(o.secondError || o.firstError);
        codes[name] = (codes[name] || 0) + 1;
      }
      const early = failed.filter((o) => o.offset < 0).length;
      rows.push([
        candidate.label('http'),
        `${failed.length} / ${attempts}`,
        count(early),
        count(failed.length - early),
        count(stats.connections - attempts),
        count(firstFailed.length),
        Object.entries(codes).map(([name, n]) => `${name} ×${n}`).join(', ') || '-',
      ]);
      raw[candidate.id] = { outcomes: outcomes.map((o) => ({ offset: o.offset, error: o.secondError ? errorName(o.secondError) : null })), server: stats };
      console.log(`${candidate.label('http')}: ${failed.length} of ${attempts} second requests failed`);
    }
    const table = {
      title: `Keep-alive race: Keep-Alive: timeout=${hint}, second request after ${hint * 1000} ms ± ${spread} ms, `
        + `${latency} ms latency each way`,
      columns: [
        'agent', 'failed 2nd requests', 'failed before the limit', 'failed at/after the limit',
        'new connections for the 2nd request', 'failed 1st requests', 'errors',
      ],
      rows,
    };
    printTable(table);
    saveScenario({
      id: 'race',
      title: 'Keep-alive race',
      summary: `A server that closes a connection idle for exactly its hinted limit (Keep-Alive: timeout=${hint}); `
        + 'each attempt sends a request, waits about that long, and sends again on the same agent.',
      params: { hint, attempts, spread, batchSize, latency, steadyServerTimeoutMargin: margin ?? 'default (1000)' },
      tables: [table],
      notes: [
        `Each attempt uses a fresh agent with default options${margin !== undefined ? ` (steady-agent: serverTimeoutMargin ${margin} ms)` : ''}; the wait is measured from the end of the first response.`,
        `Requests pass through a TCP proxy that delays every chunk, FIN and reset by ${latency} ms each way, so the race window is one round trip (${2 * latency} ms) wide, as on a real network: a second request sent within one round trip before the server's close fails.`,
        '"New connections for the 2nd request" counts the connections the server accepted beyond one per attempt: an agent that dropped the idle socket before the limit shows one per attempt.',
      ],
      raw,
    });
  } finally {
    await network.stop();
    await server.stop();
  }
}

runMain(main);
