'use strict';

// steady-agent/fetch acts only on its own requests' connections: Node's
// global fetch in the same process keeps its own pool. And after close(),
// nothing of ours is left: no socket, no timer, no channel subscription.
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const { createFetch } = require('steady-agent/fetch');
const steadyFetch = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { closeAfterEach } = require('./support/cleanup');
const { createHttpServer } = require('./support/servers');
const { waitFor } = require('./support/request');
const { UNDICI_MAJORS } = require('./support/fetch');

// Channels of undici and of the agent a transport might watch.
const CHANNELS = [
  'undici:client:connected', 'undici:client:sendHeaders', 'undici:request:error', 'undici:request:create',
  'steady-agent:socket:create', 'steady-agent:socket:close', 'steady-agent:socket:free', 'steady-agent:server-idle-limit',
];

/** Counts of the process's active sockets and timers. */
function resources() {
  const counts = { sockets: 0, timers: 0 };
  for (const kind of process.getActiveResourcesInfo()) {
    if (kind === 'TCPSocketWrap') counts.sockets++;
    else if (kind === 'Timeout') counts.timers++;
  }
  return counts;
}

const subscribed = () => CHANNELS.filter((name) => dc.channel(name).hasSubscribers);

describe('steady-agent/fetch beside Node\'s own fetch', () => {
  const { keep } = closeAfterEach();

  it('Node\'s global fetch keeps its own sockets, before and after ours closes', async () => {
    const server = keep(await createHttpServer());
    const fetch = createFetch();
    assert.equal(await (await fetch(server.url('/ours'))).text(), 'ok GET /ours');
    assert.equal(await (await globalThis.fetch(server.url('/node'))).text(), 'ok GET /node');
    assert.equal(server.accepted, 2, 'one connection each');
    const [stats] = Object.values(fetch.getStats().origins);
    assert.equal(stats.requests, 1, 'Node\'s request is not ours');
    await fetch.close();
    await waitFor(() => server.connections.size === 1);
    // Node's connection is still in its pool, and reused.
    assert.equal(await (await globalThis.fetch(server.url('/node'))).text(), 'ok GET /node');
    assert.equal(server.accepted, 2);
  });
});

describe('steady-agent/fetch and /undici: nothing left after close()', () => {
  const { keep } = closeAfterEach();

  const transports = [
    ['createFetch', async (url) => {
      const fetch = createFetch({ freeSocketTimeout: 10000 });
      await (await fetch(url)).text();
      return () => fetch.close();
    }],
    ['the shared fetch', async (url) => {
      await (await steadyFetch.fetch(url)).text();
      return () => steadyFetch.close();
    }],
    ...UNDICI_MAJORS.filter((entry) => entry.runs).map(({ major, load }) => [`createDispatcher (undici ${major})`, async (url) => {
      const undici = load();
      const dispatcher = createDispatcher(undici, { freeSocketTimeout: 10000 });
      await (await undici.request(url, { dispatcher })).body.text();
      return () => dispatcher.close();
    }]),
  ];

  for (const [name, use] of transports) {
    it(`${name}: no socket, timer or channel subscription`, async () => {
      const server = keep(await createHttpServer());
      const before = resources();
      const channelsBefore = subscribed();
      const close = await use(server.url('/'));
      assert.equal(server.connections.size, 1);
      await close();
      await waitFor(() => server.connections.size === 0);
      await waitFor(() => resources().sockets === before.sockets);
      assert.deepEqual(resources(), before);
      assert.deepEqual(subscribed(), channelsBefore);
    });
  }
});
