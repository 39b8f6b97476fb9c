'use strict';

// The `dns` option on the agent, over http and https: a real DNS server on
// loopback (UDP, dns2) answering from a table the test changes, and servers
// on 127.0.0.2 and 127.0.0.3 on one port, so that a flip of the A record
// moves the service. New sockets follow the answer; sockets to an address
// that left it are retired (free ones at once, active ones after their
// response; close reason 'dns'); failures keep the last answer. The lookup
// contract (all, family, autoSelectFamily), the fallback to dns.lookup,
// what bypasses the option (IP literals, socketPath, a caller's lookup, the
// target behind a proxy) and an agent without the option are here too.
// lib/dns.js alone: test/dns-cache.test.js.
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const dns = require('node:dns');
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { promisify } = require('node:util');
const { PROTOCOLS } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor, requestError } = require('./support/request');
const { closeAfterEach, tempDirEach } = require('./support/cleanup');
const { watchAgent } = require('./support/channels');
const { createDnsServer } = require('./support/dns_server');
const { startProxy } = require('./support/proxy');

// Named in the fixture certificate, and unknown to the system's resolver:
// only the test's DNS server answers for it.
const HOST = 'alt.localhost';
const OLD = '127.0.0.2';
const NEW = '127.0.0.3';
const DNS_CHANNELS = ['socket:close', 'dns:lookup', 'dns:change', 'dns:stale', 'dns:retire'];
// The 1 s TTL of the test's records asked again every 200 ms, not every second.
const FAST_REFRESH = Object.freeze({ minTtl: 200, maxTtl: 200 });

/** Whether this machine routes 127.0.0.2 to loopback (Linux does; macOS needs an alias). */
function loopbackAliases() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(0, OLD, () => server.close(() => resolve(true)));
  });
}

function servedBy(req, res) {
  req.resume();
  req.on('end', () => res.end(`${req.socket.localAddress} ${req.url}`));
}

