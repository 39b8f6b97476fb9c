'use strict';

// steady-agent/fetch on a stale collision (issue 33): the server resets the
// reused connection as the request arrives (support/fetch.js), on real
// loopback, http and https. What is resent, what is not, and the error the
// caller gets when nothing is.
const assert = require('node:assert/strict');
const { Readable } = require('node:stream');
const { createFetch } = require('steady-agent/fetch');
const { PROTOCOLS } = require('./support/agents');
const { closeAfterEach } = require('./support/cleanup');
const { collisionServer, secondOnConnection, tlsOptions, rejection } = require('./support/fetch');
const { delay } = require('./support/request');

const IDLE = 30; // ms the connection sits idle before the colliding request

for (const protocol of PROTOCOLS) {
  describe(`steady-agent/fetch: a stale collision (${protocol})`, () => {
    const { keep } = closeAfterEach();
    let fetch;

    beforeEach(() => {
      fetch = createFetch(tlsOptions(protocol));
    });

    afterEach(() => fetch.close());

    /** A first request that leaves the connection idle in the pool, then `init` on it. */
    async function onReused(server, init) {
      const warm = await fetch(server.url('/warm'));
      assert.equal(await warm.text(), 'ok GET /warm');
      await delay(IDLE);
      return fetch(server.url('/two'), init);
    }

    it('a GET is resent once, at once, and applied once', async () => {
      const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
      const res = await onReused(server);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'ok GET /two');
      assert.equal(server.appliedTo('/two').length, 1);
      assert.equal(server.connections.length, 2, 'the resend took a new connection');
      const [stats] = Object.values(fetch.getStats().origins);
      assert.equal(stats.errors, 1, 'the collision is counted');
    });

    it('a POST without Idempotency-Key is not resent: Node\'s error, the agent\'s marks on its cause', async () => {
      const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
      const err = await rejection(onReused(server, { method: 'POST', body: 'payload' }));
      assert.ok(err instanceof TypeError);
      assert.equal(err.message, 'fetch failed');
      assert.equal(err.cause.code, 'ECONNRESET');
      assert.equal(err.cause.reusedSocket, true);
      assert.equal(err.cause.staleSocket, true);
      assert.equal(err.cause.replayable, false);
      assert.equal(err.cause.socketRequests, 1);
      assert.equal(server.appliedTo('/two').length, 0);
      assert.equal(server.connections.length, 1, 'no second attempt');
    });

    it('a POST with Idempotency-Key and a string body is resent with its body', async () => {
      const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
      const res = await onReused(server, { method: 'POST', body: 'payload', headers: { 'Idempotency-Key': 'k-1' } });
      assert.equal(res.status, 200);
      await res.text();
      assert.deepEqual(server.appliedTo('/two').map((entry) => entry.body), ['payload']);
    });

    for (const [name, body] of [
      ['bytes', () => new TextEncoder().encode('payload')],
      ['URLSearchParams', () => new URLSearchParams({ a: '1' })],
      ['a Blob', () => new Blob(['payload'])],
    ]) {
      it(`a PUT whose body is ${name} is resent with its body`, async () => {
        const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
        const res = await onReused(server, { method: 'PUT', body: body() });
        await res.text();
        const applied = server.appliedTo('/two');
        assert.equal(applied.length, 1);
        assert.equal(applied[0].body, name === 'URLSearchParams' ? 'a=1' : 'payload');
      });
    }

    for (const [name, body] of [
      ['a ReadableStream', () => new ReadableStream({ pull(controller) { controller.enqueue(new TextEncoder().encode('payload')); controller.close(); } })],
      ['an async iterable', () => Readable.from(['payload'])],
    ]) {
      it(`a keyed POST whose body is ${name} is never resent, and fails as Node's fetch fails`, async () => {
        const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
        const err = await rejection(onReused(server, { method: 'POST', body: body(), duplex: 'half', headers: { 'Idempotency-Key': 'k-2' } }));
        assert.ok(err instanceof TypeError);
        assert.equal(err.message, 'fetch failed');
        assert.equal(err.cause.code, 'ECONNRESET');
        assert.equal(err.cause.replayable, true, 'replayable by the agent\'s judgement, but its body is gone');
        assert.equal(server.appliedTo('/two').length, 0);
        assert.equal(server.connections.length, 1, 'no second attempt');
      });
    }

    it('a Request object with a body is never resent; one without is', async () => {
      const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
      // /two's body read, and a turn of the event loop: its connection is free for /three.
      const err = await rejection(onReused(server, undefined).then((res) => res.text()).then(() => delay(1)).then(() => fetch(new Request(server.url('/three'), { method: 'PUT', body: 'x' }))));
      // /two went out on the warm connection's second request and failed, was resent on a
      // new connection; /three is that new connection's second request: it fails, unsent again.
      assert.equal(err.cause.replayable, true);
      assert.equal(server.appliedTo('/three').length, 0);
      const res = await fetch(new Request(server.url('/four')));
      assert.equal(res.status, 200);
      await res.text();
    });

    it('an apply-then-reset request (reset 1 s after the server applied it) is applied once and not resent', async () => {
      const server = keep(await collisionServer(protocol, { fails: secondOnConnection, slowReset: 1000 }));
      const err = await rejection(onReused(server));
      assert.equal(err.message, 'fetch failed');
      assert.equal(err.cause.staleSocket, false);
      assert.equal(err.cause.replayable, false);
      assert.equal(server.appliedTo('/two').length, 1);
      assert.equal(server.connections.length, 1, 'no second attempt');
    });

    it('a redirect is followed by fetch: a collision on its second hop is not resent (the POST is applied once)', async () => {
      // Two idle connections: fetch follows the 303 while the first still
      // carries its response, so the second hop takes the other, reused.
      const server = keep(await collisionServer(protocol, {
        fails: (req, conn) => req.url === '/after' && conn.index === 2,
        answer: (req, res) => {
          if (req.url === '/two') res.writeHead(303, { location: '/after' }).end();
          else res.end(`ok ${req.method} ${req.url}`);
        },
      }));
      await Promise.all(['/warm-a', '/warm-b'].map(async (url) => (await fetch(server.url(url))).text()));
      await delay(IDLE);
      const err = await rejection(fetch(server.url('/two'), { method: 'POST', body: 'payload' }));
      assert.equal(err.message, 'fetch failed');
      assert.equal(err.cause.replayable, true, 'the GET of the second hop was replayable');
      assert.equal(server.appliedTo('/two').length, 1);
      assert.equal(server.appliedTo('/after').length, 0);
    });

    it('an AbortSignal abort is never resent', async () => {
      const controller = new AbortController();
      const server = keep(await collisionServer(protocol, {
        fails: () => false,
        answer: (req, res) => {
          if (req.url === '/two') controller.abort();
          else res.end(`ok ${req.method} ${req.url}`);
        },
      }));
      const err = await rejection(onReused(server, { signal: controller.signal }));
      assert.equal(err.name, 'AbortError');
      await delay(IDLE);
      assert.equal(server.appliedTo('/two').length, 1);
    });

    it('any other failure keeps Node\'s error untouched (a refused connection, a bad URL)', async () => {
      const server = keep(await collisionServer(protocol));
      const url = server.url('/');
      await server.close();
      const refused = await rejection(fetch(url));
      assert.equal(refused.message, 'fetch failed');
      assert.equal(refused.cause.code, 'ECONNREFUSED');
      assert.equal('staleSocket' in refused.cause, false);
      const bad = await rejection(fetch('not a url'));
      const plain = await rejection(globalThis.fetch('not a url'));
      assert.equal(bad.constructor, plain.constructor);
      assert.equal(bad.message, plain.message);
    });
  });
}
