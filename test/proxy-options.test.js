'use strict';

// The proxy options: validation (a TypeError naming the option, never the
// credentials), NO_PROXY rules as Node 24 reads them, proxyEnv resolution,
// the caller's objects left untouched, and secrets kept out of everything
// the agent prints: pool names, SOCKET_NAME, getCurrentStatus(), debug
// output, error messages, util.inspect(agent).
const assert = require('node:assert/strict');
const { inspect } = require('node:util');
const { HttpAgent, HttpsAgent, constants } = require('steady-agent');
const { parseNoProxy, bypasses } = require('../lib/proxy/no_proxy');
const { resolveProxy, normalizeProxyOptions } = require('../lib/proxy/options');
const { ProxyTunnelError, InvalidProxyOptionError } = require('../lib/errors');
const { createHttpServer, createHttpsServer, fixtures } = require('./support/servers');
const { startProxy } = require('./support/proxy');
const { request } = require('./support/request');
const { captureDebug } = require('./support/debug_lines');

const SECRET = 'S3cr3t-Pa55';
const BASE64_SECRET = Buffer.from(`user:${SECRET}`).toString('base64');

describe('proxy options', () => {
  describe('validation', () => {
    for (const Agent of [HttpAgent, HttpsAgent]) {
      describe(Agent.name, () => {
        const invalid = (options, option) => {
          let caught;
          try {
            new Agent(options).destroy();
          } catch (err) {
            caught = err;
          }
          assert.ok(caught instanceof TypeError, `expected a TypeError, got ${caught}`);
          assert.equal(caught.option, option);
          assert.match(caught.message, new RegExp(`"${option.replace('.', '\\.')}"`));
          assert.doesNotMatch(caught.message, new RegExp(SECRET));
          assert.doesNotMatch(inspect(caught), new RegExp(SECRET));
          return caught;
        };

        it('rejects a proxy URL that does not parse', () => {
          const err = invalid({ proxy: `http://user:${SECRET}@[not-a-host` }, 'proxy');
          assert.equal(err.code, 'ERR_INVALID_ARG_VALUE');
          assert.match(err.message, /does not parse/);
        });

        it('rejects a scheme other than http: and https:', () => {
          const err = invalid({ proxy: `socks5://user:${SECRET}@127.0.0.1:1080` }, 'proxy');
          assert.match(err.message, /"socks5:"/);
          invalid({ proxy: new URL(`ftp://user:${SECRET}@example.test`) }, 'proxy');
        });

        it('rejects a proxy that is not a string or URL', () => {
          assert.match(invalid({ proxy: 3128 }, 'proxy').message, /a number/);
          invalid({ proxy: { host: 'example.test', auth: `user:${SECRET}` } }, 'proxy');
        });

        it('rejects credentials that are not valid percent-encoding', () => {
          invalid({ proxy: `http://user:${SECRET}%E0%A4%A@127.0.0.1:3128` }, 'proxy');
        });

        it('rejects a line break in the URL', () => {
          invalid({ proxy: `http://user:${SECRET}@127.0.0.1:3128/\r\nX: y` }, 'proxy');
        });

        it('rejects noProxy of the wrong type', () => {
          invalid({ proxy: 'http://127.0.0.1:3128', noProxy: 5 }, 'noProxy');
          invalid({ proxy: 'http://127.0.0.1:3128', noProxy: ['a', 5] }, 'noProxy');
        });

        it('rejects a proxyEnv that is not an object, or holds non-strings', () => {
          invalid({ proxyEnv: 'HTTP_PROXY=x' }, 'proxyEnv');
          invalid({ proxyEnv: { NO_PROXY: 7 } }, 'proxyEnv.NO_PROXY');
        });

        it('names the variable of a proxyEnv URL that does not parse', () => {
          const name = Agent === HttpsAgent ? 'HTTPS_PROXY' : 'HTTP_PROXY';
          invalid({ proxyEnv: { [name]: `http://user:${SECRET}@[bad` } }, `proxyEnv.${name}`);
        });

        it('reads only its own variable: a bad one for the other protocol is ignored', () => {
          const other = Agent === HttpsAgent ? 'HTTP_PROXY' : 'HTTPS_PROXY';
          new Agent({ proxyEnv: { [other]: 'http://[bad' } }).destroy();
        });

        it('accepts a URL object, and leaves the caller\'s options and env untouched', () => {
          const env = Object.freeze({ HTTPS_PROXY: 'http://127.0.0.1:3128', HTTP_PROXY: 'http://127.0.0.1:3128', NO_PROXY: 'a' });
          const options = Object.freeze({ proxy: new URL(`http://user:${SECRET}@127.0.0.1:3128`), noProxy: Object.freeze(['x']), proxyEnv: env });
          const agent = new Agent(options);
          assert.equal(options.proxy.password, SECRET);
          assert.equal(agent.options.proxyEnv, undefined);
          assert.doesNotMatch(inspect(agent, { depth: 5 }), new RegExp(`${SECRET}|${BASE64_SECRET}`));
          agent.destroy();
        });

        it('null and undefined mean no proxy', () => {
          const agent = new Agent({ proxy: null, noProxy: undefined, proxyEnv: null });
          assert.equal(agent.options.proxy, undefined);
          agent.destroy();
        });
      });
    }
  });

  describe('NO_PROXY rules (as Node 24 reads them)', () => {
    const matches = (noProxy, host, port = 443) => bypasses(parseNoProxy(noProxy), host, port);

    it('exact host names, any port, case-insensitive, comma-separated with spaces', () => {
      assert.equal(matches('foo.test, Example.COM', 'example.com'), true);
      assert.equal(matches('example.com', 'EXAMPLE.com', 8080), true);
      assert.equal(matches('example.com', 'api.example.com'), false);
      assert.equal(matches('example.com', 'notexample.com'), false);
    });

    it('host:port matches that port only', () => {
      assert.equal(matches('example.com:8443', 'example.com', 8443), true);
      assert.equal(matches('example.com:8443', 'example.com', 443), false);
    });

    it('a leading dot matches the domain and its subdomains', () => {
      assert.equal(matches('.example.com', 'example.com'), true);
      assert.equal(matches('.example.com', 'a.b.example.com'), true);
      assert.equal(matches('.example.com', 'badexample.com'), false);
    });

    it('*.domain matches subdomains only', () => {
      assert.equal(matches('*.example.com', 'api.example.com'), true);
      assert.equal(matches('*.example.com', 'example.com'), false);
    });

    it('* matches everything', () => {
      assert.equal(matches('*', 'anything.test'), true);
      assert.equal(matches('a.test,*', '10.0.0.1'), true);
    });

    it('IP addresses as written, and IPv4 ranges', () => {
      assert.equal(matches('127.0.0.1', '127.0.0.1'), true);
      assert.equal(matches('::1', '::1'), true);
      assert.equal(matches('10.0.0.0-10.0.0.255', '10.0.0.77'), true);
      assert.equal(matches('10.0.0.0-10.0.0.255', '10.0.1.1'), false);
      assert.equal(matches('10.0.0.0-nonsense', '10.0.0.1'), false);
      assert.equal(matches('10.0.0.0/8', '10.1.2.3'), false);
    });

    it('an array takes one entry per element; empty entries are dropped', () => {
      assert.deepEqual(parseNoProxy([' A.test ', '', 'b.test:80']), ['a.test', 'b.test:80']);
      assert.deepEqual(parseNoProxy('a,,b'), ['a', 'b']);
      assert.equal(bypasses([], 'a', 1), false);
    });
  });

  describe('proxyEnv resolution', () => {
    const resolve = (input, protocol) => resolveProxy(normalizeProxyOptions(input), protocol);

    it('http: uses HTTP_PROXY, https: HTTPS_PROXY; lower case first; empty counts as unset', () => {
      const env = { HTTP_PROXY: 'http://h:1', https_proxy: '', HTTPS_PROXY: 'https://s:2' };
      assert.equal(resolve({ proxyEnv: env }, 'http:').proxy.origin, 'http://h:1');
      assert.equal(resolve({ proxyEnv: env }, 'https:').proxy.origin, 'https://s:2');
      assert.equal(resolve({ proxyEnv: { http_proxy: 'http://l:1', HTTP_PROXY: 'http://u:1' } }, 'http:').proxy.origin, 'http://l:1');
    });

    it('default ports, IPv6 hosts', () => {
      const http = resolve({ proxy: 'http://proxy.test' }, 'http:').proxy;
      assert.equal(http.port, 80);
      assert.equal(http.servername, 'proxy.test');
      const https = resolve({ proxy: 'https://[::1]' }, 'https:').proxy;
      assert.equal(https.port, 443);
      assert.equal(https.host, '::1');
      assert.equal(https.origin, 'https://[::1]:443');
      assert.equal(https.servername, undefined);
    });

    it('no proxy: null, whatever NO_PROXY says', () => {
      assert.equal(resolve({ proxyEnv: { NO_PROXY: '*' } }, 'http:'), null);
      assert.equal(resolve({ noProxy: 'a' }, 'https:'), null);
      assert.equal(resolve({ proxyEnv: {} }, 'https:'), null);
    });

    it('noProxy wins over NO_PROXY; NO_PROXY applies to an explicit proxy otherwise', () => {
      assert.deepEqual(resolve({ proxy: 'http://p:1', noProxy: 'x', proxyEnv: { NO_PROXY: 'y' } }, 'http:').noProxy, ['x']);
      assert.deepEqual(resolve({ proxy: 'http://p:1', proxyEnv: { no_proxy: 'y,z' } }, 'http:').noProxy, ['y', 'z']);
    });

    it('credentials become a Basic Proxy-Authorization, decoded first', () => {
      const { proxy } = resolve({ proxy: 'http://us%3Aer:p%40ss@p:1' }, 'http:');
      assert.equal(proxy.authorization, `Basic ${Buffer.from('us:er:p@ss').toString('base64')}`);
      assert.equal(resolve({ proxy: 'http://p:1' }, 'http:').proxy.authorization, undefined);
    });
  });

  describe('errors', () => {
    it('ProxyTunnelError carries code, statusCode, proxy, target and timeout', () => {
      const err = new ProxyTunnelError('no', { proxy: 'http://p:1', target: 't:443', statusCode: 407 });
      assert.ok(err instanceof Error);
      assert.equal(err.name, 'ProxyTunnelError');
      assert.equal(err.code, 'ERR_PROXY_TUNNEL');
      assert.equal(err.statusCode, 407);
      assert.equal(err.proxy, 'http://p:1');
      assert.equal(err.target, 't:443');
      assert.equal('timeout' in err, false);
      assert.equal(new ProxyTunnelError('slow', { timeout: 5 }).timeout, 5);
      assert.equal(new ProxyTunnelError('bare').statusCode, undefined);
    });

    it('InvalidProxyOptionError is a TypeError naming the option', () => {
      const err = new InvalidProxyOptionError('proxy', 'it does not parse as a URL');
      assert.ok(err instanceof TypeError);
      assert.equal(err.code, 'ERR_INVALID_ARG_VALUE');
      assert.equal(err.message, 'The "proxy" option must be an http: or https: proxy URL: it does not parse as a URL');
    });
  });

  describe('secrets', () => {
    const closers = [];
    const debugOutput = captureDebug();
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close();
    });

    it('credentials appear in no pool name, SOCKET_NAME, status, debug line or inspect output', async () => {
      const proxy = await startProxy({ auth: { username: 'user', password: SECRET } });
      closers.push(() => proxy.close());
      const secure = await createHttpsServer();
      closers.push(() => secure.close());
      const plain = await createHttpServer();
      closers.push(() => plain.close());
      const httpsAgent = new HttpsAgent({ proxy: proxy.url(`user:${SECRET}`), ca: fixtures.ca });
      const httpAgent = new HttpAgent({ proxy: proxy.url(`user:${SECRET}`) });
      closers.push(() => { httpsAgent.destroy(); httpAgent.destroy(); });
      const a = await request(secure.url('/a'), { agent: httpsAgent });
      const b = await request(plain.url('/b'), { agent: httpAgent });
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      const printed = [
        a.socket[constants.SOCKET_NAME],
        b.socket[constants.SOCKET_NAME],
        JSON.stringify(httpsAgent.getCurrentStatus()),
        JSON.stringify(httpAgent.getCurrentStatus()),
        inspect(httpsAgent, { depth: 4 }),
        inspect(httpAgent, { depth: 4 }),
        ...debugOutput.lines,
      ].join('\n');
      assert.doesNotMatch(printed, new RegExp(`${SECRET}|${BASE64_SECRET}`));
      assert.match(printed, new RegExp(`via http://127\\.0\\.0\\.1:${proxy.port}`));
    });

    it('debug logs each tunnel: proxy, target, status and time to establish', async () => {
      const proxy = await startProxy({ auth: { username: 'user', password: SECRET } });
      closers.push(() => proxy.close());
      const secure = await createHttpsServer();
      closers.push(() => secure.close());
      const good = new HttpsAgent({ proxy: proxy.url(`user:${SECRET}`), ca: fixtures.ca });
      const bad = new HttpsAgent({ proxy: proxy.url('user:wrong'), ca: fixtures.ca });
      closers.push(() => { good.destroy(); bad.destroy(); });
      await request(secure.url('/ok'), { agent: good });
      await assert.rejects(request(secure.url('/no'), { agent: bad }), { statusCode: 407 });
      const origin = `http://127\\.0\\.0\\.1:${proxy.port}`;
      const target = `127\\.0\\.0\\.1:${secure.port}`;
      assert.ok(debugOutput.lines.some((line) => new RegExp(`tunnel to ${target} through ${origin}: 200 in \\d+(\\.\\d)? ms`).test(line)), debugOutput.lines.join('\n'));
      assert.ok(debugOutput.lines.some((line) => new RegExp(`tunnel to ${target} through ${origin}: 407 in \\d+(\\.\\d)? ms`).test(line)));
      assert.doesNotMatch(debugOutput.lines.join('\n'), new RegExp(`${SECRET}|${BASE64_SECRET}`));
    });
  });
});
