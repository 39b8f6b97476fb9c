'use strict';

// steady-agent/retry with the clients it serves (issue 24.3): a request lost
// to a stale socket is sent again, once, at once, when it is replayable and
// its body can be sent again; nothing else is. Real servers on loopback,
// http and https, that reset or end a connection under a request and count
// the requests they applied.
const assert = require('node:assert/strict');
const { Readable } = require('node:stream');
const { PROTOCOLS } = require('./support/agents');
const { closeAfterEach } = require('./support/cleanup');
const { createResetServer } = require('./support/reset_server');
const { loadRetryClients, RETRY_CLIENT_NAMES } = require('./support/retry_clients');
const { gotRetryOptions, request, wrapFetch } = require('../lib/retry');
const { importGot } = require('./support/got');
const { delay } = require('./support/request');

const IDLE = 30;
// Beyond the stale window's ceiling (lib/stale_judgement.js).
const SLOW = 1100;

/**
 * A server that answers every request "ok <method> <url>" and counts it as
 * applied, except the second request of each connection, which it treats
 * by `how`: 'reset' / 'end' before applying it (a connection it had closed
 * while idle), or 'apply-then-reset' (applied, then the connection reset
 * SLOW ms later, with no answer).
 */
function server(protocol, how) {
  const applied = [];
  const handle = createResetServer(protocol, (req, res, conn) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      if (conn.index === 2 && how !== 'apply-then-reset') {
        if (how === 'reset') conn.reset();
        else conn.end();
        return;
      }
      applied.push(`${req.method} ${req.url} ${body}`.trim());
      if (conn.index === 2) setTimeout(conn.reset, SLOW);
      else res.end(`ok ${req.method} ${req.url}`);
    });
  });
  return handle.then((h) => Object.assign(h, { applied }));
}

describe('steady-agent/retry with real clients', () => {
  let clients;
  before(async () => {
    clients = await loadRetryClients();
  });

  for (const protocol of PROTOCOLS) {
    for (const name of RETRY_CLIENT_NAMES) {
      describe(`${name} (${protocol})`, () => {
        const { keep, agentFor } = closeAfterEach();
        let retries;
        const retry = { onRetry: () => { retries++; } };
        beforeEach(() => { retries = 0; });

        /** A first request, IDLE ms idle, then `options`' request on the reused socket. */
        async function second(srv, agent, options = {}) {
          assert.equal((await clients[name](srv.url('/first'), { agent, retry })).status, 200);
          await delay(IDLE);
          return clients[name](srv.url('/second'), { agent, retry, ...options });
        }

        for (const how of ['reset', 'end']) {
          it(`a GET lost to a stale socket (${how === 'reset' ? 'ECONNRESET' : 'socket hang up'}) is sent again once, and succeeds`, async () => {
            const srv = keep(await server(protocol, how));
            const res = await second(srv, agentFor(protocol));
            assert.deepEqual(res, { status: 200, body: 'ok GET /second' });
            assert.equal(retries, 1);
            assert.deepEqual(srv.applied, ['GET /first', 'GET /second']);
            assert.equal(srv.connections.length, 2);
          });
        }

        it('a POST with an Idempotency-Key is sent again', async () => {
          const srv = keep(await server(protocol, 'reset'));
          const res = await second(srv, agentFor(protocol), { method: 'POST', headers: { 'Idempotency-Key': 'k-1' }, body: 'pay' });
          assert.equal(res.status, 200);
          assert.equal(retries, 1);
          assert.deepEqual(srv.applied, ['GET /first', 'POST /second pay']);
        });

        it('a POST without a key is not sent again: the error reaches the caller', async () => {
          const srv = keep(await server(protocol, 'reset'));
          await assert.rejects(second(srv, agentFor(protocol), { method: 'POST', body: 'pay' }), (err) => {
            assert.match(`${err.code} ${err.message}`, /ECONNRESET/);
            return true;
          });
          assert.equal(retries, 0);
          assert.deepEqual(srv.applied, ['GET /first']);
        });

        it('a server that applied the request and then reset the connection applies it once', async () => {
          const srv = keep(await server(protocol, 'apply-then-reset'));
          await Promise.all([
            assert.rejects(second(srv, agentFor(protocol), { method: 'PUT', headers: { 'Idempotency-Key': 'k-2' }, body: 'v' })),
            assert.rejects(second(srv, agentFor(protocol), { method: 'GET' })),
          ]);
          assert.equal(retries, 0);
          assert.deepEqual(srv.applied.sort(), ['GET /first', 'GET /first', 'GET /second', 'PUT /second v']);
        });

        it('a keyed POST whose body is a stream is not sent again', async () => {
          const srv = keep(await server(protocol, 'reset'));
          const body = Readable.from([Buffer.from('pa'), Buffer.from('y')]);
          await assert.rejects(second(srv, agentFor(protocol), {
            method: 'POST',
            headers: { 'Idempotency-Key': 'k-3', 'Content-Length': '3' },
            body,
          }));
          assert.equal(retries, 0);
          assert.deepEqual(srv.applied, ['GET /first']);
        });

        it('a failure on a fresh connection is not sent again', async () => {
          const srv = keep(await createResetServer(protocol, (req, res, conn) => conn.reset()));
          await assert.rejects(clients[name](srv.url('/'), { agent: agentFor(protocol), retry }));
          assert.equal(retries, 0);
          assert.equal(srv.connections.length, 1);
        });
      });
    }
  }
});

