'use strict';

const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor } = require('./support/request');

for (const protocol of PROTOCOLS) {
  describe(`socket errors (${protocol})`, () => {
    let server;
    let agent;
    let uncaught;
    const onUncaught = (err) => { uncaught = err; };
    beforeEach(async () => {
      uncaught = undefined;
      process.on('uncaughtException', onUncaught);
      server = await createServer(protocol, (req, res) => {
        if (req.url === '/cut') {
          res.write('partial');
          setImmediate(() => req.socket.destroy());
        } else {
          res.end('ok');
        }
      });
    });
    afterEach(async () => {
      process.removeListener('uncaughtException', onUncaught);
      agent.destroy();
      await server.close();
    });

    it('an error on a free socket is counted, ends the socket and never reaches the process', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url(), { agent });
      const socket = first.socket;
      assert.equal(agent.getCurrentStatus().freeSockets[Object.keys(agent.freeSockets)[0]], 1);
      // The server resets the idle connection (TCP RST: ECONNRESET on the
      // client); a TLS server socket cannot send a bare RST, so it closes.
      const [serverSide] = server.connections;
      if (protocol === 'http:') serverSide.resetAndDestroy();
      else serverSide.destroy();
      await waitFor(() => socket.destroyed);
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(uncaught, undefined);
      assert.deepEqual(agent.getCurrentStatus().freeSockets, {});

      const second = await request(server.url(), { agent });
      assert.notEqual(second.socket, socket);
      assert.equal(second.body, 'ok');
    });

    it('an error injected on a free socket is counted in errorSocketCount', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url(), { agent });
      first.socket.destroy(new Error('injected'));
      await waitFor(() => agent.closeSocketCount === 1);
      const status = agent.getCurrentStatus();
      assert.equal(status.errorSocketCount, 1);
      assert.equal(status.createSocketErrorCount, 0);
      assert.deepEqual(status.freeSockets, {});
      assert.equal(uncaught, undefined);
    });

    it('a free socket destroyed with an error just as core hands out another leaves the pool consistent', async () => {
      // Learning off: a pooled socket closed by anyone but the agent reads as
      // the server's idle limit, which is not what this test is about.
      agent = createAgent(protocol, { learnServerTimeout: false });
      // Three free sockets, oldest first: [a, b, c].
      const held = await Promise.all([1, 2, 3].map(() => request(server.url(), { agent })));
      const pool = Object.keys(agent.freeSockets)[0];
      const [a, b, c] = agent.freeSockets[pool];
      assert.deepEqual(new Set([a, b, c]), new Set(held.map((r) => r.socket)));
      // Someone destroys the oldest; in the same tick a request comes: core
      // drops destroyed sockets from the front and takes the newest.
      a.destroy(new Error('injected'));
      const pending = request(server.url(), { agent });
      assert.deepEqual(agent.freeSockets[pool], [b]);
      const result = await pending;
      assert.equal(result.socket, c);
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(agent.errorSocketCount, 1);
      assert.equal(agent.getCurrentStatus().freeSockets[pool], 2);
      assert.equal(uncaught, undefined);
    });

    it('the last free socket destroyed with an error as a request takes the pool', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url(), { agent });
      first.socket.destroy(new Error('injected'));
      const second = await request(server.url(), { agent });
      assert.notEqual(second.socket, first.socket);
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(agent.errorSocketCount, 1);
      assert.equal(uncaught, undefined);
    });

    it('an error on a socket nobody else listens to reaches the process, as without the agent', async () => {
      agent = createAgent(protocol);
      const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');
      const req = mod.get(server.url('/cut'), { agent });
      const requestError = new Promise((resolve) => req.on('error', resolve));
      // Mocha fails a test on any uncaught exception: only ours listens here.
      const others = process.listeners('uncaughtException').filter((l) => l !== onUncaught);
      for (const listener of others) process.removeListener('uncaughtException', listener);
      try {
        req.on('socket', (socket) => {
          // The caller takes the request's own listener off the socket; the
          // agent's counting listener is then the only one left.
          const listeners = socket.listeners('error');
          socket.removeListener('error', listeners[listeners.length - 1]);
          socket.destroy();
          socket.emit('error', new Error('mock socket error'));
        });
        await waitFor(() => uncaught !== undefined);
      } finally {
        for (const listener of others) process.on('uncaughtException', listener);
      }
      assert.equal(uncaught.message, 'mock socket error');
      assert.equal(agent.errorSocketCount + agent.createSocketErrorCount, 1, 'still counted');
      // The request itself lost its socket: core tells it so.
      assert.equal((await requestError).message, 'socket hang up');
    });

    it('an error on an active socket reaches the request', async () => {
      agent = createAgent(protocol);
      const err = await request(server.url('/cut'), { agent }).then(
        () => assert.fail('expected an error'),
        (e) => e,
      );
      assert.ok(['ECONNRESET', 'ERR_STREAM_PREMATURE_CLOSE'].includes(err.code) || /aborted/.test(err.message), err.message);
      await waitFor(() => agent.closeSocketCount === 1);
      assert.deepEqual(agent.getCurrentStatus().sockets, {});
      assert.equal(uncaught, undefined);
    });
  });
}
