'use strict';

// Options other libraries name differently (connectionTimeout, undici's
// keepAliveMaxTimeout, npm's agent's timeouts...) pass through like any
// unknown key, and warn once per key per process, naming ours: a message
// that says whose name it is, not "did you mean". None is applied. got's
// `timeout` object is refused by the timeout option, naming connectTimeout.
// Warnings are observed in child processes: "once" is per process.
const assert = require('node:assert/strict');
const { HttpAgent, HttpsAgent } = require('..');
const { runCollectingWarnings } = require('./support/warnings');

function run(code) {
  const { stdout, ...rest } = runCollectingWarnings(code);
  assert.equal(stdout, '');
  return rest;
}

const CODE = 'STEADY_AGENT_OTHER_LIBRARY_OPTION';

// key -> [whose name, the words naming ours]
const SYNONYMS = {
  connectionTimeout: ['another library\'s', 'calls it "connectTimeout"'],
  idleTimeout: ['another library\'s', 'calls it "freeSocketTimeout"'],
  socketTTL: ['another library\'s', 'calls it "socketActiveTTL"'],
  ttl: ['another library\'s', 'calls it "socketActiveTTL"'],
  proxyURL: ['another library\'s', 'calls it "proxy"'],
  keepAliveMaxTimeout: ['undici\'s', '"freeSocketTimeout" caps the idle time a server\'s Keep-Alive hint may give'],
  timeouts: ['npm\'s agent\'s', '"connectTimeout" (its connection), "timeout" (its idle'],
};

describe('options named as other libraries name them', () => {
  for (const [key, [library, ours]] of Object.entries(SYNONYMS)) {
    it(`${key}: one warning naming ours, and the setting is not applied`, () => {
      const value = key === 'proxyURL' ? '"http://127.0.0.1:1"' : key === 'timeouts' ? '{ connection: 1, idle: 2 }' : '1';
      const { warnings, result } = run(`
        const a = new HttpAgent({ ${key}: ${value} });
        const b = new HttpsAgent({ ${key}: ${value} });
        globalThis.result = {
          options: [a, b].map((agent) => ({ free: agent.options.freeSocketTimeout, timeout: agent.options.timeout,
            ttl: agent.options.socketActiveTTL, connect: agent.options.connectTimeout, proxy: agent.options.proxy ?? null })),
        };
        a.destroy(); b.destroy();
      `);
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      const [warning] = warnings;
      assert.equal(warning.name, 'Warning');
      assert.equal(warning.code, CODE);
      assert.ok(warning.message.startsWith(`Option "${key}" is ${library} name; steady-agent `), warning.message);
      assert.ok(warning.message.includes(ours), warning.message);
      assert.ok(warning.message.endsWith(`"${key}" is not applied.`), warning.message);
      assert.doesNotMatch(warning.message, /did you mean/);
      const defaults = { free: 4000, timeout: 8000, ttl: 0, connect: 0, proxy: null };
      assert.deepEqual(result.options, [defaults, defaults]);
    });
  }

  it('warns once per key per process, and a misspelling still gets "did you mean"', () => {
    const { warnings } = run(`
      for (let i = 0; i < 3; i++) new HttpAgent({ connectionTimeout: 1, idleTimeout: 2, maxSocket: 1 }).destroy();
      new HttpsAgent({ connectionTimeout: 1 }).destroy();
    `);
    assert.deepEqual(warnings.map((w) => w.code), [CODE, CODE, 'STEADY_AGENT_UNKNOWN_OPTION']);
    assert.equal(warnings[2].message, 'Unknown option "maxSocket"; did you mean "maxSockets"?');
  });

  it('keepAliveTimeout (agentkeepalive 3\'s and undici\'s name) is still applied, with its DeprecationWarning naming both', () => {
    const { warnings, result } = run(`
      const a = new HttpAgent({ keepAliveTimeout: 1234 });
      globalThis.result = a.options.freeSocketTimeout;
      a.destroy();
    `);
    assert.equal(result, 1234);
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0].code, 'STEADY_AGENT_DEP_KEEPALIVETIMEOUT');
    assert.match(warnings[0].message, /undici's/);
    assert.match(warnings[0].message, /"freeSocketTimeout"/);
  });

  it('got\'s timeout object is refused, naming connectTimeout and what timeout means here', () => {
    for (const Agent of [HttpAgent, HttpsAgent]) {
      assert.throws(() => new Agent({ timeout: { connect: 1000 } }), (err) => {
        assert.equal(err.name, 'InvalidOptionTypeError');
        assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
        assert.equal(err.option, 'timeout');
        assert.match(err.message, /^The "timeout" option must be .*how long an active socket may be idle/);
        assert.match(err.message, /got's timeout; its connect phase is steady-agent's "connectTimeout"/);
        assert.match(err.message, /Received \{ connect: 1000 \}$/);
        return true;
      });
    }
    const agent = new HttpAgent();
    try {
      assert.throws(() => { agent.options.timeout = { request: 5 }; }, { option: 'timeout', message: /"connectTimeout"/ });
      assert.equal(agent.options.timeout, 8000);
    } finally {
      agent.destroy();
    }
  });
});