// The other ways in: request() given one options object, or a URL alone;
// node-fetch given a URL object, an agent function, a Request, or no agent;
// got given a body it reads once; and a delay before the retry.
describe('steady-agent/retry: each form of call', () => {
  const { keep, agentFor } = closeAfterEach();
  let got;
  let fetchV2;
  before(async () => {
    got = await importGot();
    fetchV2 = require('node-fetch-2');
  });

  /** A server of `how`, and an agent whose one socket to it has served /first and sat IDLE ms. */
  async function staleAfterFirst(how) {
    const srv = keep(await server('http:', how));
    const agent = agentFor('http:');
    const first = await request(srv.url('/first'), { agent });
    first.resume();
    await new Promise((resolve) => first.on('end', resolve));
    await delay(IDLE);
    return { srv, agent };
  }

  const text = async (res) => {
    const chunks = [];
    for await (const chunk of res) chunks.push(chunk);
    return Buffer.concat(chunks).toString();
  };

  it('request(options): one object with host, port, path and agent is sent again, with no settings at all', async () => {
    const { srv, agent } = await staleAfterFirst('reset');
    const res = await request({ host: '127.0.0.1', port: srv.port, path: '/second', agent });
    assert.equal(res.statusCode, 200);
    assert.equal(await text(res), 'ok GET /second');
    assert.deepEqual(srv.applied, ['GET /first', 'GET /second']);
    assert.equal(srv.connections.length, 2);
  });

  it('request(url) alone: no options, Node\'s global agent', async () => {
    const srv = keep(await server('http:', 'reset'));
    const res = await request(srv.url('/alone'));
    const { socket } = res;
    assert.equal(await text(res), 'ok GET /alone');
    socket.destroy(); // out of the global agent's pool (keep-alive on Node 19+)
  });

  it('retry.delay: the request is sent again after the delay', async () => {
    const { srv, agent } = await staleAfterFirst('end');
    // A timer of 20 ms started in onRetry fires before the retry's 40 ms
    // delay, started after it, has run out (timers fire in the order they
    // fall due): the retry has not asked for its socket by then.
    const atMarker = [];
    const res = await request(srv.url('/second'), {
      agent,
      retry: {
        delay: 40,
        onRetry: () => { setTimeout(() => atMarker.push(agent.createSocketCount), 20); },
      },
    });
    assert.equal(await text(res), 'ok GET /second');
    assert.deepEqual(atMarker, [1], 'one socket (the first request\'s) when the marker fired');
    assert.equal(agent.createSocketCount, 2, 'the retry got a new one after the delay');
  });

  it('node-fetch: a URL object and an agent function are sent again', async () => {
    const { srv, agent } = await staleAfterFirst('reset');
    const urls = [];
    const res = await wrapFetch(fetchV2)(new URL(srv.url('/second')), { agent: (url) => { urls.push(url.pathname); return agent; } });
    assert.equal(await res.text(), 'ok GET /second');
    assert.deepEqual(urls, ['/second', '/second'], 'the agent function is asked for each attempt');
    assert.deepEqual(srv.applied, ['GET /first', 'GET /second']);
  });

  it('node-fetch: a Request with a body (read once) is not sent again, though keyed; its agent is the Request\'s', async () => {
    const { srv, agent } = await staleAfterFirst('reset');
    const input = new fetchV2.Request(srv.url('/second'), { method: 'POST', headers: { 'Idempotency-Key': 'k-9' }, body: 'pay', agent });
    await assert.rejects(wrapFetch(fetchV2)(input), (err) => {
      assert.match(`${err.code} ${err.message}`, /ECONNRESET/);
      assert.equal(err.cause?.staleSocket, true, 'the request went out on the agent: its error is marked');
      return true;
    });
    assert.deepEqual(srv.applied, ['GET /first']);
  });

  it('node-fetch without any agent: fetched as it is', async () => {
    const srv = keep(await server('http:', 'reset'));
    const res = await wrapFetch(fetchV2)(srv.url('/plain'), { headers: { Connection: 'close' } });
    assert.equal(await res.text(), 'ok GET /plain');
  });

  it('got: a keyed POST whose body is an async generator is not sent again', async () => {
    const { srv, agent } = await staleAfterFirst('reset');
    async function* body() { yield 'pa'; yield 'y'; }
    await assert.rejects(got(srv.url('/second'), {
      ...gotRetryOptions({ delay: 20 }),
      agent: { http: agent },
      method: 'POST',
      headers: { 'Idempotency-Key': 'k-4', 'Content-Length': '3' },
      body: body(),
    }), /ECONNRESET/);
    assert.deepEqual(srv.applied, ['GET /first']);
  });

  it('got: with a retry delay, a GET is sent again once', async () => {
    const { srv, agent } = await staleAfterFirst('reset');
    const res = await got(srv.url('/second'), { ...gotRetryOptions({ delay: 20 }), agent: { http: agent } });
    assert.equal(res.body, 'ok GET /second');
    assert.equal(res.retryCount, 1);
    assert.deepEqual(srv.applied, ['GET /first', 'GET /second']);
  });
});
