'use strict';

// `npm run bench`: runs every scenario, one after the other, each as its own
// program (node benchmark/<name>.js), so that one scenario's garbage, JIT
// state or leftover sockets cannot touch the next. Each scenario prints its
// table and, given --save (passed to each), records it in results.json /
// results.md; then charts.js renders benchmark/charts/*.svg from
// results.json.
//
//   npm run bench
//   BENCH_SCENARIOS=client-cost,https-cost npm run bench
const { spawn } = require('node:child_process');
const path = require('node:path');
const { commandLine, MD_FILE, JSON_FILE, SAVE_FLAG } = require('./lib/results');
const { renderCharts } = require('./charts');

const SCENARIOS = ['proxy', 'client-cost', 'https-cost', 'instructions', 'many-origins', 'nagle', 'race', 'axios-latency', 'proxy-tunnel', 'dns-flip', 'happy-eyeballs'];
// A scenario still running after this long is killed (its servers exit with
// it). instructions.js runs every agent under valgrind, two runs of minutes
// each per agent, protocol and requests in flight, so it gets longer than
// the rest.
const DEFAULT_TIMEOUT_S = 600;
const TIMEOUTS_S = { instructions: 7200 };
const timeoutFor = (name) => Number(process.env.BENCH_SCENARIO_TIMEOUT) || TIMEOUTS_S[name] || DEFAULT_TIMEOUT_S;

function selected() {
  const only = process.env.BENCH_SCENARIOS;
  if (!only) return SCENARIOS;
  const wanted = only.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = wanted.filter((name) => !SCENARIOS.includes(name));
  if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  return SCENARIOS.filter((name) => wanted.includes(name));
}

function runScenario(name, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(__dirname, `${name}.js`), SAVE_FLAG], { stdio: 'inherit', env });
    const timeout = timeoutFor(name);
    const timer = setTimeout(() => {
      console.error(`${name}: still running after ${timeout} s, killing it`);
      child.kill('SIGTERM');
    }, timeout * 1000);
    const stop = () => child.kill('SIGTERM');
    process.once('exit', stop);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      process.removeListener('exit', stop);
      resolve(code === 0 ? 'ok' : `failed (${signal || `exit code ${code}`})`);
    });
  });
}

async function main() {
  const scenarios = selected();
  const invoked = process.env.npm_lifecycle_event === 'bench' ? ['npm', 'run', 'bench'] : ['node', 'benchmark/run-all.js'];
  const env = { ...process.env, BENCH_COMMAND: process.env.BENCH_COMMAND || commandLine(invoked) };
  const outcomes = [];
  const started = Date.now();
  for (const [i, name] of scenarios.entries()) {
    console.log(`\n=== ${i + 1}/${scenarios.length} ${name} ===\n`);
    const t0 = Date.now();
    const outcome = await runScenario(name, env);
    outcomes.push({ name, outcome, seconds: Math.round((Date.now() - t0) / 1000) });
  }
  console.log('\n=== summary ===');
  for (const { name, outcome, seconds } of outcomes) console.log(`${name.padEnd(14)} ${outcome.padEnd(24)} ${seconds} s`);
  console.log(`total ${Math.round((Date.now() - started) / 1000)} s`);
  console.log(`results: ${path.relative(process.cwd(), JSON_FILE)}, ${path.relative(process.cwd(), MD_FILE)}`);
  const charts = await renderCharts();
  console.log(`charts: ${charts.map((file) => path.relative(process.cwd(), file)).join(', ')}`);
  if (outcomes.some((o) => o.outcome !== 'ok')) process.exitCode = 1;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => process.exit(130));
}

main().catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exitCode = 1;
});
