'use strict';

// Writes to agent.options after construction take effect, as in
// agentkeepalive: timeout, freeSocketTimeout and socketActiveTTL govern the
// next socket that goes active or free.
const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor, delay } = require('./support/request');

for (const protocol of PROTOCOLS) {
  describe(`agent.options written after construction (${protocol})`, () => {
    let server;
    let agent;
    const held = [];
    before(async () => {
      server = await createServer(protocol, (req, res) => {
        req.resume();
        if (req.url === '/hold') held.push(res);
        else res.end('ok');
      });
    });
    after(() => server.close());
    afterEach(() => {
      agent.destroy();
      for (const res of held.splice(0)) res.destroy();
    });

    it('freeSocketTimeout: the next socket to go free closes after the new value', async () => {
      agent = createAgent(protocol); // 4 s by default
      agent.options.freeSocketTimeout = 100;
      const { socket } = await request(server.url(), { agent });
      await waitFor(() => socket.destroyed);
      assert.equal(agent.timeoutSocketCount, 1);
      assert.deepEqual(agent.getCurrentStatus().freeSockets, {});
    });

    it('timeout: the next socket to go active times out after the new value', async () => {
      agent = createAgent(protocol);
      // A socket in the pool, armed with the old timeout when it goes active again.
      await request(server.url(), { agent });
      agent.options.timeout = 150;
      const err = await request(server.url('/hold'), { agent }).then(
        () => assert.fail('expected a timeout'),
        (e) => e,
      );
      assert.equal(err.code, 'ERR_SOCKET_TIMEOUT');
      assert.equal(err.timeout, 150);
      assert.equal(err.req.reusedSocket, true);
    });

    it('socketActiveTTL: a socket older than the new TTL is not kept', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url(), { agent });
      assert.equal(total(agent.getCurrentStatus().freeSockets), 1);
      agent.options.socketActiveTTL = 1;
      await delay(5); // older than 1 ms, whatever the clock's resolution
      // Checked before reuse: the pooled socket is past the new TTL.
      const second = await request(server.url(), { agent });
      assert.notEqual(second.socket, first.socket);
      assert.equal(second.reusedSocket, false);
      assert.ok(first.socket.destroyed);
      // And when it goes free: the new socket is past it too by then.
      await waitFor(() => second.socket.destroyed);
      assert.deepEqual(agent.getCurrentStatus().freeSockets, {});
    });
  });
}
