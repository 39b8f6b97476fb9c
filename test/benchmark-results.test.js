'use strict';

// Running a benchmark scenario as the README suggests leaves the tracked
// results alone; only --save records it, and the recorded entry carries its
// own machine, Node version, date and command.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { tempDirEach } = require('./support/cleanup');

const root = path.join(__dirname, '..');
const benchmarkDir = path.join(root, 'benchmark');
const tracked = ['results.json', 'results.md'].map((name) => path.join(benchmarkDir, name));

// Two requests per agent, two agents: the scenario's whole path in a few seconds.
const KNOBS = { BENCH_NAGLE_REQUESTS: '2', BENCH_NAGLE_WARMUP: '1', BENCH_AGENTS: 'steady-agent,node-keepalive' };

function run(file, args, env) {
  return new Promise((resolve) => {
    execFile(process.execPath, [file, ...args], {
      cwd: root,
      env: { ...withoutKnobs(process.env), ...KNOBS, ...env },
      timeout: 60000,
    }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code ?? err.signal : 0, stdout, stderr });
    });
  });
}

/** The environment less any BENCH_* a developer has set: the test chooses its own. */
function withoutKnobs(env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('BENCH_')));
}

function gitStatus() {
  return new Promise((resolve) => {
    execFile('git', ['status', '--porcelain', '--', 'benchmark'], { cwd: root }, (err, stdout) => {
      resolve(err ? null : stdout);
    });
  });
}

const snapshot = () => tracked.map((file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null));

describe('benchmark results', function () {
  this.timeout(90000);
  const tmpDir = tempDirEach('results-');
  let tmp;

  beforeEach(() => {
    tmp = tmpDir();
  });

  it('node benchmark/nagle.js prints its table and writes no file', async () => {
    const status = await gitStatus();
    const before = snapshot();
    const { code, stdout, stderr } = await run('benchmark/nagle.js', []);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Nagle: POST written in two 64-byte pieces, 2 sequential requests$/m);
    assert.match(stdout, /^steady-agent +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+$/m);
    assert.match(stdout, /Not recorded: run with --save/);
    assert.deepEqual(snapshot(), before, 'results.json / results.md changed');
    // Compared with before rather than required empty, so that a developer's
    // own edits under benchmark/ do not fail the test. null: not a git
    // checkout (a packed copy), where the file comparison above still holds.
    if (status !== null) assert.equal(await gitStatus(), status);
  });

  it('--save records the scenario with its own machine, Node version, date and command', async () => {
    // An entry measured elsewhere, which this run must leave as it was.
    const elsewhere = {
      id: 'race',
      title: 'Keep-alive race',
      tables: [{ title: 'race', columns: ['agent', 'failed'], rows: [['steady-agent', '0']] }],
      machine: { cpu: 'Other CPU', cores: 64, memoryGiB: 256, os: 'Other OS', node: 'v24.0.0' },
      date: '2026-01-02T03:04:05.000Z',
      command: 'node benchmark/race.js --save',
    };
    fs.writeFileSync(path.join(tmp, 'results.json'), JSON.stringify({ scenarios: { race: elsewhere } }));
    const before = snapshot();
    const started = new Date().toISOString();

    const { code, stderr } = await run('benchmark/nagle.js', ['--save'], { BENCH_RESULTS_DIR: tmp });
    assert.equal(code, 0, stderr);

    const results = JSON.parse(fs.readFileSync(path.join(tmp, 'results.json'), 'utf8'));
    assert.deepEqual(results.scenarios.race, elsewhere);
    const nagle = results.scenarios.nagle;
    assert.equal(nagle.machine.node, process.version);
    assert.equal(nagle.machine.cores, os.cpus().length);
    assert.ok(nagle.date >= started, `${nagle.date} is before the run started (${started})`);
    assert.equal(nagle.command,
      'BENCH_AGENTS=steady-agent,node-keepalive BENCH_NAGLE_REQUESTS=2 BENCH_NAGLE_WARMUP=1 node benchmark/nagle.js --save');
    assert.deepEqual(nagle.tables[0].rows.map((row) => row[0]), ['steady-agent', 'http(s).Agent keepAlive:true']);

    const md = fs.readFileSync(path.join(tmp, 'results.md'), 'utf8');
    assert.match(md, /Run 2026-01-02 03:04 UTC with `node benchmark\/race\.js --save` on Node v24\.0\.0, Other CPU, 64 cores, 256 GiB, Other OS\./);
    assert.match(md, new RegExp(`with \`BENCH_AGENTS=.* node benchmark/nagle\\.js --save\` on Node ${process.version.replace(/\./g, '\\.')}, `));
    assert.doesNotMatch(md, /^Machine:/m, 'no machine line for the whole file');
    assert.deepEqual(snapshot(), before, 'the tracked results changed');
  });

  it('run-all.js (npm run bench) saves every scenario it runs and renders its chart', async () => {
    const before = snapshot();
    const { code, stdout, stderr } = await run('benchmark/run-all.js', [], { BENCH_RESULTS_DIR: tmp, BENCH_SCENARIOS: 'nagle' });
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^nagle +ok /m);
    const results = JSON.parse(fs.readFileSync(path.join(tmp, 'results.json'), 'utf8'));
    assert.deepEqual(Object.keys(results.scenarios), ['nagle']);
    assert.equal(results.scenarios.nagle.command,
      'BENCH_AGENTS=steady-agent,node-keepalive BENCH_NAGLE_REQUESTS=2 BENCH_NAGLE_WARMUP=1 BENCH_SCENARIOS=nagle node benchmark/run-all.js');
    assert.deepEqual(fs.readdirSync(path.join(tmp, 'charts')), ['nagle.svg']);
    assert.match(fs.readFileSync(path.join(tmp, 'charts', 'nagle.svg'), 'utf8'), /^<svg [^>]*viewBox="0 0 \d+ \d+"/);
    assert.deepEqual(snapshot(), before, 'the tracked results changed');
  });
});
