'use strict';

// Check before reuse: a free socket handed to a request must be alive. One
// that is destroyed, not writable, has seen EOF or has unread bytes waiting
// (a server writing to an idle connection) is dropped, and the request takes
// another free socket or a new one. Core's own idle-socket data guard (Node
// 22+) keeps working because the agent's reuseSocket calls super.
const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createScriptedServer, rawResponse } = require('./support/raw');
const { request, delay, waitFor } = require('./support/request');
const { TUNING } = require('../lib/policy/learning_tuning');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);

// A complete response a poisoned connection would hand to the next request.
const POISON = rawResponse('poison', { 'X-Poison': 'yes' });

for (const protocol of PROTOCOLS) {
  describe(`check before reuse (${protocol})`, () => {
    let server;
    let agent;

    beforeEach(async () => {
      server = await createScriptedServer(protocol, {
        respond: ({ path }) => rawResponse(`ok ${path}`),
      });
    });

    afterEach(async () => {
      if (agent) agent.destroy();
      agent = null;
      await server.close();
    });

    /** `count` requests at once, so that `count` sockets end up in the pool. */
    async function fillPool(count) {
      const results = await Promise.all(Array.from({ length: count }, (_, i) => request(server.url(`/fill${i}`), { agent })));
      await waitFor(() => freeCount(agent) === count);
      return results.map((res) => res.socket);
    }

    /** The free list of the only pool, as core holds it. */
    const freeList = () => {
      const pools = Object.keys(agent.freeSockets);
      assert.equal(pools.length, 1);
      return agent.freeSockets[pools[0]];
    };

    it('a live free socket is reused, request after request (core\'s reuseSocket runs)', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url('/0'), { agent });
      for (let i = 1; i < 6; i++) {
        const res = await request(server.url(`/${i}`), { agent });
        assert.equal(res.body, `ok /${i}`);
        assert.ok(res.socket === first.socket, 'the same socket');
        // core's Agent#reuseSocket sets reusedSocket (and, on Node 22+,
        // lifts its idle-data guard, or the response would be discarded).
        assert.equal(res.reusedSocket, true);
      }
      assert.equal(server.accepted, 1);
    });

    it('a server writing to an idle connection: the next request gets a new socket and its own response', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url('/first'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      await new Promise((resolve) => server.connections[0].socket.write(POISON, resolve));
      // Let the bytes reach the client.
      await delay(100);

      const second = await request(server.url('/second'), { agent });
      assert.equal(second.body, 'ok /second');
      assert.equal(second.headers['x-poison'], undefined);
      assert.ok(second.socket !== first.socket, 'a different socket');
      assert.equal(second.reusedSocket, false);
      assert.equal(first.socket.destroyed, true);
      assert.equal(server.accepted, 2);
      assert.equal(agent.getCurrentStatus().errorSocketCount, 0);
    });

    // The server wrote, it did not close: dropping the socket must not teach
    // the agent that this origin closes idle sockets at once (which would end
    // keep-alive to it for good).
    it('after unsolicited data on an idle socket, the origin\'s sockets are still kept', async () => {
      // Node 22+ destroys the written-to socket at once; before 22 it stays
      // pooled until the agent's free timeout, short here so as not to wait.
      agent = createAgent(protocol, { freeSocketTimeout: 300 });
      const first = await request(server.url('/first'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      await new Promise((resolve) => server.connections[0].socket.write(POISON, resolve));
      await waitFor(() => first.socket.destroyed);
      await waitFor(() => agent.closeSocketCount === 1);
      const second = await request(server.url('/second'), { agent });
      const third = await request(server.url('/third'), { agent });
      assert.ok(third.socket === second.socket, 'the same socket');
    });

    it('a free socket with unread bytes waiting (paused) is not handed out', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url('/first'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      // Paused, the socket buffers what arrives instead of emitting 'data'
      // (on Node 22+ core's guard may destroy it first: either way it must
      // not serve the next request).
      first.socket.pause();
      await new Promise((resolve) => server.connections[0].socket.write(POISON, resolve));
      await waitFor(() => first.socket.readableLength > 0 || first.socket.destroyed);

      const second = await request(server.url('/second'), { agent });
      assert.equal(second.body, 'ok /second');
      assert.ok(second.socket !== first.socket, 'a different socket');
      assert.equal(second.reusedSocket, false);
      await waitFor(() => first.socket.destroyed);
      assert.equal(server.accepted, 2);
    });

    it('a server that half-closes an idle connection (FIN): the next request succeeds on a new socket', async () => {
      await server.close();
      server = await createScriptedServer(protocol, {
        respond: ({ path }) => rawResponse(`ok ${path}`),
        idleTimeout: (conn) => (conn.id === 0 ? 50 : 0),
        idleClose: 'end',
      });
      agent = createAgent(protocol, { learnServerTimeout: false });
      const first = await request(server.url('/first'), { agent });
      await waitFor(() => server.connections[0].idleClosed);
      await delay(50);

      const second = await request(server.url('/second'), { agent });
      assert.equal(second.body, 'ok /second');
      assert.ok(second.socket !== first.socket, 'a different socket');
      assert.equal(second.reusedSocket, false);
      assert.equal(server.connections[0].requests, 1, 'nothing was sent on the half-closed connection');
      assert.equal(server.accepted, 2);
    });

    it('a free socket destroyed by someone, then a request in the same tick: a new socket', async () => {
      agent = createAgent(protocol);
      const [socket] = await fillPool(1);
      socket.destroy();
      const res = await request(server.url('/next'), { agent });
      assert.equal(res.body, 'ok /next');
      assert.ok(res.socket !== socket, 'a different socket');
      assert.equal(res.reusedSocket, false);
      assert.equal(server.accepted, 2);
    });

    // A local destroy() is not the server closing: it must not end keep-alive
    // to the origin for good.
    it('a free socket destroyed by someone and dropped at the next request is not learned as a server close', async () => {
      agent = createAgent(protocol);
      const [socket] = await fillPool(1);
      socket.destroy();
      await request(server.url('/next'), { agent });
      await waitFor(() => agent.closeSocketCount === 1);
      assert.deepEqual(agent.serverIdleTimeouts, {});
      const a = await request(server.url('/a'), { agent });
      const b = await request(server.url('/b'), { agent });
      assert.ok(b.socket === a.socket, 'the origin\'s sockets are still kept');
    });

    // From Node 22 core's idle-socket guard destroys a pooled socket on the
    // server's FIN without an 'end', exactly as a local destroy() looks, so a
    // caller's destroy() of a pooled socket reads as the server closing it
    // (on every version, for one behaviour everywhere). With learning off,
    // the origin's sockets are kept as before.
    it('a free socket the caller destroys counts as a server close; with learning off, sockets are still kept', async () => {
      agent = createAgent(protocol);
      const [socket] = await fillPool(1);
      await delay(TUNING.MIN_LIMIT_MS + 10); // a close sooner after the response teaches nothing
      socket.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(Object.keys(agent.serverIdleTimeouts).length, 1);
      agent.destroy();

      agent = createAgent(protocol, { learnServerTimeout: false });
      const [other] = await fillPool(1);
      other.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      assert.deepEqual(agent.serverIdleTimeouts, {});
      const a = await request(server.url('/a'), { agent });
      const b = await request(server.url('/b'), { agent });
      assert.ok(b.socket === a.socket, 'the origin\'s sockets are still kept');
    });

    it('skips a destroyed socket at the picking end of the pool and reuses a live one (lifo)', async () => {
      agent = createAgent(protocol);
      await fillPool(2);
      const list = freeList();
      const [live, dead] = [list[0], list[list.length - 1]];
      // Core's own check looks only at the other end of the list.
      dead.destroy();
      const res = await request(server.url('/next'), { agent });
      assert.equal(res.body, 'ok /next');
      assert.ok(res.socket === live, 'the same socket');
      assert.equal(res.reusedSocket, true);
      assert.equal(server.accepted, 2);
    });

    it('skips every dead socket in turn (fifo)', async () => {
      agent = createAgent(protocol, { scheduling: 'fifo' });
      await fillPool(3);
      const list = freeList();
      const [first, second, live] = list;
      first.destroy();
      second.end(); // not writable any more, not yet destroyed
      const res = await request(server.url('/next'), { agent });
      assert.equal(res.body, 'ok /next');
      assert.ok(res.socket === live, 'the same socket');
      assert.equal(res.reusedSocket, true);
      assert.equal(server.accepted, 3);
    });

    it('a free socket ended by someone (not writable), then a request in the same tick: a new socket', async () => {
      agent = createAgent(protocol);
      const [socket] = await fillPool(1);
      socket.end();
      assert.equal(socket.destroyed, false);
      const res = await request(server.url('/next'), { agent });
      assert.equal(res.body, 'ok /next');
      assert.ok(res.socket !== socket, 'a different socket');
      assert.equal(res.reusedSocket, false);
    });

    it('all free sockets dead: a new socket, and the pool is emptied', async () => {
      agent = createAgent(protocol);
      const sockets = await fillPool(3);
      for (const socket of sockets) socket.destroy();
      const res = await request(server.url('/next'), { agent });
      assert.equal(res.body, 'ok /next');
      assert.ok(!sockets.includes(res.socket));
      await waitFor(() => freeCount(agent) === 1);
      const list = freeList();
      assert.equal(list.length, 1);
      assert.ok(list[0] === res.socket, 'only the new socket is pooled');
    });
  });
}
