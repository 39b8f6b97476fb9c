'use strict';

// Happy Eyeballs (RFC 8305, lib/connect/): a host name's addresses raced on
// real sockets. A real DNS server answers the name with two addresses, one
// port on each; an address serves, refuses, drops SYNs (a full accept
// queue) or answers late (the same, released: the SYN is answered on its
// retransmission). Through the agent (http.request), steady-agent/fetch and
// steady-agent/undici, over http and https, with the dns option and with a
// lookup of the caller's (called with all: true).
const assert = require('node:assert/strict');
const asyncHooks = require('node:async_hooks');
const fc = require('fast-check');
const { HttpAgent, HttpsAgent } = require('..');
const { createFetch } = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { ConnectAttemptsError, ConnectTimeoutError, SocketHangUpError } = require('../lib/errors');
const { interleave, next, attemptDelay } = require('../lib/connect/attempt_order');
const { PROTOCOLS } = require('./support/agents');
const { closeAfterEach } = require('./support/cleanup');
const { request, requestError, waitFor } = require('./support/request');
const { fixtures } = require('./support/servers');
const { startHost, watchAttempts, handles, hasIpv6Loopback, HOST } = require('./support/eyeballs');
const { captureDebug } = require('./support/debug_lines');

// The Connection Attempt Delay of the tests: Node's default.
const DELAY = 250;

// Each client, made with `options`: get(url) resolves with { body } or
// rejects with the connection's error (fetch's cause, unwrapped).
const CLIENTS = {
  agent(protocol, options) {
    const agent = new (protocol === 'https:' ? HttpsAgent : HttpAgent)({ ca: fixtures.ca, ...options });
    return {
      get: async (url) => (await request(url, { agent })).body,
      stats: () => agent.getStats(),
      failures: () => agent.createSocketErrorCount,
      close: () => agent.destroy(),
    };
  },
  fetch(protocol, options) {
    const fetch = createFetch({ ca: fixtures.ca, ...options });
    return {
      async get(url) {
        try {
          return await (await fetch(url)).text();
        } catch (err) {
          throw err.cause ?? err;
        }
      },
      stats: () => fetch.getStats(),
      failures: () => null,
      close: () => fetch.close(),
    };
  },
  undici(protocol, options) {
    const undici = require('undici');
    const dispatcher = createDispatcher(undici, { ca: fixtures.ca, ...options });
    return {
      get: async (url) => (await undici.request(url, { dispatcher })).body.text(),
      stats: () => dispatcher.getStats(),
      failures: () => null,
      close: () => dispatcher.close(),
    };
  },
};

const failureOf = (promise) => promise.then(() => assert.fail('expected the connection to fail'), (err) => err);

