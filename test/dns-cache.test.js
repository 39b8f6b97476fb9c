'use strict';

// lib/dns.js on its own, against a real DNS server on loopback (UDP, dns2):
// the settings of the `dns` option, dns.lookup's contract, the cache and its
// shared queries, the fallback to dns.lookup, the refresh of hosts in use,
// serve-stale on failures, spread, and the diagnostics_channel events.
// test/dns.test.js covers the agent that uses it.
const assert = require('node:assert/strict');
const asyncHooks = require('node:async_hooks');
const dc = require('node:diagnostics_channel');
const dns = require('node:dns');
const os = require('node:os');
const { promisify } = require('node:util');
const { constants } = require('..');
const { DnsCache, dnsSettings, DEFAULTS } = require('../lib/dns/cache');
const { DnsNotFoundError } = require('../lib/errors');
const { createDnsServer } = require('./support/dns_server');
const { closeAfterEach } = require('./support/cleanup');
const { captureDebug } = require('./support/debug_lines');
const { delay, waitFor } = require('./support/request');

/** Resolves with the next message on `steady-agent:dns:<name>` about `agent` (that `accept` takes). */
function nextEvent(name, agent, accept = () => true) {
  return new Promise((resolve) => {
    const channel = `steady-agent:dns:${name}`;
    const listener = (message) => {
      if (message.agent !== agent || !accept(message)) return;
      dc.unsubscribe(channel, listener);
      resolve(message);
    };
    dc.subscribe(channel, listener);
  });
}

/** Every message on `steady-agent:dns:<name>` about `agent`, until stop(). */
function collect(name, agent) {
  const channel = `steady-agent:dns:${name}`;
  const messages = [];
  const listener = (message) => { if (message.agent === agent) messages.push(message); };
  dc.subscribe(channel, listener);
  messages.stop = () => dc.unsubscribe(channel, listener);
  return messages;
}

