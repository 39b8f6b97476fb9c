'use strict';

const assert = require('node:assert/strict');
const http = require('node:http');
const https = require('node:https');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor } = require('./support/request');

const COUNTERS = [
  'createSocketCount', 'createSocketErrorCount', 'closeSocketCount',
  'errorSocketCount', 'timeoutSocketCount', 'requestCount',
];

for (const protocol of PROTOCOLS) {
  describe(`status (${protocol})`, () => {
    let server;
    let agent;
    const held = [];
    beforeEach(async () => {
      server = await createServer(protocol, (req, res) => {
        if (req.url === '/hold') held.push(res);
        else res.end('ok');
      });
    });
    afterEach(async () => {
      agent.destroy();
      await server.close();
      held.length = 0;
    });

    it('getCurrentStatus() starts at zero with every field', () => {
      agent = createAgent(protocol);
      assert.deepEqual(agent.getCurrentStatus(), {
        createSocketCount: 0,
        createSocketErrorCount: 0,
        closeSocketCount: 0,
        errorSocketCount: 0,
        timeoutSocketCount: 0,
        requestCount: 0,
        freeSockets: {},
        sockets: {},
        requests: {},
      });
    });

    it('counts sockets and finished requests, and maps sockets, free sockets and queued requests by origin', async () => {
      agent = createAgent(protocol, { maxSockets: 2 });
      const pending = [1, 2, 3].map(() => request(server.url('/hold'), { agent }));
      await waitFor(() => held.length === 2);
      let status = agent.getCurrentStatus();
      const [pool] = Object.keys(status.sockets);
      assert.ok(pool.startsWith(`127.0.0.1:${server.port}:`), pool);
      assert.deepEqual(status.sockets, { [pool]: 2 });
      assert.deepEqual(status.requests, { [pool]: 1 });
      assert.deepEqual(status.freeSockets, {});
      assert.equal(status.createSocketCount, 2);
      assert.equal(status.requestCount, 0);

      for (const res of held.splice(0)) res.end('done');
      await waitFor(() => held.length === 1);
      held[0].end('done');
      await Promise.all(pending);

      status = agent.getCurrentStatus();
      assert.equal(status.createSocketCount, 2);
      assert.equal(status.requestCount, 3);
      assert.equal(status.closeSocketCount, 0);
      assert.deepEqual(status.sockets, {});
      assert.deepEqual(status.requests, {});
      assert.deepEqual(status.freeSockets, { [pool]: 2 });
      assert.equal(total(status.freeSockets), 2);

      agent.destroy();
      await waitFor(() => agent.getCurrentStatus().closeSocketCount === 2);
      assert.deepEqual(agent.getCurrentStatus().freeSockets, {});
    });

    it('exposes the counters as agent properties too', async () => {
      agent = createAgent(protocol);
      await request(server.url(), { agent });
      const status = agent.getCurrentStatus();
      for (const counter of COUNTERS) assert.equal(agent[counter], status[counter], counter);
      assert.equal(agent.requestCount, 1);
      assert.equal(agent.createSocketCount, 1);
    });

    it('statusChanged is true once after any counter changes', async () => {
      agent = createAgent(protocol);
      assert.equal(agent.statusChanged, false);
      await request(server.url(), { agent });
      assert.equal(agent.statusChanged, true);
      assert.equal(agent.statusChanged, false);
      agent.getCurrentStatus();
      assert.equal(agent.statusChanged, false);
      await request(server.url(), { agent });
      assert.equal(agent.statusChanged, true);
      assert.equal(agent.statusChanged, false);
      agent.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(agent.statusChanged, true);
    });

    it('the counters are plain writable numbers: a reset, then later changes still reported', async () => {
      agent = createAgent(protocol);
      await request(server.url(), { agent });
      assert.equal(agent.requestCount, 1);
      assert.equal(agent.statusChanged, true);
      // A monitoring loop resets what it has reported.
      for (const counter of COUNTERS) agent[counter] = 0;
      assert.equal(agent.requestCount, 0);
      assert.equal(agent.getCurrentStatus().createSocketCount, 0);
      assert.equal(agent.statusChanged, true, 'the reset itself is a change');
      assert.equal(agent.statusChanged, false);
      await request(server.url(), { agent });
      assert.equal(agent.requestCount, 1);
      assert.equal(agent.createSocketCount, 0, 'the socket was reused: no new one');
      assert.equal(agent.statusChanged, true);
      assert.equal(agent.requestCountLastCheck, 1);
      agent.requestCount++;
      assert.equal(agent.statusChanged, true, 'a write by the caller is a change too');
    });

    it('getCurrentStatus() has agentkeepalive\'s keys exactly; learned limits are agent.serverIdleTimeouts', async () => {
      agent = createAgent(protocol);
      await request(server.url(), { agent });
      assert.deepEqual(Object.keys(agent.getCurrentStatus()), [
        'createSocketCount', 'createSocketErrorCount', 'closeSocketCount', 'errorSocketCount',
        'timeoutSocketCount', 'requestCount', 'freeSockets', 'sockets', 'requests',
      ]);
      const limits = agent.serverIdleTimeouts;
      assert.deepEqual(limits, {});
      assert.notEqual(agent.serverIdleTimeouts, limits, 'a new object on each read');
      limits.elsewhere = 1;
      assert.deepEqual(agent.serverIdleTimeouts, {}, 'a caller\'s write changes nothing');
    });

    // The README's status snippets read a turn after 'end' because of this.
    it('a request is counted when its socket returns to the pool, on the agent\'s \'free\' after the response\'s \'end\'', async () => {
      agent = createAgent(protocol);
      const seen = {};
      const snapshot = () => {
        const status = agent.getCurrentStatus();
        return { requestCount: status.requestCount, active: total(status.sockets), free: total(status.freeSockets) };
      };
      agent.on('free', () => { seen.free ??= snapshot(); });
      await new Promise((resolve, reject) => {
        const mod = protocol === 'https:' ? https : http;
        mod.get(server.url(), { agent }, (res) => {
          res.resume();
          res.on('end', () => {
            seen.end = snapshot();
            setImmediate(() => {
              seen.nextTurn = snapshot();
              resolve();
            });
          });
        }).on('error', reject);
      });
      assert.deepEqual(seen, {
        end: { requestCount: 0, active: 1, free: 0 },
        free: { requestCount: 1, active: 0, free: 1 },
        nextTurn: { requestCount: 1, active: 0, free: 1 },
      });
    });

    it('serverIdleTimeouts holds learned limits only: an announced Keep-Alive timeout is in getStats()', async () => {
      const announcing = await createServer(protocol, (req, res) => {
        res.setHeader('Keep-Alive', 'timeout=5');
        res.end('ok');
      });
      try {
        agent = createAgent(protocol);
        await request(announcing.url(), { agent });
        assert.deepEqual(agent.serverIdleTimeouts, {});
        const [stats] = Object.values(agent.getStats().origins);
        assert.deepEqual(stats.serverIdleTimeout, { announced: 5000, learned: null, confidence: null, evidence: [] });
      } finally {
        agent.destroy();
        await announcing.close();
      }
    });

    it('the status is a plain snapshot that JSON-serialises', async () => {
      agent = createAgent(protocol);
      await request(server.url(), { agent });
      const status = agent.getCurrentStatus();
      const copy = JSON.parse(JSON.stringify(status));
      assert.deepEqual(copy, status);
      await request(server.url(), { agent });
      assert.equal(status.requestCount, 1);
    });
  });
}
