'use strict';

// Error messages that name the option and the value, in the right grammar:
// each wrong count gets its own message (the remark on how Node reads 0 goes
// with 0 alone); "1 request already waits"; a failed connection to a proxy
// says it was the proxy, keeping the system's code and the error as cause;
// and a proxyEnv value of a scheme we do not support warns instead of being
// dropped without a word (warnings observed in a child process).
const assert = require('node:assert/strict');
const { HttpAgent, HttpsAgent } = require('..');
const { QueueFullError, ProxyConnectionError } = require('../lib/errors');
const { createHttpServer, createHoldingServer, refusedPort, fixtures } = require('./support/servers');
const { request, requestError, waitFor } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');
const { runCollectingWarnings } = require('./support/warnings');

const SECRET = 'n0t-f0r-logs';

describe('error messages', () => {
  const { keep, agentOf } = closeAfterEach();

  describe('counts', () => {
    const refused = (options) => {
      let error;
      assert.throws(() => new HttpAgent(options), (err) => { error = err; return true; });
      return error;
    };

    for (const option of ['maxSockets', 'maxFreeSockets']) {
      it(`${option}: -1, 2.5 and 0 each get their own message naming the option and the value`, () => {
        const negative = refused({ [option]: -1 });
        assert.equal(negative.message, `The "${option}" option must be at least 1 (an integer >= 1 or Infinity). Received -1`);
        assert.equal(negative.code, 'ERR_OUT_OF_RANGE');
        assert.equal(negative.option, option);
        assert.equal(negative.value, -1);
        const fraction = refused({ [option]: 2.5 });
        assert.equal(fraction.message,
          `The "${option}" option must be a whole number (an integer >= 1) or Infinity, not a fraction. Received 2.5`);
        assert.equal(fraction.value, 2.5);
        const zero = refused({ [option]: 0 });
        assert.match(zero.message, new RegExp(`^The "${option}" option must be an integer >= 1 or Infinity \\(Node's agent would read 0 as .*\\)\\. Received 0$`));
        for (const err of [negative, fraction]) assert.doesNotMatch(err.message, /read 0/);
      });
    }

    it('maxQueue: -1 and 0.5', () => {
      assert.equal(refused({ maxQueue: -1 }).message, 'The "maxQueue" option must be at least 0 (an integer >= 0 or Infinity). Received -1');
      assert.equal(refused({ maxQueue: 0.5 }).message,
        'The "maxQueue" option must be a whole number (an integer >= 0) or Infinity, not a fraction. Received 0.5');
    });
  });

  describe('a full queue', () => {
    it('says "1 request already waits" for one, "requests already wait" for more', () => {
      assert.equal(new QueueFullError(1).message, 'No socket is free and 1 request already waits for one (maxQueue: 1)');
      assert.equal(new QueueFullError(2).message, 'No socket is free and 2 requests already wait for one (maxQueue: 2)');
    });

    it('a request turned away behind maxQueue: 1 gets the singular', async () => {
      const server = keep(await createHoldingServer('http:'));
      const agent = agentOf(HttpAgent, { maxSockets: 1, maxQueue: 1 });
      const first = request(server.url('/hold'), { agent });
      await waitFor(() => server.held === 1);
      const second = request(server.url('/'), { agent });
      const err = await requestError(request(server.url('/'), { agent }));
      assert.equal(err.code, 'ERR_AGENT_QUEUE_FULL');
      assert.equal(err.message, 'No socket is free and 1 request already waits for one (maxQueue: 1)');
      server.release();
      assert.equal((await first).status, 200);
      assert.equal((await second).status, 200);
    });
  });

  describe('a proxy that refuses the connection', () => {
    const cases = [
      ['http agent (forward proxy)', HttpAgent, 'http://127.0.0.1:9/x', {}],
      ['https agent (CONNECT tunnel)', HttpsAgent, 'https://127.0.0.1:9/x', { ca: fixtures.ca }],
    ];
    for (const [title, Agent, url, options] of cases) {
      it(`${title}: ProxyConnectionError naming the proxy, with ECONNREFUSED and the cause, no credentials`, async () => {
        const port = await refusedPort();
        const agent = agentOf(Agent, { ...options, proxy: `http://user:${SECRET}@127.0.0.1:${port}` });
        const err = await requestError(request(url, { agent }));
        assert.ok(err instanceof ProxyConnectionError, err.stack);
        assert.equal(err.name, 'ProxyConnectionError');
        assert.equal(err.code, 'ECONNREFUSED');
        assert.equal(err.syscall, 'connect');
        assert.equal(err.port, port);
        assert.equal(err.proxy, `http://127.0.0.1:${port}`);
        assert.equal(err.message, `Could not connect to the proxy http://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
        assert.equal(err.cause.code, 'ECONNREFUSED');
        assert.ok(!(err.cause instanceof ProxyConnectionError));
        assert.doesNotMatch(`${err.message} ${err.stack} ${err.cause.message}`, new RegExp(`${SECRET}|user:`));
        await waitFor(() => agent.totalSocketCount === 0);
      });
    }

    it('a proxy that is up: requests through it are served and their sockets reused', async () => {
      const target = keep(await createHttpServer());
      // An http target through an http agent's forward proxy that is the target itself.
      const agent = agentOf(HttpAgent, { proxy: target.url('/').replace(/\/$/, '') });
      assert.equal((await request(target.url('/a'), { agent })).status, 200);
      const second = await request(target.url('/b'), { agent });
      assert.equal(second.status, 200);
      assert.equal(second.reusedSocket, true);
      // Once up, the connection's destroy is its own again.
      assert.equal(Object.hasOwn(second.socket, 'destroy'), false);
    });
  });

  describe('proxyEnv values of an unsupported scheme', () => {
    it('warn once per variable and scheme, naming both and no credentials', () => {
      const { stdout, warnings } = runCollectingWarnings(`
        const env = { HTTPS_PROXY: 'socks5://user:${SECRET}@127.0.0.1:1080', http_proxy: 'proxy.test:3128' };
        for (let i = 0; i < 2; i++) { new HttpsAgent({ proxyEnv: env }).destroy(); new HttpAgent({ proxyEnv: env }).destroy(); }
        new HttpsAgent({ proxyEnv: { HTTPS_PROXY: 'socks4://127.0.0.1:1080' } }).destroy();
        new HttpsAgent({ proxyEnv: { HTTPS_PROXY: 'http://127.0.0.1:3128' } }).destroy();
      `);
      assert.equal(stdout, '');
      const code = 'STEADY_AGENT_PROXY_ENV_IGNORED';
      assert.deepEqual(warnings, [
        { name: 'Warning', code, message: 'proxyEnv.HTTPS_PROXY is a socks5: URL, and only http: and https: proxies are supported: it is ignored, and https requests go without a proxy.' },
        { name: 'Warning', code, message: 'proxyEnv.http_proxy has no http:// or https:// scheme, and only http: and https: proxies are supported: it is ignored, and http requests go without a proxy.' },
        { name: 'Warning', code, message: 'proxyEnv.HTTPS_PROXY is a socks4: URL, and only http: and https: proxies are supported: it is ignored, and https requests go without a proxy.' },
      ]);
    });
  });
});
