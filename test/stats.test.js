'use strict';

// agent.getStats(): per-origin counters kept by the agent itself, checked
// after known traffic, and the bound on the origins it remembers.
const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer, fixtures } = require('./support/servers');
const { request, waitFor } = require('./support/request');
const { OriginTable, IDLE_CAPACITY } = require('../lib/observe/stats');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);

for (const protocol of PROTOCOLS) {
  describe(`getStats() (${protocol})`, () => {
    let server;
    let agent;

    beforeEach(async () => {
      server = await createServer(protocol); // Keep-Alive: timeout=30
    });

    afterEach(async () => {
      if (agent) agent.destroy();
      agent = null;
      await server.close();
    });

    it('10 requests on one socket: requests 10, reusedRequests 9, socketsCreated 1', async () => {
      agent = createAgent(protocol);
      for (let i = 0; i < 10; i++) {
        await request(server.url(`/${i}`), { agent });
        await waitFor(() => freeCount(agent) === 1);
      }
      const [origin] = Object.keys(agent.getCurrentStatus().freeSockets);
      const stats = agent.getStats();
      // The counts behind the learning: nine reuses, each after the idle time
      // it had (a millisecond or more; shorter is none), no close.
      const { evidence } = stats.origins[origin].serverIdleTimeout;
      assert.ok(evidence.reduce((sum, row) => sum + row.survived, 0) <= 9, JSON.stringify(evidence));
      assert.ok(evidence.every((row) => row.died === 0 && row.idleMs >= 1), JSON.stringify(evidence));
      assert.deepEqual(stats, {
        origins: {
          [origin]: {
            active: 0,
            free: 1,
            queued: 0,
            socketsCreated: 1,
            socketsClosed: 0,
            requests: 10,
            reusedRequests: 9,
            errors: 0,
            timeouts: 0,
            closeReasons: {},
            serverIdleTimeout: {
              announced: 30000, learned: null, confidence: null, evidence,
            },
            queueWaitMs: { count: 0, sum: 0, max: 0 },
            queueFull: 0,
            queueTimeouts: 0,
            refusedAfterClose: 0,
            leftQueue: 0,
            // An IP literal: no Happy Eyeballs race (test/happy-eyeballs.test.js).
            connectAttempts: { ipv4: 0, ipv6: 0 },
            connectWins: { ipv4: 0, ipv6: 0 },
          },
        },
      });
      assert.equal(agent.requestCount, 10);
    });

    it('counts the queue behind maxSockets: queued now, and the wait once each request got a socket', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      const pending = [1, 2, 3].map((i) => request(server.url(`/${i}`), { agent }));
      // http.request hands the request to the agent at once.
      const [during] = Object.values(agent.getStats().origins);
      assert.equal(during.active, 1);
      assert.equal(during.queued, 2);
      await Promise.all(pending);
      await waitFor(() => freeCount(agent) === 1);
      const [after] = Object.values(agent.getStats().origins);
      assert.equal(after.queued, 0);
      assert.equal(after.socketsCreated, 1);
      assert.equal(after.requests, 3);
      assert.equal(after.reusedRequests, 2);
      assert.equal(after.queueWaitMs.count, 2);
      assert.ok(after.queueWaitMs.max > 0);
      assert.ok(after.queueWaitMs.sum >= after.queueWaitMs.max);
    });

    it('returns a new plain object on every call', async () => {
      agent = createAgent(protocol);
      await request(server.url(), { agent });
      await waitFor(() => freeCount(agent) === 1);
      const first = agent.getStats();
      assert.equal(Object.getPrototypeOf(first), Object.prototype);
      const [origin] = Object.keys(first.origins);
      first.origins[origin].requests = 1000;
      first.origins[origin].closeReasons.bogus = 1;
      first.origins[origin].queueWaitMs.count = 5;
      const second = agent.getStats();
      assert.notEqual(second, first);
      assert.equal(second.origins[origin].requests, 1);
      assert.deepEqual(second.origins[origin].closeReasons, {});
      assert.equal(second.origins[origin].queueWaitMs.count, 0);
      assert.doesNotThrow(() => JSON.stringify(second));
    });

    it('keeps an origin whose sockets have all closed, with how they closed', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 30 });
      await request(server.url(), { agent });
      await waitFor(() => agent.closeSocketCount === 1);
      const [origin] = Object.values(agent.getStats().origins);
      assert.equal(origin.active + origin.free, 0);
      assert.equal(origin.socketsClosed, 1);
      assert.deepEqual(origin.closeReasons, { 'free-timeout': 1 });
      assert.equal(origin.timeouts, 1);
    });

    it('getCurrentStatus() gains no key: it keeps agentkeepalive\'s shape', async () => {
      agent = createAgent(protocol);
      await request(server.url(), { agent });
      const agentkeepalive = [
        'closeSocketCount', 'createSocketCount', 'createSocketErrorCount', 'errorSocketCount',
        'freeSockets', 'requestCount', 'requests', 'sockets', 'timeoutSocketCount',
      ];
      const keys = Object.keys(agent.getCurrentStatus());
      for (const key of agentkeepalive) assert.ok(keys.includes(key), key);
      // serverIdleTimeouts is this agent's own (and on its way out).
      for (const key of keys) assert.ok(agentkeepalive.includes(key) || key === 'serverIdleTimeouts', key);
    });
  });
}