describe('dns option settings', () => {
  it('true takes every default; a boolean\'s other spellings are read as booleans', () => {
    assert.deepEqual({ ...dnsSettings(true) }, { resolver: undefined, ...DEFAULTS });
    assert.deepEqual({ ...dnsSettings('true') }, { resolver: undefined, ...DEFAULTS });
    assert.deepEqual({ ...dnsSettings(1) }, { resolver: undefined, ...DEFAULTS });
    assert.equal(dnsSettings(false), null);
    assert.equal(dnsSettings('0'), null);
    assert.deepEqual(DEFAULTS, { minTtl: 1000, maxTtl: 300000, lookupTtl: 10000, staleTtl: 300000, spread: false });
  });

  it('an object: durations as numbers or strings, a boolean spread, the caller\'s object untouched', () => {
    const resolver = new dns.promises.Resolver();
    const input = Object.freeze({ resolver, minTtl: '2s', maxTtl: 60000, lookupTtl: ' 5 s ', staleTtl: '1m', spread: 'true' });
    const settings = dnsSettings(input);
    assert.deepEqual({ ...settings }, { resolver, minTtl: 2000, maxTtl: 60000, lookupTtl: 5000, staleTtl: 60000, spread: true });
    assert.ok(Object.isFrozen(settings));
    assert.notEqual(settings, input);
  });

  it('a callback-style dns.Resolver, or anything with resolve4 and resolve6, is a resolver', () => {
    const callbackResolver = new dns.Resolver();
    assert.equal(dnsSettings({ resolver: callbackResolver }).resolver, callbackResolver);
    const wrapper = { resolve4: async () => [], resolve6: async () => [] };
    assert.equal(dnsSettings({ resolver: wrapper }).resolver, wrapper);
  });

  it('a minTtl above 5 minutes raises the default maxTtl with it', () => {
    assert.equal(dnsSettings({ minTtl: '10m' }).maxTtl, 600000);
  });

  it('refuses bad values, naming the setting and the value', () => {
    const cases = [
      [5, 'ERR_INVALID_ARG_TYPE', /"dns" option must be true, false, or an object of settings \(resolver, minTtl, maxTtl, lookupTtl, staleTtl, spread\)\. Received 5/],
      ['on', 'ERR_INVALID_ARG_TYPE', /"dns" option must be true, false, or an object.*Received 'on'/],
      [[], 'ERR_INVALID_ARG_TYPE', /"dns" option/],
      [{ minTTL: 5 }, 'ERR_OUT_OF_RANGE', /"dns" option must be an object of the settings .*; "minTTL" is none of them/],
      [{ minTtl: 0 }, 'ERR_OUT_OF_RANGE', /"dns\.minTtl" option must be a duration of at least 1 ms.*Received 0/],
      [{ minTtl: 'soon' }, 'ERR_INVALID_ARG_TYPE', /"dns\.minTtl" option.*Received 'soon'/],
      [{ minTtl: 5000, maxTtl: 1000 }, 'ERR_OUT_OF_RANGE', /"dns\.maxTtl" option must be a duration no shorter than dns\.minTtl \(5000 ms\)\. Received 1000/],
      [{ staleTtl: -1 }, 'ERR_OUT_OF_RANGE', /"dns\.staleTtl"/],
      [{ staleTtl: 2 ** 31 }, 'ERR_OUT_OF_RANGE', /"dns\.staleTtl" option must be a duration from 0 to 2147483647 ms/],
      [{ lookupTtl: {} }, 'ERR_INVALID_ARG_TYPE', /"dns\.lookupTtl"/],
      [{ spread: 'yes' }, 'ERR_INVALID_ARG_TYPE', /"dns\.spread" option must be a boolean/],
      [{ resolver: '127.0.0.1' }, 'ERR_INVALID_ARG_TYPE', /"dns\.resolver" option must be a dns\.Resolver or dns\.promises\.Resolver\. Received '127\.0\.0\.1'/],
      [{ resolver: { resolve4() {} } }, 'ERR_INVALID_ARG_TYPE', /"dns\.resolver"/],
    ];
    for (const [value, code, message] of cases) {
      assert.throws(() => dnsSettings(value), (err) => {
        assert.equal(err.code, code, `${JSON.stringify(value)}: ${err.message}`);
        assert.match(err.message, message);
        return true;
      });
    }
  });
});

