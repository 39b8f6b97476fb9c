'use strict';

// benchmark/many-origins.js end to end, small: every agent and pattern runs
// in its own process against its own backend, the tables say what they
// measured, and --save records them (in a temporary directory) with a chart.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { renderCharts } = require('../benchmark/charts');
const { tempDirEach } = require('./support/cleanup');

const root = path.join(__dirname, '..');
const KNOBS = {
  BENCH_AGENTS: 'steady-agent,node-keepalive',
  BENCH_MANY_ORIGINS: '30',
  BENCH_MANY_SPREAD: '300',
  BENCH_MANY_WARMUP: '10',
};

function run(env) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BENCH_')));
  return new Promise((resolve) => {
    execFile(process.execPath, ['benchmark/many-origins.js', '--save'], {
      cwd: root,
      env: { ...clean, ...KNOBS, ...env },
      timeout: 120000,
    }, (err, stdout, stderr) => resolve({ code: err ? err.code ?? err.signal : 0, stdout, stderr }));
  });
}

const isNumber = (cell) => /^[\d,]+(\.\d+)?$/.test(cell);

describe('benchmark many-origins', function () {
  this.timeout(150000);
  const tmpDir = tempDirEach('many-origins-');

  it('drains 30 origins per agent, spread and at once, and records the CPU and heap tables with a chart', async () => {
    const tmp = tmpDir();
    const { code, stdout, stderr } = await run({ BENCH_RESULTS_DIR: tmp });
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^steady-agent: 30 origins, spread: [\d.]+ µs CPU per socket closed/m);
    assert.match(stdout, /^node-keepalive: 30 origins, at once: [\d.]+ µs CPU per socket closed .*, heap -?[\d,]+ bytes per idle socket$/m);

    const entry = JSON.parse(fs.readFileSync(path.join(tmp, 'results.json'), 'utf8')).scenarios['many-origins'];
    assert.deepEqual(entry.tables.map((table) => table.title), [
      'Closing 30 free sockets, deadlines spread over 0.3 s',
      'Closing 30 free sockets, all due at once',
      'Heap per idle socket, 30 free sockets',
    ]);
    for (const table of entry.tables.slice(0, 2)) {
      assert.deepEqual(table.rows.map((row) => row[0]), ['steady-agent', 'http.Agent keepAlive:true']);
      for (const row of table.rows) {
        assert.ok(isNumber(row[1]) && Number(row[1].replace(/,/g, '')) > 0, `CPU per socket: ${row[1]}`);
        assert.ok(isNumber(row[2]), `ratio: ${row[2]}`);
      }
    }
    assert.equal(entry.params['timeoutMs@30'], 3300);
    // Every run's result is kept: one per agent, with N sockets closed.
    for (const runs of Object.values(entry.raw['30 spread'])) assert.deepEqual(runs.map((r) => r.closed), [30]);

    const [chart] = await renderCharts({ results: { scenarios: { 'many-origins': entry } }, dir: path.join(tmp, 'charts') });
    const svg = fs.readFileSync(chart, 'utf8');
    assert.match(svg, /^<svg [^>]*viewBox="0 0 \d+ \d+"/);
    assert.ok(svg.includes('heap bytes per idle socket'));
  });
});