describe('Happy Eyeballs', () => {
  for (const protocol of PROTOCOLS) {
    for (const [client, make] of Object.entries(CLIENTS)) {
      describe(`${client}, ${protocol}`, () => {
        const { keep } = closeAfterEach();
        let attempts;
        let clientHandle = null;
        beforeEach(() => { attempts = watchAttempts(); });
        afterEach(async () => {
          attempts.stop();
          if (clientHandle !== null) await clientHandle.close();
          clientHandle = null;
        });

        // With the dns option, or a lookup of the caller's (called with all: true).
        const clientFor = (host, withDns, options = {}) => {
          const resolve = withDns ? { dns: { resolver: host.dns.resolver() } } : { lookup: host.lookup };
          clientHandle = make(protocol, { autoSelectFamily: true, autoSelectFamilyAttemptTimeout: DELAY, ...resolve, ...options });
          return clientHandle;
        };

        for (const withDns of [true, false]) {
          it(`the first address drops SYNs: the second, started after the delay, wins and the first is closed (${withDns ? 'dns option' : 'lookup, all: true'})`, async () => {
            const host = keep(await startHost(protocol, { '127.0.0.2': 'drop', '127.0.0.3': 'serve' }));
            const before = handles();
            const c = clientFor(host, withDns);
            assert.equal(await c.get(host.url('/')), 'ok 127.0.0.3');
            if (!withDns) assert.ok(host.lookups.length > 0 && host.lookups.every((options) => options.all === true));
            const started = attempts.of('started');
            assert.deepEqual(started.map((m) => [m.address, m.why]), [['127.0.0.2', 'first'], ['127.0.0.3', 'delay']]);
            assert.deepEqual(attempts.of('won').map((m) => m.address), ['127.0.0.3']);
            const [lost] = attempts.of('lost');
            assert.equal(lost.address, '127.0.0.2');
            assert.equal(lost.why, 'another-won');
            assert.equal(lost.socket.destroyed, true);
            const origin = Object.values(c.stats().origins)[0];
            assert.deepEqual(origin.connectAttempts, { ipv4: 2, ipv6: 0 });
            assert.deepEqual(origin.connectWins, { ipv4: 1, ipv6: 0 });
            // The race's timer is cleared, and the loser's socket gone.
            assert.ok(handles().timers <= before.timers + 1, 'no timer of the race is left');
            await c.close();
            clientHandle = null;
            await waitFor(() => handles().sockets <= before.sockets);
          });
        }

        it('the first answers late and the second drops: the first wins, as no attempt is given up for being slow', async function () {
          this.timeout(15000);
          const host = keep(await startHost(protocol, { '127.0.0.2': 'slow', '127.0.0.3': 'drop' }));
          const c = clientFor(host, client !== 'agent');
          const answer = c.get(host.url('/'));
          // Both attempts under way, the first past the delay: it answers now,
          // on its SYN's next retransmission.
          await waitFor(() => attempts.of('started').length === 2);
          host.release();
          assert.equal(await answer, 'ok 127.0.0.2');
          assert.deepEqual(attempts.of('won').map((m) => m.address), ['127.0.0.2']);
          const [lost] = attempts.of('lost');
          assert.equal(lost.address, '127.0.0.3');
          assert.equal(lost.socket.destroyed, true);
          assert.deepEqual(attempts.of('failed'), []);
        });

        it('both refuse: one error names each address with its own cause, and the request fails once', async () => {
          const host = keep(await startHost(protocol, { '127.0.0.2': 'refuse', '127.0.0.3': 'refuse' }));
          const before = handles();
          const c = clientFor(host, client === 'agent');
          const err = await failureOf(c.get(host.url('/')));
          assert.ok(err instanceof ConnectAttemptsError, err.stack);
          assert.ok(err instanceof AggregateError);
          assert.equal(err.code, 'ECONNREFUSED');
          assert.equal(err.host, HOST);
          assert.equal(err.port, host.port);
          assert.deepEqual(err.attempts.map(({ address, family, error }) => [address, family, error.code, error.address]), [
            ['127.0.0.2', 4, 'ECONNREFUSED', '127.0.0.2'],
            ['127.0.0.3', 4, 'ECONNREFUSED', '127.0.0.3'],
          ]);
          assert.deepEqual(err.errors, err.attempts.map((attempt) => attempt.error));
          assert.match(err.message, /alt\.localhost:\d+.*127\.0\.0\.2 \(ECONNREFUSED\), 127\.0\.0\.3 \(ECONNREFUSED\)/);
          if (c.failures() !== null) assert.equal(c.failures(), 1);
          assert.deepEqual(attempts.of('failed').map((m) => [m.address, m.why]), [['127.0.0.2', 'ECONNREFUSED'], ['127.0.0.3', 'ECONNREFUSED']]);
          assert.deepEqual(attempts.of('started').map((m) => m.why), ['first', 'failure']);
          assert.deepEqual(Object.values(c.stats().origins)[0].connectWins, { ipv4: 0, ipv6: 0 });
          await waitFor(() => handles().sockets <= before.sockets && handles().timers <= before.timers);
        });

        it('the first refuses at once: the second starts without waiting out the delay', async () => {
          const host = keep(await startHost(protocol, { '127.0.0.2': 'refuse', '127.0.0.3': 'serve' }));
          // A delay far longer than the test's time limit: only the failure can start the second.
          const c = clientFor(host, client !== 'agent', { autoSelectFamilyAttemptTimeout: 60000 });
          assert.equal(await c.get(host.url('/')), 'ok 127.0.0.3');
          assert.deepEqual(attempts.messages.map((m) => [m.address, m.outcome, m.why]), [
            ['127.0.0.2', 'started', 'first'],
            ['127.0.0.2', 'failed', 'ECONNREFUSED'],
            ['127.0.0.3', 'started', 'failure'],
            ['127.0.0.3', 'won', 'connected'],
          ]);
        });

        it('connectTimeout bounds the whole race: every attempt is closed, with its one timer', async () => {
          const host = keep(await startHost(protocol, { '127.0.0.2': 'drop', '127.0.0.3': 'drop' }));
          const before = handles();
          const c = clientFor(host, true, { connectTimeout: 400, autoSelectFamilyAttemptTimeout: 100 });
          const err = await failureOf(c.get(host.url('/')));
          assert.ok(err instanceof ConnectTimeoutError, err.stack);
          assert.equal(err.phase, 'connect');
          const lost = attempts.of('lost');
          assert.deepEqual(lost.map((m) => [m.address, m.why]), [['127.0.0.2', 'connect-timeout'], ['127.0.0.3', 'connect-timeout']]);
          assert.ok(lost.every((m) => m.socket.destroyed));
          await waitFor(() => handles().sockets <= before.sockets && handles().timers <= before.timers);
        });
      });
    }
  }

  describe('the agent', () => {
    const { keep, agentOf } = closeAfterEach();
    const debugLines = captureDebug();
    let attempts;
    beforeEach(() => { attempts = watchAttempts(); });
    afterEach(() => attempts.stop());

    it('autoSelectFamily: false keeps one address: nothing is raced', async () => {
      const host = keep(await startHost('http:', { '127.0.0.2': 'drop', '127.0.0.3': 'serve' }));
      const agent = agentOf(HttpAgent, { autoSelectFamily: false, connectTimeout: 300, dns: { resolver: host.dns.resolver() } });
      const err = await requestError(request(host.url('/'), { agent }));
      assert.ok(err instanceof ConnectTimeoutError);
      assert.deepEqual(attempts.messages, []);
      assert.equal(Object.values(agent.getStats().origins)[0].connectAttempts.ipv4, 0);
    });

    // Timers created from the request to its response, counted by
    // async_hooks: a raced connection against one to an IP literal.
    it('a new connection whose first attempt wins costs at most one timer more than one to an IP literal', async () => {
      const host = keep(await startHost('http:', { '127.0.0.2': 'serve', '127.0.0.3': 'serve' }));
      const twoAddresses = (hostname, options, callback) => callback(null, [{ address: '127.0.0.2', family: 4 }, { address: '127.0.0.3', family: 4 }]);
      const timersDuring = async (url) => {
        const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: twoAddresses });
        let created = 0;
        const hook = asyncHooks.createHook({ init(id, type) { if (type === 'Timeout') created++; } }).enable();
        try {
          assert.equal((await request(url, { agent })).body, 'ok 127.0.0.2');
        } finally {
          hook.disable();
        }
        return created;
      };
      const literal = await timersDuring(`http://127.0.0.2:${host.port}/`);
      const raced = await timersDuring(host.url('/'));
      assert.equal(attempts.of('won').length, 1);
      assert.equal(attempts.of('started').length, 1, 'the first attempt won before the delay');
      assert.ok(raced <= literal + 1, `${raced} timers raced, ${literal} to the IP literal`);
    });

    it('an IP literal is never raced', async () => {
      const host = keep(await startHost('http:', { '127.0.0.3': 'serve' }));
      const agent = agentOf(HttpAgent, { autoSelectFamily: true });
      const res = await request(`http://127.0.0.3:${host.port}/`, { agent });
      assert.equal(res.body, 'ok 127.0.0.3');
      assert.deepEqual(attempts.messages, []);
    });

    it('the families are interleaved: IPv4 dropping, ::1 answering after the delay', async function () {
      if (!(await hasIpv6Loopback())) this.skip();
      const host = keep(await startHost('http:', { '127.0.0.2': 'drop', '127.0.0.3': 'drop', '::1': 'serve' }));
      const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: host.lookup });
      const res = await request(host.url('/'), { agent });
      assert.equal(res.body, 'ok ::1');
      assert.deepEqual(attempts.of('started').map((m) => [m.address, m.family]), [['127.0.0.2', 4], ['::1', 6]]);
      const origin = Object.values(agent.getStats().origins)[0];
      assert.deepEqual(origin.connectAttempts, { ipv4: 1, ipv6: 1 });
      assert.deepEqual(origin.connectWins, { ipv4: 0, ipv6: 1 });
    });

    it('a race holds its place under maxSockets: a second request waits for it and reuses the winner', async () => {
      const host = keep(await startHost('http:', { '127.0.0.2': 'drop', '127.0.0.3': 'serve' }));
      const agent = agentOf(HttpAgent, { autoSelectFamily: true, maxSockets: 1, lookup: host.lookup });
      const [first, second] = await Promise.all([request(host.url('/a'), { agent }), request(host.url('/b'), { agent })]);
      assert.equal(first.body, 'ok 127.0.0.3');
      assert.equal(second.body, 'ok 127.0.0.3');
      assert.equal(attempts.of('won').length, 1);
      assert.equal(agent.createSocketCount, 1);
    });

    // agentkeepalive's own tests read the counters right after http.get().
    it('a race counts in createSocketCount and agent.sockets from its start, once', async () => {
      const host = keep(await startHost('http:', { '127.0.0.2': 'refuse', '127.0.0.3': 'serve' }));
      const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: host.lookup });
      const pending = request(host.url('/'), { agent });
      const status = agent.getCurrentStatus();
      assert.equal(status.createSocketCount, 1);
      assert.deepEqual(Object.values(status.sockets), [1]);
      await pending;
      assert.equal(agent.createSocketCount, 1);
      assert.equal(agent.closeSocketCount, 0);
    });

    it('a request aborted during the race: its connection ends, it hears socket hang up, and nothing is pooled', async () => {
      const host = keep(await startHost('http:', { '127.0.0.2': 'drop', '127.0.0.3': 'serve' }));
      const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: host.lookup });
      const http = require('node:http');
      const req = http.get(host.url('/'), { agent }, () => assert.fail('no response is expected'));
      const failed = new Promise((resolve) => req.on('error', resolve));
      await waitFor(() => attempts.of('started').length === 1);
      req.destroy();
      const err = await failed;
      assert.ok(err instanceof SocketHangUpError, err.stack);
      assert.equal(err.reason, 'aborted');
      assert.deepEqual(Object.keys(agent.sockets), []);
      assert.deepEqual(Object.keys(agent.freeSockets), []);
      const [won] = attempts.of('won');
      assert.equal(won.socket.destroyed, true);
      assert.equal(agent.createSocketErrorCount, 0);
      assert.equal(agent.closeSocketCount, agent.createSocketCount);
    });

    it('a createConnection put on Node\'s agent class by someone else sees every connection: nothing is raced', async () => {
      const http = require('node:http');
      const host = keep(await startHost('http:', { '127.0.0.2': 'refuse', '127.0.0.3': 'serve' }));
      const original = http.Agent.prototype.createConnection;
      const seen = [];
      http.Agent.prototype.createConnection = function wrapped(options, callback) {
        seen.push(options.host);
        return original.call(this, options, callback);
      };
      try {
        const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: host.lookup });
        assert.equal((await request(host.url('/'), { agent })).body, 'ok 127.0.0.3');
      } finally {
        http.Agent.prototype.createConnection = original;
      }
      assert.deepEqual(seen, [HOST]);
      assert.deepEqual(attempts.messages, []);
    });

    it('destroy() during the race ends it: the request hears socket hang up, as on core\'s path, and no socket is left', async () => {
      const host = keep(await startHost('http:', { '127.0.0.2': 'drop', '127.0.0.3': 'drop' }));
      const before = handles();
      const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: host.lookup });
      const pending = requestError(request(host.url('/'), { agent }));
      await waitFor(() => attempts.of('started').length === 2);
      agent.destroy();
      const err = await pending;
      assert.ok(err instanceof SocketHangUpError, err.stack);
      assert.equal(err.message, 'socket hang up');
      assert.equal(err.code, 'ECONNRESET');
      assert.equal(err.reason, 'destroyed');
      assert.deepEqual(attempts.of('lost').map((m) => m.why), ['destroyed', 'destroyed']);
      assert.equal(agent.createSocketErrorCount, 0);
      assert.equal(agent.closeSocketCount, agent.createSocketCount);
      await waitFor(() => handles().sockets <= before.sockets && handles().timers <= before.timers);
    });

    it('steady-agent/otel observing an agent during a race counts the winner once it is a socket', async () => {
      const { observeAgent } = require('steady-agent/otel');
      const { inMemoryMetrics } = require('./support/otel');
      const otel = inMemoryMetrics();
      keep({ close: () => otel.shutdown() });
      const host = keep(await startHost('http:', { '127.0.0.2': 'drop', '127.0.0.3': 'serve' }));
      const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: host.lookup });
      const pending = request(host.url('/'), { agent });
      await waitFor(() => attempts.of('started').length === 1);
      const stop = observeAgent(agent, { meterProvider: otel.meterProvider });
      try {
        assert.equal((await pending).body, 'ok 127.0.0.3');
        const found = await otel.collect();
        const open = found['http.client.open_connections'].points;
        assert.deepEqual(open.map((point) => point.value).sort(), [0, 1]);
      } finally {
        stop();
      }
    });

    it('a lookup that fails fails the request with its error, once', async () => {
      const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: (hostname, options, callback) => callback(Object.assign(new Error('no'), { code: 'ENOTFOUND' })) });
      const err = await requestError(request('http://nowhere.test/', { agent }));
      assert.equal(err.code, 'ENOTFOUND');
      assert.equal(agent.createSocketErrorCount, 1);
      assert.deepEqual(attempts.messages, []);
    });

    it('DEBUG names the winning address and after how long', async () => {
      const host = keep(await startHost('http:', { '127.0.0.2': 'refuse', '127.0.0.3': 'serve' }));
      const agent = agentOf(HttpAgent, { autoSelectFamily: true, lookup: host.lookup });
      await request(host.url('/'), { agent });
      assert.ok(debugLines.logged(/connect alt\.localhost:\d+: 127\.0\.0\.3 won in [\d.]+ ms \(attempt 2 of 2\)/), debugLines.lines.join('\n'));
    });
  });

  describe('options', () => {
    it('invalid values get the agent\'s errors, naming the option; the caller\'s object is only read', () => {
      assert.throws(() => new HttpAgent({ autoSelectFamily: 'sometimes' }), { code: 'ERR_INVALID_ARG_TYPE', message: /"autoSelectFamily"/ });
      assert.throws(() => new HttpAgent({ autoSelectFamilyAttemptTimeout: 0 }), { code: 'ERR_OUT_OF_RANGE', message: /"autoSelectFamilyAttemptTimeout"/ });
      assert.throws(() => new HttpAgent({ autoSelectFamilyAttemptTimeout: 'soon' }), { code: 'ERR_INVALID_ARG_TYPE' });
      assert.throws(() => createFetch({ autoSelectFamilyAttemptTimeout: -1 }), { code: 'ERR_OUT_OF_RANGE' });
      const options = Object.freeze({ autoSelectFamily: 'true', autoSelectFamilyAttemptTimeout: '1s' });
      const agent = new HttpAgent(options);
      assert.equal(agent.options.autoSelectFamily, true);
      assert.equal(agent.options.autoSelectFamilyAttemptTimeout, 1000);
      agent.destroy();
    });

    it('the Connection Attempt Delay: Node\'s floor of 10 ms, and Node\'s default where unset', () => {
      assert.equal(attemptDelay(5), 10);
      assert.equal(attemptDelay(300), 300);
      assert.equal(attemptDelay(undefined), 250);
    });
  });

  describe('attempt order (properties)', () => {
    const address = fc.oneof(
      fc.ipV4().map((a) => ({ address: a, family: 4 })),
      fc.ipV6().map((a) => ({ address: a, family: 6 })),
    );

    it('every address is tried once, families alternate from the first answer\'s, each in the resolver\'s order', () => {
      fc.assert(fc.property(fc.array(address, { maxLength: 12 }), (list) => {
        const order = interleave(list);
        const unique = [...new Map(list.map((entry) => [entry.address, entry])).values()];
        assert.equal(order.length, unique.length);
        assert.deepEqual(new Set(order.map((entry) => entry.address)), new Set(unique.map((entry) => entry.address)));
        if (order.length > 0) assert.equal(order[0].family, list[0].family);
        for (const family of [4, 6]) {
          assert.deepEqual(order.filter((e) => e.family === family).map((e) => e.address), unique.filter((e) => e.family === family).map((e) => e.address));
        }
        // Alternating while both families have addresses left.
        for (let i = 1; i < order.length; i++) {
          const rest = order.slice(i);
          if (order[i].family === order[i - 1].family) assert.ok(rest.every((e) => e.family === order[i].family));
        }
      }));
    });

    // A simulated race: events in any order; the decisions are next()'s.
    it('simulated: every address starts once, in order; the race fails only when every attempt failed', () => {
      fc.assert(fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.boolean(), { maxLength: 40 }), (total, events) => {
        let started = 0;
        let pending = 0;
        let failed = false;
        const act = (event) => {
          const action = next(event, started, total, pending);
          if (action === 'start') {
            started++;
            pending++;
          } else if (action === 'fail') {
            failed = true;
          }
        };
        act('begin');
        for (const failure of events) {
          if (failed) break;
          if (failure && pending > 0) {
            pending--;
            act('failure');
          } else if (started < total) {
            act('delay');
          }
          assert.ok(started <= total);
          if (failed) assert.equal(pending, 0);
        }
        if (failed) assert.equal(started, total);
      }));
    });
  });
});
