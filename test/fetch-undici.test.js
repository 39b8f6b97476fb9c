'use strict';

// steady-agent/undici: createDispatcher(undici, options) with each undici
// major installed (6, 7 and 8, each where its `engines` lets it run), on a
// stale collision (support/fetch.js): the same guarantees through
// request(), fetch() and setGlobalDispatcher().
const assert = require('node:assert/strict');
const { Writable } = require('node:stream');
const { createDispatcher } = require('steady-agent/undici');
const { PROTOCOLS } = require('./support/agents');
const { closeAfterEach } = require('./support/cleanup');
const { collisionServer, secondOnConnection, tlsOptions, rejection, UNDICI_MAJORS } = require('./support/fetch');
const { delay } = require('./support/request');
const { createHoldingServer } = require('./support/servers');

const IDLE = 30;

for (const { name, major, node, runs, load } of UNDICI_MAJORS) {
  const title = `steady-agent/undici with undici ${major} (${name})`;
  if (!runs) {
    describe(`${title}: skipped, undici ${major} needs Node >= ${node}, this is ${process.version}`, () => {
      it.skip(`needs Node >= ${node}`);
    });
    continue;
  }

  for (const protocol of PROTOCOLS) {
    describe(`${title}, ${protocol}`, () => {
      const { keep } = closeAfterEach();
      let undici;
      let dispatcher;

      before(() => {
        undici = load();
      });

      beforeEach(() => {
        dispatcher = createDispatcher(undici, tlsOptions(protocol));
      });

      afterEach(() => dispatcher.close());

      /** undici.request, the body read: { status, body }. */
      async function request(url, options = {}) {
        const res = await undici.request(url, { dispatcher, ...options });
        return { status: res.statusCode, body: await res.body.text() };
      }

      async function onReused(server, send) {
        assert.equal((await request(server.url('/warm'))).body, 'ok GET /warm');
        await delay(IDLE);
        return send(server.url('/two'));
      }

      it('is an instance of that undici\'s Dispatcher', () => {
        assert.ok(dispatcher instanceof undici.Dispatcher);
      });

      it('request(): a GET is resent and applied once', async () => {
        const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
        const res = await onReused(server, (url) => request(url));
        assert.deepEqual(res, { status: 200, body: 'ok GET /two' });
        assert.equal(server.appliedTo('/two').length, 1);
      });

      it('request(): a POST without Idempotency-Key is not resent, its error marked', async () => {
        const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
        const err = await rejection(onReused(server, (url) => request(url, { method: 'POST', body: 'payload' })));
        assert.equal(err.code, 'ECONNRESET');
        assert.equal(err.staleSocket, true);
        assert.equal(err.replayable, false);
        assert.equal(server.appliedTo('/two').length, 0);
      });

      it('request(): a keyed POST with a string body is resent with its body', async () => {
        const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
        const res = await onReused(server, (url) => request(url, { method: 'POST', body: 'payload', headers: { 'idempotency-key': 'k-1' } }));
        assert.equal(res.status, 200);
        assert.deepEqual(server.appliedTo('/two').map((entry) => entry.body), ['payload']);
      });

      it('request(): an apply-then-reset request is applied once', async () => {
        const server = keep(await collisionServer(protocol, { fails: secondOnConnection, slowReset: 1000 }));
        const err = await rejection(onReused(server, (url) => request(url)));
        assert.equal(err.staleSocket, false);
        assert.equal(server.appliedTo('/two').length, 1);
      });

      it('fetch(): a GET is resent and applied once; a POST without a key is not', async () => {
        const server = keep(await collisionServer(protocol, { fails: secondOnConnection }));
        const res = await onReused(server, (url) => undici.fetch(url, { dispatcher }));
        assert.equal(await res.text(), 'ok GET /two');
        assert.equal(server.appliedTo('/two').length, 1);
        const other = keep(await collisionServer(protocol, { fails: secondOnConnection }));
        const err = await rejection(onReused(other, (url) => undici.fetch(url, { dispatcher, method: 'POST', body: 'x' })));
        assert.equal(err.message, 'fetch failed');
        assert.equal(err.cause.staleSocket, true);
        assert.equal(err.cause.replayable, false);
        assert.equal(other.appliedTo('/two').length, 0);
      });

      it('setGlobalDispatcher(): request() and fetch() without a dispatcher option go through it', async () => {
        const server = keep(await collisionServer(protocol, { fails: (req, conn) => conn.index === 2 || conn.index === 4 }));
        const previous = undici.getGlobalDispatcher();
        undici.setGlobalDispatcher(dispatcher);
        try {
          assert.equal(await (await undici.request(server.url('/warm'))).body.text(), 'ok GET /warm');
          await delay(IDLE);
          assert.equal(await (await undici.request(server.url('/two'))).body.text(), 'ok GET /two');
          await delay(IDLE);
          // The resend's connection: its second request is /three, its third /four.
          assert.equal(await (await undici.fetch(server.url('/three'))).text(), 'ok GET /three');
          await delay(IDLE);
          assert.equal(await (await undici.fetch(server.url('/four'))).text(), 'ok GET /four');
        } finally {
          undici.setGlobalDispatcher(previous);
        }
        assert.equal(undici.getGlobalDispatcher(), previous);
        for (const url of ['/two', '/three', '/four']) assert.equal(server.appliedTo(url).length, 1, url);
        const [stats] = Object.values(dispatcher.getStats().origins);
        assert.equal(stats.requests, 4);
      });

      it('stream() and pipeline() work through it', async () => {
        const server = keep(await collisionServer(protocol));
        const chunks = [];
        await undici.stream(server.url('/s'), { dispatcher }, () => new Writable({
          write(chunk, encoding, callback) { chunks.push(chunk); callback(); },
        }));
        assert.equal(Buffer.concat(chunks).toString(), 'ok GET /s');
        const piped = [];
        await new Promise((resolve, reject) => {
          undici.pipeline(server.url('/p'), { dispatcher, method: 'PUT' }, ({ body }) => body)
            .on('data', (chunk) => piped.push(chunk))
            .on('end', resolve)
            .on('error', reject)
            .end('payload');
        });
        assert.equal(Buffer.concat(piped).toString(), 'ok PUT /p');
        assert.equal(server.appliedTo('/p')[0].body, 'payload');
      });
    });
  }

  describe(`${title}: close() and destroy()`, () => {
    const { keep } = closeAfterEach();

    it('destroy(err) without close() fails a request in flight with err; destroy() takes a callback alone too', async () => {
      const undici = load();
      const server = keep(await createHoldingServer('http:'));
      const dispatcher = createDispatcher(undici);
      const pending = rejection(undici.request(server.url('/hold'), { dispatcher }));
      while (server.held === 0) await delay(5);
      const reason = new Error('shutting down');
      await new Promise((resolve, reject) => dispatcher.destroy(reason, (err) => (err ? reject(err) : resolve())));
      assert.equal(dispatcher.destroyed, true);
      assert.equal((await pending).message, 'shutting down');

      const other = createDispatcher(undici);
      const body = await (await undici.request(server.url('/now'), { dispatcher: other })).body.text();
      assert.equal(body, 'ok /now');
      await new Promise((resolve, reject) => other.destroy((err) => (err ? reject(err) : resolve())));
      assert.equal(other.destroyed, true);
    });

    it('requests after close() fail with undici\'s ClientClosedError; close() takes a callback too', async () => {
      const undici = load();
      const dispatcher = createDispatcher(undici);
      await new Promise((resolve) => dispatcher.close(resolve));
      assert.equal(dispatcher.closed, true);
      const err = await rejection(undici.request('http://127.0.0.1:9/', { dispatcher }));
      assert.ok(err instanceof undici.errors.ClientClosedError);
      await dispatcher.destroy();
      assert.equal(dispatcher.destroyed, true);
    });
  });
}
