'use strict';

// maxQueue and queueTimeout: bounds on the wait behind maxSockets. A request
// over maxQueue fails at once with ERR_AGENT_QUEUE_FULL; one that waits
// queueTimeout without a socket leaves the queue and fails with
// ERR_AGENT_QUEUE_TIMEOUT. Neither leaves a timer, socket or queue entry.
const assert = require('node:assert/strict');
const http = require('node:http');
const { HttpAgent, HttpsAgent } = require('../');
const { PROTOCOLS, total } = require('./support/agents');
const { createHoldingServer } = require('./support/servers');
const { request, requestError, waitFor } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');
const { timersCreatedBy } = require('./support/timers');

function queued(agent) {
  return total(agent.getCurrentStatus().requests);
}

for (const protocol of PROTOCOLS) {
  describe(`queue bounds over ${protocol.slice(0, -1)}`, () => {
    const { keep, agentFor } = closeAfterEach();
    const newAgent = (options) => agentFor(protocol, options);

    describe('maxQueue', () => {
      it('fails exactly the requests over the limit, at once, and serves the rest', async () => {
        const server = keep(await createHoldingServer(protocol));
        const agent = newAgent({ maxSockets: 1, maxQueue: 2 });
        const first = request(server.url('/hold'), { agent });
        await waitFor(() => server.held === 1);
        const waiting = [request(server.url('/q1'), { agent }), request(server.url('/q2'), { agent })];
        const over = [request(server.url('/over1'), { agent }), request(server.url('/over2'), { agent })];

        const errors = await Promise.all(over.map((promise) => requestError(promise)));
        // At once: the one socket is still busy with the first request.
        assert.equal(server.held, 1);
        for (const err of errors) {
          assert.equal(err.code, 'ERR_AGENT_QUEUE_FULL', err.message);
          assert.equal(err.name, 'QueueFullError');
          assert.equal(err.maxQueue, 2);
        }
        assert.equal(queued(agent), 2);

        server.release();
        const served = await Promise.all([first, ...waiting]);
        assert.deepEqual(served.map((res) => res.body), ['ok /hold', 'ok /q1', 'ok /q2']);
        assert.equal(queued(agent), 0);
        assert.equal(agent.requestCount, 3);
        assert.equal(server.accepted, 1);
        const [origin] = Object.values(agent.getStats().origins);
        assert.deepEqual([origin.queued, origin.queueWaitMs.count], [0, 2]);
      });

      it('0: a request that would wait fails, one that finds a socket does not', async () => {
        const server = keep(await createHoldingServer(protocol));
        const agent = newAgent({ maxSockets: 1, maxQueue: 0 });
        const first = request(server.url('/hold'), { agent });
        await waitFor(() => server.held === 1);
        const err = await requestError(request(server.url('/second'), { agent }));
        assert.equal(err.code, 'ERR_AGENT_QUEUE_FULL');
        assert.match(err.message, /maxQueue: 0/);
        assert.equal(queued(agent), 0);
        server.release();
        await first;
        assert.equal((await request(server.url('/third'), { agent })).body, 'ok /third');
      });

      it('counts per origin', async () => {
        const a = keep(await createHoldingServer(protocol));
        const b = keep(await createHoldingServer(protocol));
        const agent = newAgent({ maxSockets: 1, maxQueue: 1 });
        const busy = [request(a.url('/hold'), { agent }), request(b.url('/hold'), { agent })];
        await waitFor(() => a.held === 1 && b.held === 1);
        const waiting = [request(a.url('/q'), { agent }), request(b.url('/q'), { agent })];
        assert.equal((await requestError(request(a.url('/over'), { agent }))).code, 'ERR_AGENT_QUEUE_FULL');
        assert.equal(queued(agent), 2);
        a.release();
        b.release();
        assert.deepEqual((await Promise.all([...busy, ...waiting])).map((res) => res.body),
          ['ok /hold', 'ok /hold', 'ok /q', 'ok /q']);
      });
    });

    describe('queueTimeout', () => {
      it('fails a request that waited too long, never sent, and leaves nothing behind', async () => {
        const server = keep(await createHoldingServer(protocol));
        const agent = newAgent({ maxSockets: 1, queueTimeout: 30 });
        const first = request(server.url('/hold'), { agent });
        await waitFor(() => server.held === 1);
        const late = request(server.url('/late'), { agent });
        const err = await requestError(late);
        assert.equal(err.code, 'ERR_AGENT_QUEUE_TIMEOUT', err.message);
        assert.equal(err.name, 'QueueTimeoutError');
        assert.equal(err.timeout, 30);
        // It failed while the socket it waited for was still busy.
        assert.equal(server.held, 1);
        assert.equal(queued(agent), 0);
        assert.equal(err.req.socket, null, 'a timed-out request never gets a socket');

        server.release();
        assert.equal((await first).body, 'ok /hold');
        const next = await request(server.url('/next'), { agent });
        assert.equal(next.reusedSocket, true);
        assert.equal(server.accepted, 1);
        assert.equal(agent.requestCount, 2);
        // Its wait is counted (lib/events.js), and how it ended.
        const [origin] = Object.values(agent.getStats().origins);
        assert.deepEqual([origin.queued, origin.queueWaitMs.count, origin.queueTimeouts], [0, 1, 1]);
      });

      it('two requests waiting too long: each fails, one after the other, and the queue is left empty', async () => {
        const server = keep(await createHoldingServer(protocol));
        const agent = newAgent({ maxSockets: 1, queueTimeout: 30 });
        const first = request(server.url('/hold'), { agent });
        await waitFor(() => server.held === 1);
        const errors = await Promise.all([request(server.url('/late1'), { agent }), request(server.url('/late2'), { agent })].map(requestError));
        assert.deepEqual(errors.map((err) => err.code), ['ERR_AGENT_QUEUE_TIMEOUT', 'ERR_AGENT_QUEUE_TIMEOUT']);
        assert.equal(server.held, 1);
        assert.equal(queued(agent), 0);
        assert.deepEqual(Object.keys(agent.requests), []);
        server.release();
        assert.equal((await first).body, 'ok /hold');
        const [origin] = Object.values(agent.getStats().origins);
        assert.equal(origin.queueTimeouts, 2);
      });

      it('a request that gets its socket in time never fails, and its timer is cleared then', async () => {
        const server = keep(await createHoldingServer(protocol));
        const agent = newAgent({ maxSockets: 1, queueTimeout: '1h' });
        const first = request(server.url('/hold'), { agent });
        await waitFor(() => server.held === 1);
        const watched = timersCreatedBy(() => request(server.url('/queued'), { agent }));
        try {
          assert.equal(watched.created.length, 1, 'one timer for the queued request');
          assert.equal(watched.destroyed.size, 0);
          server.release();
          const [, res] = await Promise.all([first, watched.result]);
          assert.equal(res.body, 'ok /queued');
          await waitFor(() => watched.destroyed.has(watched.created[0]));
        } finally {
          watched.stop();
        }
      });

      it('an agent without queueTimeout arms no timer for a queued request', async () => {
        const server = keep(await createHoldingServer(protocol));
        const agent = newAgent({ maxSockets: 1, maxQueue: 5 });
        const first = request(server.url('/hold'), { agent });
        await waitFor(() => server.held === 1);
        const watched = timersCreatedBy(() => request(server.url('/queued'), { agent }));
        watched.stop();
        assert.equal(queued(agent), 1);
        assert.deepEqual(watched.created, []);
        server.release();
        await Promise.all([first, watched.result]);
      });

      it('a queued request the caller aborts settles once, and leaves the queue at its deadline', async () => {
        const server = keep(await createHoldingServer(protocol));
        const agent = newAgent({ maxSockets: 1, queueTimeout: 30 });
        const first = request(server.url('/hold'), { agent });
        await waitFor(() => server.held === 1);
        const events = [];
        const aborted = (protocol === 'https:' ? require('node:https') : http).get(server.url('/aborted'), { agent });
        aborted.on('error', (err) => events.push(`error ${err.code}`));
        aborted.on('close', () => events.push('close'));
        aborted.destroy();
        await waitFor(() => events.includes('close'));
        assert.equal(events.filter((event) => event === 'close').length, 1);
        assert.ok(events.filter((event) => event.startsWith('error')).length <= 1, events.join(', '));
        await waitFor(() => queued(agent) === 0);
        assert.equal(server.held, 1);
        server.release();
        await first;
      });
    });
  });
}

