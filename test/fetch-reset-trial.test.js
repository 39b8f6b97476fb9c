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
const { UNDICI_MAJORS } = require('./support/fetch');
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
    for (const why of refuted) assert.match(why, /^(no server close or request failure in \d+ ms of trial since a socket reached it|contradicted by a reuse after \d+ ms)$/);
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
