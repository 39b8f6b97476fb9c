'use strict';

// Proxy failures reach the request once, leave no socket behind and count in
// createSocketErrorCount: a proxy that refuses connections, a CONNECT answered
// with a non-2xx status, a proxy that never answers, TLS that fails inside the
// tunnel; requests queued behind a failed tunnel fail too, rather than wait;
// agent.destroy() ends a tunnel still waiting for the proxy.
const assert = require('node:assert/strict');
const http = require('node:http');
const https = require('node:https');
const { HttpAgent, HttpsAgent } = require('steady-agent');
const net = require('node:net');
const { createHttpServer, createHttpsServer, createRawServer, refusedPort, fixtures } = require('./support/servers');
const { closeAfterEach } = require('./support/cleanup');
const { startProxy, startSilentProxy } = require('./support/proxy');
const { delay, waitFor } = require('./support/request');

const SECRET = 'n0t-f0r-logs';

/**
 * One request; resolves with { err, res, errors } once it settled, plus a
 * short wait to catch a second 'error' or a late response.
 */
function settle(url, options) {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve) => {
    const outcome = { err: null, res: null, errors: 0, responses: 0 };
    const req = mod.get(url, options, (res) => {
      outcome.responses++;
      outcome.res = res;
      res.resume();
      res.on('end', () => setImmediate(() => resolve(outcome)));
    });
    req.on('error', (err) => {
      outcome.errors++;
      outcome.err = err;
      // Anything that comes after has a few turns of the loop to show itself.
      delay(20).then(() => resolve(outcome));
    });
  });
}

/** No socket, queued request or pool entry left in the agent. */
function assertEmpty(agent) {
  const status = agent.getCurrentStatus();
  assert.deepEqual(status.sockets, {});
  assert.deepEqual(status.requests, {});
  assert.equal(agent.totalSocketCount, 0);
}

