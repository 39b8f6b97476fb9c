'use strict';

// A misspelled option passes through like any unknown key (it may be a socket
// or TLS option), but a near miss of one of ours warns, once per key per
// process, with the code STEADY_AGENT_UNKNOWN_OPTION. The warnings are
// observed in child processes: "once" is per process, and a warning emitted
// here would print into the test run's output.
const assert = require('node:assert/strict');
const { nearMiss } = require('../lib/option_typos');
const { runCollectingWarnings } = require('./support/warnings');

/** Runs `code` in a child process; its warnings and result, having printed nothing. */
function run(code) {
  const { stdout, ...rest } = runCollectingWarnings(code);
  assert.equal(stdout, '');
  return rest;
}

const warning = (key, suggestion) => ({
  name: 'Warning',
  code: 'STEADY_AGENT_UNKNOWN_OPTION',
  message: `Unknown option "${key}"; did you mean "${suggestion}"?`,
});

describe('misspelled options', () => {
  it('warns once of each near miss, and the agent works with the key passed through and the defaults', () => {
    const { warnings, result } = run(`
      const a = new HttpAgent({ freeSocketTimout: 1000 });
      const b = new HttpsAgent({ freeSocketTimout: 1000, maxSocket: 2 });
      const c = new HttpAgent({ keepalive: false, maxSocket: 3 });
      globalThis.result = {
        freeSocketTimeout: a.options.freeSocketTimeout,
        passedThrough: a.options.freeSocketTimout,
        maxSockets: String(b.maxSockets),
        keepAlive: c.keepAlive,
      };
      for (const agent of [a, b, c]) agent.destroy();
    `);
    assert.deepEqual(warnings, [
      warning('freeSocketTimout', 'freeSocketTimeout'),
      warning('maxSocket', 'maxSockets'),
      warning('keepalive', 'keepAlive'),
    ]);
    assert.deepEqual(result, { freeSocketTimeout: 4000, passedThrough: 1000, maxSockets: 'Infinity', keepAlive: true });
  });

  it('warns of nothing for our options, Node\'s socket, TLS, request and agent options, or unrelated keys', () => {
    const { warnings } = run(`
      new HttpAgent({ keepAlive: true, keepAliveMsecs: 10, freeSocketTimeout: 1, timeout: 2, socketActiveTTL: 3,
        serverTimeoutMargin: 4, learnServerTimeout: true, maxSockets: 5, maxFreeSockets: 6, maxTotalSockets: 7,
        scheduling: 'fifo', noProxy: 'localhost' }).destroy();
      new HttpsAgent({ servername: 'localhost', ca: 'x', rejectUnauthorized: true, maxCachedSessions: 1, noDelay: true,
        keepAliveInitialDelay: 1, localAddress: '127.0.0.1', family: 4, lookup: undefined,
        agentKeepAliveTimeoutBuffer: 1, sessionTimeout: 1, highWaterMark: 1 }).destroy();
      new HttpAgent({ custom: 1, socketTimeout: 1, retries: 2, agent: null }).destroy();
    `);
    assert.deepEqual(warnings, []);
  });

  it('points a near miss of a deprecated name at the name to use, freeSocketTimeout', () => {
    const { warnings, result } = run(`
      const a = new HttpAgent({ keepAliveTimout: 1000, freeSocketKeepAliveTimout: 2000 });
      globalThis.result = a.options.freeSocketTimeout;
      a.destroy();
    `);
    // No DeprecationWarning either: neither deprecated option was given.
    assert.deepEqual(warnings, [
      warning('keepAliveTimout', 'freeSocketTimeout'),
      warning('freeSocketKeepAliveTimout', 'freeSocketTimeout'),
    ]);
    assert.equal(result, 4000);
  });

  it('warns of nothing when the options are refused', () => {
    const { warnings, result } = run(`
      try { new HttpAgent({ maxSocket: 1, timeout: 'soon' }); } catch (err) { globalThis.result = err.code; }
    `);
    assert.equal(result, 'ERR_INVALID_ARG_TYPE');
    assert.deepEqual(warnings, []);
  });

  describe('nearMiss()', () => {
    const ours = new Set(['keepAlive', 'keepAliveMsecs', 'freeSocketTimeout', 'timeout', 'maxSockets',
      'maxFreeSockets', 'proxy', 'noProxy', 'proxyEnv', 'scheduling', 'maxQueue', 'queueTimeout']);

    it('matches a key that differs only in case, or by an edit or two', () => {
      const misses = {
        keepalive: 'keepAlive',
        KEEPALIVE: 'keepAlive',
        keep_alive: 'keepAlive',
        MAX_SOCKETS: 'maxSockets',
        maxSocket: 'maxSockets',
        maxFreeSocket: 'maxFreeSockets',
        Timeout: 'timeout',
        timout: 'timeout',
        tiemout: 'timeout', // a transposition is one edit
        timeouts: 'timeout',
        keepAliveMsec: 'keepAliveMsecs',
        freeSocketTimeOut: 'freeSocketTimeout',
        NO_PROXY: 'noProxy',
        no_proxy: 'noProxy',
        proxyenv: 'proxyEnv',
        Proxy: 'proxy',
        schedulng: 'scheduling',
        maxQueues: 'maxQueue',
        queuetimeout: 'queueTimeout',
      };
      for (const [key, suggestion] of Object.entries(misses)) assert.equal(nearMiss(key, ours), suggestion, key);
    });

    it('leaves alone our own names, Node\'s options and keys too far from ours', () => {
      for (const key of ['keepAlive', 'timeout', 'maxSockets', 'proxy', 'maxQueue', 'port', 'host', 'noDelay', 'servername',
        'maxCachedSessions', 'keepAliveInitialDelay', 'socketTimeout', 'proxyUrl', 'schedule', 'custom', 'ttl']) {
        assert.equal(nearMiss(key, ours), undefined, key);
      }
    });

    it('allows more edits for longer names: one up to 8 characters, two beyond', () => {
      assert.equal(nearMiss('prxoy', ours), 'proxy'); // 5 characters, one transposition
      assert.equal(nearMiss('prxy', ours), 'proxy');
      assert.equal(nearMiss('pxy', ours), undefined); // two edits from a 5-character name
      assert.equal(nearMiss('maxQu', ours), undefined); // three edits from maxQueue
      assert.equal(nearMiss('maxSock', ours), undefined); // three edits from maxSockets
      assert.equal(nearMiss('maxSocks', ours), 'maxSockets'); // two edits from a 10-character name
    });
  });
});
