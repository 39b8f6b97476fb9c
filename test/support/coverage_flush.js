'use strict';

// A root hook plugin (.mocharc.js `require`): under coverage (npm test's c8,
// NODE_V8_COVERAGE in .ci/run), writes what V8 counted so far after each
// test file (after the whole run, without --parallel). With --parallel the
// files run in mocha's worker processes, which write their coverage as they
// exit, and mocha's pool kills a worker that takes more than a second to
// exit: on a busy machine, a worker that loaded large modules (TypeScript,
// vega) took longer, and everything it counted was lost. Each write resets
// V8's counters, so nothing is counted twice.
const v8 = require('node:v8');

exports.mochaHooks = {
  afterAll() {
    if (process.env.NODE_V8_COVERAGE) v8.takeCoverage();
  },
};
