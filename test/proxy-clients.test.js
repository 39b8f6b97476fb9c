'use strict';

// steady-agent's proxy support under the HTTP clients people use: axios
// (with its own proxy handling off, `proxy: false`), got and node-fetch. The
// agent does the proxying: 20 requests to an https target through one
// tunnel, 20 requests to two http targets over one connection to the proxy.
const assert = require('node:assert/strict');
const { HttpAgent, HttpsAgent } = require('steady-agent');
const axios = require('axios');
const fetchV2 = require('node-fetch-2');
const { createHttpServer, createHttpsServer, fixtures } = require('./support/servers');
const { startProxy } = require('./support/proxy');

const REQUESTS = 20;

// got and node-fetch 3 are ES modules only (see clients.test.js).
let got;
let fetchV3;

const clients = [
  {
    name: 'axios (proxy: false)',
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
    name: 'got',
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
    name: 'node-fetch v3',
    async get(url, agent) {
      const res = await fetchV3(url, { agent });
      return { status: res.status, body: await res.text() };
    },
  },
  {
    name: 'node-fetch v2',
    async get(url, agent) {
      const res = await fetchV2(url, { agent });
      return { status: res.status, body: await res.text() };
    },
  },
];

describe('proxy with real clients', () => {
  before(async () => {
    got = (await import('got')).default;
    fetchV3 = (await import('node-fetch')).default;
  });

  for (const client of clients) {
    describe(client.name, () => {
      const closers = [];
      afterEach(async () => {
        for (const close of closers.splice(0).reverse()) await close();
      });
      const keep = (handle) => {
        closers.push(() => handle.close());
        return handle;
      };

      it(`${REQUESTS} requests to an https target through one tunnel`, async () => {
        const proxy = keep(await startProxy({ auth: { username: 'u', password: 'p w' } }));
        const target = keep(await createHttpsServer());
        const agent = new HttpsAgent({ proxy: proxy.url('u:p%20w'), ca: fixtures.ca });
        closers.push(() => agent.destroy());
        for (let i = 0; i < REQUESTS; i++) {
          assert.deepEqual(await client.get(target.url(`/s${i}`), agent), { status: 200, body: `ok GET /s${i}` });
        }
        assert.equal(proxy.connects, 1);
        assert.equal(proxy.authFailures, 0);
        assert.equal(target.accepted, 1);
        assert.equal(agent.createSocketCount, 1);
      });

      it(`${REQUESTS} requests to two http targets over one connection to the proxy`, async () => {
        const proxy = keep(await startProxy());
        const first = keep(await createHttpServer());
        const second = keep(await createHttpServer());
        const agent = new HttpAgent({ proxy: proxy.url() });
        closers.push(() => agent.destroy());
        for (let i = 0; i < REQUESTS; i++) {
          const target = i % 2 === 0 ? first : second;
          assert.deepEqual(await client.get(target.url(`/h${i}`), agent), { status: 200, body: `ok GET /h${i}` });
        }
        assert.equal(proxy.accepted, 1);
        assert.equal(proxy.requests, REQUESTS);
        assert.ok(proxy.requestLines.every((line) => /^GET http:\/\/127\.0\.0\.1:\d+\/h\d+$/.test(line)));
      });
    });
  }
});
