'use strict';

// One restart or one reset never switches keep-alive off, on real sockets:
// Node's own server (it announces Keep-Alive: timeout=5 and honours it, or,
// with `server.timeout`, closes idle connections without a word) drops its
// connections once, or destroys the socket of one request, while a client
// sends a request at a steady rhythm. steady-agent and Node's own agent run
// side by side, each against its own server; each request is N (a new
// connection), R (reused) or E (failed).
//
// The last tests run a handful of the pool model's scenarios
// (test/support/pool_model.js, test/learning-properties.test.js) on
// loopback and check that the sockets agree with the model.
const assert = require('node:assert/strict');
const http = require('node:http');
const https = require('node:https');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer, fixtures } = require('./support/servers');
const { delay } = require('./support/request');
const { run } = require('./support/pool_model');

/**
 * A server whose idle limit is `limit` ms: announced (Node's Keep-Alive
 * hint, whole seconds) or silent (server.timeout, no header). `resetAt`: the
 * request (0-based) whose socket it destroys after reading it.
 */
async function faultyServer(protocol, { limit, hinted, resetAt = null }) {
  let count = 0;
  const handle = await createServer(protocol, (req, res) => {
    const index = count++;
    req.resume();
    if (index === resetAt) {
      req.socket.destroy();
      return;
    }
    res.end('ok');
  }, { keepAliveTimeout: hinted ? limit : 0 });
  if (!hinted) handle.server.timeout = limit;
  return handle;
}

function nodeAgent(protocol) {
  return protocol === 'https:'
    ? new https.Agent({ keepAlive: true, ca: fixtures.ca })
    : new http.Agent({ keepAlive: true });
}

function get(url, agent) {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve) => {
    const req = mod.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(req.reusedSocket ? 'R' : 'N'));
      res.on('error', () => resolve('E'));
    });
    req.on('error', () => resolve('E'));
  });
}

/**
 * Plays a scenario (the pool model's shape) with `agent` against its own
 * server; returns the line of N/R/E, and the connections and failures.
 */
async function play(protocol, s, agent) {
  const server = await faultyServer(protocol, { limit: s.limit, hinted: s.hinted, resetAt: s.resetRequest });
  const started = performance.now();
  let restart = null;
  if (s.restartAt !== null) restart = setTimeout(() => server.server.closeAllConnections(), s.restartAt);
  let line = '';
  try {
    for (let i = 0; i < s.gaps.length; i++) {
      if (i > 0) {
        const due = started + s.gaps.slice(1, i + 1).reduce((a, b) => a + b, 0);
        await delay(Math.max(0, due - performance.now()));
      }
      const tick = await Promise.all(Array.from({ length: s.width }, () => get(server.url('/'), agent)));
      line += tick.join('');
    }
    return { line, connections: server.accepted, failures: [...line].filter((c) => c === 'E').length };
  } finally {
    clearTimeout(restart);
    agent.destroy();
    await server.close();
  }
}

/** New connections after the first failure or, without one, after `from` requests. */
function newAfter(line, from) {
  const fault = line.indexOf('E');
  const start = fault === -1 ? from : fault + 1;
  return [...line.slice(start)].filter((c) => c === 'N').length;
}

const steadyRhythm = (gap, n, fault) => ({
  hinted: true, limit: 5000, latency: 0.1, gaps: Array(n).fill(gap), width: 1, restartAt: null, resetRequest: null, ...fault,
});

for (const protocol of PROTOCOLS) {
  describe(`one restart or one reset does not switch keep-alive off (${protocol})`, function () {
    this.timeout(60000);

    it('a deploy: the server drops its connections at 2.4 s, a request a second: one new connection, then reuse', async () => {
      const s = steadyRhythm(1000, 7, { restartAt: 2400 });
      const [steady, node] = await Promise.all([play(protocol, s, createAgent(protocol)), play(protocol, s, nodeAgent(protocol))]);
      assert.equal(steady.line, 'NRRNRRR', `steady-agent: ${steady.line}, Node's agent: ${node.line}`);
      assert.ok(steady.connections <= node.connections + 1, `${steady.connections} connections, Node's agent ${node.connections}`);
    });

    for (const gap of [50, 1000]) {
      it(`one request reset, a request every ${gap} ms: reused again after at most 2 new connections`, async () => {
        const s = steadyRhythm(gap, gap === 50 ? 30 : 8, { resetRequest: 4 });
        const [steady, node] = await Promise.all([play(protocol, s, createAgent(protocol)), play(protocol, s, nodeAgent(protocol))]);
        assert.equal(steady.failures, 1, steady.line);
        assert.ok(newAfter(steady.line, 5) <= 2, `steady-agent: ${steady.line}`);
        assert.ok(steady.line.endsWith('RR'), `steady-agent: ${steady.line}`);
        assert.ok(steady.connections <= node.connections + 1, `steady-agent ${steady.line}, Node's agent ${node.line}`);
        assert.ok(steady.failures <= node.failures);
      });
    }

    it('a silent server, one request reset on the first reuse, a request every 50 ms: reused again after at most 2 new connections', async () => {
      const s = { ...steadyRhythm(50, 30, { resetRequest: 1 }), hinted: false, limit: 4000 };
      const [steady, node] = await Promise.all([play(protocol, s, createAgent(protocol)), play(protocol, s, nodeAgent(protocol))]);
      assert.equal(steady.failures, 1, steady.line);
      assert.ok(newAfter(steady.line, 2) <= 2, `steady-agent: ${steady.line}`);
      assert.ok(steady.line.endsWith('RRRRR'), `steady-agent: ${steady.line}`);
      assert.ok(steady.connections <= node.connections + 1, `steady-agent ${steady.line}, Node's agent ${node.line}`);
    });
  });

  describe(`the pool model agrees with real sockets (${protocol})`, function () {
    this.timeout(60000);
    // Rhythms chosen away from every limit and cap, so that a millisecond of
    // timer lateness cannot change an outcome.
    const scenarios = {
      'hinted, a restart at 240 ms, a request every 100 ms': {
        hinted: true, limit: 5000, latency: 0.2, gaps: Array(12).fill(100), width: 1, restartAt: 240, resetRequest: null,
      },
      'silent (1000 ms), the first reuse reset, a request every 250 ms': {
        hinted: false, limit: 1000, latency: 0.2, gaps: Array(8).fill(250), width: 1, restartAt: null, resetRequest: 1,
      },
      'silent (600 ms), a restart before any reuse, a request every 250 ms': {
        hinted: false, limit: 600, latency: 0.2, gaps: Array(8).fill(250), width: 1, restartAt: 150, resetRequest: null,
      },
      'hinted, two at a time every 100 ms, a restart at 250 ms': {
        hinted: true, limit: 5000, latency: 0.2, gaps: Array(10).fill(100), width: 2, restartAt: 250, resetRequest: null,
      },
    };
    for (const [name, s] of Object.entries(scenarios)) {
      it(name, async () => {
        const model = { steady: run(s, 'steady'), node: run(s, 'node') };
        const [steady, node] = await Promise.all([play(protocol, s, createAgent(protocol)), play(protocol, s, nodeAgent(protocol))]);
        const seen = { steady: [steady.connections, steady.failures], node: [node.connections, node.failures] };
        const predicted = { steady: [model.steady.connections, model.steady.failures], node: [model.node.connections, model.node.failures] };
        assert.deepEqual(seen, predicted, `steady-agent ${steady.line}, Node's agent ${node.line}; the model learned: ${model.steady.learned.join('; ')}`);
      });
    }
  });
}
