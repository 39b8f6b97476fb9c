'use strict';

const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor } = require('./support/request');
const { constants } = require('..');

for (const protocol of PROTOCOLS) {
  describe(`active-socket timeout (${protocol})`, () => {
    let server;
    let agent;
    const held = [];
    before(async () => {
      server = await createServer(protocol, (req, res) => {
        if (req.url.startsWith('/hold')) held.push(res);
        else res.end('ok');
      });
    });
    after(() => server.close());
    afterEach(() => {
      agent.destroy();
      for (const res of held.splice(0)) res.destroy();
    });

    it('destroys an idle in-flight socket with ERR_SOCKET_TIMEOUT when the caller has no timeout listener', async () => {
      agent = createAgent(protocol, { timeout: 150 });
      const err = await request(server.url('/hold'), { agent }).then(
        () => assert.fail('expected an error'),
        (e) => e,
      );
      assert.equal(err.code, 'ERR_SOCKET_TIMEOUT');
      assert.equal(err.timeout, 150);
      assert.equal(err.message, 'Socket timeout');
      assert.match(err.socketName, /^sock\[\d+#127\.0\.0\.1:\d+:/);
      assert.ok(err.req.socket.destroyed);
      await waitFor(() => agent.closeSocketCount === 1);
      const status = agent.getCurrentStatus();
      assert.equal(status.timeoutSocketCount, 1);
      assert.equal(status.errorSocketCount, 1);
      assert.deepEqual(status.sockets, {});
    });

    it('takes the socket out of agent.sockets before the request hears of the timeout (as agentkeepalive)', async () => {
      agent = createAgent(protocol, { timeout: 150 });
      const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');
      const seen = await new Promise((resolve) => {
        mod.get(server.url('/hold'), { agent }, () => resolve('a response'))
          .on('error', (err) => resolve({ code: err.code, pools: Object.keys(agent.sockets) }));
      });
      assert.deepEqual(seen, { code: 'ERR_SOCKET_TIMEOUT', pools: [] });
    });

    it('a request queued behind a timed-out socket gets its socket at once, never beyond maxSockets', async () => {
      agent = createAgent(protocol, { timeout: 150, maxSockets: 1 });
      const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');
      const active = () => Object.values(agent.sockets).reduce((n, list) => n + list.length, 0);
      const atError = [];
      const atSocket = [];
      const errors = [1, 2, 3].map(() => new Promise((resolve) => {
        mod.get(server.url('/hold'), { agent }, () => resolve('a response'))
          .on('socket', () => atSocket.push(active()))
          .on('error', (err) => {
            // As agentkeepalive: the next queued request already has its socket.
            atError.push(active());
            resolve(err.code);
          });
      }));
      assert.deepEqual(await Promise.all(errors), ['ERR_SOCKET_TIMEOUT', 'ERR_SOCKET_TIMEOUT', 'ERR_SOCKET_TIMEOUT']);
      assert.deepEqual(atError, [1, 1, 0]);
      assert.deepEqual(atSocket, [1, 1, 1], 'never two sockets at once with maxSockets: 1');
      await waitFor(() => agent.closeSocketCount === 3);
      assert.equal(agent.createSocketCount, 3);
    });

    it('leaves the decision to a caller listening for \'timeout\' on the request', async () => {
      agent = createAgent(protocol, { timeout: 150 });
      const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');
      const outcome = await new Promise((resolve) => {
        const req = mod.get(server.url('/hold'), { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, reused: req.socket }));
        });
        req.on('error', (err) => resolve({ error: err }));
        req.on('timeout', () => {
          // The agent has not destroyed the socket: answer now, on the same socket.
          assert.equal(req.socket.destroyed, false);
          held.shift().end('late');
        });
      });
      assert.equal(outcome.error, undefined);
      assert.equal(outcome.status, 200);
      assert.equal(agent.timeoutSocketCount, 1);
      assert.equal(agent.errorSocketCount, 0);
    });

    it('uses the request\'s own timeout where given', async () => {
      agent = createAgent(protocol, { timeout: 60000 });
      const err = await request(server.url('/hold'), { agent, timeout: 120 }).then(
        () => assert.fail('expected an error'),
        (e) => e,
      );
      assert.equal(err.code, 'ERR_SOCKET_TIMEOUT');
      assert.equal(err.timeout, 120);
    });

    it('every reuse resets the socket timeout to the active timeout', async () => {
      agent = createAgent(protocol, { timeout: 5000, freeSocketTimeout: 1000 });
      const first = await request(server.url(), { agent });
      const socket = first.socket;
      const pending = request(server.url('/hold'), { agent });
      assert.equal(socket.timeout, 5000, 'a reused socket is back on the active timeout');
      await waitFor(() => held.length === 1);
      held.shift().end('ok');
      const second = await pending;
      assert.equal(second.socket, socket);
    });

    it('a queued request gets the active timeout, not the free one', async () => {
      agent = createAgent(protocol, { timeout: 5000, freeSocketTimeout: 1000, maxSockets: 1 });
      const a = request(server.url('/hold'), { agent });
      const b = request(server.url('/hold'), { agent });
      await waitFor(() => held.length === 1);
      held.shift().end('a');
      const { socket } = await a;
      await waitFor(() => held.length === 1);
      // The queued request is being served on the first request's socket.
      assert.equal(socket.timeout, 5000);
      held.shift().end('b');
      const second = await b;
      assert.equal(second.socket, socket);
      assert.equal(second.reusedSocket, true);
    });

    it('timeout: 0 turns the active timeout off', async () => {
      agent = createAgent(protocol, { timeout: 0, freeSocketTimeout: 1000 });
      const first = await request(server.url(), { agent });
      request(server.url('/hold'), { agent }).catch(() => {});
      assert.equal(first.socket.timeout, 0);
      assert.equal(first.socket[constants.SOCKET_REQUEST_COUNT], 2);
    });
  });
}
