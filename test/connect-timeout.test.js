'use strict';

// connectTimeout: a new socket that is not ready for its request in time (TCP
// connect, TLS handshake, a proxy's answer to CONNECT) is destroyed with a
// ConnectTimeoutError: code ETIMEDOUT, the phase it was in, the timeout. One
// timer per new socket, cleared on every path; none per request.
const assert = require('node:assert/strict');
const { spawnSync, execFile } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');
const axios = require('axios');
const { HttpAgent, HttpsAgent } = require('..');
const { PROTOCOLS, total } = require('./support/agents');
const { createServer, createSilentServer, fixtures } = require('./support/servers');
const { startProxy, startSilentProxy } = require('./support/proxy');
const { startBlackhole } = require('./support/blackhole');
const { request, requestError, waitFor } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');
const { activeTimers } = require('./support/timers');
const { importGot } = require('./support/got');

/** Every socket of the agent, active or free. */
const held = (agent) => total(agent.getCurrentStatus().sockets) + total(agent.getCurrentStatus().freeSockets);

function assertConnectTimeout(err, phase, timeout) {
  assert.equal(err.name, 'ConnectTimeoutError', err.stack);
  assert.equal(err.code, 'ETIMEDOUT');
  assert.equal(err.phase, phase);
  assert.equal(err.timeout, timeout);
}

/** After a failed connection: no socket, no place in core's count, no timer of ours. */
async function assertNothingLeft(agent, timersBefore) {
  await waitFor(() => agent.closeSocketCount + agent.createSocketErrorCount >= 1 && held(agent) === 0);
  assert.deepEqual(Object.keys(agent.sockets), []);
  assert.equal(agent.totalSocketCount, 0);
  assert.equal(activeTimers(), timersBefore, 'the connect timer is cleared');
}

describe('connectTimeout option', () => {
  it('is a duration, off (0) by default, read at construction', () => {
    assert.equal(new HttpAgent().options.connectTimeout, 0);
    assert.equal(new HttpAgent({ connectTimeout: '2s' }).options.connectTimeout, 2000);
    assert.equal(new HttpsAgent({ connectTimeout: 1500 }).options.connectTimeout, 1500);
    assert.throws(() => new HttpAgent({ connectTimeout: -1 }),
      { name: 'InvalidOptionValueError', code: 'ERR_OUT_OF_RANGE', option: 'connectTimeout' });
    assert.throws(() => new HttpAgent({ connectTimeout: 'soon' }),
      { name: 'InvalidOptionTypeError', code: 'ERR_INVALID_ARG_TYPE', option: 'connectTimeout' });
    assert.throws(() => new HttpAgent({ connectTimeout: 2 ** 31 }), { option: 'connectTimeout' });
    // An agent option, not one a request carries (core copies those into every request).
    assert.equal(Object.keys(new HttpAgent({ connectTimeout: 10 }).options).includes('connectTimeout'), false);
  });
});

for (const protocol of PROTOCOLS) {
  describe(`connectTimeout over ${protocol.slice(0, -1)}`, () => {
    const { keep, agentFor } = closeAfterEach();

    it('a TCP connect that never completes (SYN dropped) fails with ETIMEDOUT, phase connect, and leaves nothing', async () => {
      const blackhole = keep(await startBlackhole());
      const agent = agentFor(protocol, { connectTimeout: 150 });
      const timers = activeTimers();
      const pending = request(`${protocol}//127.0.0.1:${blackhole.port}/`, { agent });
      assert.equal(activeTimers(), timers + 1, 'one timer for the new socket');
      assertConnectTimeout(await requestError(pending), 'connect', 150);
      await assertNothingLeft(agent, timers);
      assert.equal(agent.createSocketErrorCount, 1, 'a socket creation error');
      assert.equal(agent.errorSocketCount, 0);
      const [origin] = Object.values(agent.getStats().origins);
      assert.deepEqual([origin.errors, origin.closeReasons], [1, { error: 1 }]);
    });

    it('a connect that completes in time never fires it: the timer goes with the connection, and a reused socket arms none', async () => {
      const server = keep(await createServer(protocol));
      const agent = agentFor(protocol, { connectTimeout: '1h' });
      const timers = activeTimers();
      const first = request(server.url('/1'), { agent });
      assert.equal(activeTimers(), timers + 1);
      assert.equal((await first).body, 'ok GET /1');
      assert.equal(activeTimers(), timers, 'cleared once the socket was ready');
      for (const path of ['/2', '/3']) {
        const next = request(server.url(path), { agent });
        assert.equal(activeTimers(), timers, 'no timer for a request on a pooled socket');
        const res = await next;
        assert.equal(res.reusedSocket, true);
      }
      assert.equal(agent.createSocketCount, 1);
      assert.equal(agent.createSocketErrorCount, 0);
    });

    it('axios and got see ETIMEDOUT', async () => {
      const blackhole = keep(await startBlackhole());
      const url = `${protocol}//127.0.0.1:${blackhole.port}/`;
      const agent = agentFor(protocol, { connectTimeout: 100 });
      const fromAxios = await axios.get(url, { adapter: 'http', proxy: false, httpAgent: agent, httpsAgent: agent })
        .then(() => null, (err) => err);
      assert.equal(fromAxios?.code, 'ETIMEDOUT', String(fromAxios));
      assert.equal(fromAxios.cause.name, 'ConnectTimeoutError');

      const got = await importGot();
      const fromGot = await got(url, {
        agent: { http: agent, https: agent },
        http2: false,
        // got lists ETIMEDOUT among the codes it retries. Its retry is off
        // here: on Node 24+, got 13 and 14 with retries on reports any failed
        // connect (refused ones too, with Node's agent) as the write's
        // ERR_SOCKET_CLOSED_BEFORE_CONNECTION instead.
        retry: { limit: 0 },
      }).then(() => null, (err) => err);
      assert.equal(fromGot?.code, 'ETIMEDOUT', String(fromGot));
      assert.equal(fromGot.name, 'RequestError');
      assert.equal(agent.createSocketErrorCount, 2);
    });
  });
}

