'use strict';

// The learning rules against every rhythm a client has: a model of the pool
// on simulated time (test/support/pool_model.js) drives the same functions
// the agent runs (lib/server_limits.js), and fast-check searches rhythms,
// servers and faults for the case that breaks the property:
//
//   after any single fault (a restart, the reset of one request),
//   steady-agent opens at most one connection more because of it than
//   Node's agent does, and fails no more requests than Node's agent;
//   without a fault it fails no more than Node's agent: none against a
//   server that announces its limit, at most the first collision against
//   one that does not (the first two batches, for requests sent together).
//
// `npm test` runs a bounded number of cases with a fixed seed; `npm run
// test:props` runs many more (PROPS_RUNS, PROPS_SEED). A counterexample
// fast-check found is kept below as a regression case, shrunk.
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { run, MARGIN } = require('./support/pool_model');
const { learnedMargin } = require('../lib/policy/free_timeout');

const RUNS = Number(process.env.PROPS_RUNS || 500);
const SEED = Number(process.env.PROPS_SEED || 20261127);

/** A scenario: a server, a rhythm, and one fault or none. */
const scenario = fc.record({
  hinted: fc.boolean(),
  limitSeed: fc.integer({ min: 0, max: 1000 }),
  latency: fc.integer({ min: 1, max: 50 }).map((tenths) => tenths / 10),
  gapShare: fc.integer({ min: 0, max: 1000 }),
  jitter: fc.array(fc.integer({ min: -100, max: 100 }), { minLength: 12, maxLength: 40 }),
  jitterShare: fc.integer({ min: 0, max: 10 }),
  width: fc.integer({ min: 1, max: 3 }),
  fault: fc.oneof(
    fc.constant(null),
    fc.record({ kind: fc.constant('restart'), at: fc.integer({ min: 0, max: 1000 }) }),
    fc.record({ kind: fc.constant('reset'), at: fc.integer({ min: 0, max: 1000 }) }),
  ),
}).map(build);

// Servers: a hinted one announces whole seconds (2 to 5 s) and closes at its
// hint; a silent one closes after 100 ms to 4 s. Rhythms: a request every
// 20 ms up to the server's limit, each gap off by up to 10%.
function build(raw) {
  const limit = raw.hinted ? 1000 * (2 + Math.floor(raw.limitSeed / 251)) : 100 + Math.round(raw.limitSeed * 3.9);
  const base = 20 + (limit - 20) * raw.gapShare / 1000;
  const gaps = raw.jitter.map((j) => Math.max(1, base * (1 + (raw.jitterShare / 100) * (j / 100))));
  const total = gaps.slice(1).reduce((a, b) => a + b, 0);
  const s = {
    hinted: raw.hinted, limit, latency: raw.latency, gaps, width: raw.width, restartAt: null, resetRequest: null,
  };
  if (raw.fault?.kind === 'restart') s.restartAt = total * raw.fault.at / 1000;
  if (raw.fault?.kind === 'reset') s.resetRequest = Math.floor((gaps.length * raw.width - 1) * raw.fault.at / 1000);
  return s;
}

function withoutFault(s) {
  return { ...s, restartAt: null, resetRequest: null };
}

/** The property; returns a description of what broke, or null. */
function check(s) {
  const node = run(s, 'node');
  const steady = run(s, 'steady');
  const faulty = s.restartAt !== null || s.resetRequest !== null;
  if (faulty && inMarginBand(s)) return null;
  if (steady.failures > node.failures) return `steady-agent failed ${steady.failures}, Node's agent ${node.failures}`;
  if (!faulty) {
    if (s.hinted && steady.failures > 0) return `steady-agent failed ${steady.failures} against a hinted server`;
    // Against a silent server, at most the first collision; requests sent
    // together that collide together are held as one observation (several
    // closes at once may be a restart), and the next batch confirms it.
    const most = s.width === 1 ? 1 : 2 * s.width;
    if (steady.failures > most) return `steady-agent failed ${steady.failures} against a silent server, ${s.width} at a time`;
    return null;
  }
  const steadyBase = run(withoutFault(s), 'steady');
  const nodeBase = run(withoutFault(s), 'node');
  const steadyExtra = steady.connections - steadyBase.connections;
  const nodeExtra = node.connections - nodeBase.connections;
  if (steadyExtra > nodeExtra + 1) {
    return `the fault cost steady-agent ${steadyExtra} connections, Node's agent ${nodeExtra}; learned: ${steady.learned.join('; ')}`;
  }
  return null;
}

// A learned limit keeps its sockets learnedMargin(limit) short of it, as the
// hint keeps them serverTimeoutMargin short. A rhythm within that band of a
// silent server's true limit reuses with Node's agent, and with steady-agent
// until it has learned the limit: then it opens a connection a request (and
// a request on a new connection is in flight longer, so a restart meets more
// of them). Any close that teaches the true limit does that, a fault's or
// not (a pause in the traffic, a probe), so the fault clause leaves such
// rhythms out; without a fault they are checked as any other.
function inMarginBand(s) {
  if (s.hinted) return false;
  const low = s.limit - learnedMargin(s.limit, MARGIN) - 2 * s.latency - 1;
  return s.gaps.some((gap) => gap >= low && gap <= s.limit + 2 * s.latency);
}