describe('proxy failures', () => {
  const { keep, agentOf } = closeAfterEach();

  describe('a proxy that refuses connections', () => {
    it('https target: the request fails once with ECONNREFUSED', async () => {
      const port = await refusedPort();
      const agent = agentOf(HttpsAgent, { proxy: `http://user:${SECRET}@127.0.0.1:${port}`, ca: fixtures.ca });
      const outcome = await settle('https://127.0.0.1:9/x', { agent });
      assert.equal(outcome.errors, 1);
      assert.equal(outcome.responses, 0);
      assert.equal(outcome.err.code, 'ECONNREFUSED');
      assert.equal(agent.createSocketErrorCount, 1);
      assert.equal(agent.createSocketCount, 0);
      assertEmpty(agent);
    });

    it('http target: the request fails once with ECONNREFUSED', async () => {
      const port = await refusedPort();
      const agent = agentOf(HttpAgent, { proxy: `http://127.0.0.1:${port}` });
      const outcome = await settle('http://127.0.0.1:9/x', { agent });
      assert.equal(outcome.errors, 1);
      assert.equal(outcome.err.code, 'ECONNREFUSED');
      assert.equal(agent.createSocketErrorCount, 1);
      await waitFor(() => agent.totalSocketCount === 0);
      assertEmpty(agent);
    });
  });

  describe('a CONNECT answered with a non-2xx status', () => {
    let proxy;
    let target;
    beforeEach(async () => {
      proxy = keep(await startProxy({ auth: { username: 'user', password: 'right' } }));
      target = keep(await createHttpsServer());
    });

    it('wrong credentials: ERR_PROXY_TUNNEL with statusCode 407, once, no secret in the message', async () => {
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(`user:${SECRET}`), ca: fixtures.ca });
      const outcome = await settle(target.url('/x'), { agent });
      assert.equal(outcome.errors, 1);
      assert.equal(outcome.responses, 0);
      assert.equal(outcome.err.code, 'ERR_PROXY_TUNNEL');
      assert.equal(outcome.err.name, 'ProxyTunnelError');
      assert.equal(outcome.err.statusCode, 407);
      assert.equal(outcome.err.proxy, `http://127.0.0.1:${proxy.port}`);
      assert.equal(outcome.err.target, `127.0.0.1:${target.port}`);
      assert.match(outcome.err.message, /407/);
      assert.doesNotMatch(outcome.err.message, new RegExp(SECRET));
      assert.equal(agent.createSocketErrorCount, 1);
      assert.equal(agent.createSocketCount, 0);
      assert.equal(target.accepted, 0);
      assertEmpty(agent);
      await waitFor(() => proxy.open === 0);
    });

    it('no credentials: 407', async () => {
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.ca });
      const outcome = await settle(target.url('/x'), { agent });
      assert.equal(outcome.err.statusCode, 407);
      assert.equal(outcome.errors, 1);
    });

    it('http target with wrong credentials: the proxy\'s 407 is the response', async () => {
      const plain = keep(await createHttpServer());
      const agent = agentOf(HttpAgent, { proxy: proxy.url(`user:${SECRET}`) });
      const outcome = await settle(plain.url('/x'), { agent });
      assert.equal(outcome.errors, 0);
      assert.equal(outcome.res.statusCode, 407);
      assert.equal(plain.accepted, 0);
    });

    it('requests queued behind failing tunnels each fail once, and none waits', async () => {
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(`user:${SECRET}`), ca: fixtures.ca, maxSockets: 1 });
      const outcomes = await Promise.all([1, 2, 3, 4].map((i) => settle(target.url(`/q${i}`), { agent })));
      for (const outcome of outcomes) {
        assert.equal(outcome.errors, 1);
        assert.equal(outcome.responses, 0);
        assert.equal(outcome.err.statusCode, 407);
      }
      assert.equal(proxy.connects, 4);
      assert.equal(agent.createSocketErrorCount, 4);
      assertEmpty(agent);
    });

    it('a queued request is served once a tunnel can be opened again', async () => {
      // A hand-written proxy: the first CONNECT gets a 503, later ones a tunnel.
      let seen = 0;
      const tunnels = new Set();
      const gate = keep(await createRawServer((socket) => {
        tunnels.add(socket);
        socket.once('close', () => tunnels.delete(socket));
        socket.on('error', () => {});
        socket.once('data', (chunk) => {
          const [, hostPort] = /^CONNECT (\S+) /.exec(chunk.toString('latin1'));
          if (++seen === 1) {
            socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n');
            return;
          }
          const [host, port] = hostPort.split(':');
          const upstream = net.connect(Number(port), host, () => {
            socket.write('HTTP/1.1 200 Connection established\r\n\r\n');
            socket.pipe(upstream).pipe(socket);
          });
          upstream.on('error', () => socket.destroy());
          socket.once('close', () => upstream.destroy());
        });
      }));
      const agent = agentOf(HttpsAgent, { proxy: `http://127.0.0.1:${gate.port}`, ca: fixtures.ca, maxSockets: 1 });
      const [first, second] = await Promise.all([
        settle(target.url('/first'), { agent }),
        settle(target.url('/second'), { agent }),
      ]);
      assert.equal(first.errors, 1);
      assert.equal(first.err.statusCode, 503);
      assert.equal(second.errors, 0);
      assert.equal(second.res.statusCode, 200);
      assert.equal(seen, 2);
      assert.equal(agent.createSocketErrorCount, 1);
      assert.equal(agent.createSocketCount, 1);
      agent.destroy();
      await waitFor(() => tunnels.size === 0);
    });
  });

  describe('a proxy that answers CONNECT with something else', () => {
    // A hand-written proxy answering every CONNECT with `reply`, then closing
    // the connection if `close` is set.
    const answering = async (reply, { close = false } = {}) => keep(await createRawServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => {
        if (reply !== null) socket.write(reply);
        if (close) socket.end();
      });
    }));
    const attempt = async (server) => {
      const agent = agentOf(HttpsAgent, { proxy: `http://127.0.0.1:${server.port}`, ca: fixtures.ca });
      const outcome = await settle('https://127.0.0.1:9/x', { agent });
      assert.equal(outcome.errors, 1);
      assert.equal(outcome.responses, 0);
      assert.equal(agent.createSocketErrorCount, 1);
      assertEmpty(agent);
      await waitFor(() => server.connections.size === 0);
      return outcome.err;
    };

    it('not HTTP', async () => {
      const err = await attempt(await answering('SSH-2.0-OpenSSH\r\n\r\n'));
      assert.equal(err.code, 'ERR_PROXY_TUNNEL');
      assert.match(err.message, /not HTTP/);
    });

    it('bytes after the 200', async () => {
      const err = await attempt(await answering('HTTP/1.1 200 Connection established\r\n\r\nsurprise'));
      assert.equal(err.code, 'ERR_PROXY_TUNNEL');
      assert.match(err.message, /data after its answer/);
    });

    it('headers that never end', async () => {
      const err = await attempt(await answering(`HTTP/1.1 200 OK\r\nX: ${'y'.repeat(17 * 1024)}`));
      assert.equal(err.code, 'ERR_PROXY_TUNNEL');
      assert.match(err.message, /no end of headers/);
    });

    it('a close before any answer', async () => {
      const err = await attempt(await answering(null, { close: true }));
      assert.equal(err.code, 'ERR_PROXY_TUNNEL');
      assert.match(err.message, /closed the connection before answering/);
    });

    it('asks for an IPv6 target in brackets', async () => {
      let line;
      const server = keep(await createRawServer((socket) => {
        socket.on('error', () => {});
        socket.once('data', (chunk) => {
          [line] = chunk.toString('latin1').split('\r\n');
          socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        });
      }));
      const agent = agentOf(HttpsAgent, { proxy: `http://127.0.0.1:${server.port}` });
      const outcome = await settle('https://[::1]:8443/x', { agent });
      assert.equal(outcome.err.statusCode, 403);
      assert.equal(outcome.err.target, '[::1]:8443');
      assert.equal(line, 'CONNECT [::1]:8443 HTTP/1.1');
    });

    it('a 1xx is not a tunnel', async () => {
      const err = await attempt(await answering('HTTP/1.1 100 Continue\r\n\r\n', { close: true }));
      assert.equal(err.statusCode, 100);
    });
  });

  describe('a proxy that never answers CONNECT', () => {
    it('the active timeout ends the tunnel: ERR_PROXY_TUNNEL with the timeout, once', async () => {
      const silent = keep(await startSilentProxy());
      const agent = agentOf(HttpsAgent, { proxy: silent.url(), ca: fixtures.ca, timeout: 100 });
      const outcome = await settle('https://127.0.0.1:9/x', { agent });
      assert.equal(outcome.errors, 1);
      assert.equal(outcome.err.code, 'ERR_PROXY_TUNNEL');
      assert.equal(outcome.err.timeout, 100);
      assert.equal(outcome.err.statusCode, undefined);
      assert.equal(agent.createSocketErrorCount, 1);
      assertEmpty(agent);
      await waitFor(() => silent.open === 0);
    });

    it('a request timeout (req.timeout) applies too', async () => {
      const silent = keep(await startSilentProxy());
      const agent = agentOf(HttpsAgent, { proxy: silent.url(), ca: fixtures.ca });
      const outcome = await settle('https://127.0.0.1:9/x', { agent, timeout: 80 });
      assert.equal(outcome.err.code, 'ERR_PROXY_TUNNEL');
      assert.equal(outcome.err.timeout, 80);
      assert.equal(outcome.errors, 1);
    });

    it('agent.destroy() ends a tunnel still waiting: ERR_AGENT_DESTROYED, once', async () => {
      const silent = keep(await startSilentProxy());
      const agent = agentOf(HttpsAgent, { proxy: silent.url(), ca: fixtures.ca });
      const pending = settle('https://127.0.0.1:9/x', { agent });
      await waitFor(() => silent.accepted === 1);
      agent.destroy();
      const outcome = await pending;
      assert.equal(outcome.errors, 1);
      assert.equal(outcome.err.code, 'ERR_AGENT_DESTROYED');
      assert.equal(agent.createSocketErrorCount, 0);
      assertEmpty(agent);
      await waitFor(() => silent.open === 0);
    });
  });

  describe('TLS to the target fails inside the tunnel', () => {
    it('an untrusted certificate: the TLS error, once, counted as a failed creation', async () => {
      const proxy = keep(await startProxy());
      const target = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.otherCa });
      const outcome = await settle(target.url('/x'), { agent });
      assert.equal(outcome.errors, 1);
      assert.equal(outcome.responses, 0);
      assert.match(outcome.err.code, /CERT|SIGNATURE|ISSUER/);
      assert.equal(agent.createSocketErrorCount, 1);
      await waitFor(() => agent.closeSocketCount === 1);
      assertEmpty(agent);
      await waitFor(() => proxy.open === 0);
    });

    it('TLS options that make no context (a wrong pfx passphrase) fail the request once', async () => {
      const proxy = keep(await startProxy());
      const target = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, {
        proxy: proxy.url(), ca: fixtures.ca, pfx: fixtures.clientPfx, passphrase: 'wrong',
      });
      const outcome = await settle(target.url('/x'), { agent });
      assert.equal(outcome.errors, 1);
      assert.equal(outcome.responses, 0);
      assert.equal(agent.createSocketErrorCount, 1);
      assertEmpty(agent);
      await waitFor(() => proxy.open === 0);
    });

    it('an https proxy is verified against the default roots when the agent has no ca', async () => {
      const proxy = keep(await startProxy({ protocol: 'https:' }));
      const agent = agentOf(HttpsAgent, { proxy: proxy.url() });
      const outcome = await settle('https://127.0.0.1:9/x', { agent });
      assert.equal(outcome.errors, 1);
      assert.match(outcome.err.code, /CERT|SIGNATURE|ISSUER/);
      assert.equal(proxy.connects, 0);
      assertEmpty(agent);
    });

    it('an https proxy trusted through a ca array serves tunnels to two targets', async () => {
      const proxy = keep(await startProxy({ protocol: 'https:' }));
      const first = keep(await createHttpsServer());
      const second = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: [fixtures.ca] });
      const outcomes = await Promise.all([settle(first.url('/1'), { agent }), settle(second.url('/2'), { agent })]);
      assert.deepEqual(outcomes.map((o) => o.res?.statusCode), [200, 200]);
      assert.equal(proxy.connects, 2);
    });

    it('an https proxy whose certificate the agent does not trust fails the request', async () => {
      const proxy = keep(await startProxy({ protocol: 'https:' }));
      const target = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.otherCa });
      const outcome = await settle(target.url('/x'), { agent });
      assert.equal(outcome.errors, 1);
      assert.match(outcome.err.code, /CERT|SIGNATURE|ISSUER/);
      assert.equal(agent.createSocketErrorCount, 1);
      assert.equal(proxy.connects, 0);
      assertEmpty(agent);
    });
  });
});
