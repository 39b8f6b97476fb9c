'use strict';

const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor } = require('./support/request');

for (const protocol of PROTOCOLS) {
  describe(`req.reusedSocket (${protocol})`, () => {
    let server;
    let agent;
    const held = [];
    before(async () => {
      server = await createServer(protocol, (req, res) => {
        if (req.url === '/hold') held.push(res);
        else res.end('ok');
      });
    });
    after(() => server.close());
    afterEach(() => agent.destroy());

    it('is false on a new socket and true on a socket taken from the pool', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url(), { agent });
      const second = await request(server.url(), { agent });
      assert.equal(first.reusedSocket, false);
      assert.equal(second.reusedSocket, true);
      assert.equal(second.socket, first.socket);
    });

    it('is true for a request that waited behind maxSockets and got a finished request\'s socket', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      const a = request(server.url('/hold'), { agent });
      const b = request(server.url(), { agent });
      await waitFor(() => held.length === 1);
      assert.equal(agent.getCurrentStatus().requests[Object.keys(agent.sockets)[0]], 1);
      held.shift().end('a');
      const [first, second] = await Promise.all([a, b]);
      assert.equal(first.reusedSocket, false);
      assert.equal(second.socket, first.socket);
      assert.equal(second.reusedSocket, true);
      assert.equal(agent.createSocketCount, 1);
    });

    it('is false for a queued request that gets a new socket because the busy one closed', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      const a = request(server.url('/hold'), { agent }).catch((err) => err);
      const b = request(server.url(), { agent });
      await waitFor(() => held.length === 1);
      held.shift().destroy();
      const [failed, second] = await Promise.all([a, b]);
      assert.ok(failed instanceof Error);
      assert.equal(second.reusedSocket, false);
      assert.equal(agent.createSocketCount, 2);
    });
  });
}
