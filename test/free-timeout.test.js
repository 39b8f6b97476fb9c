'use strict';

const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const Agent = require('..');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer, createRawServer, onRequests, rawResponse, fixtures } = require('./support/servers');
const { request, waitFor, delay } = require('./support/request');

for (const protocol of PROTOCOLS) {
  describe(`free-socket timeout (${protocol})`, () => {
    let server;
    let agent;
    before(async () => { server = await createServer(protocol); });
    after(() => server.close());
    afterEach(() => agent.destroy());

    // Records whether a socket was still in the free pool when it was destroyed.
    function watchDestroy(socket) {
      const seen = { inPool: undefined };
      const destroy = socket.destroy;
      socket.destroy = function (...args) {
        seen.inPool = Object.values(agent.freeSockets).some((list) => list.includes(socket));
        return destroy.apply(this, args);
      };
      return seen;
    }

    it('an idle pooled socket is closed after freeSocketTimeout and leaves the pool at once', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 100 });
      const first = await request(server.url(), { agent });
      const socket = first.socket;
      const seen = watchDestroy(socket);
      assert.equal(agent.getCurrentStatus().freeSockets[Object.keys(agent.freeSockets)[0]], 1);
      await waitFor(() => socket.destroyed);
      assert.equal(seen.inPool, false, 'out of the pool before it is destroyed');
      assert.deepEqual(agent.getCurrentStatus().freeSockets, {});
      await waitFor(() => agent.closeSocketCount === 1);
      const status = agent.getCurrentStatus();
      assert.equal(status.timeoutSocketCount, 1);
      assert.equal(status.errorSocketCount, 0, 'closed quietly');
      // A server-side close would be learned; our own timeout is not.
      assert.deepEqual(agent.serverIdleTimeouts, {});

      const second = await request(server.url(), { agent });
      assert.notEqual(second.socket, socket);
      assert.equal(second.reusedSocket, false);
    });

    it('emits \'timeout\' on the socket once it has left the pool, counted once (as agentkeepalive)', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 100 });
      const first = await request(server.url(), { agent });
      const socket = first.socket;
      const seen = [];
      socket.on('timeout', () => {
        seen.push({
          writable: socket.writable,
          inPool: Object.values(agent.freeSockets).some((list) => list.includes(socket)),
        });
      });
      await waitFor(() => agent.closeSocketCount === 1);
      assert.deepEqual(seen, [{ writable: false, inPool: false }]);
      assert.equal(agent.timeoutSocketCount, 1);
      assert.equal(agent.errorSocketCount, 0);
    });

    it('a \'timeout\' listener of an expired socket sees agent.freeSockets as it is, with the sockets still free', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 60000 });
      // Two sockets in the pool at once; the first expires early (its own freeSocketTimeout, as urllib sets it).
      const [first, second] = await Promise.all([request(server.url(), { agent }), request(server.url(), { agent })]);
      assert.notEqual(first.socket, second.socket);
      const pools = agent.freeSockets;
      const [free] = Object.values(pools);
      assert.equal(free.length, 2);
      // lifo: the last one freed is reused by the next request, and freed again with its own timeout.
      const [other, socket] = free;
      socket.freeSocketTimeout = 80;
      const third = await request(server.url(), { agent });
      assert.equal(third.socket, socket);
      const seen = [];
      socket.on('timeout', () => {
        seen.push({
          samePools: agent.freeSockets === pools,
          stillFree: Object.values(agent.freeSockets).some((list) => list.includes(other)),
          inPool: Object.values(agent.freeSockets).some((list) => list.includes(socket)),
        });
      });
      await waitFor(() => socket.destroyed);
      assert.deepEqual(seen, [{ samePools: true, stillFree: true, inPool: false }]);
      assert.equal(agent.freeSockets, pools);
      assert.equal(other.destroyed, false);
    });

    it('a free socket on a timer a subclass armed times out once, counted once', async () => {
      const Base = protocol === 'https:' ? Agent.HttpsAgent : Agent.HttpAgent;
      class Custom extends Base {
        keepSocketAlive(socket) {
          if (!super.keepSocketAlive(socket)) return false;
          socket.setTimeout(60);
          return true;
        }
      }
      agent = new Custom(protocol === 'https:' ? { ca: fixtures.ca } : {});
      const { socket } = await request(server.url(), { agent });
      let timeouts = 0;
      socket.on('timeout', () => { timeouts++; });
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(timeouts, 1);
      assert.equal(agent.timeoutSocketCount, 1);
      assert.deepEqual(agent.getCurrentStatus().freeSockets, {});
    });

    it('a free timeout longer than the active timeout is honoured', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 400, timeout: 100 });
      const first = await request(server.url(), { agent });
      await delay(200);
      assert.equal(first.socket.destroyed, false, 'still pooled after the active timeout');
      const second = await request(server.url(), { agent });
      assert.equal(second.socket, first.socket);
      await waitFor(() => first.socket.destroyed);
      assert.equal(agent.timeoutSocketCount, 1);
    });

    it('a socket with its own freeSocketTimeout property uses it (urllib)', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 60000 });
      const first = await request(server.url(), { agent });
      const socket = first.socket;
      socket.freeSocketTimeout = 80;
      await request(server.url(), { agent });
      await waitFor(() => socket.destroyed);
      assert.deepEqual(agent.getCurrentStatus().freeSockets, {});
      assert.equal(agent.timeoutSocketCount, 1);
    });

    it('honours the older freeSocketKeepAliveTimeout socket property', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 60000 });
      const first = await request(server.url(), { agent });
      first.socket.freeSocketKeepAliveTimeout = 70;
      await request(server.url(), { agent });
      await waitFor(() => first.socket.destroyed);
      assert.equal(agent.timeoutSocketCount, 1);
    });

    it('freeSocketTimeout: 0 leaves only the server\'s announced limit', async () => {
      // Node's server announces `Keep-Alive: timeout=30`: 30 s less the 1 s margin.
      agent = createAgent(protocol, { freeSocketTimeout: 0, timeout: 100 });
      const first = await request(server.url(), { agent });
      assert.equal(first.headers['keep-alive'], 'timeout=30');
      await delay(200);
      const second = await request(server.url(), { agent });
      assert.equal(second.socket, first.socket);
    });

    it('an idle pooled socket does not keep the process alive', async () => {
      const script = `
        const { createAgent } = require(${JSON.stringify(require.resolve('./support/agents'))});
        const { request } = require(${JSON.stringify(require.resolve('./support/request'))});
        const agent = createAgent(${JSON.stringify(protocol)}, { freeSocketTimeout: 60000 });
        request(${JSON.stringify(server.url())}, { agent }).then((r) => {
          process.stdout.write(String(Object.keys(agent.freeSockets).length));
        });
      `;
      // The server lives in this process, so the child runs asynchronously.
      const child = await new Promise((resolve) => {
        execFile(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 15000 }, (error, stdout, stderr) => {
          resolve({ error, stdout, stderr });
        });
      });
      assert.equal(child.error, null, `the child did not exit by itself: ${child.error && child.error.message} ${child.stderr}`);
      assert.equal(child.stdout, '1');
    });
  });
}

describe('free-socket timeout without any limit', () => {
  let server;
  let agent;
  before(async () => {
    // Announces only `max`, no timeout, and never closes an idle connection.
    server = await createRawServer((socket) => {
      onRequests(socket, () => socket.write(rawResponse('ok', { 'Keep-Alive': 'max=50' })));
    });
  });
  after(() => server.close());
  afterEach(() => agent.destroy());

  it('freeSocketTimeout: 0 and no server timeout: the idle socket stays, past the active timeout', async () => {
    agent = createAgent('http:', { freeSocketTimeout: 0, timeout: 100 });
    const first = await request(server.url(), { agent });
    await delay(250);
    const second = await request(server.url(), { agent });
    assert.equal(second.socket, first.socket);
    assert.equal(agent.timeoutSocketCount, 0);
  });
});