describe('connectTimeout: TLS and proxies', () => {
  const { keep, agentOf } = closeAfterEach();

  it('a TLS server that accepts TCP and never answers the handshake: phase tls', async () => {
    const silent = keep(await createSilentServer());
    const agent = agentOf(HttpsAgent, { connectTimeout: 150 });
    const timers = activeTimers();
    const err = await requestError(request(silent.url('https:'), { agent }));
    assertConnectTimeout(err, 'tls', 150);
    assert.equal(silent.accepted, 1);
    await assertNothingLeft(agent, timers);
    await waitFor(() => silent.open === 0);
    assert.equal(agent.createSocketErrorCount, 1);
  });

  it('a proxy that never answers CONNECT: phase proxy, and the connection to it is closed', async () => {
    const proxy = keep(await startSilentProxy());
    const agent = agentOf(HttpsAgent, { connectTimeout: 150, proxy: proxy.url() });
    const timers = activeTimers();
    const err = await requestError(request('https://127.0.0.1:9/', { agent }));
    assertConnectTimeout(err, 'proxy', 150);
    assert.equal(proxy.accepted, 1);
    await waitFor(() => proxy.open === 0);
    assert.deepEqual(Object.keys(agent.sockets), []);
    assert.equal(agent.totalSocketCount, 0);
    assert.equal(activeTimers(), timers);
    assert.equal(agent.createSocketErrorCount, 1);
  });

  it('through a tunnel, a target that never answers the handshake: phase tls, after the proxy answered', async () => {
    const proxy = keep(await startProxy());
    const target = keep(await createSilentServer());
    const agent = agentOf(HttpsAgent, { connectTimeout: 300, proxy: proxy.url() });
    const timers = activeTimers();
    const err = await requestError(request(target.url('https:'), { agent }));
    assertConnectTimeout(err, 'tls', 300);
    assert.equal(proxy.connects, 1);
    await assertNothingLeft(agent, timers);
    await waitFor(() => proxy.open === 0 && target.open === 0);
  });

  // Through an https proxy, TLS to the proxy comes first, then TLS to the target.
  for (const proxyProtocol of PROTOCOLS) {
    it(`a tunnel that opens in time clears the timer; the tunnelled socket is reused (${proxyProtocol.slice(0, -1)} proxy)`, async () => {
      const proxy = keep(await startProxy({ protocol: proxyProtocol }));
      const server = keep(await createServer('https:'));
      const agent = agentOf(HttpsAgent, { ca: fixtures.ca, connectTimeout: '1h', proxy: proxy.url() });
      const timers = activeTimers();
      const first = request(server.url('/1'), { agent });
      assert.equal(activeTimers(), timers + 1);
      assert.equal((await first).body, 'ok GET /1');
      assert.equal(activeTimers(), timers);
      assert.equal((await request(server.url('/2'), { agent })).reusedSocket, true);
      assert.equal(proxy.connects, 1);
    });
  }

  it('a forward proxy (http) that never accepts: phase connect', async () => {
    const blackhole = keep(await startBlackhole());
    const agent = agentOf(HttpAgent, { connectTimeout: 150, proxy: `http://127.0.0.1:${blackhole.port}` });
    assertConnectTimeout(await requestError(request('http://127.0.0.1:9/', { agent })), 'connect', 150);
    assert.equal(agent.createSocketErrorCount, 1);
  });
});

