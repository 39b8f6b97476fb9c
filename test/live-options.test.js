'use strict';

// Writes to agent.options after construction take effect, as in
// agentkeepalive: timeout, freeSocketTimeout and socketActiveTTL govern the
// next socket that goes active or free.
const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, requestError, waitFor, delay } = require('./support/request');

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
      const err = await requestError(request(server.url('/hold'), { agent }));
      assert.equal(err.code, 'ERR_SOCKET_TIMEOUT');
      assert.equal(err.timeout, 150);
      assert.equal(err.req.reusedSocket, true);
    });

    it('timeout takes what the constructor takes: \'150ms\' is 150, for a new socket too', async () => {
      agent = createAgent(protocol);
      // Core copies agent.options.timeout into the options a new socket is
      // made with: a string there threw ERR_INVALID_ARG_TYPE from inside Node.
      agent.options.timeout = ' 150ms ';
      assert.equal(agent.options.timeout, 150);
      assert.equal({ ...agent.options }.timeout, 150);
      assert.ok(Object.keys(agent.options).includes('timeout'), 'still an own property, as core copies it');
      const err = await requestError(request(server.url('/hold'), { agent }));
      assert.equal(err.code, 'ERR_SOCKET_TIMEOUT');
      assert.equal(err.timeout, 150);
      assert.equal(err.req.reusedSocket, false);
    });

    it('timeout refuses, at the write, what the constructor refuses, naming the option and the value', async () => {
      agent = createAgent(protocol, { timeout: '3s' });
      assert.throws(() => { agent.options.timeout = 'abc'; }, (err) => {
        assert.ok(err instanceof TypeError);
        assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
        assert.equal(err.option, 'timeout');
        assert.equal(err.value, 'abc');
        assert.match(err.message, /"timeout".*'abc'/);
        return true;
      });
      assert.throws(() => { agent.options.timeout = -1; }, { name: 'InvalidOptionValueError', code: 'ERR_OUT_OF_RANGE', option: 'timeout' });
      assert.throws(() => { agent.options.timeout = {}; }, { code: 'ERR_INVALID_ARG_TYPE', option: 'timeout' });
      assert.equal(agent.options.timeout, 3000, 'a refused write changes nothing');
      // The agent still works.
      const { status } = await request(server.url(), { agent });
      assert.equal(status, 200);
      // Unset means the default, derived from freeSocketTimeout as at construction.
      agent.options.freeSocketTimeout = '5s';
      agent.options.timeout = undefined;
      assert.equal(agent.options.timeout, 10000);
      agent.options.socketActiveTTL = '1h';
      agent.options.socketActiveTTL = null;
      agent.options.freeSocketTimeout = undefined;
      assert.deepEqual([agent.options.socketActiveTTL, agent.options.freeSocketTimeout], [0, 4000]);
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