function holds(s) {
  const broken = check(s);
  if (broken !== null) throw new Error(broken);
}

describe('learning rules, property-tested on a model of the pool', function () {
  this.timeout(600000);

  it(`after any single fault, at most one connection more than Node's agent and no more failures (${RUNS} cases, seed ${SEED})`, () => {
    fc.assert(fc.property(scenario, holds), { numRuns: RUNS, seed: SEED });
  });

  describe('the model itself', () => {
    const quiet = {
      hinted: false, limit: 1000, latency: 1, gaps: Array(10).fill(500), width: 1, restartAt: null, resetRequest: null,
    };

    it('both agents reuse one connection at a rhythm well inside the limit', () => {
      assert.deepEqual([run(quiet, 'node').connections, run(quiet, 'steady').connections], [1, 1]);
    });

    it('a restart costs Node\'s agent one connection', () => {
      const restart = { ...quiet, restartAt: 2400 };
      const node = run(restart, 'node');
      assert.equal(node.connections, 2);
      assert.equal(node.failures, 0);
    });

    it('a reset fails one request for either agent', () => {
      const reset = { ...quiet, resetRequest: 4 };
      assert.equal(run(reset, 'node').failures, 1);
      assert.equal(run(reset, 'steady').failures, 1);
    });

    it('at a rhythm across a silent server\'s limit, Node\'s agent loses requests and steady-agent at most the first', () => {
      const race = { ...quiet, limit: 500, latency: 5, gaps: Array(10).fill(505) };
      const node = run(race, 'node');
      const steady = run(race, 'steady');
      assert.ok(node.failures >= 3, `Node's agent failed ${node.failures}`);
      assert.ok(steady.failures <= 1, `steady-agent failed ${steady.failures}`);
    });
  });

  // The cases, and the counterexamples fast-check found, shrunk:
  // against the rules before they weighed their evidence (282325e), and
  // against drafts of the new ones. Each broke the property then.
  describe('regressions', () => {
    const cases = {
      'before: a restart 1 ms in, a request every 20 ms, silent 100 ms server (6 connections, Node\'s agent 1)': {
        hinted: false, limit: 100, latency: 0.1, gaps: Array(12).fill(20), width: 1, restartAt: 1.32, resetRequest: null,
      },
      'draft: a close at 100 ms agreed with a refuted 50 ms limit (agreement within 50 ms)': {
        hinted: false, limit: 100, latency: 0.1, gaps: [49.28, 49.28, 50.206464, ...Array(9).fill(49.28)], width: 1, restartAt: null, resetRequest: 2,
      },
      'draft: three at a time, the first reuse reset: a collision\'s tentative limit capped every socket': {
        hinted: false, limit: 100, latency: 0.1, gaps: Array(15).fill(20), width: 3, restartAt: null, resetRequest: 3,
      },
      'draft: a probe back in the pool was taken first, at the oldest idle time': {
        hinted: false, limit: 100, latency: 0.2, gaps: Array(12).fill(50.24), width: 1, restartAt: null, resetRequest: 1,
      },
      'draft: a restart 12 ms in taught 1 ms, and the probe\'s verdict fell a rounding short': {
        hinted: false, limit: 100, latency: 3.5, gaps: [...Array(16).fill(20), 20.036, 20, 20.024, 20.756], width: 1, restartAt: 11.805296, resetRequest: null,
      },
      'draft: a reset at the free timeout\'s edge (hint 5 s, a request every 3999 ms): a trial cut short': {
        hinted: true, limit: 5000, latency: 0.1, gaps: Array(14).fill(3999.02), width: 1, restartAt: null, resetRequest: 6,
      },
      'draft: a confirmed limit 4 ms inside the free timeout, its probe refuting it': {
        hinted: false,
        limit: 4000,
        latency: 2.6,
        gaps: [3852.74, 4006.8496, 3852.74, 3852.74, 3852.74, 4001.07049, 3852.74, 3852.74, 3852.74, 3852.74, 3852.74, 4001.07049, 3852.74, 3852.74],
        width: 2,
        restartAt: null,
        resetRequest: null,
      },
      'draft: a gap 1% past a reuse seen alive refused a real collision (5% slack)': {
        hinted: false, limit: 500, latency: 5, gaps: Array(10).fill(505), width: 1, restartAt: null, resetRequest: null,
      },
      'the issue\'s deploy: Node\'s server (timeout=5), a request a second, a restart at 2.4 s': {
        hinted: true, limit: 5000, latency: 0.1, gaps: Array(32).fill(1000), width: 1, restartAt: 2400, resetRequest: null,
      },
      'one reset, a request every 50 ms, hinted server': {
        hinted: true, limit: 5000, latency: 0.1, gaps: Array(40).fill(50), width: 1, restartAt: null, resetRequest: 10,
      },
      'one reset, a request every second, silent server': {
        hinted: false, limit: 4000, latency: 0.1, gaps: Array(20).fill(1000), width: 1, restartAt: null, resetRequest: 5,
      },
      'a restart before any reuse, silent server, a request a second': {
        hinted: false, limit: 4000, latency: 0.1, gaps: Array(20).fill(1000), width: 1, restartAt: 400, resetRequest: null,
      },
    };
    for (const [name, s] of Object.entries(cases)) {
      it(name, () => {
        assert.equal(check(s), null);
      });
    }
  });
});
