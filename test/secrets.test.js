'use strict';

// TLS secrets stay out of everything the agent shows: socket names, pool
// names, getCurrentStatus(), debug output and error messages. Node's own
// https.Agent names its pools with the key and certificate text, and
// agentkeepalive's getCurrentStatus() prints those names: with a client
// certificate, monitoring that logs the status logs the private key. Here a
// pool reads `host:port:localAddress` plus a short digest of the TLS options.
const assert = require('node:assert/strict');
const { format } = require('node:util');
const createDebug = require('debug');
const { HttpsAgent, constants } = require('../');
const { createHttpsServer, refusedPort, fixtures } = require('./support/servers');
const { request, waitFor } = require('./support/request');

const { SOCKET_NAME } = constants;
const WRONG_PASSPHRASE = 'wrong-sekrit-passphrase';

/** The base64 body of a PEM block, with and without its line breaks. */
function pemBodies(pem) {
  const body = pem.replace(/-----(BEGIN|END) [^-]+-----/g, '').trim();
  const lines = body.split(/\r?\n/).filter(Boolean);
  return [body, lines.join(''), lines[0], lines[Math.floor(lines.length / 2)]];
}

// Every form in which the material could leak: whole PEM text, the base64
// body joined or line by line, the pfx bytes as base64, latin1, hex and as
// Node's string concatenation (utf8) would render them, and the passphrases.
function secretForms() {
  const pfx = fixtures.clientPfx;
  const pfxBase64 = pfx.toString('base64');
  return [
    ['client key PEM', fixtures.clientKey.trim()],
    ...pemBodies(fixtures.clientKey).map((text, i) => [`client key body (form ${i})`, text]),
    ['client certificate PEM', fixtures.clientCert.trim()],
    ...pemBodies(fixtures.clientCert).map((text, i) => [`client certificate body (form ${i})`, text]),
    ...pemBodies(fixtures.ca).map((text, i) => [`CA certificate body (form ${i})`, text]),
    ['pfx as base64', pfxBase64],
    ['a piece of the pfx as base64', pfxBase64.slice(200, 240)],
    ['pfx as latin1', pfx.toString('latin1')],
    ['a piece of the pfx as latin1', pfx.toString('latin1').slice(100, 124)],
    ['pfx as hex', pfx.toString('hex')],
    ['a piece of the pfx as hex', pfx.toString('hex').slice(300, 348)],
    ['pfx as utf8', pfx.toString('utf8')],
    ['passphrase', fixtures.clientPfxPassphrase],
    ['wrong passphrase', WRONG_PASSPHRASE],
  ];
}

/** Fails with the first secret found in any of the texts, naming where it was. */
function assertNoSecrets(texts) {
  const forms = secretForms();
  for (const [where, text] of texts) {
    assert.equal(typeof text, 'string', `${where} is text`);
    for (const [what, secret] of forms) {
      assert.ok(!text.includes(secret), `${what} appears in ${where}: ${text.slice(0, 200)}`);
    }
  }
}

/**
 * Turns on the `steady-agent` debug namespace and collects its output. The
 * `debug` package re-reads the enabled namespaces on each call, so the
 * library's logger, created at load time, follows enable() and disable().
 */
function captureDebug() {
  const lines = [];
  const previousNamespaces = createDebug.disable();
  const previousLog = createDebug.log;
  createDebug.enable('steady-agent');
  // What the default logger would write, formatted the same way.
  createDebug.log = (...args) => lines.push(format(...args));
  return {
    lines,
    restore() {
      createDebug.log = previousLog;
      createDebug.disable();
      if (previousNamespaces) createDebug.enable(previousNamespaces);
    },
  };
}

/** The request's error; fails if it succeeded. */
async function failure(promise) {
  try {
    const res = await promise;
    assert.fail(`expected the request to fail, got ${res.status}`);
  } catch (err) {
    if (err instanceof assert.AssertionError) throw err;
    return err;
  }
}

/** What an error shows of itself (not the `.req` our helper attaches). */
function errorTexts(label, err) {
  const own = { ...err };
  delete own.req;
  return [
    [`${label}: message`, err.message],
    [`${label}: stack`, String(err.stack)],
    [`${label}: own properties`, JSON.stringify(own)],
  ];
}

