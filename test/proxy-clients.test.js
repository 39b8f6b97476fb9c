'use strict';

// steady-agent's proxy support under the HTTP clients people use
// (test/support/clients.js): axios (with its own proxy handling off,
// `proxy: false`), got, node-fetch, superagent and bare http(s). The
// agent does the proxying: 20 requests to an https target through one
// tunnel, 20 requests to two http targets over one connection to the proxy.
const assert = require('node:assert/strict');
const { HttpAgent, HttpsAgent } = require('steady-agent');
const { createHttpServer, createHttpsServer, fixtures } = require('./support/servers');
const { closeAfterEach } = require('./support/cleanup');
const { startProxy } = require('./support/proxy');
const { loadClients, CLIENT_NAMES } = require('./support/clients');

const REQUESTS = 20;

describe('proxy with real clients', () => {
  let clients;
  before(async () => {
    clients = await loadClients();
  });

  for (const name of CLIENT_NAMES) {
    describe(name, () => {
      const { keep, agentOf } = closeAfterEach();
      beforeEach(function () {
        if (clients[name] === null) this.skip(); // got 14 on Node 18: its engines ask for Node 20
      });

      it(`${REQUESTS} requests to an https target through one tunnel`, async () => {
        const proxy = keep(await startProxy({ auth: { username: 'u', password: 'p w' } }));
        const target = keep(await createHttpsServer());
        const agent = agentOf(HttpsAgent, { proxy: proxy.url('u:p%20w'), ca: fixtures.ca });
        for (let i = 0; i < REQUESTS; i++) {
          assert.deepEqual(await clients[name](target.url(`/s${i}`), agent), { status: 200, body: `ok GET /s${i}` });
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
        const agent = agentOf(HttpAgent, { proxy: proxy.url() });
        for (let i = 0; i < REQUESTS; i++) {
          const target = i % 2 === 0 ? first : second;
          assert.deepEqual(await clients[name](target.url(`/h${i}`), agent), { status: 200, body: `ok GET /h${i}` });
        }
        assert.equal(proxy.accepted, 1);
        assert.equal(proxy.requests, REQUESTS);
        assert.ok(proxy.requestLines.every((line) => /^GET http:\/\/127\.0\.0\.1:\d+\/h\d+$/.test(line)));
      });
    });
  }
});
