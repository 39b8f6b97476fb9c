'use strict';

// The client-cost measurement shared by client-cost.js (http) and
// https-cost.js: this process sends N requests, C in flight, through each
// agent to a backend in another process, and reads process.cpuUsage() around
// the run. The machine is noisy, so every round runs every agent once, in an
// order rotated by one each round, and the result per agent is the median of
// its per-round ratios to Node's keep-alive agent measured in the same round.
const { candidates, createClient, moduleFor } = require('./agents');
const { startServer } = require('./processes');
const { runLoad } = require('./load');
const { median, percentile, fixed, count, envNumber } = require('./stats');
const { printTable } = require('./table');
const { saveScenario } = require('./results');
const { ca } = require('./tls');

const BASELINE = 'node-keepalive';

function controlCandidate() {
  return {
    id: 'node-keepalive-control',
    kind: 'agent',
    label: (protocol) => `${protocol}.Agent keepAlive:true (A/A control)`,
    create: (protocol, options) => new (moduleFor(protocol).Agent)({ ...options, keepAlive: true }),
  };
}

/**
 * Options: { id, title, summary, protocol, extra: [candidate],
 *   defaults: { requests, noKeepAliveRequests, rounds, warmup, concurrency } }
 */
async function runCostScenario({ id, title, summary, protocol, extra = [], defaults }) {
  const requests = envNumber('BENCH_REQUESTS', defaults.requests);
  const noKeepAliveRequests = envNumber('BENCH_NOKEEPALIVE_REQUESTS', defaults.noKeepAliveRequests);
  const rounds = envNumber('BENCH_ROUNDS', defaults.rounds);
  const warmup = envNumber('BENCH_WARMUP_REQUESTS', defaults.warmup);
  const concurrency = envNumber('BENCH_CONCURRENCY', defaults.concurrency);
  const withControl = process.env.BENCH_CONTROL !== '0';

  const list = candidates({ extra: withControl ? [...extra, controlCandidate()] : extra });
  if (list.length === 0) throw new Error('BENCH_AGENTS selected no agent');
  const agentOptions = { maxSockets: concurrency };
  if (protocol === 'https') agentOptions.ca = ca;

  const backend = await startServer('backend', { protocol });
  console.log(`${title}: backend ${protocol}://127.0.0.1:${backend.port} (pid ${backend.child.pid})`);
  console.log(`${requests} requests per agent per round (${noKeepAliveRequests} without keep-alive), `
    + `${concurrency} in flight, ${rounds} rounds, ${warmup} warm-up requests per agent`);

  const requestsFor = (candidate) => (candidate.keepAlive === false ? noKeepAliveRequests : requests);

  async function measure(candidate, n) {
    const client = createClient(candidate, { protocol, port: backend.port, agentOptions });
    try {
      // Open the pool's sockets before the clock starts: the subject is the
      // per-request path, not the first connections.
      await runLoad(client.get, concurrency * 2, concurrency);
      await backend.call('reset');
      const cpuStart = process.cpuUsage();
      const wallStart = process.hrtime.bigint();
      const load = await runLoad(client.get, n, concurrency);
      const wallMs = Number(process.hrtime.bigint() - wallStart) / 1e6;
      const cpu = process.cpuUsage(cpuStart);
      const server = await backend.call('reset');
      return {
        cpuPerRequest: (cpu.user + cpu.system) / n,
        requestsPerSecond: n / (wallMs / 1000),
        errors: load.errors,
        firstError: load.firstError ? String(load.firstError.code || load.firstError.message) : null,
        connections: server.connections,
        resumed: server.resumed,
      };
    } finally {
      await client.close();
    }
  }

  for (const candidate of list) {
    console.log(`warm-up: ${candidate.label(protocol)} (${warmup} requests)`);
    const client = createClient(candidate, { protocol, port: backend.port, agentOptions });
    try {
      await runLoad(client.get, warmup, concurrency);
    } finally {
      await client.close();
    }
  }

  const samples = new Map(list.map((c) => [c.id, []]));
  for (let round = 0; round < rounds; round++) {
    const order = list.map((_, i) => list[(i + round) % list.length]);
    const line = [];
    for (const candidate of order) {
      const sample = await measure(candidate, requestsFor(candidate));
      sample.round = round;
      samples.get(candidate.id).push(sample);
      line.push(`${candidate.id} ${fixed(sample.cpuPerRequest, 1)}`
        + `${sample.errors ? ` (${sample.errors} errors: ${sample.firstError})` : ''}`);
    }
    console.log(`round ${round + 1}/${rounds} µs/req: ${line.join(', ')}`);
  }
  await backend.stop();

  const baseline = samples.get(BASELINE);
  const rows = list.map((candidate) => {
    const mine = samples.get(candidate.id);
    const ratios = baseline
      ? mine.map((s) => s.cpuPerRequest / baseline.find((b) => b.round === s.round).cpuPerRequest)
      : [];
    const n = requestsFor(candidate);
    const row = [
      candidate.label(protocol),
      fixed(median(mine.map((s) => s.cpuPerRequest)), 1),
      ratios.length ? fixed(median(ratios), 2) : 'n/a',
      ratios.length ? `${fixed(percentile(ratios, 25), 2)}–${fixed(percentile(ratios, 75), 2)}` : 'n/a',
      count(median(mine.map((s) => s.requestsPerSecond))),
      count(mine.reduce((a, s) => a + s.errors, 0)),
      fixed(median(mine.map((s) => (s.connections / n) * 1000)), 1),
    ];
    if (protocol === 'https') {
      const resumedShare = mine.map((s) => (s.connections ? (s.resumed / s.connections) * 100 : NaN)).filter((v) => !Number.isNaN(v));
      row.push(resumedShare.length ? `${fixed(median(resumedShare), 0)}%` : 'n/a');
    }
    return row;
  });
  const columns = [
    'agent',
    'CPU µs/req (median)',
    'ratio vs Node keep-alive (median)',
    'ratio p25–p75',
    'req/s (median)',
    'errors (all rounds)',
    'new connections per 1k req',
  ];
  if (protocol === 'https') columns.push('TLS sessions resumed');
  const table = { title: `${title}: CPU per request, ${rounds} rounds`, columns, rows };
  printTable(table);

  const notes = [
    `CPU is process.cpuUsage() (user + system) of the client process only, divided by the requests in the measured run; the ${concurrency * 2} requests that open the pool's sockets are not measured.`,
    `Ratio: per round, the agent's CPU µs/req divided by ${protocol}.Agent keepAlive:true's in the same round; the table shows the median and the interquartile range over the rounds. Single rounds are noisy on this machine; many short rounds make the median steady.`,
    `Agents without keep-alive send ${noKeepAliveRequests} requests per round instead of ${requests}; per-request figures are comparable.`,
  ];
  if (withControl) {
    notes.push('The A/A control is a second, identical Node keep-alive agent: its ratio range shows how much of a difference is noise.');
  }
  saveScenario({
    id,
    title,
    summary,
    params: { requests, noKeepAliveRequests, rounds, warmup, concurrency, maxSockets: concurrency },
    tables: [table],
    notes,
    raw: Object.fromEntries([...samples].map(([key, value]) => [key, value])),
  });
}

module.exports = { runCostScenario };
