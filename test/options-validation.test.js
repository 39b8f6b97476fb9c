'use strict';

// Bad options fail at construction, each error naming the option and the
// value: a wrong type is a TypeError (ERR_INVALID_ARG_TYPE), an impossible
// number a RangeError (ERR_OUT_OF_RANGE). Durations accept milliseconds or
// humanized strings ('30s'). The caller's options object is only read.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const { HttpAgent, HttpsAgent } = require('../');
const { createServer, tlsClientOptions } = require('./support/servers');
const { request } = require('./support/request');

const MAX_TIMER = 2 ** 31 - 1;
const root = path.join(__dirname, '..');

// A bad value and the text by which the error message must show it.
const bad = (value, shows) => ({ value, shows });

const WRONG_TYPE = 'wrong type';
const NEGATIVE = 'negative';
const NOT_A_NUMBER = 'NaN';
const INFINITE = 'Infinity';
const UNPARSABLE = 'unparsable duration';
const OUT_OF_RANGE = 'out of range';

// Per kind of option: for each kind of bad input, the values and the error
// class they must raise.
const DURATION = {
  [WRONG_TYPE]: [TypeError, [bad(true, 'true'), bad({}, '{}'), bad([], '[]'), bad(5n, '5n'), bad(() => 1, '[Function')]],
  [NEGATIVE]: [RangeError, [bad(-1, '-1'), bad(-0.5, '-0.5'), bad('-5s', '-5s')]],
  [NOT_A_NUMBER]: [RangeError, [bad(NaN, 'NaN')]],
  [INFINITE]: [RangeError, [bad(Infinity, 'Infinity'), bad(-Infinity, '-Infinity')]],
  [UNPARSABLE]: [TypeError, [bad('soon', 'soon'), bad('3 fortnights', '3 fortnights'), bad('', '\'\''),
    bad('10 parsecs', '10 parsecs'), bad('1e3', '1e3'), bad('   ', '   '), bad('0x10', '0x10')]],
};
const TIMER_DURATION = {
  ...DURATION,
  [OUT_OF_RANGE]: [RangeError, [bad(MAX_TIMER + 1, String(MAX_TIMER + 1)), bad('25d', '25d'), bad('1000y', '1000y')]],
};
// keepAliveMsecs is the delay before TCP keep-alive probes, not a timer: any
// non-negative number, Infinity included, as core's agent takes it.
const PROBE_DELAY = {
  ...DURATION,
  [INFINITE]: [RangeError, [bad(-Infinity, '-Infinity')]],
};
const LONG_DURATION = {
  ...DURATION,
  [OUT_OF_RANGE]: [RangeError, [bad(Number.MAX_SAFE_INTEGER + 2, String(Number.MAX_SAFE_INTEGER + 2))]],
};
const BOOLEAN = {
  [WRONG_TYPE]: [TypeError, [bad('yes', 'yes'), bad('on', 'on'), bad('', '\'\''), bad('t', 't'), bad(2, '2'), bad(0.5, '0.5'),
    bad({}, '{}'), bad(1n, '1n'), bad([true], '[ true ]')]],
  [NEGATIVE]: [TypeError, [bad(-1, '-1')]],
  [NOT_A_NUMBER]: [TypeError, [bad(NaN, 'NaN')]],
  [INFINITE]: [TypeError, [bad(Infinity, 'Infinity')]],
};
const COUNT = {
  // A string is a count only as decimal digits or 'Infinity': never '' as 0.
  [WRONG_TYPE]: [TypeError, [bad('ten', 'ten'), bad('', '\'\''), bad(' ', ' '), bad('1e3', '1e3'), bad('0x10', '0x10'),
    bad('10.5', '10.5'), bad('-1', '-1'), bad('NaN', 'NaN'), bad(true, 'true'), bad({}, '{}'), bad(5n, '5n')]],
  [NEGATIVE]: [RangeError, [bad(-1, '-1'), bad(-Infinity, '-Infinity')]],
  [NOT_A_NUMBER]: [RangeError, [bad(NaN, 'NaN')]],
  [OUT_OF_RANGE]: [RangeError, [bad(0, '0'), bad('0', '\'0\''), bad(' 00 ', '\' 00 \''), bad(1.5, '1.5')]],
};

