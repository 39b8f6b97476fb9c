'use strict';

// Deprecations warn once, through process.emitWarning. Each case runs in a
// child process: "once" is per process, and mocha runs with --throw-deprecation.
const assert = require('node:assert/strict');
const { runCollectingWarnings: run } = require('./support/warnings');

describe('deprecations', () => {
  const cases = [
    ['keepAliveTimeout option', 'const a = new HttpAgent({ keepAliveTimeout: 1234 }); globalThis.result = a.options.freeSocketTimeout; a.destroy(); new HttpAgent({ keepAliveTimeout: 5 }).destroy();', 'STEADY_AGENT_DEP_KEEPALIVETIMEOUT', 1234],
    ['freeSocketKeepAliveTimeout option', 'const a = new HttpsAgent({ freeSocketKeepAliveTimeout: \'2s\' }); globalThis.result = a.options.freeSocketTimeout; a.destroy(); new HttpAgent({ freeSocketKeepAliveTimeout: 5 }).destroy();', 'STEADY_AGENT_DEP_FREESOCKETKEEPALIVETIMEOUT', 2000],
    ['agent.freeSocketKeepAliveTimeout getter', 'const a = new HttpAgent({ freeSocketTimeout: 3000 }); globalThis.result = a.freeSocketKeepAliveTimeout; a.freeSocketKeepAliveTimeout; a.destroy();', 'STEADY_AGENT_DEP_GETTER_FREESOCKETKEEPALIVETIMEOUT', 3000],
    ['agent.timeout getter', 'const a = new HttpAgent({ timeout: 7000 }); globalThis.result = a.timeout; a.timeout; a.destroy();', 'STEADY_AGENT_DEP_GETTER_TIMEOUT', 7000],
    ['agent.socketActiveTTL getter', 'const a = new HttpsAgent({ socketActiveTTL: \'1m\' }); globalThis.result = a.socketActiveTTL; a.socketActiveTTL; a.destroy();', 'STEADY_AGENT_DEP_GETTER_SOCKETACTIVETTL', 60000],
  ];

  for (const [title, code, warningCode, expected] of cases) {
    it(`${title}: works, warns once with a DeprecationWarning, prints nothing to stdout`, () => {
      const { stdout, warnings, result } = run(code);
      assert.equal(result, expected);
      assert.equal(stdout, '');
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.equal(warnings[0].name, 'DeprecationWarning');
      assert.equal(warnings[0].code, warningCode);
    });
  }

  it('freeSocketTimeout wins over the deprecated aliases', () => {
    const { result } = run('const a = new HttpAgent({ freeSocketTimeout: 100, keepAliveTimeout: 200, freeSocketKeepAliveTimeout: 300 }); globalThis.result = a.options.freeSocketTimeout; a.destroy();');
    assert.equal(result, 100);
  });

  it('the aliases are not passed on to core\'s options', () => {
    const { result } = run('const a = new HttpAgent({ keepAliveTimeout: 200 }); globalThis.result = [\'keepAliveTimeout\' in a.options, a.options.freeSocketTimeout]; a.destroy();');
    assert.deepEqual(result, [false, 200]);
  });

  it('the current options warn nothing', () => {
    const { warnings } = run('const a = new HttpAgent({ freeSocketTimeout: 1, timeout: 2, socketActiveTTL: 3 }); a.getCurrentStatus(); a.statusChanged; a.destroy();');
    assert.deepEqual(warnings, []);
  });
});
