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
// A slow address is the same, released when the test says (release()):
// the child's event loop runs again, it accepts what waited, and a client's
// SYN is answered on its next retransmission (Linux sends the first about
// 1 s after the SYN). Released, the child serves http or https: "ok <its
// address>".
//
// Run as a script, this file is that child: `hosts` (comma-separated) are
// bound on one port, each with a backlog of 1; then 'held' (blocked until a
// byte comes on stdin) or '' (for good), the protocol it serves once
// released, and the port ('0': any).
const { fork } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');

const BACKLOG = 1;

function serverFor(protocol) {
  const answer = (req, res) => {
    req.resume();
    res.end(`ok ${req.socket.localAddress}`);
  };
  if (protocol === 'http:') return require('node:http').createServer(answer);
  if (protocol === 'https:') {
    const { serverKey: key, serverCert: cert } = require('./tls');
    return require('node:https').createServer({ key, cert }, answer);
  }
  return net.createServer();
}

// A synchronous read of stdin, which may be non-blocking: polled.
function waitForByte() {
  const sleep = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      if (fs.readSync(0, Buffer.alloc(1)) !== 0) return;
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
    }
    Atomics.wait(sleep, 0, 0, 10);
  }
}

if (require.main === module) {
  const hosts = process.argv[2].split(',');
  const held = process.argv[3] === 'held';
  const protocol = process.argv[4];
  const fixedPort = Number(process.argv[5] || 0);
  const listen = (host, port) => new Promise((resolve, reject) => {
    const server = serverFor(protocol);
    server.once('error', reject);
    server.listen({ host, port, backlog: BACKLOG }, () => resolve(server.address().port));
  });
  (async () => {
    // Every host on the first one's port: a port free on one address may
    // be taken on another, then try another port.
    for (;;) {
      const port = await listen(hosts[0], fixedPort);
      try {
        for (const host of hosts.slice(1)) await listen(host, port);
      } catch {
        continue;
      }
      // Blocks this process's event loop, for good or until the parent
      // writes a byte: nothing is accepted meanwhile.
      process.send(port, () => (held ? waitForByte() : Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)));
      return;
    }
  })();
} else {
  /**
   * Resolves with { port, close(), release() } once a connect to any of
   * `hosts` (default 127.0.0.1) on `port` would hang. With `held`, until
   * release(), and then `protocol` ('http:' or 'https:') is served.
   * `port`: that port (the child fails if it is taken), else one free.
   */
  module.exports.startBlackhole = async function startBlackhole(hosts = ['127.0.0.1'], { held = false, protocol, port: at = 0 } = {}) {
    const args = [hosts.join(','), held ? 'held' : '', protocol ?? '', String(at)];
    const child = fork(__filename, args, { stdio: [held ? 'pipe' : 'ignore', 'inherit', 'inherit', 'ipc'] });
    const release = () => child.stdin.write('x');
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
      return { port, close, release };
    } catch (err) {
      await close();
      throw err;
    }
  };
}
