'use strict';

// Nagle off on every socket, http and https. Core's https client did not set
// TCP_NODELAY before Node 24.15, so there the agent is what turns it off.
// The socket records the setting under core's kSetNoDelay symbol; the latency
// effect (~40 ms delayed ACK) is measured in benchmark/nagle.js, not here.
const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request } = require('./support/request');

function noDelayOf(socket) {
  const symbol = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'kSetNoDelay');
  return symbol === undefined ? undefined : socket[symbol];
}

for (const protocol of PROTOCOLS) {
  describe(`Nagle off (${protocol})`, () => {
    let server;
    let agent;
    before(async () => { server = await createServer(protocol); });
    after(() => server.close());
    afterEach(() => agent.destroy());

    it('every new socket has TCP_NODELAY set, also with noDelay: false passed to core', async () => {
      agent = createAgent(protocol, { maxSockets: 3, noDelay: false });
      const results = await Promise.all([1, 2, 3].map(() => request(server.url(), { agent })));
      const sockets = new Set(results.map((r) => r.socket));
      assert.equal(sockets.size, 3);
      for (const socket of sockets) assert.equal(noDelayOf(socket), true);
    });

    it('a reused socket keeps it', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url(), { agent });
      const second = await request(server.url(), { agent });
      assert.equal(second.socket, first.socket);
      assert.equal(noDelayOf(second.socket), true);
    });
  });
}
