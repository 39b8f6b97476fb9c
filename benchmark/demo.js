'use strict';

// `npm run demo`: about ten seconds that show what the agent is for. Three
// local servers, each in its own process, and three agents side by side
// (Node's own keep-alive agent, agentkeepalive, steady-agent):
//
// - announced: closes a connection idle for exactly the `Keep-Alive:
//   timeout=N` it announces. Each attempt (a fresh agent) sends a request,
//   waits N seconds give or take a few ms, sends again, then once more a
//   quarter of N later.
// - silent: announces nothing and closes connections idle for a fixed time;
//   each attempt sends a request and then a few more, each after about that
//   time, then one after half of it.
// - https: answers a POST whose body is written in two pieces (write(), then
//   end() on the next tick). A socket without TCP_NODELAY holds the second
//   piece until the server ACKs the first, which Linux delays by ~40 ms.
//
// The race servers are reached through the delay proxy (5 ms each way), so the
// race window is one round trip wide, as on a real network: on bare loopback
// the server's FIN arrives within microseconds and the race all but vanishes.
// The full measurements behind these few numbers: benchmark/race.js and
// benchmark/nagle.js.
//
//   npm run demo
//   node benchmark/demo.js
const http = require('node:http');
const https = require('node:https');
const { findCandidate } = require('./lib/agents');
const { startServer, runMain } = require('./lib/processes');
const { median, fixed, sleep } = require('./lib/stats');
const { printTable } = require('./lib/table');
const { ca } = require('./lib/tls');

const HINT_S = 2;
const SILENT_IDLE_MS = 1000;
const SILENT_ROUNDS = 3;
const LATENCY_MS = 5;
const SPREAD_MS = 10;
const STAGGER_MS = 300;
const ANNOUNCED_ATTEMPTS = 24;
const SILENT_ATTEMPTS = 12;
const POSTS = 10;
const POST_WARMUP = 2;
const REQUEST_TIMEOUT_MS = 10000;
const PIECE = Buffer.alloc(64, 'a');
const POST_HEADERS = { 'content-type': 'application/octet-stream', 'content-length': String(PIECE.length * 2) };

const AGENTS = [
  { candidate: findCandidate('node-keepalive'), label: 'Node http(s).Agent({ keepAlive: true })' },
  { candidate: findCandidate('agentkeepalive'), label: null },
  { candidate: findCandidate('steady-agent'), label: null },
];

/** Offsets in whole milliseconds, evenly over ±SPREAD_MS. */
function offsets(n) {
  return Array.from({ length: n }, (_, i) => Math.round(-SPREAD_MS + (2 * SPREAD_MS * i) / (n - 1)));
}

/** What one agent went through: requests, failures, sockets. */
function newTally() {
  return { sent: 0, failed: 0, reused: 0, sockets: new WeakSet(), opened: 0 };
}

/**
 * One request through `agent`; resolves (never rejects) once it has
 * succeeded or failed, having counted it in `tally`. `write` sends the body.
 */
function request(mod, agent, port, tally, { method = 'GET', headers, write } = {}) {
  tally.sent++;
  return new Promise((resolve) => {
    let done = false;
    const finish = (err) => {
      if (done) return;
      done = true;
      if (err) tally.failed++;
      resolve(err || null);
    };
    const req = mod.request({ host: '127.0.0.1', port, method, path: '/', headers, agent, ca }, (res) => {
      res.on('end', () => finish(res.statusCode === 200 ? null : new Error(`status ${res.statusCode}`)));
      res.on('error', finish);
      res.resume();
    });
    req.on('socket', (socket) => {
      if (req.reusedSocket) tally.reused++;
      if (!tally.sockets.has(socket)) {
        tally.sockets.add(socket);
        tally.opened++;
      }
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error('timed out')));
    req.on('error', finish);
    if (write) write(req);
    else req.end();
  });
}

/** Each attempt a fresh agent: a first request, then one after each wait. */
async function attempt(candidate, port, waits, tally) {
  const agent = candidate.create('http', {});
  try {
    await request(http, agent, port, tally);
    for (const wait of waits) {
      await sleep(wait);
      await request(http, agent, port, tally);
    }
  } finally {
    agent.destroy();
  }
}

/**
 * Each agent's attempts in parallel, the agents STAGGER_MS apart: started
 * together, the agents' requests would meet the servers' closes in the same
 * few milliseconds, and the load on 2 cores would make their timers late
 * enough to miss the race window.
 */
