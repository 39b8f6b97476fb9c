'use strict';

// The fetch fallback's adapter (lib/fetch/adapter.js) on its own: undici's
// dispatcher protocol over HttpAgent and HttpsAgent. steady-agent/fetch
// takes it where npm's undici installed the global dispatcher first
// (test/fetch-fallback.test.js shows that choice, in child processes);
// here it is driven in this process by Node's own fetch, by npm's undici
// of each major, and by handlers of both protocols written out, against
// real servers.
const assert = require('node:assert/strict');
const { Readable } = require('node:stream');
const { AgentDispatch } = require('../lib/fetch/adapter');
const { PROTOCOLS } = require('./support/agents');
const { closeAfterEach } = require('./support/cleanup');
const { tlsOptions, UNDICI_MAJORS } = require('./support/fetch');
const { createServer } = require('./support/servers');

/** Answers with what it got, as JSON; a few paths answer otherwise. */
function echo(req, res) {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    if (req.url === '/trailers') {
      res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-sum' });
      res.write('body');
      res.addTrailers({ 'x-sum': '4' });
      res.end();
      return;
    }
    if (req.url === '/cut') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('part');
      setTimeout(() => res.destroy(), 20);
      return;
    }
    if (req.url === '/big') {
      res.end(Buffer.alloc(256 * 1024, 'b'));
      return;
    }
    const body = Buffer.concat(chunks).toString();
    res.setHeader('set-cookie', req.url === '/h' ? ['a=1', 'b=2', 'c=3'] : ['a=1', 'b=2']);
    if (req.url === '/h') res.setHeader('__proto__', 'polluted?');
    res.setHeader('x-one', 'one');
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
  });
}

/**
 * A handler of undici's first protocol (onConnect ... onComplete, onError)
 * that records what it was told, and `done`, settled by its last call.
 */
function legacyHandler(hooks = {}) {
  const seen = { connected: false, status: 0, rawHeaders: null, chunks: [], trailers: null, error: null };
  let settle;
  const done = new Promise((resolve) => {
    settle = resolve;
  });
  const handler = {
    onConnect(abort) {
      seen.connected = true;
      hooks.onConnect?.(abort);
    },
    onHeaders(status, rawHeaders, resume, statusText) {
      seen.status = status;
      seen.statusText = statusText;
      seen.rawHeaders = rawHeaders;
      return hooks.onHeaders ? hooks.onHeaders(resume) : true;
    },
    onData(chunk) {
      seen.chunks.push(chunk);
      return hooks.onData ? hooks.onData(chunk) : true;
    },
    onComplete(trailers) {
      seen.trailers = trailers;
      settle(seen);
    },
    onError(err) {
      seen.error = err;
      settle(seen);
    },
  };
  return { handler, done, seen };
}

/** A handler of undici's controller protocol (onRequestStart ... onResponseError), recording as above. */
function controllerHandler(hooks = {}) {
  const seen = { started: false, status: 0, headers: null, chunks: [], trailers: null, error: null, errors: 0 };
  let settle;
  const done = new Promise((resolve) => {
    settle = resolve;
  });
  const handler = {
    onRequestStart(controller) {
      seen.started = true;
      hooks.onRequestStart?.(controller);
    },
    onResponseStarted() {
      seen.responseStarted = true;
    },
    onResponseStart(controller, status, headers, statusText) {
      seen.status = status;
      seen.statusText = statusText;
      seen.headers = headers;
      seen.rawHeaders = controller.rawHeaders;
      hooks.onResponseStart?.(controller);
    },
    onResponseData(controller, chunk) {
      seen.chunks.push(chunk);
      hooks.onResponseData?.(controller, chunk);
    },
    onResponseEnd(controller, trailers) {
      seen.trailers = trailers;
      seen.rawTrailers = controller.rawTrailers;
      settle(seen);
    },
    onResponseError(controller, err) {
      seen.error = err;
      seen.errors++;
      settle(seen);
    },
  };
  return { handler, done, seen };
}

const HANDLERS = { legacy: legacyHandler, controller: controllerHandler };
const bodyOf = (seen) => Buffer.concat(seen.chunks).toString();

/** Chunks of `size` bytes, `count` of them, from an async generator: a body fetch would stream. */
async function* chunks(count, size) {
  for (let i = 0; i < count; i++) yield Buffer.alloc(size, 'x');
}

