'use strict';

// The options of the front doors that need a server of their own, on real
// loopback servers and without timing assertions: connectTimeout (a
// blackhole), maxQueue / queueTimeout, dns (a DNS server of the test's), and
// steady-agent/otel observing a dispatcher. For createDispatcher (the newest
// undici this Node runs) and steady-agent/fetch.
const assert = require('node:assert/strict');
const http = require('node:http');
const { createFetch } = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { observeAgent } = require('steady-agent/otel');
const { closeAfterEach } = require('./support/cleanup');
const { UNDICI_MAJORS } = require('./support/fetch');
const { startBlackhole } = require('./support/blackhole');
const { createDnsServer } = require('./support/dns_server');
const { inMemoryMetrics } = require('./support/otel');

const newest = UNDICI_MAJORS.filter((entry) => entry.runs).at(-1);

/** A server whose responses wait until release(), and answer at once after it (or with /now). */
async function heldServer() {
  const held = [];
  let holding = true;
  const server = http.createServer((req, res) => {
    if (!holding || req.url.includes('now')) res.end('ok');
    else held.push(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    url: (path = '/') => `http://127.0.0.1:${server.address().port}${path}`,
    release() {
      holding = false;
      for (const res of held.splice(0)) res.end('ok');
    },
    close: () => new Promise((resolve) => {
      holding = false;
      for (const res of held.splice(0)) res.end('ok');
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

/** The error a request failed with: for fetch, the cause under TypeError('fetch failed'). */
async function failure(promise, viaFetch) {
  const err = await promise.then(() => null, (error) => error);
  assert.ok(err, 'the request should fail');
  if (!viaFetch) return err;
  assert.equal(err.message, 'fetch failed');
  return err.cause;
}

// The two front doors, each as { send(url, client) -> Promise<text>, make(options), viaFetch }.
const DOORS = [
  {
    title: 'steady-agent/fetch',
    viaFetch: true,
    make: (options) => {
      const fetch = createFetch(options);
      return { client: fetch, dispatcher: fetch.dispatcher, close: () => fetch.close() };
    },
    send: async (url, client) => (await client(url)).text(),
  },
  {
    title: `createDispatcher (${newest.name})`,
    viaFetch: false,
    make: (options) => {
      const dispatcher = createDispatcher(newest.load(), options);
      return { client: dispatcher, dispatcher, close: () => dispatcher.close() };
    },
    send: async (url, client) => (await newest.load().request(url, { dispatcher: client })).body.text(),
  },
];

for (const door of DOORS) {
  describe(`${door.title}: connectTimeout, the queue, dns and otel`, function () {
    this.timeout(20000);
    // Servers first: they answer what they held, so that close() of a dispatcher ends.
    const { keep } = closeAfterEach({ inOrder: true });

    it('connectTimeout fails a connect that never completes, with the agent\'s error', async () => {
      const blackhole = keep(await startBlackhole());
      const { client } = keep(door.make({ connectTimeout: 200 }));
      const err = await failure(door.send(`http://127.0.0.1:${blackhole.port}/`, client), door.viaFetch);
      assert.equal(err.code, 'ETIMEDOUT');
      assert.equal(err.name, 'ConnectTimeoutError');
    });

    it('maxQueue fails a request beyond the queue at once, never sent', async () => {
      const server = keep(await heldServer());
      const { client, dispatcher } = keep(door.make({ maxSockets: 1, maxQueue: 1 }));
      const first = door.send(server.url('/1'), client);
      const second = door.send(server.url('/2'), client);
      const err = await failure(door.send(server.url('/3'), client), door.viaFetch);
      assert.equal(err.code, 'ERR_AGENT_QUEUE_FULL');
      server.release();
      assert.equal(await first, 'ok');
      assert.equal(await second, 'ok');
      const [stats] = Object.values(dispatcher.getStats().origins);
      assert.equal(stats.queueFull, 1);
    });

    it('queueTimeout fails a request that waited too long behind maxSockets', async () => {
      const server = keep(await heldServer());
      const { client, dispatcher } = keep(door.make({ maxSockets: 1, queueTimeout: 50 }));
      const first = door.send(server.url('/1'), client);
      const err = await failure(door.send(server.url('/2'), client), door.viaFetch);
      assert.equal(err.code, 'ERR_AGENT_QUEUE_TIMEOUT');
      server.release();
      assert.equal(await first, 'ok');
      const [stats] = Object.values(dispatcher.getStats().origins);
      assert.equal(stats.queueTimeouts, 1);
    });

    it('dns: a host name is resolved by the resolver given, and getStats() shows it', async () => {
      const server = keep(await heldServer());
      const dns = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.1'], ttl: 30 } }));
      const { client, dispatcher } = keep(door.make({ dns: { resolver: dns.callbackResolver() } }));
      assert.equal(await door.send(`http://svc.test:${server.port}/now`, client), 'ok');
      assert.ok(dns.queries('svc.test') >= 1);
      const stats = dispatcher.getStats();
      assert.ok(stats.dns, 'getStats().dns');
      assert.deepEqual(Object.keys(stats.origins), [`svc.test:${server.port}:`]);
    });

    it('steady-agent/otel observes it: open connections by state, with the scheme', async () => {
      const server = keep(await heldServer());
      const otel = inMemoryMetrics();
      keep({ close: () => otel.shutdown() });
      const { client, dispatcher } = keep(door.make());
      const stop = observeAgent(dispatcher, { meterProvider: otel.meterProvider });
      keep({ close: stop });
      assert.equal(await door.send(server.url('/now'), client), 'ok');
      assert.equal(await door.send(server.url('/now'), client), 'ok');
      const found = await otel.collect();
      const open = {};
      for (const point of found['http.client.open_connections'].points) {
        open[point.attributes['http.connection.state']] = point.value;
        assert.equal(point.attributes['url.scheme'], 'http');
        assert.equal(point.attributes['server.port'], server.port);
      }
      const [stats] = Object.values(dispatcher.getStats().origins);
      assert.ok(stats.free >= 1);
      assert.deepEqual(open, { active: 0, idle: stats.free }, JSON.stringify(stats));
    });
  });
}
