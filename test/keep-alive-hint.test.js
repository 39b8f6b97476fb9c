'use strict';

// The server's `Keep-Alive: timeout=N, max=M` response header. The free-socket
// timeout becomes the smallest of freeSocketTimeout, the remaining
// socketActiveTTL and N * 1000 - serverTimeoutMargin (not kept if that is 0 or
// less), whatever the agent's active timeout; after the M more requests the
// server announced, the socket is not reused.
const assert = require('node:assert/strict');
const { parseKeepAlive, responseHint } = require('../lib/policy/keep_alive_header');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createScriptedServer, rawResponse } = require('./support/raw');
const { request, waitFor } = require('./support/request');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);

describe('responseHint: the Keep-Alive header among a response\'s raw headers', () => {
  const hint = (...rawHeaders) => responseHint({ rawHeaders });

  it('finds the header whatever the case of its name, beside Connection', () => {
    assert.deepEqual(hint('Connection', 'keep-alive', 'Keep-Alive', 'timeout=5'), { timeout: 5, max: undefined });
    assert.deepEqual(hint('keep-alive', 'max=4'), { timeout: undefined, max: 4 });
    assert.deepEqual(hint('KEEP-ALIVE', 'timeout=3'), { timeout: 3, max: undefined });
    assert.deepEqual(hint('kEEP-aLIVE', 'timeout=2'), { timeout: 2, max: undefined });
  });

  it('takes a header on several lines as one list, as res.headers joins it', () => {
    assert.deepEqual(hint('Keep-Alive', 'timeout=5', 'keep-alive', 'max=7'), { timeout: 5, max: 7 });
  });

  it('reads nothing from other 10-character names', () => {
    assert.equal(hint('Connection', 'timeout=5'), null);
    assert.equal(hint('Keep_Alive', 'timeout=5'), null);
    assert.equal(hint('Keep\rAlive', 'timeout=5'), null);
    assert.equal(hint('Keep-Alivf', 'timeout=5'), null);
    assert.equal(hint('Content-Type', 'text/plain'), null);
  });
});

describe('parseKeepAlive', () => {
  it('reads timeout and max in either order', () => {
    assert.deepEqual(parseKeepAlive('timeout=5, max=100'), { timeout: 5, max: 100 });
    assert.deepEqual(parseKeepAlive('max=100, timeout=5'), { timeout: 5, max: 100 });
  });

  it('ignores case and spaces', () => {
    assert.deepEqual(parseKeepAlive('MAX=3,TIMEOUT=2'), { timeout: 2, max: 3 });
    assert.deepEqual(parseKeepAlive('Timeout=7'), { timeout: 7, max: undefined });
    assert.deepEqual(parseKeepAlive('timeout = 2'), { timeout: 2, max: undefined });
    assert.deepEqual(parseKeepAlive('  max =4 ,  timeout= 9  '), { timeout: 9, max: 4 });
  });

  it('accepts semicolons and quoted numbers', () => {
    assert.deepEqual(parseKeepAlive('timeout=5;max=10'), { timeout: 5, max: 10 });
    assert.deepEqual(parseKeepAlive('timeout="5", max="10"'), { timeout: 5, max: 10 });
  });

  it('keeps what it understands and ignores the rest', () => {
    assert.deepEqual(parseKeepAlive('foo, timeout=5, bar=baz'), { timeout: 5, max: undefined });
    assert.deepEqual(parseKeepAlive('max=3, foo'), { timeout: undefined, max: 3 });
    assert.deepEqual(parseKeepAlive('max=0'), { timeout: undefined, max: 0 });
  });

  it('returns null when there is nothing it understands', () => {
    assert.equal(parseKeepAlive('foo, bar=baz'), null);
    assert.equal(parseKeepAlive('timeout=abc'), null);
    assert.equal(parseKeepAlive('timeout=-1'), null);
    assert.equal(parseKeepAlive('timeout='), null);
    assert.equal(parseKeepAlive(''), null);
    assert.equal(parseKeepAlive(undefined), null);
  });

  it('does not read parameter names inside other words', () => {
    assert.equal(parseKeepAlive('xtimeout=5'), null);
    assert.equal(parseKeepAlive('foo-max=5'), null);
    assert.equal(parseKeepAlive('maximum=5'), null);
  });

  it('takes the first of a repeated parameter', () => {
    assert.deepEqual(parseKeepAlive('timeout=5, timeout=1, max=2, max=9'), { timeout: 5, max: 2 });
  });

  it('is stateless between calls (global regex reset)', () => {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(parseKeepAlive('timeout=3, max=4'), { timeout: 3, max: 4 });
    }
  });
});

