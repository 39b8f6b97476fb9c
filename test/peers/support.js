'use strict';

// What both peer-suite runners need: this package as npm would install it,
// the upstream suites' own tools (installed once into the work directory with
// npm), and child processes that end, with everything they started, within
// a time limit.
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');

/**
 * Runs `command` with its output in `logFile`. Resolves with { code, timedOut }
 * once it has exited; after `timeoutMs`, its whole process group is killed
 * (tests start servers and children of their own).
 */
function run(command, args, { cwd, env, timeoutMs, logFile }) {
  return new Promise((resolve, reject) => {
    const log = fs.openSync(logFile, 'w');
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    let timedOut = false;
    const kill = (signal) => {
      try { process.kill(-child.pid, signal); } catch { /* already gone */ }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 5000).unref();
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      kill('SIGKILL'); // anything the test left behind
      resolve({ code: code ?? signal, timedOut });
    });
  });
}

/**
 * This package, packed by `npm pack` and unpacked into `dir`, with its
 * runtime dependencies linked from this checkout's node_modules (no network;
 * each resolves its own dependencies from there). Returns `dir`.
 */
function installPackage(dir) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const tarball = path.join(path.dirname(dir), 'steady-agent.tgz');
  const [manifest] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', path.dirname(dir)], {
    cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'],
  }));
  fs.renameSync(path.join(path.dirname(dir), manifest.filename), tarball);
  execFileSync('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1']);
  const modules = path.join(dir, 'node_modules');
  fs.mkdirSync(modules);
  for (const name of Object.keys(require(path.join(root, 'package.json')).dependencies)) {
    const target = path.dirname(require.resolve(`${name}/package.json`, { paths: [root] }));
    fs.mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    fs.symlinkSync(target, path.join(modules, name), 'dir');
  }
  return dir;
}

/**
 * npm packages installed into `dir` (once: a marker names what was
 * installed). Returns the node_modules folder.
 */
function installTools(dir, specs) {
  const marker = path.join(dir, '.installed');
  const wanted = specs.join(' ');
  if (!fs.existsSync(marker) || fs.readFileSync(marker, 'utf8') !== wanted) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), '{ "private": true }\n');
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--silent', ...specs], {
      cwd: dir, stdio: ['ignore', 'ignore', 'inherit'],
    });
    fs.writeFileSync(marker, wanted);
  }
  return path.join(dir, 'node_modules');
}

module.exports = { run, installPackage, installTools, root };