describe('dns cache', () => {
  const { keep } = closeAfterEach();
  const caches = [];
  afterEach(() => { for (const cache of caches.splice(0)) cache.stop(); });

  /** A cache over `server`, with `settings`; `changes` collects onChange calls. */
  function cacheFor(server, settings = {}) {
    const agent = { name: 'test agent' };
    const changes = [];
    let changed = null;
    const cache = new DnsCache(dnsSettings({ resolver: server.resolver(), ...settings }), {
      agent,
      onChange(host, removed, addresses) {
        changes.push({ host, removed, addresses });
        changed?.();
      },
    });
    caches.push(cache);
    const lookup = promisify(cache.lookup);
    const nextChange = () => new Promise((resolve) => { changed = resolve; });
    return { cache, agent, changes, nextChange, lookup };
  }

  describe('the lookup contract', () => {
    let server;
    beforeEach(async () => {
      server = keep(await createDnsServer({
        'svc.test': { A: ['127.0.0.2', '127.0.0.3'], AAAA: ['::1'], ttl: 60 },
        'v4only.test': { A: ['127.0.0.2'], ttl: 60 },
      }));
    });

    it('all: true gives every address of both families, IPv4 first, as { address, family }', async () => {
      const { lookup } = cacheFor(server);
      assert.deepEqual(await lookup('svc.test', { all: true }), [
        { address: '127.0.0.2', family: 4 },
        { address: '127.0.0.3', family: 4 },
        { address: '::1', family: 6 },
      ]);
    });

    it('one address: the first, with its family; family 4, 6, \'IPv4\', \'IPv6\' and a bare number are honoured', async () => {
      const { cache } = cacheFor(server);
      const one = (options) => new Promise((resolve, reject) => {
        cache.lookup('svc.test', options, (err, address, family) => (err ? reject(err) : resolve([address, family])));
      });
      assert.deepEqual(await one({}), ['127.0.0.2', 4]);
      assert.deepEqual(await one({ family: 6 }), ['::1', 6]);
      assert.deepEqual(await one({ family: 'IPv6' }), ['::1', 6]);
      assert.deepEqual(await one({ family: 4 }), ['127.0.0.2', 4]);
      assert.deepEqual(await one({ family: 'IPv4' }), ['127.0.0.2', 4]);
      assert.deepEqual(await one(6), ['::1', 6]);
      const noOptions = await new Promise((resolve) => cache.lookup('svc.test', (...args) => resolve(args)));
      assert.deepEqual(noOptions, [null, '127.0.0.2', 4]);
      const nullOptions = await new Promise((resolve) => cache.lookup('svc.test', null, (...args) => resolve(args)));
      assert.deepEqual(nullOptions, [null, '127.0.0.2', 4]);
    });

    it('a family dns.lookup refuses is refused with dns.lookup\'s own error, without a query', () => {
      const { cache } = cacheFor(server);
      const refusal = (lookup) => {
        try {
          lookup('svc.test', { family: 5 }, () => assert.fail('no callback for a bad argument'));
        } catch (err) {
          return [err.name, err.code, err.message];
        }
        return null;
      };
      assert.deepEqual(refusal(cache.lookup), refusal(dns.lookup));
      assert.equal(refusal(cache.lookup)[1], 'ERR_INVALID_ARG_VALUE');
      assert.equal(server.total, 0);
    });

    it('order: ipv6first and verbatim: false reorder by family; the default result order is dns\'s', async () => {
      const { lookup } = cacheFor(server);
      const families = async (options) => (await lookup('svc.test', { all: true, ...options })).map((a) => a.family);
      assert.deepEqual(await families({ order: 'ipv6first' }), [6, 4, 4]);
      assert.deepEqual(await families({ order: 'ipv4first' }), [4, 4, 6]);
      assert.deepEqual(await families({ verbatim: false }), [4, 4, 6]);
      assert.deepEqual(await families({ order: 'verbatim' }), [4, 4, 6]);
      assert.deepEqual(await families({ verbatim: true, order: undefined }), [4, 4, 6]);
      assert.deepEqual(await families({ verbatim: true, order: 'ipv6first' }), [6, 4, 4], 'order wins over the legacy verbatim');
    });

    it('hints: V4MAPPED maps IPv4 answers where a name has no IPv6 one; ALL adds them to IPv6 ones', async () => {
      const { lookup } = cacheFor(server);
      assert.deepEqual(await lookup('v4only.test', { family: 6, hints: dns.V4MAPPED, all: true }), [
        { address: '::ffff:127.0.0.2', family: 6 },
      ]);
      assert.deepEqual(await lookup('svc.test', { family: 6, hints: dns.V4MAPPED, all: true }), [{ address: '::1', family: 6 }]);
      assert.deepEqual(await lookup('svc.test', { family: 6, hints: dns.V4MAPPED | dns.ALL, all: true }), [
        { address: '::1', family: 6 },
        { address: '::ffff:127.0.0.2', family: 6 },
        { address: '::ffff:127.0.0.3', family: 6 },
      ]);
      // ADDRCONFIG (what net passes): loopback answers stay whatever the interfaces.
      assert.deepEqual(await lookup('svc.test', { hints: dns.ADDRCONFIG, all: true }), await lookup('svc.test', { all: true }));
    });

    it('a name with no address of the family asked for fails as dns.lookup does (ENOTFOUND)', async () => {
      const { lookup } = cacheFor(server);
      const err = await lookup('v4only.test', { family: 6 }).then(() => null, (e) => e);
      assert.ok(err instanceof DnsNotFoundError);
      assert.deepEqual([err.code, err.errno, err.syscall, err.hostname, err.message],
        ['ENOTFOUND', -3008, 'getaddrinfo', 'v4only.test', 'getaddrinfo ENOTFOUND v4only.test']);
    });

    it('a name neither the server nor the system knows fails with dns.lookup\'s own error', async () => {
      const { cache, lookup } = cacheFor(server);
      await lookup('v4only.test', {});
      const err = await lookup('nowhere.invalid', { all: true }).then(() => null, (e) => e);
      assert.ok(err instanceof Error);
      assert.ok(['ENOTFOUND', 'EAI_AGAIN'].includes(err.code), err.message);
      assert.equal(err.syscall, 'getaddrinfo');
      assert.equal(err.hostname, 'nowhere.invalid');
      // A name with no answer is not in getStats().dns.
      assert.deepEqual(Object.keys(cache.snapshot()), ['v4only.test']);
    });

    it('an IP literal is answered without a query, as dns.lookup answers it', async () => {
      const { lookup } = cacheFor(server);
      assert.deepEqual(await lookup('127.0.0.9', { all: true }), [{ address: '127.0.0.9', family: 4 }]);
      assert.equal(await lookup('::1', {}), '::1');
      assert.equal(server.total, 0);
    });

    it('works with a callback-style dns.Resolver too', async () => {
      const cache = new DnsCache(dnsSettings({ resolver: server.callbackResolver() }), { agent: {}, onChange() {} });
      caches.push(cache);
      assert.deepEqual(await promisify(cache.lookup)('v4only.test', { all: true }), [{ address: '127.0.0.2', family: 4 }]);
    });
  });

  describe('caching', () => {
    it('concurrent lookups of one host share one query; within the TTL no query at all', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 60 } }));
      const { lookup } = cacheFor(server);
      const answers = await Promise.all(Array.from({ length: 20 }, () => lookup('svc.test', {})));
      assert.deepEqual(new Set(answers), new Set(['127.0.0.2']));
      assert.equal(server.queries('svc.test'), 2); // one A, one AAAA
      await lookup('SVC.test', { all: true });
      assert.equal(server.queries('svc.test'), 2);
    });

    it('the record TTL decides, clamped to minTtl and maxTtl', async () => {
      const server = keep(await createDnsServer({
        'short.test': { A: ['127.0.0.2'], ttl: 1 },
        'long.test': { A: ['127.0.0.2'], ttl: 86400 },
        'mid.test': { A: ['127.0.0.2'], AAAA: ['::1'], ttl: 30 },
      }));
      const { cache, lookup } = cacheFor(server, { minTtl: '5s', maxTtl: '1m' });
      await Promise.all(['short.test', 'long.test', 'mid.test'].map((host) => lookup(host, {})));
      const hosts = cache.snapshot();
      assert.equal(hosts['short.test'].ttlMs, 5000);
      assert.equal(hosts['long.test'].ttlMs, 60000);
      assert.equal(hosts['mid.test'].ttlMs, 30000);
      assert.equal(hosts['mid.test'].source, 'dns');
    });

    it('an expired answer is asked for again, and the new one is served', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 1 } }));
      // Every answer expires after 1 ms.
      const { lookup } = cacheFor(server, { minTtl: 1, maxTtl: 1 });
      assert.equal(await lookup('svc.test', {}), '127.0.0.2');
      server.set('svc.test', { A: ['127.0.0.3'], ttl: 1 });
      await delay(20);
      assert.equal(await lookup('svc.test', {}), '127.0.0.3');
      assert.equal(server.queries('svc.test'), 4);
    });
  });

  describe('the fallback to dns.lookup', () => {
    it('localhost goes to dns.lookup without asking the server (RFC 6761)', async () => {
      const server = keep(await createDnsServer());
      const { cache, lookup } = cacheFor(server);
      const expected = await promisify(dns.lookup)('localhost', { all: true, order: 'verbatim' });
      assert.deepEqual(await lookup('localhost', { all: true, order: 'verbatim' }), expected);
      assert.equal(server.total, 0);
      assert.equal(cache.snapshot().localhost.source, 'lookup');
    });

    it('a name only the system knows (this machine\'s host name) resolves through dns.lookup, and the host is remembered', async function () {
      const name = os.hostname().toLowerCase();
      const expected = await promisify(dns.lookup)(name, { all: true, order: 'verbatim' }).catch(() => null);
      if (expected === null || name === 'localhost') this.skip(); // the system cannot resolve it either: nothing to show
      const server = keep(await createDnsServer());
      const { cache, agent, lookup } = cacheFor(server, { lookupTtl: 1, minTtl: 1 });
      const events = collect('lookup', agent);
      try {
        assert.deepEqual(await lookup(name, { all: true, order: 'verbatim' }), expected);
        assert.equal(server.queries(name), 2);
        assert.equal(cache.snapshot()[name].source, 'lookup');
        // Its answer expires at once (lookupTtl 1 ms): the next lookup asks
        // the system again, never the server.
        await delay(20);
        assert.deepEqual(await lookup(name, { all: true, order: 'verbatim' }), expected);
        assert.equal(server.queries(name), 2);
        assert.deepEqual(events.map((e) => e.source), ['lookup', 'lookup']);
      } finally {
        events.stop();
      }
    });
  });

  describe('refresh of hosts in use', () => {
    it('a tracked host is resolved again as its answer expires: addresses that left are reported', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2', '127.0.0.4'], ttl: 1 } }));
      const { cache, agent, changes, nextChange, lookup } = cacheFor(server, { minTtl: 200, maxTtl: 200 });
      const events = collect('change', agent);
      try {
        await lookup('svc.test', {});
        cache.track('svc.test');
        server.set('svc.test', { A: ['127.0.0.3', '127.0.0.4'], ttl: 1 });
        // No lookup from here on: the refresh alone finds the change.
        await nextChange();
        assert.deepEqual(changes, [{
          host: 'svc.test',
          removed: ['127.0.0.2'],
          addresses: [{ address: '127.0.0.3', family: 4 }, { address: '127.0.0.4', family: 4 }],
        }]);
        assert.equal(cache.left('svc.test', '127.0.0.2'), true);
        assert.equal(cache.left('svc.test', '::ffff:127.0.0.2'), true);
        assert.equal(cache.left('svc.test', '127.0.0.4'), false);
        assert.equal(cache.left('SVC.TEST', '127.0.0.3'), false);
        assert.equal(cache.left('unknown.test', '127.0.0.2'), false);
        assert.deepEqual(events.map(({ host, removed, added }) => ({ host, removed, added })),
          [{ host: 'svc.test', removed: ['127.0.0.2'], added: ['127.0.0.3'] }]);
      } finally {
        events.stop();
      }
    });

    it('one unref\'d timer per host in use, cleared when its last socket goes and by stop()', async () => {
      const server = keep(await createDnsServer({ 'a.test': { A: ['127.0.0.2'], ttl: 60 }, 'b.test': { A: ['127.0.0.2'], ttl: 60 } }));
      const { cache, lookup } = cacheFor(server);
      await lookup('a.test', {});
      await lookup('b.test', {});
      const timers = new Map();
      const hook = asyncHooks.createHook({
        init(id, type, _trigger, resource) { if (type === 'Timeout') timers.set(id, resource); },
        destroy(id) { timers.delete(id); },
      }).enable();
      try {
        cache.track('a.test');
        cache.track('a.test');
        cache.track('b.test');
        assert.equal(timers.size, 2);
        for (const timer of timers.values()) assert.equal(timer.hasRef(), false);
        const [timerA, timerB] = timers.keys();
        // async_hooks reports a cleared timer's destroy a moment later.
        const settled = () => new Promise(setImmediate);
        cache.untrack('a.test');
        await settled();
        assert.ok(timers.has(timerA), 'a.test still has a socket');
        cache.untrack('a.test');
        await settled();
        assert.ok(!timers.has(timerA), 'cleared with the last socket');
        cache.untrack('a.test'); // one too many: nothing to do
        cache.stop();
        await settled();
        assert.ok(!timers.has(timerB), 'cleared by stop()');
        assert.equal(timers.size, 0);
      } finally {
        hook.disable();
      }
    });

    it('the refresh of a host whose TTL is past the largest timer waits the largest timer', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 30 * 86400 } }));
      const { cache, lookup } = cacheFor(server, { maxTtl: 2 ** 31 - 1 });
      await lookup('svc.test', {});
      const delays = [];
      const hook = asyncHooks.createHook({
        init(_id, type, _trigger, resource) { if (type === 'Timeout') delays.push(resource._idleTimeout); },
      }).enable();
      try {
        cache.track('svc.test');
      } finally {
        hook.disable();
      }
      assert.equal(delays.length, 1);
      assert.ok(delays[0] <= 2 ** 31 - 1 && delays[0] > 2 ** 31 - 1 - 1001, String(delays[0]));
    });
  });

  describe('failures keep the last answer (serve-stale)', () => {
    for (const [mode, code, fail] of [
      ['servfail', 'ESERVFAIL', (server) => { server.mode = 'servfail'; }],
      ['refused', 'EREFUSED', (server) => { server.mode = 'refused'; }],
      ['silent', 'ETIMEOUT', (server) => { server.mode = 'silent'; }],
      ['an empty answer', 'ENODATA', (server) => server.set('svc.test', { A: [] })],
      ['NXDOMAIN', 'ENOTFOUND', (server) => server.remove('svc.test')],
    ]) {
      it(`${mode}: the last answer is served, nothing is reported as gone, a stale event says why`, async () => {
        const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 1 } }));
        // Queried again every 200 ms (the 1 s TTL clamped), failing or not.
        const { cache, agent, changes, lookup } = cacheFor(server, { staleTtl: '1m', minTtl: 200, maxTtl: 200 });
        await lookup('svc.test', {});
        cache.track('svc.test');
        const stale = nextEvent('stale', agent);
        fail(server);
        const message = await stale;
        assert.equal(message.host, 'svc.test');
        assert.equal(message.error.code, code);
        assert.deepEqual(message.addresses, [{ address: '127.0.0.2', family: 4 }]);
        assert.ok(message.remainingMs > 0 && message.remainingMs <= 60000, String(message.remainingMs));
        assert.deepEqual(await lookup('svc.test', { all: true }), [{ address: '127.0.0.2', family: 4 }]);
        assert.equal(cache.snapshot()['svc.test'].stale, true);
        assert.equal(cache.left('svc.test', '127.0.0.2'), false);
        assert.deepEqual(changes, []);

        // Answered again: fresh, and still no change.
        const answered = nextEvent('lookup', agent, (m) => m.error === null);
        server.mode = 'answer';
        server.set('svc.test', { A: ['127.0.0.2'], ttl: 1 });
        await answered;
        assert.equal(cache.snapshot()['svc.test'].stale, false);
        assert.deepEqual(changes, []);
      });
    }

    it('while the query for an expired answer is under way, new lookups get that answer without waiting', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 1 } }));
      // Every answer expires after 1 ms.
      const { lookup } = cacheFor(server, { minTtl: 1, maxTtl: 1 });
      await lookup('svc.test', {});
      server.mode = 'silent';
      await delay(20);
      const settled = [];
      const first = lookup('svc.test', {}).then((address) => settled.push(['first', address]));
      const second = lookup('svc.test', {}).then((address) => settled.push(['second', address]));
      await Promise.all([first, second]);
      // The first started the query and waited for it to time out (then got
      // the stale answer); the second was answered while it was under way.
      assert.deepEqual(settled, [['second', '127.0.0.2'], ['first', '127.0.0.2']]);
    });

    it('a lookup that waited for its query gets that answer, though its TTL ran out before the callback', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 1 } }));
      // Every answer expires after 1 ms and is never served stale; the
      // event loop is held 5 ms between the answer and the lookup's callback.
      const { agent, lookup } = cacheFor(server, { minTtl: 1, maxTtl: 1, staleTtl: 0 });
      const busy = (message) => {
        if (message.agent !== agent) return;
        const until = performance.now() + 5;
        while (performance.now() < until);
      };
      dc.subscribe('steady-agent:dns:lookup', busy);
      try {
        assert.equal(await lookup('svc.test', {}), '127.0.0.2');
        // The answer is past its TTL now: the next lookup asks again, and
        // gets that answer too.
        assert.equal(await lookup('svc.test', {}), '127.0.0.2');
      } finally {
        dc.unsubscribe('steady-agent:dns:lookup', busy);
      }
    });

    it('staleTtl bounds it: past that, a lookup fails', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 1 } }));
      // Every answer expires after 100 ms, and is not served stale at all.
      // (Not 1 ms: the first lookup would fail too on a busy machine, its
      // answer expired before its callback ran.)
      const { agent, lookup } = cacheFor(server, { minTtl: 100, maxTtl: 100, staleTtl: 0 });
      await lookup('svc.test', {});
      server.mode = 'servfail';
      await delay(150);
      const failed = nextEvent('lookup', agent);
      const err = await lookup('svc.test', {}).then(() => null, (e) => e);
      assert.ok(err instanceof Error);
      // No answer left to serve; the system's lookup does not know the name either.
      assert.equal(err.hostname, 'svc.test');
      assert.equal(err.syscall, 'getaddrinfo');
      assert.equal((await failed).error, err);
    });
  });

  describe('spread', () => {
    it('off: every lookup gets the answer\'s first address', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2', '127.0.0.3'], ttl: 60 } }));
      const { lookup } = cacheFor(server);
      const got = [];
      for (let i = 0; i < 4; i++) got.push(await lookup('svc.test', {}));
      assert.deepEqual(got, ['127.0.0.2', '127.0.0.2', '127.0.0.2', '127.0.0.2']);
    });

    it('on: round robin within a family, families in their order', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2', '127.0.0.3', '127.0.0.4'], AAAA: ['::1', '::2'], ttl: 60 } }));
      const { lookup } = cacheFor(server, { spread: true });
      const got = [];
      for (let i = 0; i < 4; i++) got.push(await lookup('svc.test', {}));
      assert.deepEqual(got, ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.2']);
      const all = await lookup('svc.test', { all: true });
      // The fifth turn: IPv4 starts at its second address, IPv6 (two) at its first.
      assert.deepEqual(all.map((a) => a.address), ['127.0.0.3', '127.0.0.4', '127.0.0.2', '::1', '::2']);
    });
  });

  describe('events', () => {
    it('dns:lookup tells the host, the source, the answer, its TTL and how long the query took', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 30 } }));
      const { agent, lookup } = cacheFor(server);
      const event = nextEvent('lookup', agent);
      await lookup('svc.test', {});
      const message = await event;
      assert.equal(message.agent, agent);
      assert.equal(message.host, 'svc.test');
      assert.equal(message.source, 'dns');
      assert.deepEqual(message.addresses, [{ address: '127.0.0.2', family: 4 }]);
      assert.equal(message.ttlMs, 30000);
      assert.equal(message.error, null);
      assert.ok(message.durationMs >= 0);
    });

    it('dns:retire is published by retiring()', () => {
      const cache = new DnsCache(dnsSettings(true), { agent: 'an agent', onChange() {} });
      caches.push(cache);
      const messages = collect('retire', 'an agent');
      try {
        const socket = { name: 'a socket' };
        cache.retiring(socket, 'svc.test', '127.0.0.2', true);
        assert.deepEqual(messages.map(({ host, address, socket: s, free }) => ({ host, address, socket: s, free })),
          [{ host: 'svc.test', address: '127.0.0.2', socket, free: true }]);
      } finally {
        messages.stop();
      }
    });
  });

  // DEBUG=steady-agent: each answer, change, failure and retirement is one
  // line, and nothing is logged while it is off.
  describe('debug output', () => {
    const debugOutput = captureDebug();
    const logged = (pattern) => debugOutput.logged(pattern);

    it('logs answers, what changed, a failure served stale, an answer again, and an answer past staleTtl', async () => {
      const server = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.2'], ttl: 1 } }));
      const { cache, agent, changes, lookup } = cacheFor(server, { minTtl: 200, maxTtl: 200, staleTtl: 300 });
      await lookup('svc.test', {});
      cache.track('svc.test');
      assert.ok(logged(/steady-agent dns: svc\.test is 127\.0\.0\.2 \(dns, 200 ms\)$/), debugOutput.lines.join('\n'));

      // An address came, none left: logged, and nothing to retire.
      let changed = nextEvent('change', agent);
      server.set('svc.test', { A: ['127.0.0.2', '127.0.0.4'], ttl: 1 });
      await changed;
      assert.ok(logged(/dns: svc\.test changed: none left, 127\.0\.0\.4 came$/), debugOutput.lines.join('\n'));
      assert.deepEqual(changes, []);
      changed = nextEvent('change', agent);
      server.set('svc.test', { A: ['127.0.0.4'], ttl: 1 });
      await changed;
      assert.ok(logged(/dns: svc\.test changed: 127\.0\.0\.2 left, none came$/), debugOutput.lines.join('\n'));
      assert.equal(changes.length, 1);

      const stale = nextEvent('stale', agent);
      server.mode = 'servfail';
      await stale;
      assert.ok(logged(/dns: svc\.test: query failed \(ESERVFAIL\): the last answer is served for up to \d+ ms more$/), debugOutput.lines.join('\n'));
      const answered = nextEvent('lookup', agent, (m) => m.error === null);
      server.mode = 'answer';
      await answered;
      assert.ok(logged(/dns: svc\.test is 127\.0\.0\.4 \(dns, 200 ms\), answered again$/), debugOutput.lines.join('\n'));

      // Failing past staleTtl (300 ms after the answer expired): the answer
      // is dropped, and the system's lookup (which does not know the name)
      // has the last word.
      server.mode = 'servfail';
      await waitFor(() => logged(/dns: svc\.test: no answer \((ENOTFOUND|EAI_AGAIN)\) and the last one is past staleTtl$/));
      const err = await lookup('svc.test', {}).then(() => null, (e) => e);
      assert.equal(err?.hostname, 'svc.test');
    });

    it('logs a retired socket by its name, or as "a socket"', () => {
      const cache = new DnsCache(dnsSettings(true), { agent: 'an agent', onChange() {} });
      caches.push(cache);
      cache.retiring({ [constants.SOCKET_NAME]: 'sock[3#svc.test:80:]' }, 'svc.test', '127.0.0.2', true);
      cache.retiring({}, 'svc.test', '127.0.0.3', false);
      assert.ok(logged(/dns: svc\.test: sock\[3#svc\.test:80:\] to 127\.0\.0\.2, which left the answer, is retired$/), debugOutput.lines.join('\n'));
      assert.ok(logged(/dns: svc\.test: a socket to 127\.0\.0\.3, which left the answer, is retired$/), debugOutput.lines.join('\n'));
    });
  });
});