const OPTIONS = {
  keepAlive: BOOLEAN,
  keepAliveMsecs: PROBE_DELAY,
  freeSocketTimeout: TIMER_DURATION,
  timeout: TIMER_DURATION,
  socketActiveTTL: LONG_DURATION,
  serverTimeoutMargin: TIMER_DURATION,
  learnServerTimeout: BOOLEAN,
  maxSockets: COUNT,
  maxFreeSockets: COUNT,
  // Deprecated aliases of freeSocketTimeout: validated like it, and before
  // the deprecation warning (which --throw-deprecation would turn into the
  // error seen here).
  keepAliveTimeout: TIMER_DURATION,
  freeSocketKeepAliveTimeout: TIMER_DURATION,
};

function assertInvalid(Agent, option, { value, shows }, ErrorClass) {
  const err = (() => {
    try {
      new Agent({ [option]: value }).destroy();
    } catch (caught) {
      return caught;
    }
    return null;
  })();
  assert.ok(err, `${option}: ${shows} must be refused`);
  assert.ok(err instanceof ErrorClass, `${option}: ${shows} threw ${err.name}: ${err.message}`);
  assert.equal(err.code, ErrorClass === TypeError ? 'ERR_INVALID_ARG_TYPE' : 'ERR_OUT_OF_RANGE');
  assert.equal(err.name, ErrorClass === TypeError ? 'InvalidOptionTypeError' : 'InvalidOptionValueError');
  assert.equal(err.option, option);
  assert.ok(Object.is(err.value, value), `err.value is the value given for ${option}`);
  assert.ok(err.message.includes(`"${option}"`), `message names the option: ${err.message}`);
  assert.ok(err.message.includes(shows), `message shows the value ${shows}: ${err.message}`);
}

