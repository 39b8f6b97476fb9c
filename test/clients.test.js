'use strict';

// steady-agent under the HTTP clients people plug agentkeepalive into. Each
// client makes 20 sequential requests through a fresh agent, over http and
// over https, and every one of them must travel on the same socket.
const assert = require('node:assert/strict');
const axios = require('axios');
const { HttpAgent, HttpsAgent } = require('steady-agent');
const { createServer, tlsClientOptions } = require('./support/servers');
const { waitFor } = require('./support/request');
const { loadClients, CLIENT_NAMES } = require('./support/clients');

const REQUESTS = 20;

function sum(perOrigin) {
  return Object.values(perOrigin).reduce((total, count) => total + count, 0);
}

describe('real clients', () => {
  let clients;
  before(async () => {
    clients = await loadClients();
  });

  for (const protocol of ['http:', 'https:']) {
    describe(`over ${protocol}`, () => {
      for (const name of CLIENT_NAMES) {
        describe(name, () => {
          let server;
          let agent;

          beforeEach(async () => {
            server = await createServer(protocol);
            agent = protocol === 'https:'
              ? new HttpsAgent({ ca: tlsClientOptions.ca })
              : new HttpAgent();
          });

          afterEach(async () => {
            if (agent) agent.destroy();
            if (server) await server.close();
            agent = null;
            server = null;
          });

          it(`makes ${REQUESTS} sequential requests on one socket`, async function () {
            if (clients[name] === null) this.skip(); // got 14 on Node 18: its engines ask for Node 20
            const results = [];
            for (let i = 0; i < REQUESTS; i++) {
              results.push(await clients[name](server.url(`/${i}`), agent));
            }

            assert.deepEqual(
              results,
              results.map((_, i) => ({ status: 200, body: `ok GET /${i}` })),
            );
            assert.equal(server.accepted, 1, 'connections the server accepted');

            // The client may hand back the body a moment before the socket
            // returns to the pool; wait for the pool, not for a duration.
            await waitFor(() => sum(agent.getCurrentStatus().sockets) === 0);
            const status = agent.getCurrentStatus();
            assert.equal(status.createSocketCount, 1);
            assert.equal(status.requestCount, REQUESTS);
            assert.equal(status.closeSocketCount, 0);
            assert.equal(status.createSocketErrorCount, 0);
            assert.equal(status.errorSocketCount, 0);
            assert.equal(status.timeoutSocketCount, 0);
            assert.equal(sum(status.freeSockets), 1);
            assert.equal(sum(status.sockets), 0);
            assert.equal(sum(status.requests), 0);
            assert.equal(agent.createSocketCount, 1);
            assert.equal(agent.requestCount, REQUESTS);

            agent.destroy();
            await waitFor(() => agent.closeSocketCount === 1);
            const closed = agent.getCurrentStatus();
            assert.equal(closed.createSocketCount, 1);
            assert.equal(closed.errorSocketCount, 0);
            assert.equal(sum(closed.freeSockets), 0);
            assert.equal(sum(closed.sockets), 0);
          });
        });
      }
    });
  }
});

// axios sets the socket timeout of each request itself: its `timeout`, or
// `req.setTimeout(0)` when it has none, which switches the agent's active
// timeout off (the README's axios section). No waiting for a timeout that
// does not come: the socket's own timeout shows it.
describe('axios and the agent\'s active timeout', () => {
  for (const protocol of ['http:', 'https:']) {
    describe(`over ${protocol}`, () => {
      let server;
      let agent;
      const held = [];

      beforeEach(async () => {
        server = await createServer(protocol, (req, res) => held.push(res));
      });

      afterEach(async () => {
        for (const res of held.splice(0)) res.end();
        agent.destroy();
        await server.close();
      });

      const newAgent = (options) => (protocol === 'https:'
        ? new HttpsAgent({ ca: tlsClientOptions.ca, ...options })
        : new HttpAgent(options));
      const get = (options) => axios.get(server.url('/held'), {
        adapter: 'http', proxy: false, responseType: 'text', httpAgent: agent, httpsAgent: agent, ...options,
      });
      const heldSocket = () => {
        const sockets = Object.values(agent.sockets).flat();
        assert.equal(sockets.length, 1);
        return sockets[0];
      };

      for (const [transport, maxRedirects] of [['follow-redirects', 5], ['native', 0]]) {
        it(`without axios's timeout (${transport} transport), the agent's timeout is off: socket timeout 0`, async () => {
          agent = newAgent({ timeout: 150 });
          const response = get({ maxRedirects });
          await waitFor(() => held.length === 1);
          assert.equal(heldSocket().timeout, 0);
          held.pop().end('late');
          const res = await response;
          assert.deepEqual([res.status, res.data], [200, 'late']);
          assert.equal(agent.timeoutSocketCount, 0);
        });
      }

      it('axios\'s own timeout fails a request the server holds, with ECONNABORTED', async () => {
        agent = newAgent(); // the agent's active timeout: 8 s
        const response = get({ timeout: 150 });
        await assert.rejects(response, (err) => {
          assert.equal(err.code, 'ECONNABORTED');
          assert.equal(err.message, 'timeout of 150ms exceeded');
          return true;
        });
        assert.equal(held.length, 1, 'the server had the request');
      });
    });
  }
});
