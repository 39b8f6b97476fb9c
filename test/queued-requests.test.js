'use strict';

// Requests that waited behind maxSockets. When another request finishes, core
// hands its socket straight to the first queued request, bypassing
// reuseSocket. That request must run with the active timeout, not the
// free-socket timeout (agentkeepalive #106: slow responses on queued requests
// died with ERR_SOCKET_TIMEOUT after freeSocketTimeout), and must see
// req.reusedSocket === true.
const assert = require('node:assert/strict');
const { constants } = require('..');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor } = require('./support/request');

for (const protocol of PROTOCOLS) {
  describe(`requests queued behind maxSockets (${protocol})`, () => {
    let server;
    let agent;
    // Per test: how long the server waits before answering each path.
    let delays;
    let answered;
    const timers = new Set();

    before(async () => {
      server = await createServer(protocol, (req, res) => {
        req.resume();
        const wait = delays[req.url] ?? 0;
        const answer = () => {
          answered.push(req.url);
          res.end(`ok ${req.url}`);
        };
        if (wait === 0) {
          answer();
          return;
        }
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, wait);
        timers.add(timer);
      });
    });

    beforeEach(() => {
      delays = {};
      answered = [];
    });

    afterEach(() => {
      if (agent) agent.destroy();
      agent = null;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    });

    after(() => server.close());

    /** Starts two requests at once; the second waits for the first one's socket. */
    function twoAtOnce(second = '/second') {
      const a = request(server.url('/first'), { agent });
      const b = request(server.url(second), { agent });
      return { a, b };
    }

    it('requests aborted while queued are not counted and spend no slot of the server\'s Keep-Alive max', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      delays['/first'] = 100;
      const first = request(server.url('/first'), { agent });
      const aborted = [];
      for (let i = 0; i < 5; i++) {
        const controller = new AbortController();
        const settled = request(server.url(`/aborted-${i}`), { agent, signal: i % 2 === 0 ? controller.signal : undefined })
          .then(() => 'answered', (err) => err.code ?? err.name);
        aborted.push(settled);
        if (i % 2 === 0) controller.abort();
        else settled.req = null;
      }
      // The odd ones are destroyed by hand, still queued.
      for (const req of agent.requests[Object.keys(agent.requests)[0]]) {
        if (!req.destroyed) req.destroy();
      }
      const last = request(server.url('/last'), { agent });
      assert.equal(total(agent.getCurrentStatus().requests), 6, 'five aborted and one live request queued');
      const [a, b] = await Promise.all([first, last]);
      const outcomes = await Promise.all(aborted);
      assert.ok(outcomes.every((o) => o !== 'answered'), outcomes.join(', '));
      assert.deepEqual(answered, ['/first', '/last'], 'the server saw no aborted request');
      assert.equal(b.socket, a.socket, 'the live request got the socket');
      assert.equal(b.reusedSocket, true);
      await waitFor(() => agent.requestCount === 2 && total(agent.getCurrentStatus().freeSockets) === 1);
      assert.equal(agent.requestCount, 2, 'only finished requests count');
      assert.equal(a.socket[constants.SOCKET_REQUEST_COUNT], 2);
      assert.equal(a.socket[constants.SOCKET_REQUEST_FINISHED_COUNT], 2);
    });

    it('the queued request gets the finished request\'s socket, with reusedSocket === true', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      const { a, b } = twoAtOnce();
      assert.equal(total(agent.getCurrentStatus().requests), 1, 'the second request is queued');
      const [first, second] = await Promise.all([a, b]);
      assert.equal(first.body, 'ok /first');
      assert.equal(second.body, 'ok /second');
      assert.equal(first.reusedSocket, false);
      assert.ok(second.socket === first.socket, 'the same socket');
      assert.equal(second.reusedSocket, true);
      assert.equal(second.socket[constants.SOCKET_REQUEST_COUNT], 2);
      await waitFor(() => agent.requestCount === 2);
      assert.equal(second.socket[constants.SOCKET_REQUEST_FINISHED_COUNT], 2);
      assert.equal(agent.getCurrentStatus().createSocketCount, 1);
    });

    it('#106: a slow answer to the queued request outlives freeSocketTimeout (active timeout applies)', async () => {
      agent = createAgent(protocol, { maxSockets: 1, freeSocketTimeout: 300, timeout: 3000 });
      delays['/second'] = 1000; // only the queued request is slow
      const { a, b } = twoAtOnce();
      const [first, second] = await Promise.all([a, b]);
      assert.equal(first.body, 'ok /first');
      assert.equal(second.body, 'ok /second');
      assert.ok(second.socket === first.socket, 'the same socket');
      assert.equal(second.reusedSocket, true);
      assert.deepEqual(answered, ['/first', '/second']);
      const status = agent.getCurrentStatus();
      assert.equal(status.timeoutSocketCount, 0);
      assert.equal(status.errorSocketCount, 0);
      assert.equal(status.createSocketCount, 1);
      // Back in the pool, the free timeout applies again.
      await waitFor(() => second.socket.destroyed);
      assert.equal(agent.getCurrentStatus().timeoutSocketCount, 1);
    });

    it('the queued request\'s socket carries the active timeout while it is served', async () => {
      agent = createAgent(protocol, { maxSockets: 1, freeSocketTimeout: 300, timeout: 3000 });
      delays['/second'] = 300;
      const { a, b } = twoAtOnce();
      const first = await a;
      // The first request is done: its socket now serves the queued one.
      const status = agent.getCurrentStatus();
      assert.deepEqual(status.requests, {}, 'nothing left in the queue');
      assert.equal(total(status.sockets), 1);
      assert.equal(total(status.freeSockets), 0);
      assert.equal(first.socket.timeout, 3000);
      const second = await b;
      assert.ok(second.socket === first.socket, 'the same socket');
      assert.equal(second.body, 'ok /second');
    });

    it('an unanswered queued request fails with the active timeout, not the free one', async () => {
      agent = createAgent(protocol, { maxSockets: 1, freeSocketTimeout: 4000, timeout: 400 });
      delays['/second'] = 60000; // never within the test
      const { a, b } = twoAtOnce();
      await a;
      const err = await b.then(() => null, (e) => e);
      assert.ok(err, 'the queued request failed');
      assert.equal(err.code, 'ERR_SOCKET_TIMEOUT');
      assert.equal(err.timeout, 400);
      assert.equal(agent.getCurrentStatus().timeoutSocketCount, 1);
    });

    it('a chain of queued requests reuses one socket, each with reusedSocket === true', async () => {
      agent = createAgent(protocol, { maxSockets: 1, freeSocketTimeout: 300, timeout: 3000 });
      for (let i = 1; i < 5; i++) delays[`/${i}`] = 100 * i;
      const results = await Promise.all(Array.from({ length: 5 }, (_, i) => request(server.url(`/${i}`), { agent })));
      assert.deepEqual(results.map((res) => res.body), [0, 1, 2, 3, 4].map((i) => `ok /${i}`));
      assert.deepEqual(results.map((res) => res.reusedSocket), [false, true, true, true, true]);
      assert.ok(results.every((res) => res.socket === results[0].socket));
      assert.equal(results[0].socket[constants.SOCKET_REQUEST_COUNT], 5);
      const status = agent.getCurrentStatus();
      assert.equal(status.createSocketCount, 1);
      assert.equal(status.timeoutSocketCount, 0);
    });

    it('a queued request that gets a new socket (the busy one closed) has reusedSocket === false', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      const a = request(server.url('/first'), { agent, headers: { connection: 'close' } });
      const b = request(server.url('/second'), { agent });
      const [first, second] = await Promise.all([a, b]);
      assert.equal(second.body, 'ok /second');
      assert.ok(second.socket !== first.socket, 'a different socket');
      assert.equal(second.reusedSocket, false);
      assert.equal(second.socket[constants.SOCKET_REQUEST_COUNT], 1);
      assert.equal(agent.getCurrentStatus().createSocketCount, 2);
    });

    it('a queued request on a new socket also gets the active timeout', async () => {
      agent = createAgent(protocol, { maxSockets: 1, freeSocketTimeout: 300, timeout: 3000 });
      delays['/second'] = 1000;
      const a = request(server.url('/first'), { agent, headers: { connection: 'close' } });
      const b = request(server.url('/second'), { agent });
      const [first, second] = await Promise.all([a, b]);
      assert.equal(second.body, 'ok /second');
      assert.ok(second.socket !== first.socket, 'a different socket');
      assert.equal(agent.getCurrentStatus().timeoutSocketCount, 0);
    });
  });
}
