'use strict';

// A busy machine: child processes that each spin a core, so that the test
// process, its servers and the kernel wait their turn for the CPU as they do
// on a loaded host. stop() kills them, and so does this process's exit; a
// process killed without one (a time limit's SIGTERM) leaves them to see
// that it is gone, which each checks for now and then.
const { spawn } = require('node:child_process');

// argv[1]: the pid to outlive by no more than a moment.
const SPIN = 'const parent = Number(process.argv[1]);'
  + 'for (let i = 1; ; i++) if (i % 1e7 === 0) { try { process.kill(parent, 0); } catch { process.exit(); } }';

const running = new Set();

process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `count` busy processes; resolves with { stop() } once each has started. */
async function startBusy(count = 2) {
  const children = await Promise.all(Array.from({ length: count }, () => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SPIN, String(process.pid)], { stdio: 'ignore' });
    running.add(child);
    child.once('exit', () => running.delete(child));
    child.once('error', reject);
    child.once('spawn', () => resolve(child));
  })));
  return {
    stop: () => Promise.all(children.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      return new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGKILL');
      });
    })),
  };
}

module.exports = { startBusy };