describe('the fetch fallback adapter: undici\'s dispatcher protocol over the agent', () => {
  const { keep } = closeAfterEach();
  let dispatch;

  beforeEach(() => {
    dispatch = null;
  });

  afterEach(async () => {
    if (dispatch !== null) await dispatch.close();
  });

  for (const protocol of PROTOCOLS) {
    it(`carries Node's own fetch over ${protocol}, through the agent`, async () => {
      const server = keep(await createServer(protocol, echo));
      dispatch = new AgentDispatch(tlsOptions(protocol));
      const res = await fetch(server.url('/path?a=1'), {
        method: 'POST', body: 'hello', headers: { 'x-test': 'yes' }, dispatcher: dispatch,
      });
      const got = await res.json();
      assert.equal(res.status, 200);
      assert.deepEqual({ method: got.method, url: got.url, body: got.body, test: got.headers['x-test'] },
        { method: 'POST', url: '/path?a=1', body: 'hello', test: 'yes' });
      assert.equal(res.headers.get('set-cookie'), 'a=1, b=2');
      const agent = protocol === 'https:' ? dispatch.https : dispatch.http;
      assert.equal(agent.createSocketCount, 1);
      assert.deepEqual(Object.values(dispatch.getStats().origins).map((origin) => origin.socketsCreated), [1]);
    });
  }

  for (const { name, major, node, runs, load } of UNDICI_MAJORS) {
    const title = `serves npm's undici ${major} (${name})`;
    if (!runs) {
      it.skip(`${title}: needs Node >= ${node}, this is ${process.version}`);
      continue;
    }
    it(`${title}: request() with a query, then a streamed body, on one connection`, async () => {
      const undici = load();
      const server = keep(await createServer('http:', echo));
      dispatch = new AgentDispatch();
      const first = await undici.request(server.url('/q'), { query: { a: 'b c' }, dispatcher: dispatch });
      const got = await first.body.json();
      assert.deepEqual([first.statusCode, got.url, first.headers['set-cookie']], [200, '/q?a=b+c', ['a=1', 'b=2']]);
      const second = await undici.request(server.url('/up'), {
        method: 'PUT', body: Readable.from(['str', 'eam']), dispatcher: dispatch,
      });
      assert.equal((await second.body.json()).body, 'stream');
      assert.equal(dispatch.http.createSocketCount, 1);
    });
  }

  for (const [kind, make] of Object.entries(HANDLERS)) {
    describe(`a handler of the ${kind} protocol`, () => {
      it('gets the status, the headers as undici gives them, the body and the trailers', async () => {
        const server = keep(await createServer('http:', echo));
        dispatch = new AgentDispatch();
        const { handler, done } = make();
        dispatch.dispatch({ origin: server.origin, path: '/trailers', method: 'GET' }, handler);
        const seen = await done;
        assert.equal(seen.error, null);
        assert.equal(seen.status, 200);
        assert.equal(seen.statusText, 'OK');
        assert.ok(seen.rawHeaders.every(Buffer.isBuffer));
        assert.equal(bodyOf(seen), 'body');
        if (kind === 'legacy') {
          assert.deepEqual(seen.trailers.map(String), ['x-sum', '4']);
        } else {
          assert.equal(seen.headers.trailer, 'x-sum');
          assert.deepEqual(seen.trailers, { 'x-sum': '4' });
          assert.deepEqual(seen.rawTrailers.map(String), ['x-sum', '4']);
          assert.equal(seen.responseStarted, true);
        }
      });

      it('sends the headers in each of undici\'s forms, and a repeated header as a list', async () => {
        const server = keep(await createServer('http:', echo));
        dispatch = new AgentDispatch();
        const forms = [
          { 'X-A': '1', 'x-list': ['2', '3'], 'x-none': undefined },
          ['X-A', '1', 'x-list', '2', 'x-list', '3'],
          [['X-A', '1'], ['x-list', '2'], ['x-list', '3']],
          new Map([['X-A', '1'], ['x-list', ['2', '3']]]),
        ];
        for (const headers of forms) {
          const { handler, done } = make();
          dispatch.dispatch({ origin: server.origin, path: '/h', method: 'GET', headers }, handler);
          const seen = await done;
          assert.equal(seen.error, null);
          const got = JSON.parse(bodyOf(seen)).headers;
          assert.deepEqual([got['x-a'], got['x-list'], 'x-none' in got], ['1', '2, 3', false], JSON.stringify(headers));
        }
        const { handler, done } = make();
        dispatch.dispatch({ origin: server.origin, path: '/h', method: 'GET', headers: null }, handler);
        assert.equal((await done).status, 200);
        if (kind === 'controller') {
          const headers = (await done).headers;
          assert.deepEqual(headers['set-cookie'], ['a=1', 'b=2', 'c=3']);
          // A header named __proto__ is a header, not the object's prototype.
          assert.ok(Object.hasOwn(headers, '__proto__'));
          assert.equal(headers.__proto__, 'polluted?');
          assert.equal(Object.getPrototypeOf(headers), Object.prototype);
        }
      });

      it('sends every kind of body: string, bytes, stream, iterables, a Blob', async () => {
        const server = keep(await createServer('http:', echo));
        dispatch = new AgentDispatch();
        const bodies = [
          ['text', 'text'],
          [new Uint8Array([104, 105]), 'hi'],
          [Readable.from(['a', 'b']), 'ab'],
          [[Buffer.from('x'), Buffer.from('y')], 'xy'],
          [chunks(8, 64 * 1024), 'x'.repeat(8 * 64 * 1024)],
          [new Blob(['bl', 'ob']), 'blob'],
        ];
        for (const [body, expected] of bodies) {
          const { handler, done } = make();
          dispatch.dispatch({ origin: server.origin, path: '/b', method: 'POST', body }, handler);
          const seen = await done;
          assert.equal(seen.error, null);
          assert.equal(JSON.parse(bodyOf(seen)).body, expected);
        }
      });

      it('fails, each request once and with a clear error, what it cannot send', async () => {
        const server = keep(await createServer('http:', echo));
        dispatch = new AgentDispatch();
        async function failure(opts) {
          const { handler, done, seen } = make();
          dispatch.dispatch({ origin: server.origin, path: '/', method: 'GET', ...opts }, handler);
          await done;
          assert.equal(seen.status, 0);
          return seen.error;
        }
        const connect = await failure({ method: 'CONNECT' });
        assert.equal(connect.code, 'ERR_STEADY_UNSUPPORTED_REQUEST');
        assert.match(connect.message, /a CONNECT request/);
        assert.match((await failure({ upgrade: 'websocket' })).message, /an upgrade/);
        assert.match((await failure({ origin: `ftp://127.0.0.1:${server.port}` })).message, /the protocol ftp:/);
        assert.match((await failure({ method: 'POST', body: 42 })).message, /a body of type \[object Number\]/);
        assert.equal((await failure({ headers: { 'x-bad': 'a\nb' } })).code, 'ERR_INVALID_CHAR');
        const broken = (async function* () {
          yield 'start';
          throw new Error('the body broke');
        })();
        assert.equal((await failure({ method: 'POST', body: broken })).message, 'the body broke');
      });

      it('fails a response cut short, once', async () => {
        const server = keep(await createServer('http:', echo));
        dispatch = new AgentDispatch();
        const { handler, done } = make();
        dispatch.dispatch({ origin: server.origin, path: '/cut', method: 'GET' }, handler);
        const seen = await done;
        assert.equal(bodyOf(seen), 'part');
        assert.ok(seen.error instanceof Error);
        assert.equal(seen.trailers, null);
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (kind === 'controller') assert.equal(seen.errors, 1);
      });

      it('pauses the response when the handler asks, and goes on when it resumes', async () => {
        const server = keep(await createServer('http:', echo));
        dispatch = new AgentDispatch();
        let paused = 0;
        let resumeLegacy;
        const later = (fn) => setTimeout(fn, 10);
        const hooks = kind === 'legacy'
          ? {
            onHeaders(resume) {
              resumeLegacy = resume;
              paused++;
              later(resume);
              return false;
            },
            onData() {
              if (paused > 2) return true;
              paused++;
              later(resumeLegacy);
              return false;
            },
          }
          : {
            onResponseStart(controller) {
              paused++;
              controller.pause();
              later(() => controller.resume());
            },
            onResponseData(controller) {
              controller.resume(); // not paused: nothing to do
              if (paused > 2) return;
              paused++;
              controller.pause();
              later(() => controller.resume());
            },
          };
        const made = make(hooks);
        dispatch.dispatch({ origin: server.origin, path: '/big', method: 'GET' }, made.handler);
        const seen = await made.done;
        assert.equal(seen.error, null);
        assert.equal(Buffer.concat(seen.chunks).length, 256 * 1024);
        assert.equal(paused, 3);
      });

      it('ends the request on an abort, before or after the response started, and tells the handler once', async () => {
        const server = keep(await createServer('http:', echo));
        dispatch = new AgentDispatch();
        const early = make(kind === 'legacy'
          ? { onConnect: (abort) => abort() }
          : { onRequestStart: (controller) => controller.abort() });
        dispatch.dispatch({ origin: server.origin, path: '/', method: 'GET' }, early.handler);
        const before = await early.done;
        assert.equal(before.error.name, 'AbortError');
        assert.equal(before.status, 0);

        const reason = new Error('enough');
        let abort;
        const late = make(kind === 'legacy'
          ? { onConnect: (fn) => { abort = fn; }, onData: () => { abort(reason); return true; } }
          : { onResponseData: (controller) => { controller.abort(reason); controller.abort(new Error('again')); } });
        dispatch.dispatch({ origin: server.origin, path: '/big', method: 'GET' }, late.handler);
        const after = await late.done;
        assert.equal(after.error, reason);
        assert.equal(after.trailers, null);
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (kind === 'controller') assert.equal(after.errors, 1);
      });

      it('fails the request with the error a handler throws', async () => {
        const server = keep(await createServer('http:', echo));
        dispatch = new AgentDispatch();
        const thrown = new Error('handler threw');
        const { handler, done } = make(kind === 'legacy'
          ? { onHeaders: () => { throw thrown; } }
          : { onResponseStart: () => { throw thrown; } });
        dispatch.dispatch({ origin: server.origin, path: '/big', method: 'GET' }, handler);
        const seen = await done;
        assert.equal(seen.error, thrown);
        assert.deepEqual(seen.chunks, []);
      });
    });
  }

  it('adds undici\'s query to the path, after a query the path has', async () => {
    const server = keep(await createServer('http:', echo));
    dispatch = new AgentDispatch();
    const cases = [
      [{ path: '/q?x=1', query: { a: '1' } }, '/q?x=1&a=1'],
      [{ query: {} }, '/'],
      [{ path: '/p', query: [['a', '1'], ['a', '2']] }, '/p?a=1&a=2'],
    ];
    for (const [opts, url] of cases) {
      const { handler, done } = legacyHandler();
      dispatch.dispatch({ origin: server.origin, method: 'GET', ...opts }, handler);
      assert.equal(JSON.parse(bodyOf(await done)).url, url);
    }
  });

  it('takes a legacy handler without onConnect', async () => {
    const server = keep(await createServer('http:', echo));
    dispatch = new AgentDispatch();
    const { handler, done } = legacyHandler();
    delete handler.onConnect;
    dispatch.dispatch({ origin: server.origin, path: '/', method: 'GET' }, handler);
    assert.equal((await done).status, 200);
  });

  it('merges both agents\' stats, with dns when the option is on; destroy() ends both', async () => {
    const plain = keep(await createServer('http:', echo));
    const secure = keep(await createServer('https:', echo));
    dispatch = new AgentDispatch({ ...tlsOptions('https:'), dns: true });
    for (const server of [plain, secure]) {
      const { handler, done } = legacyHandler();
      dispatch.dispatch({ origin: server.origin, path: '/', method: 'GET' }, handler);
      assert.equal((await done).status, 200);
    }
    const stats = dispatch.getStats();
    assert.deepEqual(Object.keys(stats.origins).map((name) => name.split(':')[1]).sort(), [plain.port, secure.port].map(String).sort());
    assert.equal(typeof stats.dns, 'object');
    dispatch.destroy();
    const pooled = [dispatch.http, dispatch.https].flatMap((agent) => Object.values(agent.freeSockets).flat());
    assert.equal(pooled.length, 2);
    assert.ok(pooled.every((socket) => socket.destroyed));
    dispatch = null;
  });
});
