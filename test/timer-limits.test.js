'use strict';

// No timer longer than setTimeout accepts (2^31-1 ms, about 24.8 days), from
// any source: Node fires a longer one after 1 ms with a
// TimeoutOverflowWarning, and an agent rescheduling it would wake a thousand
// times a second. Each source leaves an idle socket in the pool for a second
// while the test counts warnings and the process's CPU time.
const assert = require('node:assert/strict');
const http = require('node:http');
const https = require('node:https');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createScriptedServer, rawResponse } = require('./support/raw');
const { request, delay, waitFor } = require('./support/request');

const DAY = 24 * 3600 * 1000;
const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);

for (const protocol of PROTOCOLS) {
  describe(`timers within setTimeout's range (${protocol})`, () => {
    let server;
    let agent;
    let warnings;
    const onWarning = (warning) => warnings.push(warning);

    beforeEach(() => {
      warnings = [];
      process.on('warning', onWarning);
    });

    afterEach(async () => {
      process.removeListener('warning', onWarning);
      if (agent) agent.destroy();
      agent = null;
      if (server) await server.close();
      server = null;
    });

    /** Leaves one socket idle for over a second; resolves with the CPU ms spent per idle second. */
    async function idleSecond(options, { headers = {}, perSocket } = {}) {
      server = await createScriptedServer(protocol, { respond: () => rawResponse('ok', headers) });
      agent = createAgent(protocol, options);
      const socket = await new Promise((resolve, reject) => {
        const mod = protocol === 'https:' ? https : http;
        const req = mod.get(server.url('/'), { agent }, (response) => {
          response.resume();
          response.on('end', () => resolve(req.socket));
        });
        req.on('error', reject);
        // A per-socket override (as urllib sets), before the socket is freed.
        if (perSocket !== undefined) req.on('socket', (socket) => { socket.freeSocketTimeout = perSocket; });
      });
      await waitFor(() => freeCount(agent) === 1);
      await delay(50); // let a timer that fires too soon show itself
      // CPU per idle second, the least of three windows: a one-off garbage
      // collection or background compilation shows in one of them, a timer
      // that keeps firing in all.
      let least = Infinity;
      for (let i = 0; i < 3; i++) {
        const before = process.cpuUsage();
        await delay(400);
        const used = process.cpuUsage(before);
        least = Math.min(least, (used.user + used.system) / 1000 / 0.4);
      }
      assert.equal(freeCount(agent), 1, 'the socket is still pooled');
      assert.equal(socket.destroyed, false);
      return least;
    }

    function assertQuiet(cpuMs) {
      const overflow = warnings.filter((w) => w.name === 'TimeoutOverflowWarning');
      assert.deepEqual(overflow.map(String), []);
      assert.ok(cpuMs < 10, `${cpuMs.toFixed(1)} ms of CPU per idle second`);
    }

    it('freeSocketTimeout: 0 and a server announcing Keep-Alive: timeout=3000000', async () => {
      assertQuiet(await idleSecond({ freeSocketTimeout: 0 }, { headers: { 'Keep-Alive': 'timeout=3000000' } }));
    });

    it('socketActiveTTL: \'30d\'', async () => {
      assertQuiet(await idleSecond({ freeSocketTimeout: 0, socketActiveTTL: '30d' }));
    });

    it('a per-socket freeSocketTimeout of 30 days', async () => {
      assertQuiet(await idleSecond({}, { perSocket: 30 * DAY }));
    });

    it('all of them at once: the smallest is still overlong', async () => {
      assertQuiet(await idleSecond({ freeSocketTimeout: 0, socketActiveTTL: '60d' }, {
        headers: { 'Keep-Alive': 'timeout=4000000' }, perSocket: 50 * DAY,
      }));
    });

    for (const bad of ['30s', -1, NaN, null]) {
      it(`a per-socket freeSocketTimeout of ${String(bad)} is ignored: the agent's own applies`, async () => {
        server = await createScriptedServer(protocol);
        agent = createAgent(protocol, { freeSocketTimeout: 150 });
        const first = await request(server.url('/'), { agent });
        await waitFor(() => freeCount(agent) === 1);
        first.socket.freeSocketTimeout = bad;
        const second = await request(server.url('/'), { agent });
        assert.equal(second.reusedSocket, true);
        await waitFor(() => second.socket.destroyed);
        assert.equal(agent.timeoutSocketCount, 1);
      });
    }
  });
}