describe('serverTimeoutMargin option', () => {
  for (const protocol of PROTOCOLS) {
    it(`is validated like the other durations (${protocol})`, () => {
      assert.throws(() => createAgent(protocol, { serverTimeoutMargin: -1 }),
        { name: 'InvalidOptionValueError', code: 'ERR_OUT_OF_RANGE', option: 'serverTimeoutMargin' });
      assert.throws(() => createAgent(protocol, { serverTimeoutMargin: 'soon' }),
        { name: 'InvalidOptionTypeError', code: 'ERR_INVALID_ARG_TYPE', option: 'serverTimeoutMargin' });
      assert.throws(() => createAgent(protocol, { serverTimeoutMargin: {} }),
        { code: 'ERR_INVALID_ARG_TYPE', option: 'serverTimeoutMargin' });
      assert.throws(() => createAgent(protocol, { serverTimeoutMargin: NaN }),
        { code: 'ERR_OUT_OF_RANGE', option: 'serverTimeoutMargin' });
    });
  }
});

for (const protocol of PROTOCOLS) {
  describe(`Keep-Alive timeout hint (${protocol})`, () => {
    let server;
    let agent;

    afterEach(async () => {
      if (agent) agent.destroy();
      if (server) await server.close();
      agent = null;
      server = null;
    });

    /** A server that announces `keepAlive` and closes connections idle for `idleTimeout`. */
    async function hinting(keepAlive, idleTimeout = 0) {
      server = await createScriptedServer(protocol, {
        respond: () => rawResponse('ok', { 'Keep-Alive': keepAlive }),
        idleTimeout,
      });
      return server;
    }

    /** Two requests in a row: the second must reuse the first one's socket. */
    async function assertKept() {
      const first = await request(server.url('/'), { agent });
      const second = await request(server.url('/'), { agent });
      assert.equal(second.body, 'ok');
      assert.ok(second.socket === first.socket, 'the socket was kept and reused');
      assert.equal(second.reusedSocket, true);
    }

    /** Two requests in a row: the second must get a new socket, the first one closed by the agent. */
    async function assertNotKept() {
      const before = server.accepted;
      const first = await request(server.url('/'), { agent });
      const second = await request(server.url('/'), { agent });
      assert.equal(second.body, 'ok');
      assert.ok(second.socket !== first.socket, 'the socket was not kept');
      assert.equal(second.reusedSocket, false);
      assert.equal(server.accepted, before + 2);
      await waitFor(() => first.socket.destroyed);
    }

    /**
     * One request, then the socket idles in the pool: the agent must close it
     * before the server's own idle timer fires (the server sees our FIN).
     */
    async function assertAgentClosesFirst() {
      const res = await request(server.url('/'), { agent });
      assert.equal(res.body, 'ok');
      await waitFor(() => server.connections[0].closed);
      assert.equal(server.connections[0].closedBy, 'client', 'the agent closed the idle socket first');
      assert.equal(server.connections[0].idleClosed, false, 'the server\'s idle timer had not fired');
      await waitFor(() => agent.closeSocketCount === 1);
      const status = agent.getCurrentStatus();
      assert.deepEqual(status.freeSockets, {});
      assert.equal(status.errorSocketCount, 0);
      assert.equal(res.socket.destroyed, true);
      // Our own close teaches nothing about the server.
      assert.deepEqual(agent.serverIdleTimeouts, {});
    }

    it('timeout=1 with the default 1000 ms margin: the socket is not kept', async () => {
      await hinting('timeout=1', 1000);
      agent = createAgent(protocol);
      await assertNotKept();
      await waitFor(() => server.connections[0].closed);
      assert.equal(server.connections[0].closedBy, 'client', 'the agent, not the server, closed the first connection');
      assert.equal(agent.getCurrentStatus().createSocketCount, 2);
    });

    it('timeout=2, margin 1000, freeSocketTimeout 4000: kept, and closed by the agent before the server\'s 2 s', async () => {
      await hinting('timeout=2', 2000);
      agent = createAgent(protocol, { freeSocketTimeout: 4000 });
      const res = await request(server.url('/'), { agent });
      await waitFor(() => freeCount(agent) === 1);
      assert.equal(res.socket.destroyed, false);
      await assertAgentClosesFirst();
    });

    it('applies the hint when the agent has no active timeout (timeout: 0)', async () => {
      await hinting('timeout=2', 2000);
      agent = createAgent(protocol, { timeout: 0, freeSocketTimeout: 4000 });
      await assertAgentClosesFirst();
    });

    it('timeout=1 with timeout: 0 on the agent: the socket is not kept either', async () => {
      await hinting('timeout=1', 1000);
      agent = createAgent(protocol, { timeout: 0 });
      await assertNotKept();
    });

    it('applies the hint with freeSocketTimeout: 0 (no idle limit of the agent\'s own)', async () => {
      await hinting('timeout=2', 2000);
      agent = createAgent(protocol, { freeSocketTimeout: 0 });
      await assertAgentClosesFirst();
    });

    // A 2 s hint with a 2 s margin leaves nothing: not kept. With a 1 s margin,
    // kept. Core's parser reads none of these but the first.
    for (const header of ['timeout=2, max=100', 'max=100, timeout=2', 'MAX=100,TIMEOUT=2', 'timeout = 2', 'Timeout=2;max=100', 'foo, timeout=2, bar=baz']) {
      it(`reads '${header}': not kept with a 2 s margin, kept with 1 s`, async () => {
        await hinting(header);
        agent = createAgent(protocol, { serverTimeoutMargin: 2000 });
        await assertNotKept();
        agent.destroy();
        agent = createAgent(protocol, { serverTimeoutMargin: 1000 });
        await assertKept();
      });
    }

    it('ignores a header it does not understand (\'foo, bar=baz\'): kept whatever the margin', async () => {
      await hinting('foo, bar=baz');
      agent = createAgent(protocol, { serverTimeoutMargin: '1h' });
      await assertKept();
      assert.equal(server.accepted, 1);
    });

    it('a shorter freeSocketTimeout wins over the hint', async () => {
      // Announces 5 s but closes after 2 s: only freeSocketTimeout saves us.
      await hinting('timeout=5', 2000);
      agent = createAgent(protocol, { freeSocketTimeout: 500 });
      await assertAgentClosesFirst();
      assert.equal(agent.getCurrentStatus().timeoutSocketCount, 1);
    });

    it('a shorter remaining socketActiveTTL wins over the hint', async () => {
      await hinting('timeout=10', 2000);
      agent = createAgent(protocol, { freeSocketTimeout: 6000, socketActiveTTL: 800 });
      await assertAgentClosesFirst();
    });

    it('reads the margin humanized: \'2s\' leaves nothing of a 2 s hint, \'1500ms\' leaves 500 ms', async () => {
      await hinting('timeout=2');
      agent = createAgent(protocol, { serverTimeoutMargin: '2s' });
      await assertNotKept();
      agent.destroy();
      agent = createAgent(protocol, { serverTimeoutMargin: '1500ms' });
      await assertKept();
    });

    it('a margin under 1000 ms is honoured: timeout=1 is kept with a 500 ms or 0 margin (core\'s own fixed buffer does not veto it)', async () => {
      await hinting('timeout=1');
      agent = createAgent(protocol, { serverTimeoutMargin: 500 });
      await assertKept();
      agent.destroy();
      agent = createAgent(protocol, { serverTimeoutMargin: 0 });
      await assertKept();
    });

    it('timeout=0 with margin 0: not kept', async () => {
      await hinting('timeout=0');
      agent = createAgent(protocol, { serverTimeoutMargin: 0 });
      await assertNotKept();
    });
  });

  describe(`Keep-Alive max (${protocol})`, () => {
    let server;
    let agent;

    afterEach(async () => {
      if (agent) agent.destroy();
      if (server) await server.close();
      agent = null;
      server = null;
    });

    // A strict server: each connection takes `budget` requests and drops the
    // next one without answering. It announces the requests left, either on
    // every response (max=2, max=1, max=0) or on the first one only.
    function strict(budget, { every = true } = {}) {
      return createScriptedServer(protocol, {
        respond: ({ index }) => {
          if (index > budget) return null;
          const headers = every || index === 1 ? { 'Keep-Alive': `timeout=5, max=${budget - index}` } : {};
          return rawResponse('ok', headers);
        },
      });
    }

    async function sequential(count) {
      const results = [];
      for (let i = 0; i < count; i++) {
        results.push(await request(server.url(`/${i}`), { agent }).then((res) => res.body, (err) => err.code || err.message));
      }
      return results;
    }

    it('max counted down on every response: no request reaches a socket past its last', async () => {
      server = await strict(3);
      agent = createAgent(protocol);
      const results = await sequential(7);
      assert.deepEqual(results, Array(7).fill('ok'));
      assert.equal(server.dropped, 0);
      assert.equal(server.accepted, 3);
      assert.deepEqual(server.connections.map((conn) => conn.requests), [3, 3, 1]);
    });

    it('max announced on the first response only: the agent counts the rest itself', async () => {
      server = await strict(3, { every: false });
      agent = createAgent(protocol);
      const results = await sequential(7);
      assert.deepEqual(results, Array(7).fill('ok'));
      assert.equal(server.dropped, 0);
      assert.deepEqual(server.connections.map((conn) => conn.requests), [3, 3, 1]);
    });

    it('max=0: the socket serves no further request', async () => {
      server = await strict(1);
      agent = createAgent(protocol);
      const results = await sequential(3);
      assert.deepEqual(results, ['ok', 'ok', 'ok']);
      assert.equal(server.dropped, 0);
      assert.equal(server.accepted, 3);
      await waitFor(() => agent.closeSocketCount === 3);
      assert.equal(freeCount(agent), 0);
    });

    it('reads a Keep-Alive header split over two header lines (a list may be)', async () => {
      // Budget 2: the first response says so on its second Keep-Alive line.
      server = await createScriptedServer(protocol, {
        respond: ({ index }) => {
          if (index > 2) return null;
          return `HTTP/1.1 200 OK\r\nContent-Length: 2\r\nKeep-Alive: timeout=5\r\nKeep-Alive: max=${2 - index}\r\n\r\nok`;
        },
      });
      agent = createAgent(protocol);
      const results = await sequential(4);
      assert.deepEqual(results, ['ok', 'ok', 'ok', 'ok']);
      assert.equal(server.dropped, 0);
      assert.deepEqual(server.connections.map((conn) => conn.requests), [2, 2]);
    });

    it('a large max changes nothing: every request on one socket', async () => {
      server = await strict(100);
      agent = createAgent(protocol);
      const results = await sequential(5);
      assert.deepEqual(results, Array(5).fill('ok'));
      assert.equal(server.accepted, 1);
    });

    it('requests queued behind maxSockets do not get a socket past its last request', async () => {
      server = await strict(2);
      agent = createAgent(protocol, { maxSockets: 1 });
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) =>
        request(server.url(`/${i}`), { agent }).then((res) => res.body, (err) => err.code || err.message)));
      assert.deepEqual(results, Array(6).fill('ok'));
      assert.equal(server.dropped, 0);
      assert.deepEqual(server.connections.map((conn) => conn.requests), [2, 2, 2]);
    });
  });
}
