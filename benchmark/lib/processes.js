'use strict';

// Every server a benchmark talks to runs in its own process, so its CPU time
// never lands on the process being measured. This module starts those
// processes, talks to them over IPC, and makes sure each one is killed when
// the benchmark ends, whether it ends normally, throws, or is interrupted.
const { fork } = require('node:child_process');
const path = require('node:path');

const SERVERS_DIR = path.join(__dirname, '..', 'servers');
const START_TIMEOUT_MS = 15000;
const CALL_TIMEOUT_MS = 15000;
const STOP_TIMEOUT_MS = 3000;

const running = new Set();

function killAll() {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}

process.once('exit', killAll);

/**
 * Makes `child` one of the processes stopped by stopAll() (so by runMain when
 * the scenario ends or fails) and killed if this process exits first.
 */
function track(child) {
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    killAll();
    process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  });
}

/**
 * Forks benchmark/servers/<name>.js with `options` (JSON in argv[2]) and
 * resolves once the child reports { type: 'listening', port }.
 */
function startServer(name, options = {}) {
  const script = path.join(SERVERS_DIR, `${name}.js`);
  const child = fork(script, [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // Flags meant for the measured process (--cpu-prof, --inspect) stay off the servers.
    execArgv: [],
  });
  track(child);

  let nextId = 1;
  const pending = new Map();
  child.on('message', (message) => {
    if (message && message.type === 'reply' && pending.has(message.id)) {
      const { resolve, reject, timer } = pending.get(message.id);
      pending.delete(message.id);
      clearTimeout(timer);
      if (message.error) reject(new Error(`${name}: ${message.error}`));
      else resolve(message.value);
    }
  });
  child.once('exit', (code, signal) => {
    for (const { reject, timer } of pending.values()) {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) during a call`));
    }
    pending.clear();
  });

  const handle = {
    name,
    child,
    port: 0,
    /** Sends { type: 'call', id, method, args } and resolves with the reply. */
    call(method, ...args) {
      return new Promise((resolve, reject) => {
        if (!child.connected) {
          reject(new Error(`${name} is not running`));
          return;
        }
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${name}: no reply to ${method} within ${CALL_TIMEOUT_MS} ms`));
        }, CALL_TIMEOUT_MS);
        pending.set(id, { resolve, reject, timer });
        child.send({ type: 'call', id, method, args });
      });
    },
    stop() {
      return stopChild(child);
    },
  };

  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      stopChild(child);
      reject(new Error(`${name} did not start within ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    function onMessage(message) {
      if (message && message.type === 'listening') {
        cleanup();
        handle.port = message.port;
        resolve(handle);
      }
    }
    function onExit(code, signal) {
      cleanup();
      reject(new Error(`${name} exited before listening (code ${code}, signal ${signal})`));
    }
    function cleanup() {
      clearTimeout(timer);
      child.removeListener('message', onMessage);
      child.removeListener('exit', onExit);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Stops every tracked process (servers, and any others given to track()) still running. */
function stopAll() {
  return Promise.all([...running].map(stopChild));
}

/**
 * Runs a scenario's async main function; stops every server afterwards and
 * sets a failing exit code if it threw.
 */
function runMain(main) {
  main()
    .catch((err) => {
      console.error(err && err.stack ? err.stack : err);
      process.exitCode = 1;
    })
    .finally(() => stopAll());
}

module.exports = { startServer, stopAll, runMain, track };
