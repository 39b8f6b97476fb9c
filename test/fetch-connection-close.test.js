'use strict';

// A response that says `Connection: close` ends its connection: undici does
// not keep it, and the transports record why (close reason not-kept, as the
// agent's) instead of taking the close for the server's idle limit. A
// server that closes only where it said so teaches nothing: no learned
// limit, and the next connections are kept and reused as before.
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const http = require('node:http');
const { createFetch } = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { UNDICI_MAJORS } = require('./support/fetch');
const { delay } = require('./support/request');

const newest = UNDICI_MAJORS.filter((entry) => entry.runs).at(-1);

const DOORS = [
  {
    title: 'steady-agent/fetch',
    make: () => {
      const fetch = createFetch();
      return { dispatcher: fetch.dispatcher, get: async (url) => (await fetch(url)).text(), close: () => fetch.close() };
    },
  },
  {
    title: `createDispatcher (${newest.name})`,
    make: () => {
      const undici = newest.load();
      const dispatcher = createDispatcher(undici);
      return { dispatcher, get: async (url) => (await undici.request(url, { dispatcher })).body.text(), close: () => dispatcher.close() };
    },
  },
];

for (const door of DOORS) {
  describe(`${door.title}: a response with Connection: close`, function () {
    this.timeout(20000);
    const handles = [];
    afterEach(async () => {
      for (const handle of handles.splice(0)) await handle.close();
    });

    it('closes its connection as not-kept, and teaches no idle limit', async () => {
      // Announces nothing, keeps idle connections, closes where it says so.
      const server = http.createServer((req, res) => {
        if (req.url === '/close') res.setHeader('connection', 'close');
        res.end(`ok ${req.url}`);
      });
      server.keepAliveTimeout = 0;
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      handles.push({ close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }) });
      const client = door.make();
      handles.unshift(client);
      const closes = [];
      const learned = [];
      const onClose = (event) => { if (event.agent === client.dispatcher) closes.push(event.reason); };
      const onLimit = (event) => { if (event.agent === client.dispatcher && event.source === 'learned') learned.push(event.why); };
      dc.subscribe('steady-agent:socket:close', onClose);
      dc.subscribe('steady-agent:server-idle-limit', onLimit);
      handles.push({ close: async () => {
        dc.unsubscribe('steady-agent:socket:close', onClose);
        dc.unsubscribe('steady-agent:server-idle-limit', onLimit);
      } });

      const url = (path) => `http://127.0.0.1:${server.address().port}${path}`;
      for (const path of ['/a', '/close', '/b', '/c', '/close', '/d', '/e']) {
        assert.equal(await client.get(url(path)), `ok ${path}`);
        await delay(20); // undici takes a kept connection back a turn after the response
      }
      assert.deepEqual(closes, ['not-kept', 'not-kept']);
      assert.deepEqual(learned, []);
      const [stats] = Object.values(client.dispatcher.getStats().origins);
      assert.equal(stats.serverIdleTimeout.learned, null);
      assert.equal(stats.closeReasons['not-kept'], 2);
      assert.equal(stats.socketsCreated, 3, 'one connection per run of requests between the closes');
      assert.equal(stats.reusedRequests, 4);
    });
  });
}
