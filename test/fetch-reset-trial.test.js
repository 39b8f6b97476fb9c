'use strict';

// A learned limit is tried by the next requests (issue 31's rule, on the
// fetch and undici transport): a server that announces nothing and never
// closes an idle connection destroys the socket of one request, the first
// reuse of a steady rhythm. That failure looks like a collision after GAP ms
// idle and teaches a tentative limit of about GAP ms, which would close every
// socket before the next request. The limit must lapse once its trial has
// passed with nothing confirming it, so that reuse resumes: at most two new
// connections after the reset (the one replacing the reset socket, and the
// one replacing the socket that started the trial). The same for one idle
// connection the server closes once, before the next request: a limit from
// an idle close caps every socket while on trial, so only its lapse brings
// reuse back.
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const http = require('node:http');
const { createFetch } = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { UNDICI_MAJORS, windowServer } = require('./support/fetch');
const { delay } = require('./support/request');

const GAP = 200;
const RESET = 2; // the request whose socket the server destroys: the first reuse
const AFTER = 12; // requests after it

/**
 * A server that announces nothing and keeps idle connections, but once:
 * 'reset' destroys the socket of request RESET; 'idle' closes the
 * connection of request 1 after it sat idle 3/4 of GAP.
 */
async function onceServer(mode) {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    if (mode === 'reset' && requests === RESET) {
      req.socket.destroy();
      return;
    }
    res.end('ok');
    if (mode === 'idle' && requests === 1) res.on('finish', () => setTimeout(() => req.socket.destroy(), (GAP * 3) / 4));
  });
  server.keepAliveTimeout = 0; // no idle limit, and no Keep-Alive header
  const connections = [];
  server.on('connection', () => connections.push(requests));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    connections, // the number of requests seen when each connection came
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

/** Sends 1 + RESET + AFTER requests GAP ms apart with `send` (which resolves once the body is read). */
async function rhythm(send) {
  for (let i = 0; i < RESET + AFTER; i++) {
    if (i > 0) await delay(GAP);
    await send().catch(() => {}); // the reset request may fail (not every path resends it)
  }
}

const SCENARIOS = [
  { mode: 'reset', title: 'one reset request', from: RESET },
  { mode: 'idle', title: 'one idle connection closed', from: 1 },
];

for (const { mode, title, from } of SCENARIOS) describe(`a learned limit lapses: ${title} does not stop reuse`, function () {
  this.timeout(30000);
  let server;

  beforeEach(async () => {
    server = await onceServer(mode);
  });

  afterEach(() => server.close());

  function assertReuseResumed() {
    const after = server.connections.filter((seen) => seen >= from);
    assert.ok(after.length <= 2, `${after.length} new connections after it (at requests ${after.join(', ')}), want at most 2`);
  }

  it('steady-agent/fetch; the lapse says what happened (a trial, no probe)', async () => {
    const fetch = createFetch();
    const refuted = [];
    const onLimit = (event) => {
      if (event.agent === fetch.dispatcher && event.outcome === 'refuted') refuted.push(event.why);
    };
    dc.subscribe('steady-agent:server-idle-limit', onLimit);
    try {
      await rhythm(async () => (await fetch(server.url)).text());
    } finally {
      dc.unsubscribe('steady-agent:server-idle-limit', onLimit);
      await fetch.close();
    }
    assertReuseResumed();
    // The limit went, by its trial or by a reuse that outlived it, and no
    // words speak of a probe the transport never kept.
    assert.ok(refuted.length >= 1, 'the limit was refuted');
    for (const why of refuted) assert.match(why, /^(no close confirmed it within its trial|a reuse after \d+(\.\d)? ms idle got its response)$/);
  });

  for (const { name, major, node, runs, load } of UNDICI_MAJORS.filter((entry) => entry.major >= 7)) {
    (runs ? it : it.skip)(`createDispatcher with undici ${major} (${name}${runs ? '' : `: needs Node >= ${node}`})`, async () => {
      const undici = load();
      const dispatcher = createDispatcher(undici);
      try {
        await rhythm(async () => (await undici.request(server.url, { dispatcher })).body.text());
      } finally {
        await dispatcher.close();
      }
      assertReuseResumed();
    });
  }
});

// A created fetch's own close() closes its idle connections: that is never
// evidence of the server's limit (it once read as a restart, and dropped
// what had been learned).
describe('a created fetch\'s own close() teaches nothing', () => {
  let server;

  afterEach(() => server?.close());

  it('the limit learned before close() stands, and no verdict follows it', async () => {
    const limits = [];
    const onLimit = (message) => limits.push(message);
    const diagnostics = require('node:diagnostics_channel');
    diagnostics.subscribe('steady-agent:server-idle-limit', onLimit);
    const closing = http.createServer((req, res) => res.end('ok'));
    closing.keepAliveTimeout = 0;
    closing.timeout = 150; // idle connections closed at 150 ms, without a word
    await new Promise((resolve) => closing.listen(0, '127.0.0.1', resolve));
    server = { close: () => new Promise((resolve) => { closing.closeAllConnections(); closing.close(resolve); }) };
    const url = `http://127.0.0.1:${closing.address().port}/`;
    const fetch = createFetch();
    try {
      await (await fetch(url)).text();
      await delay(300); // the server closes the idle connection: a tentative limit
      await Promise.all([1, 2].map(async () => (await fetch(url)).text())); // idle connections now
      const learned = limits.filter((m) => m.source === 'learned');
      assert.deepEqual(learned.map((m) => m.outcome), ['learned'], JSON.stringify(learned));
      await fetch.close();
      assert.deepEqual(limits.filter((m) => m.source === 'learned').map((m) => m.outcome), ['learned']);
      const [stats] = Object.values(fetch.getStats().origins);
      assert.ok(stats.closeReasons['agent-close'] >= 1, JSON.stringify(stats.closeReasons));
      assert.ok(stats.serverIdleTimeout.learned >= 100, JSON.stringify(stats.serverIdleTimeout));
    } finally {
      diagnostics.unsubscribe('steady-agent:server-idle-limit', onLimit);
    }
  });
});

