'use strict';

// One behaviour whatever the import order: every fetch test again, in a
// mocha of its own, with npm's undici loaded before anything else
// (test/support/undici_first.js), so that its global dispatcher is in place
// before steady-agent/fetch loads. For undici 7 and 8 where their engines
// allow this Node, else undici 6 (Node 18). The run in this process is the
// other order: test/support/fetch.js loads steady-agent/fetch first.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { UNDICI_MAJORS } = require('./support/fetch');

const root = path.join(__dirname, '..');
const files = fs.readdirSync(__dirname)
  .filter((name) => /^fetch-.*\.test\.m?js$/.test(name) && name !== path.basename(__filename))
  .map((name) => path.join('test', name));
const recent = UNDICI_MAJORS.filter((entry) => entry.runs && entry.major >= 7);
const firsts = recent.length > 0 ? recent : UNDICI_MAJORS.filter((entry) => entry.runs);

/** Runs the fetch tests in a mocha of its own with `name` loaded first; resolves its summary. */
function mochaWith(name) {
  const args = [path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--no-config', '--timeout', '20000',
    '-n', 'throw-deprecation', '--reporter', 'dot', '-r', path.join(__dirname, 'support', 'undici_first.js'), ...files];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: root, env: { ...process.env, STEADY_UNDICI_FIRST: name }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err?.code ?? 0, output: `${stdout}\n${stderr}` }));
  });
}

describe('the fetch tests with npm\'s undici loaded first', () => {
  it('finds fetch test files to run', () => {
    assert.ok(files.length >= 8, files.join(', '));
  });

  for (const entry of firsts) {
    it(`pass with ${entry.name} (undici ${entry.major}) loaded before steady-agent/fetch`, async function () {
      this.timeout(15 * 60 * 1000);
      const { code, output } = await mochaWith(entry.name);
      assert.equal(code, 0, output.slice(-6000));
      assert.match(output, /\d+ passing/);
    });
  }
});
