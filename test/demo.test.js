'use strict';

// `npm run demo` (benchmark/demo.js) runs to the end and prints its table:
// a row per agent, each with a figure in every column. The figures themselves
// depend on timing and are not checked here (benchmark/race.js and
// benchmark/nagle.js measure them; test/keep-alive-race.test.js and
// test/nodelay.test.js test the behaviour behind them).
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');

describe('npm run demo', function () {
  this.timeout(90000);

  it('prints one row per agent with every figure', async () => {
    const { code, stdout, stderr } = await new Promise((resolve) => {
      execFile(process.execPath, ['--throw-deprecation', 'benchmark/demo.js'], { cwd: root, timeout: 80000 }, (err, out, errOut) => {
        resolve({ code: err ? err.code ?? err.signal : 0, stdout: out, stderr: errOut });
      });
    });
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '');
    const lines = stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('agent '));
    assert.ok(header > 0, `no table in:\n${stdout}`);
    assert.match(lines[header], /lost \(announced limit\) +lost \(silent limit\) +sockets opened +requests on reused sockets +two-piece POST https ms/);
    const figures = / {2,}(\d+) \/ (\d+) +(\d+) \/ (\d+) +(\d+) +(\d+) +(\d+\.\d)$/;
    const rows = lines.slice(header + 2, header + 5);
    assert.deepEqual(rows.map((row) => row.split(/ {2,}/)[0]), [
      'Node http(s).Agent({ keepAlive: true })',
      `agentkeepalive ${require('agentkeepalive/package.json').version}`,
      'steady-agent',
    ]);
    for (const row of rows) {
      const match = row.match(figures);
      assert.ok(match, `row without every figure: ${row}`);
      const [, lostAnnounced, sentAnnounced, lostSilent, sentSilent, opened, reused] = match.map(Number);
      // Counts that hold whatever the timing: each attempt sends the same
      // requests, and every request either opened a socket or reused one.
      assert.equal(sentAnnounced, 72);
      assert.equal(sentSilent, 60);
      assert.ok(lostAnnounced <= sentAnnounced && lostSilent <= sentSilent);
      assert.equal(opened + reused, sentAnnounced + sentSilent);
    }
    assert.equal(lines[header + 5], '');
  });

  it('is on CONTRIBUTING\'s first screen, with npm test', () => {
    assert.equal(require('../package.json').scripts.demo, 'node benchmark/demo.js');
    const firstScreen = fs.readFileSync(path.join(root, 'CONTRIBUTING.md'), 'utf8').split('\n').slice(0, 40).join('\n');
    assert.match(firstScreen, /^npm ci && npm run demo\b/m);
    assert.match(firstScreen, /^npm test\b/m);
  });
});
