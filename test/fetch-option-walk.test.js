'use strict';

// Every option of docs/options.md, through createFetch and createDispatcher
// (the newest undici this Node runs): each either applies, shown on a real
// server, or throws UnsupportedOptionError naming it. Then undici's own
// options, which createDispatcher applies with undici's meaning and
// createFetch refuses, and a key nobody knows, which both refuse.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const dc = require('node:diagnostics_channel');
const fs = require('node:fs');
const path = require('node:path');
const { createFetch } = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { UNDICI_MAJORS, tlsOptions } = require('./support/fetch');
const { createServer, createHoldingServer, createSilentServer, refusedPort } = require('./support/servers');
const { startProxy } = require('./support/proxy');
const { createDnsServer } = require('./support/dns_server');
const { waitFor } = require('./support/request');
const { timerOf, KEEPALIVE_TIMER } = require('./support/tcp_timers');

const newest = UNDICI_MAJORS.filter((entry) => entry.runs).at(-1);
const root = path.join(__dirname, '..');

/** The options docs/options.md documents: its `### \`name\`` headings under "## Reference". */
function documentedOptions() {
  const doc = fs.readFileSync(path.join(root, 'docs', 'options.md'), 'utf8');
  const start = doc.indexOf('\n## Reference\n');
  const reference = doc.slice(start, doc.indexOf('\n## ', start + 1));
  return [...reference.matchAll(/^### `(\w+)`/gm)].map((m) => m[1]).sort();
}

// The two entry points, each as { make(options), send(url, client) -> text, viaFetch }.
const DOORS = [
  {
    entry: 'createFetch',
    viaFetch: true,
    make: (options) => {
      const fetch = createFetch(options);
      return { client: fetch, dispatcher: fetch.dispatcher, close: () => fetch.close() };
    },
    send: async (url, client) => (await client(url)).text(),
  },
  {
    entry: 'createDispatcher',
    viaFetch: false,
    make: (options) => {
      const dispatcher = createDispatcher(newest.load(), options);
      return { client: dispatcher, dispatcher, close: () => dispatcher.close() };
    },
    send: async (url, client) => (await newest.load().request(url, { dispatcher: client })).body.text(),
  },
];

/** The error a request failed with: for fetch, the cause under TypeError('fetch failed'). */
async function failure(promise, viaFetch) {
  const err = await promise.then(() => null, (error) => error);
  assert.ok(err, 'the request should fail');
  return viaFetch ? err.cause : err;
}

/** The one origin's getStats() entry. */
const originStats = (dispatcher) => Object.values(dispatcher.getStats().origins)[0];

/** The sockets `dispatcher` creates from now on (its create events). */
function createdSockets(dispatcher) {
  const sockets = [];
  const listener = (message) => {
    if (message.agent === dispatcher) sockets.push(message.socket);
  };
  dc.subscribe('steady-agent:socket:create', listener);
  return { sockets, stop: () => dc.unsubscribe('steady-agent:socket:create', listener) };
}

/**
 * Runs `code` with createFetch and createDispatcher (and undici as `undici`)
 * in a Node process of its own, warnings collected: for the deprecated
 * aliases, whose warning comes once per process. Resolves { warnings, result }.
 */
function inChild(code, url) {
  const script = `
    const warnings = [];
    process.on('warning', (w) => warnings.push(w.code));
    const { createFetch } = require('steady-agent/fetch');
    const { createDispatcher } = require('steady-agent/undici');
    const undici = require(${JSON.stringify(newest.name)});
    const url = process.argv[1];
    (async () => { ${code} })().then((result) => setImmediate(() => process.stdout.write(JSON.stringify({ warnings, result }))));`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--no-warnings', '-e', script, url], { cwd: __dirname }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

// What each documented option does, shown through a door: ({ door, keep, make }) => Promise.
// An entry { throws: /reason/ } is refused by both doors.
const OPTIONS = {
  async keepAlive({ door, keep, make }) {
    const server = keep(await createServer('http:'));
    const { client } = make({ keepAlive: false });
    await door.send(server.url('/1'), client);
    await door.send(server.url('/2'), client);
    assert.equal(server.accepted, 2);
  },
  async keepAliveMsecs(kit) {
    const timer = await keepAliveTimer(kit, { keepAliveMsecs: 600000 });
    assert.equal(timer.code, KEEPALIVE_TIMER);
    assert.ok(timer.ticks > 60 * 100, `a keep-alive timer of about 600 s, got ${timer.ticks} ticks`);
  },
  async tcpKeepAlive(kit) {
    const timer = await keepAliveTimer(kit, { tcpKeepAlive: false });
    assert.notEqual(timer.code, KEEPALIVE_TIMER);
  },
  async freeSocketTimeout({ door, keep, make }) {
    const server = keep(await createServer('http:'));
    const { client, dispatcher } = make({ freeSocketTimeout: 50 });
    await door.send(server.url('/'), client);
    await waitFor(() => originStats(dispatcher).socketsClosed === 1);
    assert.deepEqual(originStats(dispatcher).closeReasons, { 'free-timeout': 1 });
  },
  async timeout({ door, keep, make }) {
    const silent = keep(await createSilentServer());
    const { client, dispatcher } = make({ timeout: 200 });
    const err = await failure(door.send(silent.url('http:') + '/', client), door.viaFetch);
    assert.equal(err.code, 'ERR_SOCKET_TIMEOUT');
    assert.equal(err.timeout, 200);
    await waitFor(() => originStats(dispatcher).socketsClosed === 1);
    assert.deepEqual(originStats(dispatcher).closeReasons, { 'active-timeout': 1 });
  },
  async autoSelectFamily({ door, keep, make }) {
    // A host name whose one address answers: raced when on, not when off.
    const server = keep(await createServer('http:'));
    const lookup = (host, options, callback) => (options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4));
    const url = server.url('/').replace('127.0.0.1', 'walk.test');
    const on = make({ autoSelectFamily: true, lookup });
    await door.send(url, on.client);
    assert.deepEqual(originStats(on.dispatcher).connectAttempts, { ipv4: 1, ipv6: 0 });
    const off = make({ autoSelectFamily: false, lookup });
    await door.send(url, off.client);
    assert.deepEqual(originStats(off.dispatcher).connectAttempts, { ipv4: 0, ipv6: 0 });
  },
  async autoSelectFamilyAttemptTimeout({ door, keep, make }) {
    // The first address refuses, the second answers: both tried in one race.
    const server = keep(await createServer('http:'));
    const lookup = (host, options, callback) => callback(null, [{ address: '127.0.0.2', family: 4 }, { address: '127.0.0.1', family: 4 }]);
    const url = server.url('/').replace('127.0.0.1', 'walk.test');
    assert.throws(() => make({ autoSelectFamilyAttemptTimeout: -1 }), { message: /autoSelectFamilyAttemptTimeout/ });
    const { client, dispatcher } = make({ autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 10, lookup });
    await door.send(url, client);
    assert.deepEqual(originStats(dispatcher).connectAttempts, { ipv4: 2, ipv6: 0 });
    assert.deepEqual(originStats(dispatcher).connectWins, { ipv4: 1, ipv6: 0 });
  },
  async connectTimeout({ door, keep, make }) {
    // A TLS server that never answers the handshake.
    const silent = keep(await createSilentServer());
    const { client } = make({ connectTimeout: 200 });
    const err = await failure(door.send(silent.url('https:') + '/', client), door.viaFetch);
    assert.equal(err.name, 'ConnectTimeoutError');
    assert.equal(err.phase, 'tls');
  },
  async socketActiveTTL({ door, keep, make }) {
    const server = keep(await createServer('http:'));
    const { client, dispatcher } = make({ socketActiveTTL: 100, freeSocketTimeout: 10000 });
    await door.send(server.url('/1'), client);
    await waitFor(() => originStats(dispatcher).socketsClosed === 1);
    await door.send(server.url('/2'), client);
    assert.equal(server.accepted, 2);
    assert.deepEqual(originStats(dispatcher).closeReasons, { ttl: 1 });
  },
  async serverTimeoutMargin({ door, keep, make }) {
    // The server announces 30 s; a margin of 29.9 s leaves 100 ms of idle
    // (the default margin would leave 29 s, past waitFor's limit).
    const server = keep(await createServer('http:', (req, res) => {
      res.setHeader('keep-alive', 'timeout=30');
      res.end('ok');
    }));
    const { client, dispatcher } = make({ serverTimeoutMargin: 29900, freeSocketTimeout: 60000 });
    await door.send(server.url('/'), client);
    await waitFor(() => originStats(dispatcher).socketsClosed === 1);
    assert.equal(server.accepted, 1);
  },
  async learnServerTimeout({ door, keep, make }) {
    // A server that closes a connection 100 ms idle, without saying so.
    const server = keep(await createServer('http:', (req, res) => {
      const socket = res.socket;
      res.end('ok', () => setTimeout(() => socket.destroy(), 150));
    }));
    server.server.keepAliveTimeout = 0; // no Keep-Alive header
    const learning = make({});
    const not = make({ learnServerTimeout: false });
    // Two idle closes that agree teach the limit.
    for (const round of [1, 2]) {
      for (const { client } of [learning, not]) await door.send(server.url('/'), client);
      await waitFor(() => originStats(learning.dispatcher).socketsClosed === round && originStats(not.dispatcher).socketsClosed === round);
    }
    assert.equal(typeof originStats(learning.dispatcher).serverIdleTimeout.learned, 'number');
    assert.equal(originStats(not.dispatcher).serverIdleTimeout.learned, null);
  },
  async maxSockets({ door, keep, make }) {
    const server = keep(await createServer('http:'));
    const { client } = make({ maxSockets: 1 });
    await Promise.all([1, 2, 3].map((i) => door.send(server.url(`/${i}`), client)));
    assert.equal(server.accepted, 1);
  },
  async maxFreeSockets({ door, keep, make }) {
    const server = keep(await createHoldingServer('http:'));
    const { client, dispatcher } = make({ maxFreeSockets: 1 });
    const held = [1, 2, 3].map((i) => door.send(server.url(`/hold${i}`), client));
    await waitFor(() => server.held === 3);
    server.release();
    await Promise.all(held);
    await waitFor(() => originStats(dispatcher).socketsClosed === 2);
    assert.deepEqual(originStats(dispatcher).closeReasons, { 'not-kept': 2 });
    assert.equal(originStats(dispatcher).free, 1);
  },
  async maxTotalSockets({ door, keep, make }) {
    const one = keep(await createHoldingServer('http:'));
    const two = keep(await createServer('http:'));
    const { client, dispatcher } = make({ maxTotalSockets: 1, freeSocketTimeout: 10000 });
    // An idle socket of another origin gives its place up at once.
    await door.send(one.url('/'), client);
    assert.equal(await door.send(two.url('/a'), client), 'ok GET /a');
    // With none idle, the new origin's connect waits for one to go free.
    const held = door.send(one.url('/hold'), client);
    await waitFor(() => one.held === 1);
    const waiting = door.send(two.url('/b'), client);
    one.release();
    assert.equal(await held, 'ok /hold');
    assert.equal(await waiting, 'ok GET /b');
    const reasons = () => Object.values(dispatcher.getStats().origins).map((stats) => stats.closeReasons['total-limit'] ?? 0);
    await waitFor(() => reasons().reduce((a, b) => a + b) === 3);
    assert.deepEqual(reasons(), [2, 1]);
    assert.equal(one.accepted + two.accepted, 4);
  },
  async maxQueue({ door, keep, make }) {
    const server = keep(await createHoldingServer('http:'));
    const { client } = make({ maxSockets: 1, maxQueue: 0 });
    const first = door.send(server.url('/hold'), client);
    const err = await failure(door.send(server.url('/2'), client), door.viaFetch);
    assert.equal(err.code, 'ERR_AGENT_QUEUE_FULL');
    await waitFor(() => server.held === 1);
    server.release();
    assert.equal(await first, 'ok /hold');
  },
  async queueTimeout({ door, keep, make }) {
    const server = keep(await createHoldingServer('http:'));
    const { client } = make({ maxSockets: 1, queueTimeout: 50 });
    const first = door.send(server.url('/hold'), client);
    const err = await failure(door.send(server.url('/2'), client), door.viaFetch);
    assert.equal(err.code, 'ERR_AGENT_QUEUE_TIMEOUT');
    await waitFor(() => server.held === 1);
    server.release();
    assert.equal(await first, 'ok /hold');
  },
  scheduling: { throws: /undici picks the idle connection/ },
  async proxy({ door, keep, make }) {
    const proxy = keep(await startProxy({ auth: { username: 'u', password: 'p' } }));
    const plain = keep(await createServer('http:'));
    const secure = keep(await createServer('https:'));
    const { client } = make({ proxy: proxy.url('u:p'), ...tlsOptions('https:') });
    assert.equal(await door.send(plain.url('/a'), client), 'ok GET /a');
    assert.equal(await door.send(secure.url('/b'), client), 'ok GET /b');
    assert.deepEqual(proxy.requestLines, [`GET http://127.0.0.1:${plain.port}/a`, `CONNECT 127.0.0.1:${secure.port}`]);
    assert.equal(proxy.authFailures, 0);
    // An https: proxy, trusted by the same `ca`: TLS to the proxy, and TLS to the origin inside it.
    const tlsProxy = keep(await startProxy({ protocol: 'https:' }));
    const viaTls = make({ proxy: tlsProxy.url(), ...tlsOptions('https:') });
    assert.equal(await door.send(secure.url('/tls'), viaTls.client), 'ok GET /tls');
    assert.equal(await door.send(plain.url('/tls'), viaTls.client), 'ok GET /tls');
    assert.deepEqual(tlsProxy.requestLines, [`CONNECT 127.0.0.1:${secure.port}`, `GET http://127.0.0.1:${plain.port}/tls`]);
    // A proxy that refuses: the request fails, never sent around it.
    const refused = make({ proxy: `http://127.0.0.1:${await refusedPort()}/` });
    const accepted = plain.accepted;
    const err = await failure(door.send(plain.url('/c'), refused.client), door.viaFetch);
    assert.equal(err.name, 'ProxyConnectionError');
    assert.equal(err.code, 'ECONNREFUSED');
    assert.equal(plain.accepted, accepted);
  },
  async noProxy({ door, keep, make }) {
    const proxy = keep(await startProxy());
    const server = keep(await createServer('http:'));
    const { client } = make({ proxy: proxy.url(), noProxy: '127.0.0.1' });
    assert.equal(await door.send(server.url('/'), client), 'ok GET /');
    assert.equal(proxy.accepted, 0);
  },
  async proxyEnv({ door, keep, make }) {
    const proxy = keep(await startProxy());
    const plain = keep(await createServer('http:'));
    const secure = keep(await createServer('https:'));
    const { client } = make({ proxyEnv: { HTTP_PROXY: proxy.url(), HTTPS_PROXY: proxy.url() }, ...tlsOptions('https:') });
    await door.send(plain.url('/a'), client);
    await door.send(secure.url('/b'), client);
    assert.equal(proxy.requests, 1);
    assert.equal(proxy.connects, 1);
  },
  async dns({ door, keep, make }) {
    const server = keep(await createServer('http:'));
    const dns = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.1'], ttl: 30 } }));
    const { client, dispatcher } = make({ dns: { resolver: dns.callbackResolver() } });
    assert.equal(await door.send(`http://svc.test:${server.port}/`, client), 'ok GET /');
    assert.ok(dns.queries('svc.test') >= 1);
    assert.ok(dispatcher.getStats().dns['svc.test']);
  },
  async keepAliveTimeout({ door, keep, make }) {
    const server = keep(await createServer('http:'));
    if (door.entry === 'createDispatcher') {
      // undici's name for the idle limit: no warning.
      const { client, dispatcher } = make({ keepAliveTimeout: 50 });
      await door.send(server.url('/'), client);
      await waitFor(() => originStats(dispatcher).socketsClosed === 1);
      assert.deepEqual(originStats(dispatcher).closeReasons, { 'free-timeout': 1 });
      return;
    }
    await deprecatedAlias(server, 'keepAliveTimeout');
  },
  async freeSocketKeepAliveTimeout({ door, keep }) {
    const server = keep(await createServer('http:'));
    await deprecatedAlias(server, 'freeSocketKeepAliveTimeout', door.entry);
  },
};

/** The deprecated alias `name` (50 ms) closes the idle socket, with its warning, in a process of its own. */
async function deprecatedAlias(server, name, entry = 'createFetch') {
  const make = entry === 'createFetch'
    ? `const f = createFetch({ ${name}: 50 }); await (await f(url)).text(); const stats = () => f.getStats();`
    : `const d = createDispatcher(undici, { ${name}: 50 }); await (await undici.request(url, { dispatcher: d })).body.text(); const stats = () => d.getStats();`;
  const { warnings, result } = await inChild(`
    ${make}
    while (Object.values(stats().origins)[0].socketsClosed === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const reasons = Object.values(stats().origins)[0].closeReasons;
    await (typeof f === 'undefined' ? d : f).close();
    return reasons;`, server.url('/'));
  assert.deepEqual(result, { 'free-timeout': 1 });
  assert.ok(warnings.includes('STEADY_AGENT_DEP_KEEPALIVE_TIMEOUT') || warnings.some((code) => /DEP/.test(code)), JSON.stringify(warnings));
}

/** The OS's keep-alive timer on the one socket of a door made with `options`, while a request holds it. */
async function keepAliveTimer({ door, keep, make }, options) {
  const server = keep(await createHoldingServer('http:'));
  const { client, dispatcher } = make(options);
  const created = createdSockets(dispatcher);
  try {
    const pending = door.send(server.url('/hold'), client);
    await waitFor(() => server.held === 1);
    const timer = await timerOf(created.sockets[0]);
    server.release();
    await pending;
    return timer;
  } finally {
    created.stop();
  }
}

describe('every option of docs/options.md, through createFetch and createDispatcher', () => {
  it('each documented option has its case here, and no other', () => {
    assert.deepEqual(Object.keys(OPTIONS).sort(), documentedOptions());
  });

  for (const door of DOORS) {
    describe(`${door.entry}${door.entry === 'createDispatcher' ? ` (${newest.name})` : ''}`, function () {
      this.timeout(60000);
      const closers = [];
      const keep = (handle) => {
        closers.push(() => handle.close());
        return handle;
      };
      const made = [];
      const make = (options) => {
        const handle = door.make(options);
        made.push(handle);
        return handle;
      };
      afterEach(async () => {
        for (const handle of made.splice(0)) await handle.close();
        for (const close of closers.splice(0).reverse()) await close();
      });

      for (const [name, shown] of Object.entries(OPTIONS)) {
        if (typeof shown === 'function') {
          it(`${name}: applies`, async function () {
            if (name.startsWith('keepAliveMsecs') || name === 'tcpKeepAlive') {
              if (!fs.existsSync('/proc/net/tcp')) this.skip(); // Linux only: the OS's view of the socket
            }
            await shown({ door, keep, make });
          });
        } else {
          it(`${name}: throws, naming it and why`, () => {
            assert.throws(() => door.make({ [name]: 'lifo' }), {
              name: 'UnsupportedOptionError', code: 'ERR_STEADY_UNSUPPORTED_OPTION', option: name, message: shown.throws,
            });
          });
        }
      }

      it('a key neither the agent nor undici knows throws', () => {
        assert.throws(() => door.make({ keepAlives: true }), { code: 'ERR_STEADY_UNSUPPORTED_OPTION', option: 'keepAlives' });
      });

      it('an option given as undefined is not given', async () => {
        const server = keep(await createServer('http:'));
        const { client } = make({ proxy: undefined, scheduling: undefined });
        assert.equal(await door.send(server.url('/'), client), 'ok GET /');
      });
    });
  }
});

describe('undici\'s own options: createDispatcher applies them, createFetch refuses them', function () {
  this.timeout(60000);
  const closers = [];
  const keep = (handle) => {
    closers.push(() => handle.close());
    return handle;
  };
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  const undici = newest.load();

  it('connections: 1 sends five parallel requests over one connection, as undici\'s Agent', async () => {
    const server = keep(await createServer('http:'));
    const dispatcher = keep(createDispatcher(undici, { connections: 1 }));
    await Promise.all([1, 2, 3, 4, 5].map(async (i) => (await undici.request(server.url(`/${i}`), { dispatcher })).body.text()));
    assert.equal(server.accepted, 1);
  });

  it('headersTimeout fails a response whose headers do not come in time, with undici\'s error', async () => {
    const silent = keep(await createSilentServer());
    const dispatcher = keep(createDispatcher(undici, { connections: 1, headersTimeout: 200 }));
    await assert.rejects(undici.request(silent.url('http:') + '/', { dispatcher }), { code: 'UND_ERR_HEADERS_TIMEOUT' });
  });

  it('bodyTimeout fails a body that stops, with undici\'s error', async () => {
    const server = keep(await createServer('http:', (req, res) => {
      res.writeHead(200, { 'content-length': 10 });
      res.write('12345');
    }));
    const dispatcher = keep(createDispatcher(undici, { bodyTimeout: 200 }));
    const { body } = await undici.request(server.url('/'), { dispatcher });
    await assert.rejects(body.text(), { code: 'UND_ERR_BODY_TIMEOUT' });
  });

  it('connections with maxSockets, or keepAliveTimeout with freeSocketTimeout, is one option twice: it throws', () => {
    assert.throws(() => createDispatcher(undici, { connections: 2, maxSockets: 2 }), { code: 'ERR_STEADY_UNSUPPORTED_OPTION', option: 'connections', message: /"maxSockets", also given/ });
    assert.throws(() => createDispatcher(undici, { keepAliveTimeout: 1, freeSocketTimeout: 1 }), { option: 'keepAliveTimeout' });
    assert.throws(() => createDispatcher(undici, { connections: 0 }), { code: 'ERR_OUT_OF_RANGE', message: /"connections"/ });
  });

  it('what the transport cannot do throws, naming it and why', () => {
    for (const [option, value, why] of [
      ['connect', { rejectUnauthorized: false }, /steady-agent makes the sockets/],
      ['factory', () => null, /undici's own pools/],
      ['allowH2', true, /HTTP\/1.1 only/],
      ['pipelining', 4, /one request per connection/],
      ['socketPath', '/tmp/x.sock', /over TCP only/],
    ]) {
      assert.throws(() => createDispatcher(undici, { [option]: value }), { name: 'UnsupportedOptionError', option, message: why });
    }
    // The values that ask for what the transport does anyway.
    return Promise.all([createDispatcher(undici, { allowH2: false, pipelining: 1 }).close()]);
  });

  it('createFetch refuses undici\'s options, naming createDispatcher', () => {
    for (const option of ['connections', 'headersTimeout', 'bodyTimeout', 'keepAliveTimeoutThreshold', 'pipelining', 'connect']) {
      assert.throws(() => createFetch({ [option]: 1 }), { name: 'UnsupportedOptionError', option, message: /createDispatcher\(undici, options\)/ });
    }
  });

  it('the caller\'s options object is never written', async () => {
    const options = Object.freeze({ connections: 1, headersTimeout: 1000, proxy: undefined, keepAliveTimeout: 100 });
    await createDispatcher(undici, options).close();
    await createFetch(Object.freeze({ keepAlive: false, timeout: 1000 })).close();
  });

  it('createDispatcher(undici, options).agents is not there: getStats() and observeAgent(dispatcher) are the way in', async () => {
    const dispatcher = createDispatcher(undici);
    assert.equal('agents' in dispatcher, false);
    await dispatcher.close();
  });
});

