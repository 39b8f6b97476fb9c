'use strict';

// Deadlines and idle times run on a monotonic clock (lib/clock.js), so a step
// of the wall clock changes nothing, and they are checked when a pooled
// socket is handed out, so a stalled event loop never hands out a socket
// whose deadline passed while no timer could run.
//
// The wall clock is stepped by replacing Date.now in this process: nothing in
// the agent may read it for a deadline. That stub is this file's one fake.
const assert = require('node:assert/strict');
const { performance } = require('node:perf_hooks');
const clock = require('../lib/timers/clock');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createScriptedServer, rawResponse } = require('./support/raw');
const { request, waitFor } = require('./support/request');

const HOUR = 3600 * 1000;
const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);

describe('clock', () => {
  it('is monotonic, in milliseconds, and never 0', () => {
    const a = clock.now();
    const b = clock.now();
    assert.ok(a >= 1 && b >= a);
  });

  it('timerDelay clamps to what setTimeout accepts', () => {
    assert.equal(clock.timerDelay(2 ** 40), 2 ** 31 - 1);
    assert.equal(clock.timerDelay(Infinity), 2 ** 31 - 1);
    assert.equal(clock.timerDelay(0), 1);
    assert.equal(clock.timerDelay(-5), 1);
    assert.equal(clock.timerDelay(NaN), 1);
    assert.equal(clock.timerDelay(250), 250);
    // Whole milliseconds, never sooner than asked.
    assert.equal(clock.timerDelay(250.2), 251);
    assert.equal(clock.timerDelay(1.5), 2);
  });
});

for (const protocol of PROTOCOLS) {
  describe(`wall-clock steps (${protocol})`, () => {
    const realNow = Date.now;
    let offset = 0;
    let server;
    let agent;

    beforeEach(() => {
      offset = 0;
      Date.now = () => realNow() + offset;
    });

    afterEach(async () => {
      Date.now = realNow;
      if (agent) agent.destroy();
      agent = null;
      if (server) await server.close();
      server = null;
    });

    for (const step of [-HOUR, HOUR]) {
      const name = step < 0 ? 'back' : 'forward';

      it(`a step ${name} of an hour: a free socket still closes at its deadline, not before`, async () => {
        server = await createScriptedServer(protocol);
        agent = createAgent(protocol, { freeSocketTimeout: 400 });
        const first = await request(server.url('/'), { agent });
        await waitFor(() => freeCount(agent) === 1);
        offset = step;
        const second = await request(server.url('/'), { agent });
        assert.equal(second.reusedSocket, true, 'not expired by the step');
        await waitFor(() => freeCount(agent) === 1);
        offset += step; // and again while it is free
        await waitFor(() => first.socket.destroyed && server.connections[0].closed);
        assert.equal(agent.timeoutSocketCount, 1, 'closed by its free timeout');
        assert.equal(server.closedBy('client'), 1);
      });

      it(`a step ${name} of an hour while the server closes an idle socket: the idle time learned is the real one`, async () => {
        server = await createScriptedServer(protocol, { idleTimeout: 400 });
        agent = createAgent(protocol);
        const first = await request(server.url('/'), { agent });
        await waitFor(() => freeCount(agent) === 1);
        offset = step;
        await waitFor(() => first.socket.destroyed);
        const [learned] = Object.values(agent.serverIdleTimeouts);
        assert.ok(learned >= 350 && learned < 3000, `learned ${learned} ms`);
        const a = await request(server.url('/'), { agent });
        const b = await request(server.url('/'), { agent });
        assert.equal(b.reusedSocket, true, 'keep-alive goes on');
        assert.ok(a.socket === b.socket);
      });

      it(`a step ${name} of an hour does not end or extend a socket's TTL`, async () => {
        server = await createScriptedServer(protocol);
        agent = createAgent(protocol, { socketActiveTTL: 600, freeSocketTimeout: 0 });
        const first = await request(server.url('/'), { agent });
        offset = step;
        const second = await request(server.url('/'), { agent });
        assert.equal(second.reusedSocket, true, 'the TTL has not run out');
        await waitFor(() => first.socket.destroyed && server.connections[0].closed);
        assert.equal(server.closedBy('client'), 1, 'and it still runs out');
      });
    }
  });

  describe(`an event-loop stall (${protocol})`, () => {
    let server;
    let agent;

    afterEach(async () => {
      if (agent) agent.destroy();
      agent = null;
      if (server) await server.close();
      server = null;
    });

    /** Blocks the event loop for `ms`: no timer, of the agent or the server, runs meanwhile. */
    function stall(ms) {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // spin
      }
    }

    const cases = [
      ['freeSocketTimeout', {}, { freeSocketTimeout: 300 }],
      ['the server\'s Keep-Alive hint', { 'Keep-Alive': 'timeout=1' }, { serverTimeoutMargin: 700 }],
    ];
    for (const [what, headers, options] of cases) {
      it(`after a 1 s stall, a socket past its deadline (${what}) is not handed out: the request gets a new socket`, async () => {
        // The server closes connections idle for 500 ms: once the stall ends
        // its timer fires, before the reused socket's request could arrive.
        server = await createScriptedServer(protocol, { idleTimeout: 500, respond: () => rawResponse('ok', headers) });
        agent = createAgent(protocol, options);
        const first = await request(server.url('/'), { agent });
        await waitFor(() => freeCount(agent) === 1);
        stall(1000);
        const second = await request(server.url('/'), { agent });
        assert.equal(second.body, 'ok');
        assert.equal(second.reusedSocket, false);
        assert.ok(second.socket !== first.socket);
        assert.equal(server.dropped, 0);
        await waitFor(() => first.socket.destroyed);
      });
    }

    it('a socket within its deadline after a stall is still reused', async () => {
      server = await createScriptedServer(protocol);
      agent = createAgent(protocol, { freeSocketTimeout: 4000 });
      await request(server.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      stall(500);
      const second = await request(server.url('/'), { agent });
      assert.equal(second.reusedSocket, true);
    });
  });
}