// The client identities under test, each as the request's TLS options.
const identities = [
  {
    title: 'key and cert',
    options: () => ({ ca: fixtures.ca, key: fixtures.clientKey, cert: fixtures.clientCert }),
  },
  {
    title: 'key and cert as Buffers',
    options: () => ({ ca: fixtures.ca, key: Buffer.from(fixtures.clientKey), cert: Buffer.from(fixtures.clientCert) }),
  },
  {
    title: 'pfx and passphrase',
    options: () => ({ ca: fixtures.ca, pfx: fixtures.clientPfx, passphrase: fixtures.clientPfxPassphrase }),
  },
  {
    title: 'ca only',
    options: () => ({ ca: fixtures.ca }),
  },
];

describe('secrets', () => {
  let server;
  let slowRequests = 0;
  let agents = [];
  let capture = null;

  before(async () => {
    server = await createHttpsServer((req, res) => {
      req.resume();
      if (req.url === '/slow') {
        slowRequests++;
        setTimeout(() => res.end('late'), 1500);
        return;
      }
      if (req.url === '/close') res.setHeader('connection', 'close');
      res.end(`ok ${req.url}`);
    }, { requestCert: true, rejectUnauthorized: false });
  });

  after(async () => {
    if (server) await server.close();
    server = null;
  });

  afterEach(() => {
    if (capture) capture.restore();
    capture = null;
    for (const agent of agents) agent.destroy();
    agents = [];
  });

  function newAgent(options) {
    const agent = new HttpsAgent(options);
    agents.push(agent);
    return agent;
  }

  // `localhost` and IPv4 only, so that pool names read `localhost:PORT:...`
  // wherever localhost also resolves to ::1.
  function url(path) {
    return `https://localhost:${server.port}${path}`;
  }

  for (const identity of identities) {
    describe(identity.title, () => {
      it('never appear in socket names, pool names, getCurrentStatus(), debug output or errors', async () => {
        capture = captureDebug();
        const texts = [];
        const sockets = new Set();
        const snapshot = (label) => {
          texts.push([`getCurrentStatus() ${label}`, JSON.stringify(agent.getCurrentStatus())]);
          for (const map of ['sockets', 'freeSockets', 'requests']) {
            texts.push([`agent.${map} names ${label}`, JSON.stringify(Object.keys(agent[map]))]);
          }
        };
        const options = { ...identity.options(), family: 4 };
        // timeout: long enough for any handshake, short enough to wait for.
        const agent = newAgent({ timeout: 600, freeSocketTimeout: 200, maxSockets: 1 });
        agent.on('free', (socket) => sockets.add(socket));

        // Active and queued: one request on the pool's only socket, one waiting.
        const first = request(url('/1'), { ...options, agent });
        const second = request(url('/2'), { ...options, agent });
        snapshot('with a request queued');
        assert.equal(Object.keys(agent.requests).length, 1, 'a queued request');
        const results = await Promise.all([first, second]);
        results.forEach((res) => sockets.add(res.socket));
        assert.equal(results[1].reusedSocket, true);
        snapshot('with a free socket');

        // A timeout while active: the socket is destroyed with an error that
        // names it.
        const timedOut = await failure(request(url('/slow'), { ...options, agent }));
        assert.equal(timedOut.code, 'ERR_SOCKET_TIMEOUT');
        texts.push(...errorTexts('timeout error', timedOut));
        snapshot('after a timeout');

        // The server closes after answering.
        const closing = await request(url('/close'), { ...options, agent });
        sockets.add(closing.socket);
        await waitFor(() => closing.socket.destroyed);

        // A free socket reaches freeSocketTimeout and is closed by the agent.
        const idle = await request(url('/idle'), { ...options, agent });
        sockets.add(idle.socket);
        await waitFor(() => idle.socket.destroyed, { limit: 5000 });
        snapshot('after the free socket timed out');

        // A handshake that fails, with the same client identity.
        const untrusted = await failure(request(url('/'), { ...options, ca: fixtures.otherCa, agent }));
        assert.equal(untrusted.code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
        texts.push(...errorTexts('handshake error', untrusted));

        // A wrong passphrase: it locks the pfx; an unencrypted key ignores it.
        const locked = await request(url('/'), { ...options, passphrase: WRONG_PASSPHRASE, agent })
          .then(() => null, (err) => err);
        if (options.pfx) assert.ok(locked instanceof Error, 'a wrong passphrase fails the request');
        if (locked) texts.push(...errorTexts('wrong passphrase error', locked));

        // Connection refused, with the identity in the options.
        const refused = await failure(request(`https://localhost:${await refusedPort()}/`, { ...options, agent }));
        assert.equal(refused.code, 'ECONNREFUSED');
        texts.push(...errorTexts('connection refused error', refused));

        // destroy() with a request in flight.
        const slowBefore = slowRequests;
        const inFlight = failure(request(url('/slow'), { ...options, agent }));
        await waitFor(() => slowRequests > slowBefore);
        snapshot('with a request in flight');
        agent.destroy();
        const destroyed = await inFlight;
        assert.equal(destroyed.code, 'ECONNRESET');
        texts.push(...errorTexts('destroy error', destroyed));
        await waitFor(() => agent.closeSocketCount === agent.createSocketCount);
        snapshot('after destroy()');

        capture.restore();
        const debugLines = capture.lines;
        capture = null;

        for (const socket of sockets) texts.push(['SOCKET_NAME', socket[SOCKET_NAME]]);
        texts.push(...debugLines.map((line, i) => [`debug line ${i}`, line]));
        assertNoSecrets(texts);

        // The capture saw the whole life of the sockets, so the check above
        // had something to look at.
        const debugText = debugLines.join('\n');
        for (const event of ['created', 'free', 'reused', 'timed out', 'error', 'closing: free-timeout', 'closed after']) {
          assert.ok(debugText.includes(event), `debug output mentions "${event}"`);
        }
        assert.ok(debugText.includes(`localhost:${server.port}:`), 'debug output names the origin');
        assert.ok(sockets.size >= 3);
      });

      it('pool names read localhost:PORT: and a short, stable digest', async () => {
        const options = { ...identity.options(), family: 4 };
        const agent = newAgent();
        const res = await request(url('/'), { ...options, agent });
        const pool = new RegExp(`^localhost:${server.port}::4:tls-[0-9a-f]{12}$`);

        assert.match(res.socket[SOCKET_NAME], new RegExp(`^sock\\[\\d+#localhost:${server.port}::4:tls-[0-9a-f]{12}\\]$`));
        await waitFor(() => Object.keys(agent.freeSockets).length === 1);
        const [name] = Object.keys(agent.freeSockets);
        assert.match(name, pool);
        assert.deepEqual(Object.keys(agent.getCurrentStatus().freeSockets), [name]);

        // The same options, in new objects, in another agent: the same name.
        const other = newAgent();
        const again = await request(url('/'), { ...identity.options(), family: 4, agent: other });
        assert.equal(again.socket[SOCKET_NAME].replace(/^sock\[\d+#/, ''), `${name}]`);
        // Other TLS options: another digest, same readable origin.
        const changed = await request(url('/'), { ...options, servername: 'alt.localhost', agent });
        const changedPool = changed.socket[SOCKET_NAME].replace(/^sock\[\d+#(.*)\]$/, '$1');
        assert.match(changedPool, pool);
        assert.notEqual(changedPool, name);
      });
    });
  }

  it('the same check finds the private key in agentkeepalive 4.x\'s getCurrentStatus()', async () => {
    // The failure mode this guards against, shown on the library we replace.
    const { HttpsAgent: LegacyHttpsAgent } = require('agentkeepalive');
    const legacy = new LegacyHttpsAgent();
    agents.push(legacy);
    const options = { ca: fixtures.ca, key: fixtures.clientKey, cert: fixtures.clientCert, family: 4 };
    await request(url('/'), { ...options, agent: legacy });
    await waitFor(() => Object.keys(legacy.freeSockets).length === 1);

    const status = JSON.stringify(legacy.getCurrentStatus());
    assert.throws(() => assertNoSecrets([['agentkeepalive getCurrentStatus()', status]]),
      /client key (PEM|body)/);

    const agent = newAgent();
    await request(url('/'), { ...options, agent });
    assertNoSecrets([['getCurrentStatus()', JSON.stringify(agent.getCurrentStatus())]]);
  });
});