// ...but not by a request that cannot be sent again (issue 39): undici
// cannot keep a socket out of its pool as the agent keeps its probe, so a
// socket idle past a limit on trial (a collision's, which caps no other
// socket) or lapsed may be the one undici hands the next request. A POST
// without an Idempotency-Key that meets the server's close there is lost;
// so it is kept off such a socket (closed first, a new connection), and
// loses at most the first collision, as through the agent. The server
// (windowServer) closes a connection idle LIMIT ms and resets a request
// that reaches one idle LIMIT - WINDOW ms or more: the race, on loopback.
describe('a request that cannot be sent again keeps to a limit in doubt', function () {
  this.timeout(60000);
  const LIMIT = 400;
  const WINDOW = 40; // inside the learned margin (15%): a deadline closes a socket before it
  const IN_WINDOW = LIMIT - WINDOW / 2;
  const TRIES = 3;
  const ask = { model: 'test-model', messages: [{ role: 'user', content: 'hello' }] };
  let server;

  /** Answers as the chat completions API does. */
  function completion(req, res) {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({
      id: 'chatcmpl-1', object: 'chat.completion', created: 0, model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    }));
  }

  // Each rhythm: the waits before each POST after the first, and the POSTs it may lose.
  const RHYTHMS = [
    {
      // The server's idle close teaches the limit; its trial (the next
      // socket closed at its deadline) lapses with nothing seen, and the
      // next socket idles into the window.
      title: 'a limit learned from an idle close, its trial lapsed',
      waits: [LIMIT + 150, 1.5 * LIMIT + 50, IN_WINDOW],
      lost: 0,
    },
    {
      // The first collision teaches the limit, which, on trial, caps no
      // socket but its trial's: the next idles into the window.
      title: 'a limit learned from a collision, on trial',
      waits: [IN_WINDOW, 50, IN_WINDOW, IN_WINDOW],
      lost: 1,
    },
  ];

  /** The clients: each makes a fresh one, { post(), close() }. */
  const CLIENTS = [
    {
      name: 'steady-agent/fetch',
      make() {
        const fetch = createFetch();
        return {
          async post() {
            const res = await fetch(server.url('/post'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask) });
            await res.text();
            assert.equal(res.status, 200);
          },
          close: () => fetch.close(),
        };
      },
    },
    {
      name: 'the openai SDK with fetch: createFetch(), maxRetries: 0',
      make() {
        const OpenAI = require('openai');
        const fetch = createFetch();
        const client = new OpenAI({ apiKey: 'test-key', baseURL: server.url('/v1'), fetch, maxRetries: 0 });
        return {
          async post() {
            assert.equal((await client.chat.completions.create(ask)).choices[0].message.content, 'ok');
          },
          close: () => fetch.close(),
        };
      },
    },
    ...UNDICI_MAJORS.filter((entry) => entry.major >= 7).map(({ name, major, node, runs, load }) => ({
      name: `createDispatcher with undici ${major} (${name}${runs ? '' : `: needs Node >= ${node}`})`,
      runs,
      make() {
        const undici = load();
        const dispatcher = createDispatcher(undici);
        return {
          async post() {
            const res = await undici.request(server.url('/post'), {
              method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask), dispatcher,
            });
            await res.body.text();
            assert.equal(res.statusCode, 200);
          },
          close: () => dispatcher.close(),
        };
      },
    })),
  ];

  beforeEach(async () => {
    server = await windowServer({ limit: LIMIT, window: WINDOW, answer: completion });
  });

  afterEach(() => server?.close());

  /** One pass of `rhythm` through a fresh client: the POSTs lost. */
  async function pass(client, rhythm) {
    const one = client.make();
    let lost = 0;
    try {
      for (let i = 0; i <= rhythm.waits.length; i++) {
        if (i > 0) await delay(rhythm.waits[i - 1]);
        await one.post().catch(() => { lost++; });
      }
    } finally {
      await one.close();
    }
    return lost;
  }

  for (const client of CLIENTS) {
    for (const rhythm of RHYTHMS) {
      (client.runs === false ? it.skip : it)(`${client.name}: ${rhythm.title}`, async () => {
        // A late timer on a loaded machine can take a socket past the
        // server's close instead: then nothing was kept off, and the pass
        // runs again (at most TRIES times). Every pass loses at most the
        // first collision, and no POST is applied twice.
        for (let tries = 1; tries <= TRIES && server.counts.keptOff === 0; tries++) {
          const before = server.applied.length;
          const lost = await pass(client, rhythm);
          assert.ok(lost <= rhythm.lost, `pass ${tries}: ${lost} POSTs lost, want at most ${rhythm.lost}; server ${JSON.stringify(server.counts)}`);
          assert.equal(server.applied.length - before, rhythm.waits.length + 1 - lost, `pass ${tries}: each POST applied once`);
        }
        assert.ok(server.counts.keptOff > 0, `no POST was kept off a socket in the window in ${TRIES} passes: ${JSON.stringify(server.counts)}`);
      });
    }
  }
});
