'use strict';

// steady-agent under the HTTP clients people plug agentkeepalive into. Each
// client makes 20 sequential requests through a fresh agent, over http and
// over https, and every one of them must travel on the same socket.
const assert = require('node:assert/strict');
const { HttpAgent, HttpsAgent } = require('steady-agent');
const axios = require('axios');
const superagent = require('superagent');
const fetchV2 = require('node-fetch-2');
const { createServer, tlsClientOptions } = require('./support/servers');
const { request, waitFor } = require('./support/request');

const REQUESTS = 20;

// got and node-fetch 3 are ES modules only. They are loaded with import() in
// the `before` hook: require() of an ES module works only from Node 20.19 and
// 22.12, and the suite runs on Node 18 too.
let got;
let fetchV3;

// Each client: get(url, agent) resolves with { status, body }.
const clients = [
  {
    name: 'http.request / https.request',
    async get(url, agent) {
      const { status, body } = await request(url, { agent });
      return { status, body };
    },
  },
  {
    name: 'axios (httpAgent / httpsAgent)',
    async get(url, agent) {
      const res = await axios.get(url, {
        adapter: 'http',
        proxy: false,
        responseType: 'text',
        httpAgent: agent,
        httpsAgent: agent,
      });
      return { status: res.status, body: res.data };
    },
  },
  {
    name: 'got (agent: { http, https })',
    async get(url, agent) {
      const res = await got(url, {
        agent: { http: agent, https: agent },
        http2: false,
        retry: { limit: 0 },
        throwHttpErrors: false,
      });
      return { status: res.statusCode, body: res.body };
    },
  },
  {
    name: 'node-fetch v2',
    async get(url, agent) {
      const res = await fetchV2(url, { agent });
      return { status: res.status, body: await res.text() };
    },
  },
  {
    name: 'node-fetch v3',
    async get(url, agent) {
      const res = await fetchV3(url, { agent });
      return { status: res.status, body: await res.text() };
    },
  },
  {
    name: 'superagent (.agent())',
    async get(url, agent) {
      const res = await superagent.get(url).agent(agent).buffer(true);
      return { status: res.status, body: res.text };
    },
  },
];

function sum(perOrigin) {
  return Object.values(perOrigin).reduce((total, count) => total + count, 0);
}

describe('real clients', () => {
  before(async () => {
    got = (await import('got')).default;
    fetchV3 = (await import('node-fetch')).default;
  });

  for (const protocol of ['http:', 'https:']) {
    describe(`over ${protocol}`, () => {
      for (const client of clients) {
        describe(client.name, () => {
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
              results.push(await client.get(server.url(`/${i}`), agent));
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
