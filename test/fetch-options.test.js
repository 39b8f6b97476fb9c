'use strict';

// steady-agent/fetch and steady-agent/undici: the agent's options, validated
// by the agent and applied to the requests; bad input; wrapFetch given the
// global fetch; the agent's events for fetch's requests.
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const { createFetch } = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { wrapFetch } = require('steady-agent/retry');
const { closeAfterEach } = require('./support/cleanup');
const { createHttpServer } = require('./support/servers');
const { waitFor } = require('./support/request');
const { UNDICI_MAJORS } = require('./support/fetch');

const undici6 = UNDICI_MAJORS[0].load();

describe('steady-agent/fetch and /undici: bad input', () => {
  for (const [name, make] of [['createFetch', (options) => createFetch(options)], ['createDispatcher', (options) => createDispatcher(undici6, options)]]) {
    it(`${name}: a bad option throws the agent's error, naming the option and the value`, () => {
      assert.throws(() => make({ maxSockets: -1 }), { code: 'ERR_OUT_OF_RANGE', message: /"maxSockets" option .*Received -1/ });
      assert.throws(() => make({ freeSocketTimeout: 'soon' }), { code: 'ERR_INVALID_ARG_TYPE', message: /"freeSocketTimeout" option .*Received 'soon'/ });
      assert.throws(() => make({ connectTimeout: -5 }), { code: 'ERR_OUT_OF_RANGE', message: /"connectTimeout" option .*Received -5/ });
    });
  }

  it('createDispatcher: anything but undici 6, 7 or 8 throws, naming the versions that work', () => {
    const versions = /major 6, 7 or 8/;
    assert.throws(() => createDispatcher(), { code: 'ERR_STEADY_UNSUPPORTED_UNDICI', message: versions });
    assert.throws(() => createDispatcher('undici'), { code: 'ERR_STEADY_UNSUPPORTED_UNDICI', message: /got undici$/ });
    assert.throws(() => createDispatcher({ Dispatcher: class {} }), { name: 'UnsupportedUndiciError', message: versions });
    // An undici 5 (its exports, loaded from no file here): Dispatcher, request and
    // setGlobalDispatcher, and none of interceptors, cacheStores, Dispatcher1Wrapper.
    const five = { Dispatcher: class {}, request() {}, setGlobalDispatcher() {} };
    assert.throws(() => createDispatcher(five), { code: 'ERR_STEADY_UNSUPPORTED_UNDICI', message: /got undici 5$/ });
  });

  it('createDispatcher: an ES module namespace of undici is taken as the module', () => {
    const dispatcher = createDispatcher({ default: undici6 });
    assert.ok(dispatcher instanceof undici6.Dispatcher);
    return dispatcher.close();
  });

  it('wrapFetch(globalThis.fetch) throws, naming steady-agent/fetch, instead of resending nothing', () => {
    assert.throws(() => wrapFetch(globalThis.fetch), { code: 'ERR_INVALID_ARG_TYPE', message: /use steady-agent\/fetch/ });
  });

  it('an upgrade or CONNECT through the dispatcher fails with a clear error', async () => {
    const dispatcher = createDispatcher(undici6);
    try {
      await assert.rejects(undici6.connect('http://127.0.0.1:9/', { dispatcher }), { code: 'ERR_STEADY_UNSUPPORTED_REQUEST', message: /cannot send a CONNECT request/ });
      await assert.rejects(undici6.upgrade('http://127.0.0.1:9/', { dispatcher }), { code: 'ERR_STEADY_UNSUPPORTED_REQUEST', message: /cannot send an upgrade/ });
    } finally {
      await dispatcher.close();
    }
  });
});

describe('steady-agent/fetch: the agent\'s options apply', () => {
  const { keep } = closeAfterEach();
  let fetch;
  afterEach(() => fetch?.close());

  it('maxSockets: 1 sends three concurrent requests over one connection', async () => {
    const server = keep(await createHttpServer());
    fetch = createFetch({ maxSockets: 1 });
    const bodies = await Promise.all([1, 2, 3].map(async (i) => (await fetch(server.url(`/${i}`))).text()));
    assert.deepEqual(bodies, ['ok GET /1', 'ok GET /2', 'ok GET /3']);
    assert.equal(server.accepted, 1);
    const [stats] = Object.values(fetch.getStats().origins);
    assert.equal(stats.queueWaitMs.count, 2);
  });

  it('freeSocketTimeout closes the idle connection ("free-timeout")', async () => {
    const server = keep(await createHttpServer());
    fetch = createFetch({ freeSocketTimeout: 50 });
    await (await fetch(server.url('/'))).text();
    await waitFor(() => Object.values(fetch.getStats().origins)[0].socketsClosed === 1);
    assert.deepEqual(Object.values(fetch.getStats().origins)[0].closeReasons, { 'free-timeout': 1 });
  });

  it('the server\'s Keep-Alive hint is read (getStats().serverIdleTimeout.announced)', async () => {
    const server = keep(await createHttpServer((req, res) => {
      res.setHeader('keep-alive', 'timeout=2');
      res.end('ok');
    }));
    fetch = createFetch();
    await (await fetch(server.url('/'))).text();
    const [origin, stats] = Object.entries(fetch.getStats().origins)[0];
    assert.equal(origin, `127.0.0.1:${server.port}:`);
    assert.deepEqual(stats.serverIdleTimeout, { announced: 2000, learned: null, confidence: null, evidence: [] });
  });

  it('the agent\'s diagnostics_channel events come for fetch\'s requests', async () => {
    const server = keep(await createHttpServer());
    fetch = createFetch();
    const seen = [];
    const listener = (message) => {
      if (message.port === server.port) seen.push(message);
    };
    dc.subscribe('steady-agent:socket:create', listener);
    try {
      await (await fetch(server.url('/'))).text();
    } finally {
      dc.unsubscribe('steady-agent:socket:create', listener);
    }
    assert.equal(seen.length, 1);
    // The bundled undici's Agent, subclassed: the native transport (lib/undici/dispatcher.js).
    assert.equal(seen[0].agent.constructor.name, 'SteadyFetchDispatcher');
    assert.equal(seen[0].host, '127.0.0.1');
  });
});
