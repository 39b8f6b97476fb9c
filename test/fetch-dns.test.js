'use strict';

// The dns option on steady-agent/fetch and createDispatcher, as the agent
// does it (test/dns.test.js): when an address leaves a host's answer, the
// idle sockets to it close at once and the busy ones after their response
// (close reason dns, a dns:retire event each), so that under constant load
// the requests move to the new address without waiting for the old one to
// go away. A real DNS server (dns2) and servers on 127.0.0.2 and 127.0.0.3,
// one port.
const assert = require('node:assert/strict');
const http = require('node:http');
const net = require('node:net');
const { closeAfterEach } = require('./support/cleanup');
const { frontDoors } = require('./support/fetch');
const { createDnsServer } = require('./support/dns_server');
const { watchAgent } = require('./support/channels');
const { waitFor } = require('./support/request');

const HOST = 'svc.test';
const OLD = '127.0.0.2';
const NEW = '127.0.0.3';
// The 1 s TTL of the records asked again every 200 ms.
const FAST_REFRESH = Object.freeze({ minTtl: 200, maxTtl: 200 });

/** Whether this machine routes 127.0.0.2 to loopback (Linux does; macOS needs an alias). */
function loopbackAliases() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(0, OLD, () => server.close(() => resolve(true)));
  });
}

/** Servers on OLD and NEW, one port, answering "<address> <path>"; `/hold` only at release(). */
async function addressPair() {
  const waiting = [];
  const handler = (req, res) => {
    const answer = () => res.end(`${req.socket.localAddress} ${req.url}`);
    if (req.url.startsWith('/hold')) waiting.push(answer);
    else answer();
  };
  const listen = (host, port) => new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(port, host, () => resolve(server));
  });
  const old = await listen(OLD, 0);
  const next = await listen(NEW, old.address().port);
  return {
    port: old.address().port,
    get held() { return waiting.length; },
    release() { for (const answer of waiting.splice(0)) answer(); },
    async close() {
      this.release();
      for (const server of [old, next]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}

const DOORS = frontDoors();

for (const door of DOORS) {
  describe(`${door.title}: dns retires the sockets to an address that left the answer`, function () {
    this.timeout(20000);
    const { keep } = closeAfterEach({ inOrder: true });
    before(async function () {
      if (!(await loopbackAliases())) this.skip();
    });

    async function setup(options = {}) {
      const dns = keep(await createDnsServer({ [HOST]: { A: [OLD], ttl: 1 } }));
      const pair = keep(await addressPair());
      const client = door.make({ dns: { resolver: dns.callbackResolver(), ...FAST_REFRESH }, ...options });
      const events = watchAgent(client.dispatcher, ['socket:close', 'dns:change', 'dns:retire']);
      keep({ close: () => events.stop() });
      keep(client);
      return { dns, pair, client, events, url: (path) => `http://${HOST}:${pair.port}${path}` };
    }

    it('the free socket closes at the change, the busy one after its response; new requests go to the new address', async () => {
      const { dns, pair, client, events, url } = await setup();
      const held = client.get(url('/hold'));
      await waitFor(() => pair.held === 1);
      assert.equal(await client.get(url('/free')), `${OLD} /free`);

      dns.set(HOST, { A: [NEW], ttl: 1 });
      await waitFor(() => events.of('dns:change').length === 1, { limit: 10000 });
      await waitFor(() => events.of('socket:close').length === 1);
      assert.equal(events.of('socket:close')[0].reason, 'dns');
      assert.equal(pair.held, 1, 'the busy socket is left to finish');
      assert.equal(await client.get(url('/new')), `${NEW} /new`);

      pair.release();
      assert.equal(await held, `${OLD} /hold`);
      await waitFor(() => events.of('socket:close').length === 2);
      assert.deepEqual(events.of('socket:close').map((event) => event.reason), ['dns', 'dns']);
      assert.deepEqual(events.of('dns:retire').map(({ host, address, free }) => ({ host, address, free })), [
        { host: HOST, address: OLD, free: true },
        { host: HOST, address: OLD, free: false },
      ]);
      const [stats] = Object.values(client.dispatcher.getStats().origins);
      assert.equal(stats.closeReasons.dns, 2);
    });

    it('constant load on one socket moves to the new address while the old one still answers, losing nothing', async () => {
      const { dns, client, events, url } = await setup({ maxSockets: 1 });
      const served = [];
      let running = true;
      // Two loops on one socket: it goes from one request to the next and
      // never asks DNS again on its own.
      const loop = async () => {
        while (running) served.push(await client.get(url('/load')));
      };
      const loops = [loop(), loop()];
      await waitFor(() => served.length >= 10);
      dns.set(HOST, { A: [NEW], ttl: 1 });
      await waitFor(() => served.at(-1).startsWith(NEW), { limit: 10000 });
      const switched = served.length;
      await waitFor(() => served.length >= switched + 10);
      running = false;
      await Promise.all(loops);
      assert.ok(served.slice(switched).every((body) => body.startsWith(NEW)), 'every request after the switch went to the new address');
      // undici 7's Agent, whose origin's Client (connections: 1) lost its
      // last socket with a request queued, closes the next Client of the
      // origin too (undici 8 does not): sockets to the new address may close
      // with errors, their requests sent again. The old address's is one.
      const closedOld = events.of('socket:close').filter((event) => event.socket.remoteAddress === OLD);
      assert.deepEqual(closedOld.map((event) => event.reason), ['dns']);
      assert.equal(events.of('dns:retire').length, 1);
      // Between two requests undici leaves the socket idle for a turn: the
      // change may find it busy or free.
      assert.equal(events.of('dns:retire')[0].agent, client.dispatcher);
    });
  });
}