describe('queue bound options', () => {
  for (const Agent of [HttpAgent, HttpsAgent]) {
    it(`${Agent.name} validates maxQueue and queueTimeout, naming the option and the value`, () => {
      for (const maxQueue of [-1, 1.5, NaN, 'many', true]) {
        assert.throws(() => new Agent({ maxQueue }), (err) => {
          assert.equal(err.option, 'maxQueue');
          assert.match(err.message, /"maxQueue"/);
          return true;
        });
      }
      for (const queueTimeout of [-1, 'soon', {}]) {
        assert.throws(() => new Agent({ queueTimeout }), (err) => {
          assert.equal(err.option, 'queueTimeout');
          assert.match(err.message, /"queueTimeout"/);
          return true;
        });
      }
    });

    it(`${Agent.name} reads them as documented, without writing to the caller's options`, () => {
      const given = Object.freeze({ maxQueue: 0, queueTimeout: '2s' });
      const agents = [new Agent(given), new Agent({ maxQueue: Infinity }), new Agent()];
      try {
        assert.deepEqual(agents.map((agent) => [agent.options.maxQueue, agent.options.queueTimeout]),
          [[0, 2000], [Infinity, 0], [Infinity, 0]]);
      } finally {
        for (const agent of agents) agent.destroy();
      }
    });
  }
});
