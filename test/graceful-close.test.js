'use strict';

// agent.close(): new requests fail with ERR_AGENT_CLOSED, idle sockets close
// at once, requests in flight and queued ones complete, each socket closes as
// soon as it is free, and the promise resolves when the agent holds no socket.
const assert = require('node:assert/strict');
const http = require('node:http');
const { HttpAgent } = require('../');
const { PROTOCOLS, total } = require('./support/agents');
const { createHoldingServer, createServer } = require('./support/servers');
const { request, requestError, delay, waitFor } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');
const { startProxy } = require('./support/proxy');

function assertCode(err, code) {
  assert.equal(err.code, code, `${err.code}: ${err.message}`);
}

/** Tracks whether a promise has settled, without awaiting it. */
function watch(promise) {
  const state = { settled: false };
  promise.then(() => { state.settled = true; });
  return state;
}

/** How many sockets (or queued requests) the agent holds in `map`: 'sockets', 'freeSockets' or 'requests'. */
function held(agent, map) {
  return total(agent.getCurrentStatus()[map]);
}

/** The agent holds nothing, and every socket it used is closed. */
function assertEmpty(agent, sockets) {
  const status = agent.getCurrentStatus();
  assert.deepEqual([status.sockets, status.freeSockets, status.requests].map(total), [0, 0, 0]);
  for (const socket of sockets) assert.ok(socket.destroyed, 'a socket of the agent is still open');
  assert.equal(status.closeSocketCount, status.createSocketCount);
}

for (const protocol of PROTOCOLS) {
  describe(`agent.close() over ${protocol.slice(0, -1)}`, () => {
    const { keep, agentFor } = closeAfterEach();
    const newAgent = (options) => agentFor(protocol, options);

    it('serves requests in flight and queued, closes idle sockets at once, refuses new ones, and resolves when no socket is left', async () => {
      const holding = keep(await createHoldingServer(protocol));
      const other = keep(await createServer(protocol));
      const agent = newAgent({ maxSockets: 2 });

      const idle = await request(other.url('/idle'), { agent });
      await waitFor(() => held(agent, 'freeSockets') === 1);
      const inFlight = [request(holding.url('/hold-1'), { agent }), request(holding.url('/hold-2'), { agent })];
      const queued = request(holding.url('/queued'), { agent });
      await waitFor(() => holding.held === 2);
      assert.equal(held(agent, 'requests'), 1);

      const closing = agent.close();
      const closed = watch(closing);
      assert.equal(agent.close(), closing, 'every close() returns the same promise');

      // The idle socket closes now; the busy ones stay.
      await waitFor(() => idle.socket.destroyed);
      assert.equal(held(agent, 'freeSockets'), 0);
      assertCode(await requestError(request(other.url('/after'), { agent })), 'ERR_AGENT_CLOSED');
      assertCode(await requestError(request(holding.url('/after'), { agent })), 'ERR_AGENT_CLOSED');
      assert.equal(closed.settled, false, 'resolved with requests still in flight');
      assert.equal(held(agent, 'sockets'), 2);

      holding.release();
      const served = await Promise.all([...inFlight, queued]);
      assert.deepEqual(served.map((res) => res.body), ['ok /hold-1', 'ok /hold-2', 'ok /queued']);
      await closing;
      assertEmpty(agent, [idle, ...served].map((res) => res.socket));
      // 3 served through the agent before and during close(), plus the idle one's.
      assert.equal(agent.requestCount, 4);
      // The server sees every connection end: no descriptor left open.
      await waitFor(() => holding.connections.size === 0 && other.connections.size === 0);
    });

    it('resolves at once when the agent holds no socket, and refuses requests from then on', async () => {
      const server = keep(await createServer(protocol));
      const agent = newAgent();
      await agent.close();
      const err = await requestError(request(server.url('/'), { agent }));
      assertCode(err, 'ERR_AGENT_CLOSED');
      assert.equal(err.name, 'AgentClosedError');
      assert.equal(server.accepted, 0);
    });

    it('destroy() during close() aborts what is left and resolves the close', async () => {
      const holding = keep(await createHoldingServer(protocol));
      const agent = newAgent({ maxSockets: 1 });
      const inFlight = request(holding.url('/hold'), { agent });
      const queued = request(holding.url('/queued'), { agent });
      await waitFor(() => holding.held === 1);

      const closing = agent.close();
      agent.destroy();
      const [hungUp, notSent] = await Promise.all([requestError(inFlight), requestError(queued)]);
      assertCode(hungUp, 'ECONNRESET');
      assertCode(notSent, 'ERR_AGENT_DESTROYED');
      await closing;
      assertEmpty(agent, [hungUp.req.socket]);
    });

    it('keeps queueTimeout working while it closes', async () => {
      const holding = keep(await createHoldingServer(protocol));
      const agent = newAgent({ maxSockets: 1, queueTimeout: 50 });
      const inFlight = request(holding.url('/hold'), { agent });
      const queued = request(holding.url('/queued'), { agent });
      await waitFor(() => holding.held === 1);

      const closing = agent.close();
      assertCode(await requestError(queued), 'ERR_AGENT_QUEUE_TIMEOUT');
      assert.equal(holding.held, 1, 'the queued request failed before the socket it waited for was free');
      holding.release();
      assert.equal((await inFlight).body, 'ok /hold');
      await closing;
      assertEmpty(agent, []);
    });

    it('[Symbol.asyncDispose]() is close()', async () => {
      const agent = newAgent();
      const disposing = agent[Symbol.asyncDispose]();
      assert.equal(disposing, agent.close());
      await disposing;
    });

    it('closes the agent at the end of an `await using` block, where the runtime has the syntax', async function () {
      let block;
      try {
        // A function built at run time: the syntax is newer than Node 18's parser.
        block = new Function('agent', 'return (async () => { await using held = agent; return held; })();');
      } catch (err) {
        if (!(err instanceof SyntaxError)) throw err;
        this.skip();
      }
      const server = keep(await createServer(protocol));
      const agent = newAgent();
      await request(server.url('/'), { agent });
      await block(agent);
      assertEmpty(agent, []);
      assertCode(await requestError(request(server.url('/'), { agent })), 'ERR_AGENT_CLOSED');
    });
  });
}

