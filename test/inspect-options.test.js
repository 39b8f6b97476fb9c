'use strict';

// util.inspect(agent.options), and so console.log(agent), shows the settings
// in force: freeSocketTimeout, socketActiveTTL, maxQueue, the pool sizes, and
// timeout as a number, not [Getter/Setter]. agent.options itself is what core
// and agentkeepalive's code read and write, unchanged; TLS material and proxy
// credentials are never printed.
const assert = require('node:assert/strict');
const { inspect } = require('node:util');
const { HttpAgent, HttpsAgent } = require('..');
const { createHttpsServer, fixtures } = require('./support/servers');
const { request } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');

const PROXY_PASSWORD = 'pr0xy-sekrit';
const ENV_PASSWORD = 'env-sekrit';

/** Every form of a secret given to the agents below that must not be printed. */
function secrets() {
  const pem = (text) => text.replace(/-----(BEGIN|END) [^-]+-----/g, '').trim().split(/\r?\n/)[1];
  return [
    fixtures.clientKey.trim(), pem(fixtures.clientKey), fixtures.clientCert.trim(), pem(fixtures.clientCert),
    pem(fixtures.ca), fixtures.clientPfx.toString('base64').slice(100, 140), fixtures.clientPfxPassphrase,
    PROXY_PASSWORD, ENV_PASSWORD, 'user:',
  ];
}

function assertNoSecrets(text, where) {
  for (const secret of secrets()) assert.ok(!text.includes(secret), `${where} shows a secret (${secret.slice(0, 20)}...)`);
}

describe('util.inspect(agent.options)', () => {
  const { keep, agentOf } = closeAfterEach();

  it('shows the effective settings, defaults included, and timeout as a number', () => {
    const agent = agentOf(HttpAgent);
    const shown = inspect(agent.options);
    for (const setting of ['keepAlive: true', 'keepAliveMsecs: 1000', 'freeSocketTimeout: 4000', 'timeout: 8000',
      'socketActiveTTL: 0', 'serverTimeoutMargin: 1000', 'learnServerTimeout: true', 'maxSockets: Infinity',
      'maxFreeSockets: 256', 'maxTotalSockets: Infinity', "scheduling: 'lifo'", 'maxQueue: Infinity',
      'queueTimeout: 0', 'connectTimeout: 0', 'tcpKeepAlive: true', 'noDelay: true']) {
      assert.ok(shown.includes(setting), `${setting} in ${shown}`);
    }
    assert.doesNotMatch(shown, /Getter|Setter|null prototype/);
  });

  it('shows the values given, and those written to agent.options since', () => {
    const agent = agentOf(HttpAgent, { freeSocketTimeout: '2s', socketActiveTTL: 60000, maxQueue: 5, maxSockets: '10',
      scheduling: 'fifo', connectTimeout: 300, tcpKeepAlive: false, custom: 'kept' });
    agent.options.timeout = '5s';
    agent.options.freeSocketTimeout = 1500;
    const shown = inspect(agent.options);
    for (const setting of ['freeSocketTimeout: 1500', 'timeout: 5000', 'socketActiveTTL: 60000', 'maxQueue: 5',
      'maxSockets: 10', "scheduling: 'fifo'", 'connectTimeout: 300', 'tcpKeepAlive: false', "custom: 'kept'"]) {
      assert.ok(shown.includes(setting), `${setting} in ${shown}`);
    }
  });

  it('console.log(agent) prints the same view of its options', () => {
    const agent = agentOf(HttpsAgent, { freeSocketTimeout: 1234 });
    const shown = inspect(agent); // what console.log prints
    assert.match(shown, /options: \{\n\s+keepAlive: true,\n\s+keepAliveMsecs: 1000,\n\s+freeSocketTimeout: 1234,\n\s+timeout: 8000,/);
  });

  it('leaves agent.options as core and agentkeepalive read it, and the caller\'s options untouched', () => {
    const given = Object.freeze({ freeSocketTimeout: 1000, maxQueue: 3 });
    const agent = agentOf(HttpAgent, given);
    assert.deepEqual(Object.keys(agent.options), ['keepAlive', 'timeout', 'noDelay', 'path']);
    assert.deepEqual(Object.getOwnPropertySymbols({ ...agent.options }), []);
    assert.equal(agent.options.freeSocketTimeout, 1000);
    assert.equal(agent.options.maxQueue, 3);
    assert.equal(JSON.stringify(agent.options), '{"keepAlive":true,"timeout":8000,"noDelay":true,"path":null}');
    assert.deepEqual(given, { freeSocketTimeout: 1000, maxQueue: 3 });
  });

  it('hides TLS material, proxy credentials and proxyEnv values, at any depth, before and after a request', async () => {
    const server = keep(await createHttpsServer(undefined, { requestCert: true, ca: fixtures.ca }));
    const withPem = agentOf(HttpsAgent, { ca: fixtures.ca, key: fixtures.clientKey, cert: fixtures.clientCert });
    const withPfx = agentOf(HttpsAgent, { ca: fixtures.ca, pfx: fixtures.clientPfx, passphrase: fixtures.clientPfxPassphrase });
    const proxied = agentOf(HttpsAgent, {
      proxy: `http://user:${PROXY_PASSWORD}@127.0.0.1:3128`,
      proxyEnv: { HTTPS_PROXY: `http://user:${ENV_PASSWORD}@127.0.0.1:3129`, NO_PROXY: '127.0.0.1' },
    });
    const envOnly = agentOf(HttpAgent, { proxyEnv: { HTTP_PROXY: `http://user:${ENV_PASSWORD}@127.0.0.1:3129` } });
    for (const agent of [withPem, withPfx, proxied, envOnly]) {
      assertNoSecrets(inspect(agent.options), 'inspect(agent.options)');
      assertNoSecrets(inspect(agent, { depth: Infinity }), 'inspect(agent, { depth: Infinity })');
    }
    assert.match(inspect(withPem.options), /key: '\[hidden\]'/);
    assert.match(inspect(withPfx.options), /passphrase: '\[hidden\]'/);
    assert.match(inspect(proxied.options), /proxy: 'http:\/\/127\.0\.0\.1:3128'/);
    assert.match(inspect(envOnly.options), /proxyEnv: \[ 'HTTP_PROXY' \]/);
    for (const agent of [withPem, withPfx]) {
      assert.equal((await request(server.url('/'), { agent })).status, 200);
      assert.equal(Object.values(agent.freeSockets).flat().length, 1);
      assertNoSecrets(inspect(agent), 'inspect(agent) with a socket in the pool');
    }
  });
});