for (const protocol of PROTOCOLS) {
  
  describe(`dns option over ${protocol.slice(0, -1)}`, () => {
    const { keep, agentFor } = closeAfterEach();
    const watches = [];
    afterEach(() => { for (const watch of watches.splice(0)) watch.stop(); });
    const watch = (agent) => {
      const events = watchAgent(agent, DNS_CHANNELS);
      watches.push(events);
      return events;
    };
    const url = (port, p = '/') => `${protocol}//${HOST}:${port}${p}`;

    before(async function () {
      if (!(await loopbackAliases())) this.skip(); // 127.0.0.2 is not on loopback here (macOS without an alias)
    });

    /**
     * Servers on 127.0.0.2 and 127.0.0.3, one port; each answers
     * "<its address> <path>", `/hold...` only once release() is called.
     */
    async function addressPair() {
      const waiting = [];
      const handler = (req, res) => {
        if (req.url.startsWith('/hold')) {
          waiting.push(() => servedBy(req, res));
          return;
        }
        servedBy(req, res);
      };
      const old = keep(await createServer(protocol, handler, { listen: { host: OLD } }));
      const next = keep(await createServer(protocol, handler, { listen: { host: NEW, port: old.port } }));
      return {
        port: old.port,
        old,
        next,
        release() { for (const answer of waiting.splice(0)) answer(); },
        get held() { return waiting.length; },
      };
    }

    async function setup(records = { [HOST]: { A: [OLD], ttl: 1 } }, dnsSettings = {}, options = {}) {
      const server = keep(await createDnsServer(records));
      const pair = await addressPair();
      const agent = agentFor(protocol, { dns: { resolver: server.resolver(), ...dnsSettings }, ...options });
      return { server, pair, agent, events: watch(agent) };
    }

    // The one origin of the test's requests (named by the pool: host, port...).
    const stats = (agent, port) => {
      const origins = Object.entries(agent.getStats().origins).filter(([origin]) => origin.startsWith(`${HOST}:${port}:`));
      assert.equal(origins.length, 1, Object.keys(agent.getStats().origins).join(', '));
      return origins[0][1];
    };

    it('records flip: new sockets go to the new address, free ones on the old close (dns), an active one after its response', async () => {
      const { server, pair, agent, events } = await setup(undefined, FAST_REFRESH);
      const held = request(url(pair.port, '/hold'), { agent });
      await waitFor(() => pair.held === 1);
      const first = await request(url(pair.port, '/free'), { agent });
      assert.equal(first.body, `${OLD} /free`);
      await waitFor(() => agent.freeSockets[Object.keys(agent.freeSockets)[0]]?.length === 1);
      const pools = Object.keys(agent.sockets);

      server.set(HOST, { A: [NEW], ttl: 1 });
      // No request from here on until the refresh has seen the change.
      await waitFor(() => events.of('dns:change').length === 1, { limit: 10000 });
      const [change] = events.of('dns:change');
      assert.deepEqual([change.host, change.removed, change.added], [HOST, [OLD], [NEW]]);
      await waitFor(() => events.of('socket:close').length === 1);
      assert.equal(events.of('socket:close')[0].reason, 'dns');
      assert.equal(pair.held, 1, 'the active socket is left to finish');

      const after = await request(url(pair.port, '/new'), { agent });
      assert.equal(after.body, `${NEW} /new`);
      assert.equal(after.reusedSocket, false);

      pair.release();
      assert.equal((await held).body, `${OLD} /hold`);
      await waitFor(() => events.of('socket:close').length === 2);
      assert.deepEqual(events.of('socket:close').map((e) => e.reason), ['dns', 'dns']);
      assert.deepEqual(events.of('dns:retire').map(({ host, address, free }) => ({ host, address, free })), [
        { host: HOST, address: OLD, free: true },
        { host: HOST, address: OLD, free: false },
      ]);
      assert.equal(stats(agent, pair.port).closeReasons.dns, 2);
      // One pool, named by the host, before and after.
      assert.deepEqual(pools, Object.keys(agent.sockets).length ? Object.keys(agent.sockets) : Object.keys(agent.freeSockets));
      assert.match(pools[0], new RegExp(`^${HOST.replace('.', '\\.')}:${pair.port}:`));
      assert.equal((await request(url(pair.port, '/again'), { agent })).reusedSocket, true);
    });

    it('constant load with maxSockets: 1 reaches the new address, losing nothing', async () => {
      const { server, pair, agent, events } = await setup(undefined, FAST_REFRESH, { maxSockets: 1 });
      const served = [];
      let flipped = false;
      let running = true;
      // Two loops on one socket: it never sits in the pool, it goes straight
      // from one request to the next, and no new socket would ever look up.
      const loop = async () => {
        while (running) served.push({ flipped, body: (await request(url(pair.port, '/load'), { agent })).body });
      };
      const loops = [loop(), loop()];
      await waitFor(() => served.length >= 10);
      flipped = true;
      server.set(HOST, { A: [NEW], ttl: 1 });
      await waitFor(() => served.at(-1).body.startsWith(NEW), { limit: 10000 });
      const switched = served.length;
      await waitFor(() => served.length >= switched + 10);
      running = false;
      await Promise.all(loops);
      const afterSwitch = served.slice(switched);
      assert.ok(afterSwitch.every(({ body }) => body.startsWith(NEW)), 'every request after the switch went to the new address');
      assert.equal(agent.createSocketCount, 2);
      assert.deepEqual(events.of('socket:close').map((e) => e.reason), ['dns']);
      assert.equal(events.of('dns:retire')[0].free, false);
      assert.equal(agent.errorSocketCount + agent.createSocketErrorCount, 0);
    });

    it('the DNS server stops answering: the last answer is kept, nothing is retired', async () => {
      const { server, pair, agent, events } = await setup(undefined, FAST_REFRESH);
      const first = await request(url(pair.port, '/a'), { agent });
      assert.equal(first.body, `${OLD} /a`);
      server.mode = 'silent';
      await waitFor(() => events.of('dns:stale').length >= 1, { limit: 10000 });
      const [stale] = events.of('dns:stale');
      assert.equal(stale.error.code, 'ETIMEOUT');
      assert.deepEqual(stale.addresses, [{ address: OLD, family: 4 }]);
      const second = await request(url(pair.port, '/b'), { agent });
      assert.equal(second.body, `${OLD} /b`);
      assert.equal(second.reusedSocket, true);
      // A new socket (the first is busy) still gets the last answer.
      const [third, fourth] = await Promise.all([request(url(pair.port, '/c'), { agent }), request(url(pair.port, '/d'), { agent })]);
      assert.deepEqual([third.body, fourth.body], [`${OLD} /c`, `${OLD} /d`]);
      assert.deepEqual(events.of('socket:close'), []);
      assert.deepEqual(events.of('dns:retire'), []);
      assert.equal(stats(agent, pair.port).closeReasons.dns, undefined);
    });

    it('localhost resolves through dns.lookup, never asking the DNS server; so does a request without a host', async () => {
      const server = keep(await createDnsServer());
      const target = keep(await createServer(protocol, servedBy));
      const agent = agentFor(protocol, { dns: { resolver: server.resolver() } });
      const events = watch(agent);
      const res = await request(`${protocol}//localhost:${target.port}/l`, { agent, family: 4 });
      assert.equal(res.body, '127.0.0.1 /l');
      assert.deepEqual(events.of('dns:lookup').map((e) => [e.host, e.source]), [['localhost', 'lookup']]);
      // No host at all is localhost to core: the same pool, the same socket.
      const hostless = await new Promise((resolve, reject) => {
        const req = (protocol === 'https:' ? https : http).request({ port: target.port, path: '/n', agent, family: 4 }, (response) => {
          response.setEncoding('utf8');
          let body = '';
          response.on('data', (chunk) => { body += chunk; });
          response.on('end', () => resolve({ body, reusedSocket: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      });
      assert.deepEqual(hostless, { body: '127.0.0.1 /n', reusedSocket: true });
      assert.equal(server.total, 0);
    });

    it('an answer that loses one of two addresses retires the sockets to that one only', async () => {
      const { server, pair, agent, events } = await setup({ [HOST]: { A: [OLD, NEW], ttl: 1 } }, { ...FAST_REFRESH, spread: true });
      const bodies = (await Promise.all([request(url(pair.port, '/1'), { agent }), request(url(pair.port, '/2'), { agent })])).map((res) => res.body);
      assert.deepEqual(bodies.map((body) => body.split(' ')[0]).sort(), [OLD, NEW]);
      await waitFor(() => Object.values(agent.freeSockets).flat().length === 2);

      server.set(HOST, { A: [NEW], ttl: 1 });
      await waitFor(() => events.of('socket:close').length === 1, { limit: 10000 });
      assert.equal(events.of('socket:close')[0].reason, 'dns');
      assert.deepEqual(events.of('dns:retire').map(({ address, free }) => ({ address, free })), [{ address: OLD, free: true }]);
      const kept = Object.values(agent.freeSockets).flat();
      assert.equal(kept.length, 1);
      assert.equal(kept[0].remoteAddress, NEW);
      const next = await request(url(pair.port, '/3'), { agent });
      assert.deepEqual([next.body, next.reusedSocket], [`${NEW} /3`, true]);
    });

    it('a name only the system knows (this machine\'s host name) resolves', async function () {
      const name = os.hostname();
      const system = await promisify(dns.lookup)(name, { family: 4 }).catch(() => null);
      // Nothing to show where the system cannot resolve it, or not to loopback.
      if (system === null || !system.address.startsWith('127.') || name === 'localhost') this.skip();
      const server = keep(await createDnsServer());
      const target = keep(await createServer(protocol, servedBy, { listen: { host: system.address } }));
      const agent = agentFor(protocol, { dns: { resolver: server.resolver() } });
      const events = watch(agent);
      // The certificate names localhost: https checks the server against that name.
      const res = await request(`${protocol}//${name}:${target.port}/h`, { agent, family: 4, servername: 'localhost' });
      assert.equal(res.body, `${system.address} /h`);
      assert.deepEqual(events.of('dns:lookup').map((e) => e.source), ['lookup']);
    });

    it('all: true reaches autoSelectFamily, which connects past an address that refuses', async () => {
      const dead = '127.0.0.5'; // nothing listens there
      const { pair, agent, events } = await setup({ [HOST]: { A: [dead, OLD], ttl: 60 } });
      const res = await request(url(pair.port, '/auto'), { agent, autoSelectFamily: true });
      assert.equal(res.body, `${OLD} /auto`);
      assert.equal(res.socket.remoteAddress, OLD);
      assert.equal(events.of('dns:lookup').length, 1);
    });

    it('family: 4 and family: 6 are honoured', async function () {
      const { pair, agent } = await setup({ [HOST]: { A: [OLD], AAAA: ['::1'], ttl: 60 } });
      const four = await request(url(pair.port, '/4'), { agent, family: 4 });
      assert.equal(four.body, `${OLD} /4`);
      const v6 = await createServer(protocol, servedBy, { listen: { host: '::1', port: pair.port } }).catch(() => null);
      if (v6 === null) this.skip(); // no IPv6 loopback here
      keep(v6);
      const six = await request(url(pair.port, '/6'), { agent, family: 6 });
      assert.equal(six.body, '::1 /6');
    });

    it('an IP literal never queries', async () => {
      const { server, pair, agent } = await setup();
      const res = await request(`${protocol}//${OLD}:${pair.port}/ip`, { agent, ...(protocol === 'https:' ? { servername: 'localhost' } : {}) });
      assert.equal(res.body, `${OLD} /ip`);
      assert.equal(server.total, 0);
    });

    describe('socketPath', () => {
      const dir = tempDirEach('dns-');
      it('never queries', async function () {
        if (process.platform === 'win32') this.skip(); // Unix sockets
        const server = keep(await createDnsServer({ [HOST]: { A: [OLD], ttl: 60 } }));
        const socketPath = path.join(dir(), 's.sock');
        keep(await createServer(protocol, (req, res) => res.end('over a socket'), { listen: { path: socketPath } }));
        const agent = agentFor(protocol, { dns: { resolver: server.resolver() } });
        const res = await request(url(0, '/unix'), { agent, socketPath, servername: 'localhost' });
        assert.equal(res.body, 'over a socket');
        assert.equal(server.total, 0);
      });
    });

    it('a caller\'s own lookup wins, on the request or on the agent', async () => {
      const { server, pair, agent } = await setup();
      const asked = [];
      const lookup = (hostname, options, callback) => {
        asked.push(hostname);
        if (options.all) callback(null, [{ address: NEW, family: 4 }]);
        else callback(null, NEW, 4);
      };
      const res = await request(url(pair.port, '/own'), { agent, lookup });
      assert.equal(res.body, `${NEW} /own`);
      const agentWithLookup = agentFor(protocol, { dns: { resolver: server.resolver() }, lookup });
      const again = await request(url(pair.port, '/agent'), { agent: agentWithLookup });
      assert.equal(again.body, `${NEW} /agent`);
      assert.deepEqual(asked, [HOST, HOST]);
      assert.equal(server.total, 0);
    });

    it('a lookup that fails fails the request with dns.lookup\'s error', async () => {
      const server = keep(await createDnsServer());
      const agent = agentFor(protocol, { dns: { resolver: server.resolver() } });
      const err = await requestError(request(`${protocol}//nowhere.invalid:1/`, { agent }));
      assert.equal(err.hostname, 'nowhere.invalid');
      assert.equal(err.syscall, 'getaddrinfo');
    });

    it('through a proxy: the proxy\'s name goes through the cache, the target\'s is the proxy\'s business', async () => {
      const server = keep(await createDnsServer({ 'proxy.test': { A: ['127.0.0.1'], ttl: 60 } }));
      const proxy = keep(await startProxy());
      const target = keep(await createServer(protocol, servedBy));
      const agent = agentFor(protocol, {
        dns: { resolver: server.resolver() },
        proxy: `http://proxy.test:${proxy.port}`,
      });
      const res = await request(`${protocol}//localhost:${target.port}/p`, { agent });
      assert.equal(res.body, '127.0.0.1 /p');
      assert.equal(server.queries('proxy.test'), 2);
      assert.equal(server.queries('localhost'), 0);
      assert.equal(proxy.accepted, 1);
    });

    it('getStats() shows each host\'s answer', async () => {
      const { pair, agent } = await setup({ [HOST]: { A: [OLD], ttl: 30 } });
      await request(url(pair.port, '/s'), { agent });
      const { dns: hosts } = agent.getStats();
      assert.deepEqual(hosts[HOST].addresses, [{ address: OLD, family: 4 }]);
      assert.equal(hosts[HOST].source, 'dns');
      assert.equal(hosts[HOST].ttlMs, 30000);
      assert.equal(hosts[HOST].sockets, 1);
      agent.destroy();
      await waitFor(() => agent.getStats().dns[HOST].sockets === 0);
    });
  });
}

describe('dns option: construction', () => {
  const { HttpAgent, HttpsAgent } = require('..');

  it('bad settings throw from the constructor, naming the setting; the caller\'s options are only read', () => {
    assert.throws(() => new HttpAgent({ dns: { minTtl: 0 } }), { code: 'ERR_OUT_OF_RANGE', option: 'dns.minTtl' });
    assert.throws(() => new HttpsAgent({ dns: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE', option: 'dns' });
    const options = Object.freeze({ dns: Object.freeze({ minTtl: '2s', spread: 'true' }) });
    const agent = new HttpAgent(options);
    try {
      assert.deepEqual(agent.getStats().dns, {});
      // Never copied into each request's options (core copies agent.options' own keys).
      assert.equal(Object.hasOwn(agent.options, 'dns'), false);
    } finally {
      agent.destroy();
    }
  });

  it('without it, getStats() has no dns key', () => {
    const agent = new HttpAgent();
    try {
      assert.equal('dns' in agent.getStats(), false);
    } finally {
      agent.destroy();
    }
  });
});

describe('dns option off', () => {
  it('lib/dns.js is never loaded, so nothing of it can query or schedule', () => {
    const root = path.join(__dirname, '..');
    const script = `
      const dc = require('node:diagnostics_channel');
      const http = require('node:http');
      const { HttpAgent } = require(${JSON.stringify(root)});
      let published = 0;
      dc.subscribe('steady-agent:dns:lookup', () => published++);
      const server = http.createServer((req, res) => res.end('ok'));
      server.listen(0, '127.0.0.1', () => {
        const agent = new HttpAgent({ dns: false });
        http.get({ host: 'localhost', port: server.address().port, agent, family: 4 }, (res) => {
          res.resume();
          res.on('end', () => {
            const loaded = Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(path.join(root, 'lib'))}));
            process.stdout.write(JSON.stringify({
              dnsLoaded: loaded.some((f) => f.startsWith(${JSON.stringify(path.join(root, 'lib', 'dns') + path.sep)})),
              published,
            }));
            agent.destroy();
            server.close();
          });
        });
      });
    `;
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const result = JSON.parse(child.stdout);
    assert.deepEqual(result, { dnsLoaded: false, published: 0 });
  });
});
