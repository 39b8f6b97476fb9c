'use strict';

// An HTTP upgrade takes the socket out of the agent: from then on it belongs
// to the caller, and the agent only counts its close.
const assert = require('node:assert/strict');
const http = require('node:http');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer, fixtures } = require('./support/servers');
const { request, waitFor } = require('./support/request');

/** An upgrade request to `url` through `mod` (http or https); resolves with the upgraded socket. */
function upgrade(mod, url, options) {
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { ...options, headers: { Connection: 'Upgrade', Upgrade: 'echo' } });
    req.on('upgrade', (res, socket) => resolve(socket));
    req.on('error', reject);
    req.end();
  });
}

/**
 * The upgraded socket is the caller's: the agent neither times it out nor
 * ends it. The caller ends it, and the agent counts its close.
 */
async function callersUntilClosed(agent, socket) {
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
}

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
      // Nothing of the agent's or core's listens but the agent's 'close';
      // net's own 'end' listener is there, as with Node's agent.
      for (const event of ['free', 'agentRemove', 'timeout', 'error']) assert.equal(socket.listenerCount(event), 0, event);
      assert.deepEqual(socket.listeners('end').map((listener) => listener.name), ['onReadableStreamEnd']);
      await callersUntilClosed(agent, socket);
      assert.equal(agent.createSocketCount, 1);
    });

    it('counts the close of an upgraded socket for its reason, told by core\'s own \'agentRemove\' listener', async () => {
      agent = createAgent(protocol);
      const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');
      const socket = await upgrade(mod, server.url(), { agent });
      socket.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      const [origin] = Object.values(agent.getStats().origins);
      assert.deepEqual(origin.closeReasons, { upgrade: 1 });
    });

    it('leaves the upgrade to core\'s own \'agentRemove\' listener: an idle socket has no more of them than with Node\'s agent', async () => {
      agent = createAgent(protocol);
      const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');
      const nodeAgent = new mod.Agent({ keepAlive: true, ca: fixtures.ca });
      try {
        const ours = await request(server.url(), { agent });
        const core = await request(server.url(), { agent: nodeAgent });
        await waitFor(() => total(agent.getCurrentStatus().freeSockets) === 1 && Object.keys(nodeAgent.freeSockets).length === 1);
        assert.equal(ours.socket.listenerCount('agentRemove'), core.socket.listenerCount('agentRemove'));
      } finally {
        nodeAgent.destroy();
      }
    });
  });
}

describe('upgrade of a socket from a direct createConnection call (http:)', () => {
  let server;
  let agent;
  afterEach(async () => {
    agent.destroy();
    await server.close();
  });

  it('hands it over too (core set up no listener of its own on it), and counts its close', async () => {
    server = await createServer('http:');
    server.server.on('upgrade', (req, socket) => {
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.on('data', (chunk) => socket.write(chunk));
      socket.on('error', () => {});
    });
    agent = createAgent('http:', { freeSocketTimeout: 50 });
    // No agent: core calls createConnection itself (with the request's
    // options, whose path Node 18 would take for a Unix socket's).
    const upgraded = await upgrade(http, server.url(), {
      createConnection: ({ host, port }, callback) => agent.createConnection({ host, port }, callback),
    });
    assert.equal(agent.createSocketCount, 1);
    await callersUntilClosed(agent, upgraded);
    const [origin] = Object.values(agent.getStats().origins);
    assert.deepEqual(origin.closeReasons, { upgrade: 1 });
  });
});
