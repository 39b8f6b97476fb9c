'use strict';

// steady-agent under the HTTP clients people plug agentkeepalive into. Each
// client makes 20 sequential requests through a fresh agent, over http and
// over https, and every one of them must travel on the same socket.
const assert = require('node:assert/strict');
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

          it(`makes ${REQUESTS} sequential requests on one socket`, async () => {
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
