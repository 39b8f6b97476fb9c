'use strict';

// A busy machine: child processes that each spin a core (`for (;;);`), so
// that the test process, its servers and the kernel wait their turn for the
// CPU as they do on a loaded host. stop() kills them; so does this process
// exiting, however it ends.
const { spawn } = require('node:child_process');

const running = new Set();

process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `count` busy processes; resolves with { stop() } once each has started. */
async function startBusy(count = 2) {
  const children = await Promise.all(Array.from({ length: count }, () => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' });
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
