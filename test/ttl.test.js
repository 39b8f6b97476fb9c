'use strict';

// socketActiveTTL: a socket's whole life, counted from its creation. It ends a
// free socket's life while it sits in the pool, it is checked again when a
// free socket is handed out (a timer may not have had the chance to fire),
// and a socket whose TTL ran out while serving a request is not kept.
const assert = require('node:assert/strict');
const { constants } = require('..');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createScriptedServer, rawResponse } = require('./support/raw');
const { request, delay, waitFor } = require('./support/request');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);

/** Blocks the event loop until `socket` is older than `ms`: no timer can fire meanwhile. */
function busyWaitUntilOlderThan(socket, ms) {
  const created = socket[constants.SOCKET_CREATED_TIME];
  while (Date.now() - created <= ms) {
    // spin
  }
}

for (const protocol of PROTOCOLS) {
  describe(`socketActiveTTL (${protocol})`, () => {
    let server;
    let agent;

    beforeEach(async () => {
      // Never closes an idle connection; '/slow' is answered after 500 ms.
      server = await createScriptedServer(protocol, {
        respond: async ({ path }) => {
          if (path === '/slow') await delay(500);
          return rawResponse(`ok ${path}`);
        },
      });
    });

    afterEach(async () => {
      if (agent) agent.destroy();
      agent = null;
      await server.close();
    });

    it('closes a free socket whose TTL runs out while it sits in the pool', async () => {
      // A free timeout far beyond waitFor's 5 s limit: only the TTL can close it.
      agent = createAgent(protocol, { socketActiveTTL: 800, freeSocketTimeout: 60000 });
      const res = await request(server.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);

      await waitFor(() => agent.closeSocketCount === 1);
      const status = agent.getCurrentStatus();
      assert.deepEqual(status.freeSockets, {});
      assert.equal(status.closeSocketCount, 1);
      assert.equal(status.errorSocketCount, 0);
      assert.equal(res.socket.destroyed, true);
      await waitFor(() => server.connections[0].closed);
      assert.equal(server.connections[0].closedBy, 'client', 'the agent closed it');
      assert.deepEqual(agent.serverIdleTimeouts, {}, 'our own close teaches nothing');

      const next = await request(server.url('/next'), { agent });
      assert.equal(next.body, 'ok /next');
      assert.ok(next.socket !== res.socket, 'a different socket');
      assert.equal(next.reusedSocket, false);
    });

    it('checks the TTL when handing out a free socket: a request in the same tick as expiry gets a new socket', async () => {
      agent = createAgent(protocol, { socketActiveTTL: 500, freeSocketTimeout: 4000 });
      const first = await request(server.url('/first'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      // The free timer cannot fire while the loop is blocked: the socket is
      // still in the pool, alive, when the next request asks for one.
      busyWaitUntilOlderThan(first.socket, 550);
      assert.equal(freeCount(agent), 1);
      assert.equal(first.socket.destroyed, false);
      const pending = request(server.url('/second'), { agent });

      const second = await pending;
      assert.equal(second.body, 'ok /second');
      assert.ok(second.socket !== first.socket, 'a different socket');
      assert.equal(second.reusedSocket, false);
      assert.equal(first.socket.destroyed, true);
      assert.equal(server.accepted, 2);
      assert.equal(server.connections[0].requests, 1, 'nothing was sent on the expired socket');
    });

    it('does not keep a socket whose TTL ran out while it served a request', async () => {
      agent = createAgent(protocol, { socketActiveTTL: 300 });
      const slow = await request(server.url('/slow'), { agent });
      assert.equal(slow.body, 'ok /slow');
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(freeCount(agent), 0);
      const next = await request(server.url('/next'), { agent });
      assert.ok(next.socket !== slow.socket, 'a different socket');
      assert.equal(next.reusedSocket, false);
      await waitFor(() => server.connections[0].closed);
      assert.equal(server.connections[0].closedBy, 'client');
    });

    it('a request queued behind a socket whose TTL ran out gets a new socket', async () => {
      agent = createAgent(protocol, { socketActiveTTL: 300, maxSockets: 1 });
      const a = request(server.url('/slow'), { agent });
      const b = request(server.url('/queued'), { agent });
      const [slow, queued] = await Promise.all([a, b]);
      assert.equal(queued.body, 'ok /queued');
      assert.ok(queued.socket !== slow.socket, 'a different socket');
      assert.equal(queued.reusedSocket, false);
      assert.equal(server.accepted, 2);
      assert.equal(server.dropped, 0);
    });

    it('a socket within its TTL is reused', async () => {
      agent = createAgent(protocol, { socketActiveTTL: 10000 });
      const first = await request(server.url('/1'), { agent });
      const second = await request(server.url('/2'), { agent });
      assert.ok(second.socket === first.socket, 'the same socket');
      assert.equal(second.reusedSocket, true);
    });
  });
}
