'use strict';

// Requests through a real proxy (the `proxy` package) on loopback: http
// targets in absolute form over shared keep-alive connections to the proxy,
// https targets through pooled CONNECT tunnels; http and https proxies, with
// and without credentials; the proxy, noProxy and proxyEnv options.
const assert = require('node:assert/strict');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { HttpAgent, HttpsAgent, constants } = require('steady-agent');
const { createHttpServer, createHttpsServer, createRawServer, onRequests, rawResponse, fixtures } = require('./support/servers');
const { closeAfterEach } = require('./support/cleanup');
const { startProxy } = require('./support/proxy');
const { request, waitFor } = require('./support/request');

const REQUESTS = 20;
const USER = 'proxy-user';
const PASSWORD = 'p@ss:w0rd';
const CREDENTIALS = `${USER}:${encodeURIComponent(PASSWORD)}`;

describe('proxy', () => {
  const { keep, agentOf } = closeAfterEach();

  for (const proxyProtocol of ['http:', 'https:']) {
    for (const auth of [false, true]) {
      const kind = `${proxyProtocol.slice(0, -1)} proxy${auth ? ' with credentials' : ''}`;

      describe(`through an ${kind}`, () => {
        let proxy;
        beforeEach(async () => {
          proxy = keep(await startProxy({
            protocol: proxyProtocol,
            auth: auth ? { username: USER, password: PASSWORD } : undefined,
          }));
        });
        const proxyUrl = () => proxy.url(auth ? CREDENTIALS : undefined);

        it(`${REQUESTS} sequential requests to one https target use one tunnel`, async () => {
          const target = keep(await createHttpsServer());
          const agent = agentOf(HttpsAgent, { proxy: proxyUrl(), ca: fixtures.ca });
          for (let i = 0; i < REQUESTS; i++) {
            const res = await request(target.url(`/s${i}`), { agent });
            assert.equal(res.status, 200);
            assert.equal(res.body, `ok GET /s${i}`);
            assert.equal(res.reusedSocket, i > 0);
          }
          assert.equal(proxy.connects, 1);
          assert.deepEqual(proxy.requestLines, [`CONNECT 127.0.0.1:${target.port}`]);
          assert.equal(proxy.accepted, 1);
          assert.equal(target.accepted, 1);
          assert.equal(proxy.authFailures, 0);
          assert.equal(agent.createSocketCount, 1);
          assert.equal(agent.requestCount, REQUESTS);
          if (auth) {
            const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
            assert.deepEqual(proxy.proxyAuthorization, [expected]);
          }
          const pools = Object.keys(agent.getCurrentStatus().freeSockets);
          assert.equal(pools.length, 1);
          assert.match(pools[0], new RegExp(`^127\\.0\\.0\\.1:${target.port}::tls-[0-9a-f]+ via ${proxyProtocol}//127\\.0\\.0\\.1:${proxy.port}$`));
        });

        it(`${REQUESTS} requests to two http targets use one connection to the proxy`, async () => {
          const first = keep(await createHttpServer());
          const second = keep(await createHttpServer());
          const agent = agentOf(HttpAgent, { proxy: proxyUrl(), ca: fixtures.ca });
          for (let i = 0; i < REQUESTS; i++) {
            const target = i % 2 === 0 ? first : second;
            const res = await request(target.url(`/h${i}`), { agent });
            assert.equal(res.status, 200);
            assert.equal(res.body, `ok GET /h${i}`);
          }
          assert.equal(proxy.accepted, 1);
          assert.equal(proxy.requests, REQUESTS);
          assert.equal(proxy.connects, 0);
          assert.equal(proxy.authFailures, 0);
          assert.equal(proxy.requestLines[0], `GET http://127.0.0.1:${first.port}/h0`);
          assert.equal(proxy.requestLines[1], `GET http://127.0.0.1:${second.port}/h1`);
          assert.equal(agent.createSocketCount, 1);
          const pools = Object.keys(agent.getCurrentStatus().freeSockets);
          assert.deepEqual(pools, [`via ${proxyProtocol}//127.0.0.1:${proxy.port}`]);
        });
      });
    }
  }

  describe('absolute form', () => {
    let proxy;
    let target;
    let agent;
    beforeEach(async () => {
      proxy = keep(await startProxy({ auth: { username: USER, password: PASSWORD } }));
      target = keep(await createHttpServer((req, res) => {
        req.resume();
        req.on('end', () => res.end(`${req.method} ${req.url} host=${req.headers.host} x=${req.headers['x-test']}`));
      }));
      agent = agentOf(HttpAgent, { proxy: proxy.url(CREDENTIALS) });
    });

    it('rewrites a request whose headers came as an array (stored before the agent sees it)', async () => {
      const res = await request(target.url('/array?q=1'), {
        agent,
        headers: ['Host', `127.0.0.1:${target.port}`, 'X-Test', 'array'],
      });
      assert.equal(res.status, 200);
      assert.equal(res.body, `GET /array?q=1 host=127.0.0.1:${target.port} x=array`);
      assert.equal(proxy.requestLines[0], `GET http://127.0.0.1:${target.port}/array?q=1`);
      assert.equal(proxy.authFailures, 0);
    });

    it('rewrites a request with Expect: 100-continue (header already queued)', async () => {
      const res = await new Promise((resolve, reject) => {
        const req = http.request(target.url('/expect'), {
          agent,
          method: 'POST',
          headers: { expect: '100-continue', 'x-test': 'expect' },
        }, (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk) => { body += chunk; });
          response.on('end', () => resolve({ status: response.statusCode, body }));
        });
        req.on('continue', () => req.end('payload'));
        req.on('error', reject);
      });
      assert.equal(res.status, 200);
      assert.equal(res.body, `POST /expect host=127.0.0.1:${target.port} x=expect`);
      assert.equal(proxy.requestLines[0], `POST http://127.0.0.1:${target.port}/expect`);
      assert.equal(proxy.authFailures, 0);
    });

    it('rewrites a stored header without adding credentials when the proxy URL has none', async () => {
      const open = keep(await startProxy());
      const plain = agentOf(HttpAgent, { proxy: open.url() });
      const res = await request(target.url('/bare'), { agent: plain, headers: ['Host', `127.0.0.1:${target.port}`] });
      assert.equal(res.status, 200);
      assert.deepEqual(open.requestLines, [`GET http://127.0.0.1:${target.port}/bare`]);
      assert.deepEqual(open.proxyAuthorization, [undefined]);
    });

    it('names the pool of connections to the proxy after the localAddress too', async () => {
      const local = agentOf(HttpAgent, { proxy: proxy.url(CREDENTIALS), localAddress: '127.0.0.1' });
      const res = await request(target.url('/local'), { agent: local });
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(local.getCurrentStatus().freeSockets), [`via http://127.0.0.1:${proxy.port} from 127.0.0.1`]);
      assert.equal(typeof local.getName(), 'string');
      assert.equal(typeof agentOf(HttpsAgent, { proxy: proxy.url() }).getName(), 'string');
    });

    it('leaves OPTIONS * and a path already in absolute form as written', async () => {
      const lines = [];
      const raw = keep(await createRawServer((socket) => {
        onRequests(socket, ({ method, path: target }) => {
          lines.push(`${method} ${target}`);
          socket.write(rawResponse('seen'));
        });
      }));
      const plain = agentOf(HttpAgent, { proxy: `http://127.0.0.1:${raw.port}` });
      await request('http://example.test:8080/', { agent: plain, method: 'OPTIONS', path: '*' });
      await request('http://example.test:8080/', { agent: plain, path: 'http://elsewhere.test/x' });
      assert.deepEqual(lines, ['OPTIONS *', 'GET http://elsewhere.test/x']);
      assert.equal(raw.accepted, 1);
    });

    it('never proxies a request to a socketPath', async () => {
      const socketPath = path.join(os.tmpdir(), `steady-agent-proxy-${process.pid}.sock`);
      const local = http.createServer((req, res) => res.end(`local ${req.url}`));
      await new Promise((resolve) => local.listen(socketPath, resolve));
      keep({ close: () => new Promise((resolve) => local.close(resolve)) });
      const body = await new Promise((resolve, reject) => {
        http.get({ socketPath, path: '/unix', agent }, (res) => {
          let text = '';
          res.on('data', (chunk) => { text += chunk; });
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      assert.equal(body, 'local /unix');
      assert.equal(proxy.accepted, 0);
    });

    it('keeps a Proxy-Authorization header the caller set', async () => {
      const res = await request(target.url('/own'), { agent, headers: { 'proxy-authorization': 'Basic b3RoZXI6eA==' } });
      assert.equal(res.status, 407);
      assert.deepEqual(proxy.proxyAuthorization, ['Basic b3RoZXI6eA==']);
    });
  });

  describe('noProxy', () => {
    let proxy;
    beforeEach(async () => {
      proxy = keep(await startProxy());
    });

    it('sends matching hosts directly and the rest through the proxy (string)', async () => {
      const target = keep(await createHttpServer());
      const agent = agentOf(HttpAgent, { proxy: proxy.url(), noProxy: 'example.test, 127.0.0.1' });
      const res = await request(target.url('/direct'), { agent });
      assert.equal(res.body, 'ok GET /direct');
      assert.equal(proxy.accepted, 0);
      assert.equal(target.accepted, 1);
      assert.deepEqual(Object.keys(agent.getCurrentStatus().freeSockets), [`127.0.0.1:${target.port}:`]);
    });

    it('matches host:port entries on that port only (array)', async () => {
      const direct = keep(await createHttpsServer());
      const proxied = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), noProxy: [`127.0.0.1:${direct.port}`], ca: fixtures.ca });
      assert.equal((await request(direct.url('/a'), { agent })).body, 'ok GET /a');
      assert.equal((await request(proxied.url('/b'), { agent })).body, 'ok GET /b');
      assert.deepEqual(proxy.requestLines, [`CONNECT 127.0.0.1:${proxied.port}`]);
      assert.equal(direct.accepted, 1);
      assert.equal(proxied.accepted, 1);
    });

    it('bypasses everything with *', async () => {
      const target = keep(await createHttpServer());
      const agent = agentOf(HttpAgent, { proxy: proxy.url(), noProxy: '*' });
      assert.equal((await request(target.url('/all'), { agent })).status, 200);
      assert.equal(proxy.accepted, 0);
    });
  });

  describe('proxyEnv', () => {
    let proxy;
    beforeEach(async () => {
      proxy = keep(await startProxy());
    });

    it('HttpAgent uses HTTP_PROXY, HttpsAgent HTTPS_PROXY', async () => {
      const other = keep(await startProxy());
      const plain = keep(await createHttpServer());
      const secure = keep(await createHttpsServer());
      const env = Object.freeze({ HTTP_PROXY: proxy.url(), HTTPS_PROXY: other.url() });
      const httpAgent = agentOf(HttpAgent, { proxyEnv: env });
      const httpsAgent = agentOf(HttpsAgent, { proxyEnv: env, ca: fixtures.ca });
      assert.equal((await request(plain.url('/p'), { agent: httpAgent })).body, 'ok GET /p');
      assert.equal((await request(secure.url('/s'), { agent: httpsAgent })).body, 'ok GET /s');
      assert.deepEqual(proxy.requestLines, [`GET http://127.0.0.1:${plain.port}/p`]);
      assert.deepEqual(other.requestLines, [`CONNECT 127.0.0.1:${secure.port}`]);
    });

    it('prefers the lower-case name, as Node does', async () => {
      const other = keep(await startProxy());
      const target = keep(await createHttpServer());
      const agent = agentOf(HttpAgent, { proxyEnv: { http_proxy: proxy.url(), HTTP_PROXY: other.url() } });
      await request(target.url('/lower'), { agent });
      assert.equal(proxy.requests, 1);
      assert.equal(other.accepted, 0);
    });

    it('honours NO_PROXY / no_proxy', async () => {
      const target = keep(await createHttpServer());
      const agent = agentOf(HttpAgent, { proxyEnv: { HTTP_PROXY: proxy.url(), no_proxy: 'localhost,.example.test,127.0.0.1' } });
      await request(target.url('/np'), { agent });
      assert.equal(proxy.accepted, 0);
      assert.equal(target.accepted, 1);
    });

    it('an explicit proxy wins over proxyEnv', async () => {
      const envProxy = keep(await startProxy());
      const target = keep(await createHttpServer());
      const agent = agentOf(HttpAgent, { proxy: proxy.url(), proxyEnv: { HTTP_PROXY: envProxy.url() } });
      await request(target.url('/explicit'), { agent });
      assert.equal(proxy.requests, 1);
      assert.equal(envProxy.accepted, 0);
    });

    it('ignores a proxy URL of another scheme, as Node does', async () => {
      const target = keep(await createHttpServer());
      const agent = agentOf(HttpAgent, { proxyEnv: { HTTP_PROXY: `socks5://127.0.0.1:${proxy.port}` } });
      assert.equal((await request(target.url('/socks'), { agent })).status, 200);
      assert.equal(proxy.accepted, 0);
      assert.equal(target.accepted, 1);
    });

    it('is never handed to core, so Node 22.21+/24.5+ cannot proxy a second time', async () => {
      const target = keep(await createHttpsServer());
      const env = { HTTPS_PROXY: proxy.url() };
      const agent = agentOf(HttpsAgent, { proxyEnv: env, ca: fixtures.ca });
      assert.equal(agent.options.proxyEnv, undefined);
      for (let i = 0; i < 3; i++) assert.equal((await request(target.url(`/once${i}`), { agent })).status, 200);
      assert.deepEqual(proxy.requestLines, [`CONNECT 127.0.0.1:${target.port}`]);
      assert.equal(proxy.accepted, 1);
    });

    it('counts and names one socket per tunnel: the TLS socket inside it, not the connection to the proxy', async () => {
      const target = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxyEnv: { HTTPS_PROXY: proxy.url() }, ca: fixtures.ca });
      const first = await request(target.url('/one'), { agent });
      assert.equal(agent.createSocketCount, 1, 'one socket held, one counted');
      // Two at once: a second tunnel.
      const [a, b] = await Promise.all([request(target.url('/a'), { agent }), request(target.url('/b'), { agent })]);
      assert.equal(proxy.connects, 2);
      assert.equal(agent.createSocketCount, 2);
      const ids = [first.socket, a.socket, b.socket].map((socket) => Number(/^sock\[(\d+)#/.exec(socket[constants.SOCKET_NAME])[1]));
      assert.deepEqual([...new Set(ids)].sort(), [0, 1], 'ids without gaps');
      assert.ok(first.socket.encrypted && a.socket.encrypted && b.socket.encrypted, 'the counted sockets are the TLS ones');
    });
  });

  describe('pooling', () => {
    let proxy;
    beforeEach(async () => {
      proxy = keep(await startProxy());
    });

    it('maxSockets counts tunnels per target', async () => {
      const first = keep(await createHttpsServer());
      const second = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.ca, maxSockets: 2 });
      const all = [];
      for (let i = 0; i < 6; i++) {
        all.push(request(first.url(`/a${i}`), { agent }), request(second.url(`/b${i}`), { agent }));
      }
      const results = await Promise.all(all);
      assert.ok(results.every((res) => res.status === 200));
      assert.equal(first.accepted, 2);
      assert.equal(second.accepted, 2);
      assert.equal(proxy.connects, 4);
      assert.equal(agent.createSocketCount, 4);
    });

    it('the free timeout closes an idle tunnel; the next request opens another', async () => {
      const target = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.ca, freeSocketTimeout: 50 });
      await request(target.url('/1'), { agent });
      await waitFor(() => agent.closeSocketCount === 1);
      await waitFor(() => proxy.open === 0);
      const res = await request(target.url('/2'), { agent });
      assert.equal(res.reusedSocket, false);
      assert.equal(proxy.connects, 2);
      assert.equal(agent.timeoutSocketCount, 1);
    });

    it('a tunnel the target closed while idle is not reused', async () => {
      const target = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.ca });
      await request(target.url('/1'), { agent });
      for (const socket of target.connections) socket.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      const res = await request(target.url('/2'), { agent });
      assert.equal(res.status, 200);
      assert.equal(proxy.connects, 2);
    });

    it('socketActiveTTL retires a tunnel like any socket', async () => {
      const target = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.ca, socketActiveTTL: 1 });
      await request(target.url('/1'), { agent });
      await waitFor(() => agent.closeSocketCount === 1);
      await request(target.url('/2'), { agent });
      assert.equal(proxy.connects, 2);
    });

    it('SOCKET_NAME names the proxy host and port', async () => {
      const target = keep(await createHttpsServer());
      const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.ca });
      const res = await request(target.url('/name'), { agent });
      assert.match(res.socket[constants.SOCKET_NAME], new RegExp(`^sock\\[\\d+#127\\.0\\.0\\.1:${target.port}::tls-[0-9a-f]+ via http://127\\.0\\.0\\.1:${proxy.port}\\]$`));
    });
  });
});