describe('agent.close() through a proxy', () => {
  const { keep, agentFor } = closeAfterEach();

  it('waits for a tunnel still opening and the request it serves, then closes every tunnel', async () => {
    const target = keep(await createHoldingServer('https:'));
    const proxy = keep(await startProxy());
    const agent = agentFor('https:', { proxy: proxy.url(), maxSockets: 1 });
    const inFlight = request(target.url('/hold'), { agent });
    const queued = request(target.url('/queued'), { agent });
    // close() before the tunnel is even open: the request it is for still runs.
    const closing = agent.close();
    const closed = watch(closing);
    await waitFor(() => target.held === 1);
    assert.equal(closed.settled, false);
    target.release();
    assert.deepEqual((await Promise.all([inFlight, queued])).map((res) => res.body), ['ok /hold', 'ok /queued']);
    await closing;
    assertEmpty(agent, []);
    assert.equal(proxy.connects, 1);
    await waitFor(() => target.connections.size === 0);
  });
});

describe('agent.close() and HTTP upgrades', () => {
  const { keep, agentOf } = closeAfterEach();

  it('does not wait for a socket that left the agent for an upgrade', async () => {
    const server = keep(await createServer('http:'));
    server.server.on('upgrade', (req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.pipe(socket);
    });
    const agent = agentOf(HttpAgent);
    const upgraded = await new Promise((resolve, reject) => {
      http.get(server.url('/'), { agent, headers: { Connection: 'Upgrade', Upgrade: 'echo' } })
        .on('upgrade', (res, socket) => resolve(socket))
        .on('error', reject);
    });
    try {
      await agent.close();
      assert.equal(upgraded.destroyed, false, 'the upgraded socket belongs to its new owner');
      upgraded.write('ping');
      const [echo] = await Promise.race([
        new Promise((resolve) => upgraded.once('data', (data) => resolve([String(data)]))),
        delay(5000).then(() => ['no echo']),
      ]);
      assert.equal(echo, 'ping');
    } finally {
      upgraded.destroy();
    }
  });
});
