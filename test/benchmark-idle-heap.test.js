'use strict';

// benchmark/idle-heap.js end to end, small: each agent's client pools one
// idle socket per origin, and the table weighs them by kind of object.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');

function run(env) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BENCH_')));
  return new Promise((resolve) => {
    execFile(process.execPath, ['benchmark/idle-heap.js'], {
      cwd: root,
      env: { ...clean, ...env },
      timeout: 120000,
    }, (err, stdout, stderr) => resolve({ code: err ? err.code ?? err.signal : 0, stdout, stderr }));
  });
}

/** The table's rows that start with `label`, split into their cells. */
const rowsOf = (stdout, label) => stdout.split('\n').filter((line) => line.startsWith(label)).map((line) => line.slice(label.length).trim().split(/\s{2,}/));

describe('benchmark idle-heap', function () {
  this.timeout(150000);

  it('weighs 40 idle sockets of steady-agent and of Node\'s agent by kind of object', async () => {
    const { code, stdout, stderr } = await run({ BENCH_AGENTS: 'steady-agent,node-keepalive', BENCH_IDLE_ORIGINS: '40' });
    assert.equal(code, 0, stderr);
    assert.match(stdout, /Heap per idle socket, 40 idle sockets \(one per origin, a 'close' listener on each\), by kind of object/);
    // The agent's state of each socket: steady-agent's alone, one per socket.
    const [state] = rowsOf(stdout, 'object SocketState');
    assert.ok(Number(state[0]) > 0, `steady-agent: ${state[0]}`);
    assert.equal(Number(state[1]), 0);
    assert.equal(Number(state[2]), Number(state[0]));
    const [all] = rowsOf(stdout, 'all objects');
    assert.ok(all.slice(0, 2).every((cell) => Number(cell) > 0), all.join(' | '));
    assert.equal(rowsOf(stdout, 'heapUsed after GC, per socket').length, 1);
  });

  it('names an unknown agent', async () => {
    const { code, stderr } = await run({ BENCH_AGENTS: 'steady-agent,nobody', BENCH_IDLE_ORIGINS: '5' });
    assert.notEqual(code, 0);
    assert.match(stderr, /BENCH_AGENTS: unknown agent\(s\) nobody/);
  });
});