/** Runs a script in a new Node process; resolves { code, stdout, stderr }. */
function runNode(script, flags = ['--throw-deprecation']) {
  return new Promise((resolve) => {
    execFile(process.execPath, [...flags, '-e', script], { cwd: root, timeout: 15000 },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
  });
}

// Options core's agent validates itself: the same error as core's, class,
// name, code and message, for code written against core's agent.
const CORE_VALIDATED = {
  // A count string becomes its number first ('10' is 10, '0' is 0); other
  // strings reach core as they are.
  maxTotalSockets: ['ten', '', '1e3', '-1', true, {}, 5n, -1, -Infinity, NaN, 0],
  scheduling: [1, true, {}, -1, Infinity, 'random', 'FIFO'],
};

function thrown(build) {
  try {
    build().destroy();
  } catch (err) {
    return err;
  }
  return null;
}

for (const [Agent, Core] of [[HttpAgent, http.Agent], [HttpsAgent, https.Agent]]) {
  describe(`${Agent.name} options core validates`, () => {
    for (const [option, values] of Object.entries(CORE_VALIDATED)) {
      it(`${option}: core's error for each bad value`, () => {
        for (const value of values) {
          const expected = thrown(() => new Core({ [option]: value }));
          assert.ok(expected, `core refuses ${option}: ${String(value)}`);
          const err = thrown(() => new Agent({ [option]: value }));
          assert.ok(err, `${option}: ${String(value)} must be refused`);
          assert.equal(err.constructor, expected.constructor);
          assert.equal(err.name, expected.name);
          assert.equal(err.code, expected.code);
          assert.equal(err.message, expected.message);
        }
      });
    }

    it('keepAliveMsecs takes Infinity and delays beyond the largest timer, as core does', () => {
      for (const value of [Infinity, 3e9]) {
        const agent = new Agent({ keepAliveMsecs: value });
        try {
          assert.equal(agent.keepAliveMsecs, value);
        } finally {
          agent.destroy();
        }
      }
    });
  });
}

for (const Agent of [HttpAgent, HttpsAgent]) {
  describe(`${Agent.name} options validation`, () => {
    for (const [option, kinds] of Object.entries(OPTIONS)) {
      describe(option, () => {
        for (const [kind, [ErrorClass, values]] of Object.entries(kinds)) {
          it(`${kind} -> ${ErrorClass.name} naming "${option}" and the value`, () => {
            for (const value of values) assertInvalid(Agent, option, value, ErrorClass);
          });
        }
      });
    }

    it('Infinity is allowed where it means "no limit": maxSockets, maxFreeSockets, maxTotalSockets', () => {
      const agent = new Agent({ maxSockets: Infinity, maxFreeSockets: Infinity, maxTotalSockets: Infinity });
      agent.destroy();
      assert.equal(agent.maxSockets, Infinity);
      assert.equal(agent.maxFreeSockets, Infinity);
      assert.equal(agent.maxTotalSockets, Infinity);
    });

    it('options that are not an object -> TypeError naming "options"', () => {
      for (const { value, shows } of [bad('fast', 'fast'), bad(42, '42'), bad(true, 'true'), bad([], '[]'),
        bad(() => ({}), '[Function')]) {
        assert.throws(() => new Agent(value), (err) => {
          assert.ok(err instanceof TypeError);
          assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
          assert.equal(err.option, 'options');
          assert.ok(err.message.includes('"options"'), err.message);
          assert.ok(err.message.includes(shows), err.message);
          return true;
        });
      }
      // No options, or null, mean the defaults.
      for (const none of [undefined, null]) {
        const agent = new Agent(none);
        agent.destroy();
        assert.equal(agent.options.freeSocketTimeout, 4000);
        assert.equal(agent.options.timeout, 8000);
      }
    });

    it('humanized durations become milliseconds in agent.options', () => {
      const forms = [['30s', 30000], ['1.5s', 1500], ['2m', 120000], ['500ms', 500], ['0', 0], [2500, 2500], ['1 minute', 60000]];
      for (const option of ['keepAliveMsecs', 'freeSocketTimeout', 'timeout', 'socketActiveTTL', 'serverTimeoutMargin']) {
        for (const [given, msecs] of forms) {
          const agent = new Agent({ [option]: given });
          agent.destroy();
          assert.equal(agent.options[option], msecs, `${option}: ${given}`);
        }
      }
      // socketActiveTTL is not a timer: it may exceed the timer range.
      const ttl = new Agent({ socketActiveTTL: '30d' });
      ttl.destroy();
      assert.equal(ttl.options.socketActiveTTL, 30 * 24 * 3600 * 1000);
      // The largest timer is accepted.
      const largest = new Agent({ timeout: MAX_TIMER });
      largest.destroy();
      assert.equal(largest.options.timeout, MAX_TIMER);
    });

    it('does not write to the caller\'s options, and accepts them frozen', () => {
      const given = {
        freeSocketTimeout: '30s',
        timeout: '1m',
        socketActiveTTL: '1h',
        maxSockets: 10,
        maxFreeSockets: 5,
        scheduling: 'fifo',
        keepAlive: true,
        ca: ['not a certificate, never used'],
        lookup: undefined,
      };
      const copy = structuredClone(given);
      const agent = new Agent(given);
      agent.destroy();
      assert.deepEqual(given, copy);
      assert.notEqual(agent.options, given);
      assert.equal(agent.options.freeSocketTimeout, 30000);

      const frozen = Object.freeze({ ...copy, ca: Object.freeze([...copy.ca]) });
      const fromFrozen = new Agent(frozen);
      fromFrozen.destroy();
      assert.equal(fromFrozen.options.freeSocketTimeout, 30000);
      assert.equal(fromFrozen.options.timeout, 60000);
      assert.equal(fromFrozen.options.socketActiveTTL, 3600000);
      assert.equal(fromFrozen.maxSockets, 10);
      assert.equal(fromFrozen.scheduling, 'fifo');
      assert.deepEqual(frozen, copy);
    });

    it('derives a default timeout that is a valid timer even from a large freeSocketTimeout', () => {
      // timeout defaults to max(2 x freeSocketTimeout, 8000). From a valid
      // freeSocketTimeout of 20 days that is 40 days: past the largest timer,
      // a value the option itself would refuse, and one that makes Node warn
      // (TimeoutOverflowWarning) and truncate on every socket.
      const options = { freeSocketTimeout: '20d' };
      const agent = new Agent(options);
      agent.destroy();
      assert.equal(agent.options.freeSocketTimeout, 20 * 24 * 3600 * 1000);
      assert.ok(agent.options.timeout <= MAX_TIMER,
        `options.timeout ${agent.options.timeout} is beyond the largest timer ${MAX_TIMER}`);
    });

    it('serves a request without process warnings when freeSocketTimeout is 20 days', async () => {
      const options = { freeSocketTimeout: '20d' };
      const warnings = [];
      const onWarning = (warning) => warnings.push(warning);
      process.on('warning', onWarning);
      const server = await createServer(Agent === HttpsAgent ? 'https:' : 'http:');
      const client = new Agent({ ...options, ...tlsClientOptions });
      try {
        const res = await request(server.url('/'), { agent: client });
        assert.equal(res.status, 200);
        await new Promise((resolve) => setImmediate(resolve));
        assert.deepEqual(warnings.map((w) => `${w.name}: ${w.message}`), [], 'process warnings during a request');
      } finally {
        process.removeListener('warning', onWarning);
        client.destroy();
        await server.close();
      }
    });
  });
}

describe('deprecated duration aliases', () => {
  // Deprecation warnings are emitted once per process; a child process sees
  // them afresh, and --throw-deprecation makes them an exit code. (Under
  // that flag process.throwDeprecation is read-only, so a test cannot turn
  // it off for a moment in-process.)
  const load = 'const { HttpAgent, HttpsAgent } = require(\'./\');';

  it('keepAliveTimeout and freeSocketKeepAliveTimeout set freeSocketTimeout, with a DeprecationWarning', async () => {
    for (const option of ['keepAliveTimeout', 'freeSocketKeepAliveTimeout']) {
      const quiet = await runNode(`${load}
        process.on('warning', (w) => console.log(JSON.stringify({ name: w.name, code: w.code })));
        const values = [new HttpAgent({ ${option}: '30s' }), new HttpsAgent({ ${option}: 2500 })]
          .map((agent) => { agent.destroy(); return agent.options.freeSocketTimeout; });
        const preferred = new HttpAgent({ ${option}: '30s', freeSocketTimeout: '5s' });
        preferred.destroy();
        console.log(JSON.stringify({ values, preferred: preferred.options.freeSocketTimeout }));`, []);
      assert.equal(quiet.code, 0, quiet.stderr);
      const lines = quiet.stdout.trim().split('\n').map((line) => JSON.parse(line));
      const result = lines.find((line) => line.values);
      assert.deepEqual(result, { values: [30000, 2500], preferred: 5000 });
      const warnings = lines.filter((line) => line.name === 'DeprecationWarning');
      assert.deepEqual(warnings, [{ name: 'DeprecationWarning', code: `STEADY_AGENT_DEP_${option.toUpperCase()}` }],
        'one warning, however many agents');

      const strict = await runNode(`${load} new HttpAgent({ ${option}: '30s' }).destroy();`);
      assert.notEqual(strict.code, 0, `${option} must warn`);
      assert.match(strict.stderr, /DeprecationWarning/);
      assert.match(strict.stderr, /freeSocketTimeout/, 'the warning names the replacement');
    }
  });

  it('a bad value is refused before any warning', async () => {
    const result = await runNode(`${load}
      try { new HttpAgent({ keepAliveTimeout: 'soon' }); } catch (err) { console.log(err.name, err.option); }`);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), 'InvalidOptionTypeError keepAliveTimeout');
  });
});
