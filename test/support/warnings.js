'use strict';

// Process warnings are emitted once per process, and printed into the test
// run's output: tests that expect one run the code in a child process.
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');

/**
 * Runs `code` in a new Node process with HttpAgent and HttpsAgent in scope.
 * Returns { stdout, warnings, result }: what it printed, the warnings it
 * emitted ({ name, code, message }), and what it set globalThis.result to.
 */
function runCollectingWarnings(code) {
  const script = `
    const warnings = [];
    process.on('warning', (w) => warnings.push({ name: w.name, code: w.code, message: w.message }));
    const { HttpAgent, HttpsAgent } = require(${JSON.stringify(root)});
    ${code}
    setImmediate(() => process.stderr.write(JSON.stringify({ warnings, result: globalThis.result })));
  `;
  const child = spawnSync(process.execPath, ['--no-warnings', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return { stdout: child.stdout, ...JSON.parse(child.stderr) };
}

module.exports = { runCollectingWarnings };
