'use strict';

// Room for a new origin under maxTotalSockets: when every place is held and a
// request of another origin cannot open a socket, the idle socket used least
// recently (a free socket of another origin, or a probe) is closed, with the
// close reason 'total-limit', and the request gets its place at once, instead
// of waiting for that socket's free timeout (here an hour: a request that
// waited would fail the test by its timeout).
const assert = require('node:assert/strict');
const { PROTOCOLS, total } = require('./support/agents');
const { createHoldingServer } = require('./support/servers');
const { createScriptedServer } = require('./support/raw');
const { request, delay, waitFor } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');
const { watchAgent } = require('./support/channels');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);
const activeCount = (agent) => total(agent.getCurrentStatus().sockets);

/** Close reasons of one origin's sockets, by its server's port. */
function closeReasons(agent, server) {
  const [stats] = Object.entries(agent.getStats().origins)
    .filter(([origin]) => origin.startsWith(`127.0.0.1:${server.port}:`))
    .map(([, entry]) => entry);
  return stats.closeReasons;
}

for (const protocol of PROTOCOLS) {
  describe(`maxTotalSockets makes room for a new origin (${protocol.slice(0, -1)})`, () => {
    const { keep, agentFor } = closeAfterEach();
    let channels = null;
    afterEach(() => {
      channels?.stop();
      channels = null;
    });

    /** Two sockets of origin `a`, freed one after the other; resolves with them, first freed first. */
    async function twoIdle(agent, a) {
      const first = request(a.url('/hold-1'), { agent });
      const second = request(a.url('/hold-2'), { agent });
      await waitFor(() => a.held === 2);
      a.release();
      const responses = await Promise.all([first, second]);
      await waitFor(() => freeCount(agent) === 2);
      return responses.map((res) => res.socket);
    }

    it('maxTotalSockets 2, two idle sockets of A: a request to B is served at once, on a new socket', async () => {
      const a = keep(await createHoldingServer(protocol));
      const b = keep(await createHoldingServer(protocol));
      const agent = agentFor(protocol, { maxTotalSockets: 2, freeSocketTimeout: '1h' });
      channels = watchAgent(agent, ['request:queued', 'socket:close']);
      await twoIdle(agent, a);

      const res = await request(b.url('/b'), { agent });
      assert.equal(res.body, 'ok /b');
      assert.equal(b.accepted, 1);
      assert.equal(channels.of('request:queued').length, 0, 'it never waited');
      await waitFor(() => agent.closeSocketCount === 1);
      assert.deepEqual(closeReasons(agent, a), { 'total-limit': 1 });
      assert.equal(channels.of('socket:close')[0].reason, 'total-limit');
      // Core's count matches the sockets held: one of A, one of B, both idle.
      await waitFor(() => freeCount(agent) === 2);
      assert.equal(agent.totalSocketCount, 2);

      // Both origins go on working within the limit.
      assert.equal((await request(a.url('/a'), { agent })).reusedSocket, true);
      assert.equal((await request(b.url('/b2'), { agent })).reusedSocket, true);
      assert.equal(agent.totalSocketCount, 2);
      assert.equal(agent.createSocketCount, 3);
    });

    it('the socket given up is the one used least recently', async () => {
      const a = keep(await createHoldingServer(protocol));
      const b = keep(await createHoldingServer(protocol));
      const agent = agentFor(protocol, { maxTotalSockets: 2, freeSocketTimeout: '1h' });
      const sockets = await twoIdle(agent, a);
      // One of them serves again: the other is now the least recently used.
      const again = (await request(a.url('/again'), { agent })).socket;
      const other = sockets.find((socket) => socket !== again);
      await waitFor(() => freeCount(agent) === 2);
      await request(b.url('/b'), { agent });
      assert.equal(other.destroyed, true);
      assert.equal(again.destroyed, false);
    });

    it('a request of B queued while A\'s sockets were busy gets the place of the first to go free', async () => {
      const a = keep(await createHoldingServer(protocol));
      const b = keep(await createHoldingServer(protocol));
      const agent = agentFor(protocol, { maxTotalSockets: 2, freeSocketTimeout: '1h' });
      const busy = [request(a.url('/hold-1'), { agent }), request(a.url('/hold-2'), { agent })];
      await waitFor(() => a.held === 2);
      const waiting = request(b.url('/b'), { agent });
      assert.equal(total(agent.getCurrentStatus().requests), 1, 'no place, nothing idle: it waits, as with core');
      // A's first socket goes free (the other stays busy): it is not kept,
      // and B gets its place.
      a.releaseOne();
      assert.equal((await waiting).body, 'ok /b');
      assert.equal(a.held, 1, 'A\'s second request is still in flight');
      assert.deepEqual(closeReasons(agent, a), { 'total-limit': 1 });
      a.release();
      await Promise.all(busy);
      await waitFor(() => activeCount(agent) === 0);
      assert.equal(agent.totalSocketCount, 2);
    });

    it('a request of an origin at its own maxSockets waits for it: no other origin\'s idle socket is given up', async () => {
      const a = keep(await createHoldingServer(protocol));
      const b = keep(await createHoldingServer(protocol));
      const agent = agentFor(protocol, { maxSockets: 1, maxTotalSockets: 2, freeSocketTimeout: '1h' });
      const { socket: idleSocket } = await request(b.url('/b'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      const busy = request(a.url('/hold'), { agent });
      await waitFor(() => a.held === 1);
      const waiting = request(a.url('/second'), { agent });
      assert.equal(total(agent.getCurrentStatus().requests), 1, 'queued behind maxSockets: 1');
      assert.equal(agent.closeSocketCount, 0);
      assert.equal(idleSocket.destroyed, false, 'B\'s idle socket is kept');
      a.release();
      assert.equal((await busy).body, 'ok /hold');
      const second = await waiting;
      assert.equal(second.body, 'ok /second');
      assert.equal(second.reusedSocket, true, 'served on A\'s one socket');
      assert.equal(freeCount(agent), 2);
    });

    it('with no idle socket, a request waits as with core, and no busy socket is touched', async () => {
      const a = keep(await createHoldingServer(protocol));
      const b = keep(await createHoldingServer(protocol));
      const agent = agentFor(protocol, { maxTotalSockets: 1 });
      const busy = request(a.url('/hold'), { agent });
      await waitFor(() => a.held === 1);
      const waiting = request(b.url('/b'), { agent });
      assert.equal(total(agent.getCurrentStatus().requests), 1);
      assert.equal(agent.closeSocketCount, 0);
      a.release();
      assert.equal((await busy).body, 'ok /hold');
      assert.equal((await waiting).body, 'ok /b');
    });
  });

  describe(`maxTotalSockets: a probe holds a place too (${protocol.slice(0, -1)})`, () => {
    const { keep, agentFor } = closeAfterEach();

    it('the probe learning A\'s idle limit is given up for a request to B', async () => {
      // A server that closes no idle connection by itself: a probe would
      // stay open as long as the agent lets it (freeSocketTimeout: 1 h).
      const a = keep(await createScriptedServer(protocol));
      const b = keep(await createHoldingServer(protocol));
      const agent = agentFor(protocol, { maxTotalSockets: 1, freeSocketTimeout: '1h' });
      // The server drops its connection after 200 ms idle, once: the agent
      // learns a (wrong) limit of about 200 ms for A.
      await request(a.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      await delay(200);
      for (const conn of a.connections) conn.socket.destroy();
      await waitFor(() => Object.keys(agent.serverIdleTimeouts).length === 1);
      // The next socket reaches that limit and leaves the pool as A's probe.
      const probe = await request(a.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      await waitFor(() => freeCount(agent) === 0);
      assert.equal(probe.socket.destroyed, false, 'the probe is open, holding the one place');
      assert.equal(agent.totalSocketCount, 1);

      assert.equal((await request(b.url('/b'), { agent })).body, 'ok /b');
      assert.equal(probe.socket.destroyed, true);
      assert.deepEqual(closeReasons(agent, a), { 'server-close': 1, 'total-limit': 1 });
      assert.equal(Object.keys(agent.serverIdleTimeouts).length, 1, 'closing a probe ourselves teaches nothing');
    });
  });
}
