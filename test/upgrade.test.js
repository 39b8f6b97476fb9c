'use strict';

// An HTTP upgrade takes the socket out of the agent: from then on it belongs
// to the caller, and the agent only counts its close.
const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer } = require('./support/servers');
const { waitFor } = require('./support/request');

for (const protocol of PROTOCOLS) {
  describe(`upgrade (${protocol})`, () => {
    let server;
    let agent;
    beforeEach(async () => {
      server = await createServer(protocol);
      server.server.on('upgrade', (req, socket) => {
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
        socket.on('data', (chunk) => socket.write(chunk));
        socket.on('error', () => {});
      });
    });
    afterEach(async () => {
      agent.destroy();
      await server.close();
    });

    it('hands the socket over: it leaves the pool, idle data does not close it, its close is counted', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 50 });
      const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');
      const socket = await new Promise((resolve, reject) => {
        const req = mod.request(server.url(), { agent, headers: { Connection: 'Upgrade', Upgrade: 'echo' } });
        req.on('upgrade', (res, upgraded) => resolve(upgraded));
        req.on('error', reject);
        req.end();
      });
      assert.deepEqual(agent.getCurrentStatus().sockets, {});
      assert.deepEqual(agent.getCurrentStatus().freeSockets, {});
      // Longer than freeSocketTimeout: the agent must not treat it as its own.
      await new Promise((resolve) => setTimeout(resolve, 120));
      const echoed = await new Promise((resolve) => {
        socket.once('data', (chunk) => resolve(chunk.toString()));
        socket.write('ping');
      });
      assert.equal(echoed, 'ping');
      assert.equal(socket.destroyed, false);
      assert.equal(agent.timeoutSocketCount, 0);
      socket.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(agent.createSocketCount, 1);
    });
  });
}