describe('getStats() holds no TLS secrets', () => {
  it('a client key and certificate on the request never show', async () => {
    const server = await createServer('https:');
    const agent = createAgent('https:');
    try {
      await request(server.url(), { agent, key: fixtures.clientKey, cert: fixtures.clientCert });
      const text = JSON.stringify(agent.getStats());
      assert.ok(Object.keys(agent.getStats().origins).length === 1);
      assert.doesNotMatch(text, /BEGIN|PRIVATE|CERTIFICATE/);
      for (const line of fixtures.clientKey.split('\n').filter((l) => l.length > 20)) assert.ok(!text.includes(line));
    } finally {
      agent.destroy();
      await server.close();
    }
  });
});

describe('getStats() origin bound (lib/stats.js)', () => {
  it(`100,000 origins over time: the live ones plus at most ${IDLE_CAPACITY} others are kept`, () => {
    const table = new OriginTable();
    // Ten origins stay live throughout (an open socket each).
    const live = Array.from({ length: 10 }, (_, i) => table.use(`live${i}:80:`, `live${i}`, 80, 'http'));
    for (const entry of live) entry.socketsCreated++;
    for (let i = 0; i < 100000; i++) {
      const entry = table.use(`host${i}:80:`, `host${i}`, 80, 'http');
      entry.socketsCreated++;
      entry.closed('free-timeout');
      table.settle(entry);
      assert.ok(table.size <= IDLE_CAPACITY + live.length);
    }
    assert.equal(table.size, IDLE_CAPACITY + live.length);
    for (const entry of live) assert.equal(table.get(entry.origin), entry);
    // The most recent settled origins are the ones kept.
    assert.notEqual(table.get('host99999:80:'), undefined);
    assert.equal(table.get('host0:80:'), undefined);
  });

  it('an origin with a learned idle limit is not dropped; once forgotten it settles', () => {
    const table = new OriginTable(2);
    const learned = table.use('a:80:', 'a', 80, 'http');
    learned.learned = 5000;
    table.settle(learned); // live: not queued for dropping
    for (let i = 0; i < 10; i++) table.settle(table.use(`b${i}:80:`, `b${i}`, 80, 'http'));
    assert.equal(table.get('a:80:'), learned);
    learned.learned = null;
    table.settle(learned);
    for (let i = 0; i < 2; i++) table.settle(table.use(`c${i}:80:`, `c${i}`, 80, 'http'));
    assert.equal(table.get('a:80:'), undefined);
  });

  it('an origin that comes back before it is dropped keeps its counters', () => {
    const table = new OriginTable(1);
    const entry = table.use('a:80:', 'a', 80, 'http');
    entry.requests = 3;
    table.settle(entry);
    assert.equal(table.use('a:80:', 'a', 80, 'http'), entry); // live again: no longer settled
    entry.socketsCreated++; // a socket open
    table.settle(table.use('b:80:', 'b', 80, 'http'));
    table.settle(table.use('c:80:', 'c', 80, 'http'));
    assert.equal(table.get('a:80:').requests, 3);
  });

  it('a queued request that is given up (destroy() during close()) leaves the origin settled', async () => {
    const server = await createServer('http:', () => {}); // never answers
    const agent = createAgent('http:', { maxSockets: 1 });
    try {
      const pending = [1, 2].map((i) => request(server.url(`/${i}`), { agent }).catch((err) => err));
      await waitFor(() => server.accepted === 1);
      const closing = agent.close();
      agent.destroy();
      await closing;
      const errors = await Promise.all(pending);
      // The one sent gets 'socket hang up' (as with Node's agent); the queued
      // one, which a closing agent opens no connection for, ERR_AGENT_DESTROYED.
      assert.deepEqual(errors.map((err) => err.code), ['ECONNRESET', 'ERR_AGENT_DESTROYED']);
      await waitFor(() => agent.closeSocketCount === 1);
      const [origin] = Object.values(agent.getStats().origins);
      assert.equal(origin.queued, 0);
      // Its wait ended without a socket: counted once, as one that left the queue.
      assert.equal(origin.queueWaitMs.count, 1);
      assert.equal(origin.leftQueue, 1);
      assert.deepEqual(origin.closeReasons, { destroy: 1 });
    } finally {
      agent.destroy();
      await server.close();
    }
  });
});
