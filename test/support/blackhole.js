'use strict';

// An address where a TCP connect never completes, on loopback: a listening
// socket whose accept queue is full, so the system drops every new SYN (as a
// firewall that drops packets, or a server too busy to accept, would look).
//
// The listener lives in a child process whose event loop is blocked right
// after listen(), so it never accepts; the parent fills the accept queue
// with connections of its own (Linux holds backlog + 1). close() ends the
// child and those connections.
//
// Run as a script, this file is that child: `hosts` (comma-separated) are
// bound on one port, each with a backlog of 1.
const { fork } = require('node:child_process');
const net = require('node:net');

const BACKLOG = 1;

if (require.main === module) {
  const hosts = process.argv[2].split(',');
  const listen = (host, port) => new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port, backlog: BACKLOG }, () => resolve(server.address().port));
  });
  (async () => {
    // Every host on the first one's port: a port free on one address may
    // be taken on another, then try another port.
    for (;;) {
      const port = await listen(hosts[0], 0);
      try {
        for (const host of hosts.slice(1)) await listen(host, port);
      } catch {
        continue;
      }
      // Blocks this process's event loop for good: nothing is accepted.
      process.send(port, () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));
      return;
    }
  })();
} else {
  /**
   * Resolves with { port, close() } once a connect to any of `hosts`
   * (default 127.0.0.1) on `port` would hang.
   */
  module.exports.startBlackhole = async function startBlackhole(hosts = ['127.0.0.1']) {
    const child = fork(__filename, [hosts.join(',')], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const fillers = [];
    const close = () => {
      for (const socket of fillers) socket.destroy();
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    };
    try {
      const port = await new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once('exit', (code) => reject(new Error(`blackhole child exited with ${code}`)));
      });
      for (const host of hosts) {
        for (let i = 0; i <= BACKLOG; i++) {
          const socket = net.connect(port, host);
          fillers.push(socket);
          socket.on('error', () => {});
          await new Promise((resolve, reject) => {
            socket.once('connect', resolve);
            socket.once('error', reject);
          });
        }
      }
      return { port, close };
    } catch (err) {
      await close();
      throw err;
    }
  };
}
