'use strict';

// Two of the ecosystem's clients that take a `fetch` option, given
// createFetch() as docs/fetch.md shows: the openai SDK and ky, against a
// local server on loopback that answers as the API would. Each reuses its
// connections through steady-agent (getStats() counts them), and a request
// that meets a connection the server closed (the server resets the second
// request of a connection, before answering: a stale collision) is resent
// once, at once, when it may be: a GET always, a POST only with an
// Idempotency-Key header and a body fetch can send again, as the docs say.
// A POST without one fails, and the server applied it never; so does ky's
// keyed POST, whose body is a Request's stream.
const assert = require('node:assert/strict');
const { randomUUID } = require('node:crypto');
const { createFetch } = require('steady-agent/fetch');
const { closeAfterEach } = require('./support/cleanup');
const { collisionServer, secondOnConnection } = require('./support/fetch');
const { delay } = require('./support/request');

// Between two requests: undici takes a connection back a turn after its
// response, and a request sent at once would open another.
const IDLE = 50;

/** Answers as the chat completions API does: the reply names the request's path. */
function completion(req, res) {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({
    id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content: `ok ${req.method} ${req.url}` }, finish_reason: 'stop' }],
  }));
}

describe('SDKs that take a fetch option, given createFetch()', function () {
  this.timeout(20000);
  const { keep } = closeAfterEach({ inOrder: true });

  describe('openai', () => {
    const OpenAI = require('openai');
    const ask = { model: 'test-model', messages: [{ role: 'user', content: 'hello' }] };

    async function setup(fails) {
      const server = keep(await collisionServer('http:', { fails, answer: completion }));
      const fetch = keep(createFetch());
      const client = new OpenAI({ apiKey: 'test-key', baseURL: server.url('/v1'), fetch, maxRetries: 0 });
      return { server, fetch, client };
    }

    it('sends its requests through steady-agent, on one reused connection', async () => {
      const { server, fetch, client } = await setup();
      for (let i = 0; i < 3; i++) {
        if (i > 0) await delay(IDLE);
        const answer = await client.chat.completions.create(ask);
        assert.equal(answer.choices[0].message.content, 'ok POST /v1/chat/completions');
      }
      assert.equal(server.connections.length, 1);
      const [stats] = Object.values(fetch.getStats().origins);
      assert.equal(stats.requests, 3);
      assert.equal(stats.reusedRequests, 2);
    });

    it('a POST with an Idempotency-Key header is resent after a stale collision, and applied once', async () => {
      const { server, client } = await setup(secondOnConnection);
      await client.chat.completions.create(ask);
      await delay(IDLE);
      const key = randomUUID();
      const answer = await client.chat.completions.create(ask, { headers: { 'Idempotency-Key': key } });
      assert.equal(answer.choices[0].message.content, 'ok POST /v1/chat/completions');
      assert.equal(server.applied.length, 2);
      assert.equal(server.connections.length, 2);
    });

    it('a POST without one is not resent: the SDK\'s connection error, never applied', async () => {
      const { server, client } = await setup(secondOnConnection);
      await client.chat.completions.create(ask);
      await delay(IDLE);
      const err = await client.chat.completions.create(ask).then(() => null, (error) => error);
      assert.ok(err instanceof OpenAI.APIConnectionError, String(err));
      assert.equal(server.applied.length, 1);
    });
  });

  describe('ky', () => {
    let ky;
    before(async () => {
      ({ default: ky } = await import('ky'));
    });

    async function setup(fails) {
      const server = keep(await collisionServer('http:', { fails, answer: completion }));
      const fetch = keep(createFetch());
      const api = ky.create({ prefixUrl: server.url('/api'), fetch, retry: 0 });
      return { server, fetch, api };
    }

    it('a GET is resent after a stale collision, and applied once', async () => {
      const { server, fetch, api } = await setup(secondOnConnection);
      assert.equal((await api.get('one').json()).choices[0].message.content, 'ok GET /api/one');
      await delay(IDLE);
      assert.equal((await api.get('two').json()).choices[0].message.content, 'ok GET /api/two');
      assert.deepEqual(server.applied.map((entry) => entry.url), ['/api/one', '/api/two']);
      const [stats] = Object.values(fetch.getStats().origins);
      assert.equal(stats.requests, 2);
    });

    it('a POST is not resent, even with an Idempotency-Key: ky hands fetch a Request, whose body is read once', async () => {
      const { server, api } = await setup(secondOnConnection);
      await api.post('first', { json: { n: 1 } }).json();
      await delay(IDLE);
      const keyed = api.post('keyed', { json: { n: 2 }, headers: { 'Idempotency-Key': randomUUID() } }).json();
      await assert.rejects(keyed, (err) => err instanceof TypeError && err.cause?.staleSocket === true && err.cause?.replayable === true);
      assert.deepEqual(server.appliedTo('/api/keyed'), []);
    });
  });
});
