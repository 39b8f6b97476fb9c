'use strict';

// agentkeepalive 4.6.0's own test suite (its test/ folder), run against this
// package as `npm pack` makes it, one test at a time: several tests listen
// for 'uncaughtException' or leave servers behind, and a test that takes its
// process down then costs only itself.
//
// The tests are read from the caller's clone of github.com/node-modules/agentkeepalive
// (its HEAD is the 4.6.0 release) and unpacked beside the package, as its
// test/ folder: `require('..')` in them is this package.
const fs = require('node:fs');
const path = require('node:path');
const { run, installPackage, installTools } = require('./support');

// The versions the suite was written against (mocha is what its egg-bin runs).
const TOOLS = ['mocha@10', 'mm@2', 'pedding@1', 'coffee@5', 'typescript@4.9.5', '@types/node@18'];

function escapeRegExp(text) {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/**
 * Runs the suite. `upstream` is the agentkeepalive tree (lib/peers/upstream),
 * `work` a directory of our own, `filter` an optional RegExp on test titles.
 * `report(status, title, log)` is called after each test. Resolves with
 * { passed, failed, skipped, results: [{ title, status }] }.
 */
async function runAgentkeepaliveSuite({ upstream, work, filter, node = process.execPath, timeoutMs = 60000, report = () => {} }) {
  const pkg = installPackage(path.join(work, 'package'));
  upstream.extract(['test'], pkg);
  if (!fs.existsSync(path.join(pkg, 'test', 'http_agent.test.js'))) {
    throw new Error('agentkeepalive: no test/http_agent.test.js in the clone (is it github.com/node-modules/agentkeepalive?)');
  }
  const tools = installTools(path.join(work, 'tools'), TOOLS);
  // test/ts.test.js compiles against the package's types: TypeScript finds @types only in node_modules.
  fs.symlinkSync(path.join(tools, '@types'), path.join(pkg, 'node_modules', '@types'), 'dir');
  const env = { ...process.env, NODE_PATH: tools };
  delete env.NODE_OPTIONS;
  const mocha = path.join(tools, 'mocha', 'bin', 'mocha.js');
  const logs = path.join(work, 'logs');
  fs.rmSync(logs, { recursive: true, force: true });
  fs.mkdirSync(logs);

  // Every test's file and full title, without running anything.
  const listing = path.join(work, 'tests.json');
  await run(node, [mocha, '--dry-run', '--reporter', 'json', '--reporter-option', `output=${listing}`, 'test/*.test.js'], {
    cwd: pkg, env, timeoutMs, logFile: path.join(logs, 'list.log'),
  });
  const tests = JSON.parse(fs.readFileSync(listing, 'utf8')).tests
    .map((test) => ({ file: path.relative(pkg, test.file), title: test.fullTitle }))
    .filter((test) => filter === undefined || filter.test(test.title));

  const results = [];
  for (const [index, { file, title }] of tests.entries()) {
    const logFile = path.join(logs, `${index + 1}.log`);
    const { code, timedOut } = await run(node, [mocha, '--exit', '--timeout', '30000', '--reporter', 'dot',
      '--grep', `^${escapeRegExp(title)}$`, file], { cwd: pkg, env, timeoutMs, logFile });
    const log = fs.readFileSync(logFile, 'utf8');
    let status;
    if (timedOut) status = 'TIMEOUT';
    else if (code === 0 && /^ +1 passing/m.test(log)) status = 'PASS';
    else if (/^ +1 pending/m.test(log) && !/^ +\d+ failing/m.test(log)) status = 'SKIP';
    else status = 'FAIL';
    results.push({ title, status });
    report(status, title, logFile);
  }
  const count = (...statuses) => results.filter((r) => statuses.includes(r.status)).length;
  return { passed: count('PASS'), failed: count('FAIL', 'TIMEOUT'), skipped: count('SKIP'), results };
}

module.exports = { runAgentkeepaliveSuite };
