'use strict';

// agent.destroy(): every socket closes, free or active, as with Node's own
// agent: a request still waiting for its response fails with 'socket hang up',
// one whose response arrived sees no request error. Requests queued behind
// maxSockets are served on a new connection, as Node's agent serves them
// (compared in the same run). As with Node's agent, a request made afterwards
// opens a new socket.
const assert = require('node:assert/strict');
const http = require('node:http');
const https = require('node:https');
const { HttpAgent, HttpsAgent } = require('../');
const { createServer, tlsClientOptions } = require('./support/servers');
const { request, waitFor } = require('./support/request');

function sum(perOrigin) {
  return Object.values(perOrigin).reduce((total, n) => total + n, 0);
}

/** The request's error, or a failure if it succeeded. */
async function failure(promise) {
  try {
    const res = await promise;
    assert.fail(`expected the request to fail, got ${res.status}`);
  } catch (err) {
    if (err instanceof assert.AssertionError) throw err;
    return err;
  }
}

/** What core's agent gives a request whose socket it destroys before the response. */
function assertHangUp(err) {
  assert.equal(err.code, 'ECONNRESET', `${err.code}: ${err.message}`);
  assert.equal(err.message, 'socket hang up');
}

for (const protocol of ['http:', 'https:']) {
  describe(`agent.destroy() over ${protocol.slice(0, -1)}`, () => {
    let server;
    let agents;
    let hanging; // responses the server holds back: /hang never answers

    function newAgent(options = {}) {
      const agent = protocol === 'https:'
        ? new HttpsAgent({ ...tlsClientOptions, ...options })
        : new HttpAgent(options);
      agents.push(agent);
      return agent;
    }

    beforeEach(async () => {
      agents = [];
      hanging = [];
      server = await createServer(protocol, (req, res) => {
        req.resume();
        if (req.url === '/hang') {
          hanging.push(res);
          return;
        }
        if (req.url === '/half') {
          // Headers and half the body now, the rest never.
          res.setHeader('content-length', '10');
          res.write('12345');
          hanging.push(res);
          return;
        }
        res.end(`ok ${req.url}`);
      });
    });

    afterEach(async () => {
      for (const agent of agents) agent.destroy();
      agents = [];
      if (server) await server.close();
      server = null;
    });

    it('closes every socket, free and active; requests in flight fail with \'socket hang up\'', async () => {
      const agent = newAgent();
      // Three sockets, all free once these answer.
      await Promise.all([1, 2, 3].map((i) => request(server.url(`/${i}`), { agent })));
      assert.equal(sum(agent.getCurrentStatus().freeSockets), 3);
      // Two of them go back to work on requests the server never answers.
      const inFlight = [request(server.url('/hang'), { agent }), request(server.url('/hang'), { agent })];
      await waitFor(() => hanging.length === 2);
      const before = agent.getCurrentStatus();
      assert.equal(sum(before.sockets), 2, 'active sockets');
      assert.equal(sum(before.freeSockets), 1, 'free sockets');
      assert.equal(server.connections.size, 3);

      agent.destroy();

      const errors = await Promise.all(inFlight.map(failure));
      errors.forEach(assertHangUp);
      // The server sees every connection close, the free one included.
      await waitFor(() => server.connections.size === 0);
      await waitFor(() => agent.closeSocketCount === agent.createSocketCount);
      assert.equal(agent.createSocketCount, 3);
      assert.equal(agent.closeSocketCount, 3);
      assert.equal(server.accepted, 3);
      // Core's maps have no prototype: compare their keys.
      assert.deepEqual(Object.keys(agent.sockets), []);
      assert.deepEqual(Object.keys(agent.freeSockets), []);
      assert.deepEqual(Object.keys(agent.requests), []);
      const after = agent.getCurrentStatus();
      assert.deepEqual([after.sockets, after.freeSockets, after.requests], [{}, {}, {}]);
    });

    it('serves requests queued behind maxSockets on a new connection, as Node\'s agent does', async () => {
      // One request the server holds, two queued behind it; then destroy().
      async function destroyWithQueue(agent) {
        const accepted = server.accepted;
        const held = hanging.length;
        const outcome = (promise) => promise.then((res) => `${res.status} ${res.body}`, (err) => `${err.code}: ${err.message}`);
        const first = outcome(request(server.url('/hang'), { agent }));
        const queued = [1, 2].map((i) => outcome(request(server.url(`/queued-${i}`), { agent })));
        await waitFor(() => hanging.length === held + 1);
        assert.equal(Object.values(agent.requests).reduce((n, queue) => n + queue.length, 0), 2, 'queued requests');

        agent.destroy();

        const outcomes = [await first, ...await Promise.all(queued)];
        assert.deepEqual(Object.keys(agent.requests), [], 'nothing left queued');
        return { outcomes, connections: server.accepted - accepted };
      }
      const core = protocol === 'https:'
        ? new https.Agent({ keepAlive: true, maxSockets: 1, ...tlsClientOptions })
        : new http.Agent({ keepAlive: true, maxSockets: 1 });
      agents.push(core);
      const expected = await destroyWithQueue(core);
      // Node's agent: the request in flight hangs up, the queued ones are
      // served on one new connection (the second reuses it).
      assert.deepEqual(expected, {
        outcomes: ['ECONNRESET: socket hang up', '200 ok /queued-1', '200 ok /queued-2'],
        connections: 2,
      });

      const agent = newAgent({ maxSockets: 1 });
      assert.deepEqual(await destroyWithQueue(agent), expected);
      assert.equal(agent.createSocketCount, 2);
      assert.equal(agent.requestCount, 2);
      assert.equal(sum(agent.getCurrentStatus().freeSockets), 1, 'the new connection, back in the pool');
    });

    it('fails requests whose connection is still being made as Node\'s agent does', async () => {
      async function destroyWhileConnecting(agent) {
        const pending = [request(server.url('/1'), { agent }), request(server.url('/2'), { agent })].map(failure);
        assert.equal(sum(Object.fromEntries(Object.entries(agent.sockets).map(([k, v]) => [k, v.length]))), 2, 'sockets connecting');
        agent.destroy();
        const errors = await Promise.all(pending);
        return errors.map((err) => `${err.code}: ${err.message}`);
      }
      const core = protocol === 'https:'
        ? new https.Agent({ keepAlive: true, ...tlsClientOptions })
        : new http.Agent({ keepAlive: true });
      agents.push(core);
      const expected = await destroyWhileConnecting(core);
      assert.deepEqual(expected, ['ECONNRESET: socket hang up', 'ECONNRESET: socket hang up']);

      const agent = newAgent();
      assert.deepEqual(await destroyWhileConnecting(agent), expected);
      await waitFor(() => agent.closeSocketCount === agent.createSocketCount);
      assert.equal(agent.createSocketCount, 2);
      assert.deepEqual(Object.keys(agent.sockets), []);
      await waitFor(() => server.connections.size === 0);
    });

    it('cuts a response body short without a request error, as Node\'s agent does', async () => {
      async function destroyMidBody(agent) {
        const events = [];
        const req = (protocol === 'https:' ? https : http).get(server.url('/half'), { agent });
        const closed = new Promise((resolve) => req.on('close', resolve));
        req.on('error', (err) => events.push(`request error ${err.code}`));
        const res = await new Promise((resolve) => req.on('response', resolve));
        const resClosed = new Promise((resolve) => res.on('close', resolve));
        res.on('data', () => events.push('data'));
        res.on('end', () => events.push('end'));
        res.on('aborted', () => events.push('aborted'));
        res.on('error', (err) => events.push(`response error ${err.code}`));
        await waitFor(() => events.includes('data'));
        agent.destroy();
        await Promise.all([closed, resClosed]);
        return events;
      }
      const core = protocol === 'https:'
        ? new https.Agent({ keepAlive: true, ...tlsClientOptions })
        : new http.Agent({ keepAlive: true });
      agents.push(core);
      const expected = await destroyMidBody(core);
      const agent = newAgent();
      const events = await destroyMidBody(agent);
      assert.deepEqual(events, expected);
      assert.ok(!events.includes('end'), `a cut body must not end: ${events.join(', ')}`);
      assert.ok(!events.some((e) => e.startsWith('request error')), events.join(', '));
      assert.ok(events.includes('aborted'), events.join(', '));
      await waitFor(() => agent.closeSocketCount === agent.createSocketCount);
    });

    it('may be called from a response handler of a request with no \'error\' listener', async () => {
      const agent = newAgent();
      const uncaught = [];
      const onUncaught = (err) => uncaught.push(err);
      process.prependListener('uncaughtException', onUncaught);
      try {
        const body = await new Promise((resolve, reject) => {
          // No 'error' listener on the request, as in Node's own tests.
          (protocol === 'https:' ? https : http).get(server.url('/done'), { agent }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk) => { text += chunk; });
            res.on('end', () => {
              agent.destroy();
              resolve(text);
            });
            res.on('error', reject);
          });
        });
        assert.equal(body, 'ok /done');
        await waitFor(() => agent.closeSocketCount === 1);
        // A turn of the event loop for any late error to surface.
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(uncaught, []);
      } finally {
        process.removeListener('uncaughtException', onUncaught);
      }
    });

    it('is harmless when called again, or on an agent that never connected', async () => {
      const unused = newAgent();
      unused.destroy();
      unused.destroy();
      assert.equal(unused.createSocketCount, 0);

      const agent = newAgent();
      await request(server.url('/'), { agent });
      agent.destroy();
      agent.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(agent.createSocketCount, 1);
    });

    it('lets a request made after destroy() open a new socket, as Node\'s own agent does', async () => {
      // Node's documentation says nothing of a destroyed agent; its behaviour
      // is the reference: destroy() empties the pools and the agent stays
      // usable, connecting afresh.
      const core = protocol === 'https:'
        ? new https.Agent({ keepAlive: true, ...tlsClientOptions })
        : new http.Agent({ keepAlive: true });
      agents.push(core);

      async function useAfterDestroy(agent) {
        const acceptedBefore = server.accepted;
        const first = await request(server.url('/before'), { agent });
        agent.destroy();
        await waitFor(() => first.socket.destroyed);
        const second = await request(server.url('/after'), { agent });
        return {
          status: second.status,
          body: second.body,
          reusedSocket: second.reusedSocket,
          newSocket: second.socket !== first.socket,
          connections: server.accepted - acceptedBefore,
        };
      }

      const expected = { status: 200, body: 'ok /after', reusedSocket: false, newSocket: true, connections: 2 };
      assert.deepEqual(await useAfterDestroy(core), expected, 'Node\'s agent');
      const agent = newAgent();
      assert.deepEqual(await useAfterDestroy(agent), expected, 'steady-agent');
      assert.equal(agent.createSocketCount, 2);
      // The new socket is pooled like any other.
      await waitFor(() => sum(agent.getCurrentStatus().freeSockets) === 1);
      const third = await request(server.url('/again'), { agent });
      assert.equal(third.reusedSocket, true);
    });
  });
}