describe('connectTimeout and autoSelectFamily', () => {
  const { keep, agentOf } = closeAfterEach();

  // Two addresses, both blackholed: Node gives the first its own attempt
  // timeout (10 ms here) and moves on; connectTimeout ends the second.
  const twoAddresses = (hostname, options, callback) => {
    callback(null, [{ address: '127.0.0.1', family: 4 }, { address: '127.0.0.2', family: 4 }]);
  };

  it('expiry during the attempts is a ConnectTimeoutError, not an AggregateError', async () => {
    const blackhole = keep(await startBlackhole(['127.0.0.1', '127.0.0.2']));
    const agent = agentOf(HttpAgent, {
      connectTimeout: 300, autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 10, lookup: twoAddresses,
    });
    const err = await requestError(request(`http://blackhole.test:${blackhole.port}/`, { agent }));
    assertConnectTimeout(err, 'connect', 300);
    assert.equal(agent.createSocketErrorCount, 1);
  });

  // An attempt refused (nothing listens on 127.0.0.1 at the port) is no
  // timeout: the next address connects, and the timer goes with it.
  it('an attempt refused, the next address connecting in time: the request is served', async () => {
    const server = http.createServer((req, res) => res.end('ok'));
    await new Promise((resolve) => server.listen(0, '127.0.0.2', resolve));
    keep({ close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }) });
    const agent = agentOf(HttpAgent, { connectTimeout: 5000, autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 250, lookup: twoAddresses });
    const timers = activeTimers();
    const res = await request(`http://refused.test:${server.address().port}/`, { agent });
    assert.equal(res.body, 'ok');
    assert.equal(res.socket.remoteAddress, '127.0.0.2');
    assert.equal(activeTimers(), timers, 'the connect timer is cleared');
    assert.equal(agent.createSocketErrorCount, 0);
  });

  // The system's own connect timeout on both addresses, which the agent
  // races (Happy Eyeballs, lib/connect): none is given up for being slow, so
  // each waits out the system's timeout, and the error lists both, with the
  // system's code; before connectTimeout, whatever it is.
  // tcp_syn_retries is lowered to 1 (about 3 s) in a network namespace of
  // the test's own, which needs root and unshare(1).
  it('the system timing out every attempt is a ConnectAttemptsError of ETIMEDOUTs', function () {
    if (process.platform !== 'linux' || spawnSync('unshare', ['-n', 'true']).status !== 0) {
      this.skip(); // no network namespace of our own here
    }
    this.timeout(30000);
    const script = `
      const { HttpAgent } = require(${JSON.stringify(path.join(__dirname, '..'))});
      const { startBlackhole } = require(${JSON.stringify(path.join(__dirname, 'support', 'blackhole'))});
      const { request, requestError } = require(${JSON.stringify(path.join(__dirname, 'support', 'request'))});
      const lookup = ${twoAddresses.toString()};
      (async () => {
        const blackhole = await startBlackhole(['127.0.0.1', '127.0.0.2']);
        const outcome = {};
        // Both at once: each waits out the system's timeout (about 3 s).
        await Promise.all([0, 60000].map(async (connectTimeout) => {
          const agent = new HttpAgent({ connectTimeout, autoSelectFamily: true, autoSelectFamilyAttemptTimeout: 10, lookup });
          const err = await requestError(request('http://blackhole.test:' + blackhole.port + '/', { agent }));
          outcome[connectTimeout] = {
            name: err.name, code: err.code, causes: err.errors.map((e) => e.code), count: agent.createSocketErrorCount,
          };
          agent.destroy();
        }));
        await blackhole.close();
        process.stdout.write(JSON.stringify(outcome));
      })();
    `;
    const shell = `ip link set lo up && echo 1 > /proc/sys/net/ipv4/tcp_syn_retries && exec "${process.execPath}" -e "$SCRIPT"`;
    return new Promise((resolve, reject) => {
      execFile('unshare', ['-n', 'sh', '-c', shell], { env: { ...process.env, SCRIPT: script } }, (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`${err.message}\n${stderr}`));
          return;
        }
        try {
          const outcome = JSON.parse(stdout);
          const listed = { name: 'ConnectAttemptsError', code: 'ETIMEDOUT', causes: ['ETIMEDOUT', 'ETIMEDOUT'], count: 1 };
          assert.deepEqual(outcome[0], listed);
          assert.deepEqual(outcome[60000], listed);
          resolve();
        } catch (failure) {
          reject(failure);
        }
      });
    });
  });
});