function race(port, attempts, waitsFor) {
  return Promise.all(AGENTS.map(async ({ candidate }, k) => {
    await sleep(k * STAGGER_MS);
    const tally = newTally();
    await Promise.all(offsets(attempts).map((offset) => attempt(candidate, port, waitsFor(offset), tally)));
    return tally;
  }));
}

function writeInTwoPieces(req) {
  req.write(PIECE);
  process.nextTick(() => req.end(PIECE));
}

/** Median ms of sequential two-piece POSTs over one kept-alive https connection. */
async function twoPiecePosts(candidate, port) {
  const agent = candidate.create('https', { ca, maxSockets: 1 });
  const tally = newTally();
  const times = [];
  try {
    for (let i = 0; i < POST_WARMUP + POSTS; i++) {
      const start = process.hrtime.bigint();
      const err = await request(https, agent, port, tally, { method: 'POST', headers: POST_HEADERS, write: writeInTwoPieces });
      if (err) throw err;
      if (i >= POST_WARMUP) times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  } finally {
    agent.destroy();
  }
  return median(times);
}

async function main() {
  console.log(`steady-agent demo, Node ${process.version}: three local servers, `
    + `${LATENCY_MS} ms latency each way to the two that close idle connections.`);
  const [announced, silent, backend] = await Promise.all([
    startServer('race-server', { hint: HINT_S }),
    startServer('race-server', { hint: 0, idle: SILENT_IDLE_MS }),
    startServer('backend', { protocol: 'https' }),
  ]);
  const [announcedNet, silentNet] = await Promise.all([
    startServer('delay-proxy', { targetPort: announced.port, delay: LATENCY_MS }),
    startServer('delay-proxy', { targetPort: silent.port, delay: LATENCY_MS }),
  ]);

  console.log(`1/3 server announcing Keep-Alive: timeout=${HINT_S}, closing at exactly ${HINT_S} s: `
    + `${ANNOUNCED_ATTEMPTS} fresh agents of each kind send a request, another ${HINT_S} s ±${SPREAD_MS} ms later, `
    + `and a third ${HINT_S * 250} ms after that`);
  const hinted = await race(announcedNet.port, ANNOUNCED_ATTEMPTS, (offset) => [HINT_S * 1000 + offset, HINT_S * 250]);

  console.log(`2/3 server announcing nothing, closing at ${SILENT_IDLE_MS} ms: ${SILENT_ATTEMPTS} fresh agents of each kind `
    + `send a request, ${SILENT_ROUNDS} more ${SILENT_IDLE_MS} ms ±${SPREAD_MS} ms apart, and one ${SILENT_IDLE_MS / 2} ms later`);
  const hintless = await race(silentNet.port, SILENT_ATTEMPTS, (offset) => [
    ...Array.from({ length: SILENT_ROUNDS }, () => SILENT_IDLE_MS + offset), SILENT_IDLE_MS / 2]);

  console.log(`3/3 https server: ${POSTS} POSTs in a row, each body written in two pieces (write(), then end() on the next tick)`);
  const posts = [];
  for (const { candidate } of AGENTS) posts.push(await twoPiecePosts(candidate, backend.port));

  printTable({
    title: `Requests lost to the keep-alive race, sockets, and two-piece POST latency (Node ${process.version})`,
    columns: [
      'agent', 'lost (announced limit)', 'lost (silent limit)', 'sockets opened', 'requests on reused sockets',
      'two-piece POST https ms',
    ],
    rows: AGENTS.map(({ candidate, label }, i) => [
      label || candidate.label('http'),
      `${hinted[i].failed} / ${hinted[i].sent}`,
      `${hintless[i].failed} / ${hintless[i].sent}`,
      String(hinted[i].opened + hintless[i].opened),
      String(hinted[i].reused + hintless[i].reused),
      fixed(posts[i], 1),
    ]),
  });
  console.log([
    'lost: requests that failed because the agent reused a connection the server was closing at that moment.',
    'sockets opened / reused: over both race servers (no keep-alive at all would open one socket per request).',
    'two-piece POST: median; ~40 ms is Nagle\'s algorithm waiting for the server\'s delayed ACK '
      + '(Node\'s https agent sets TCP_NODELAY only from Node 24.15).',
    'More: benchmark/README.md (node benchmark/race.js, node benchmark/nagle.js).',
  ].join('\n'));
}

runMain(main);
