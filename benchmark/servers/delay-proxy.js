'use strict';

// A TCP proxy that stands in for a network with latency: every chunk, FIN and
// reset is forwarded `delay` ms after it arrives, in order, in each
// direction. A new connection also pays one round trip for the TCP handshake
// before its first byte is forwarded, since on loopback the client's connect
// completes at once. Data that reaches a target connection the server has
// already closed is answered with a reset, as a real TCP stack does. TLS
// passes through untouched.
//
// Options: { targetPort, delay: ms each way }
//
// Calls: reset() returns the stats so far ({ connections, closesForwarded })
// and starts new ones; closesForwarded(n) resolves once n closes of the
// target since the last reset have reached the client (its FIN sent, or a
// reset, or the client gone already). A benchmark that makes the server
// close connections waits for it before it counts on the client knowing:
// `delay` ms is the network's share, but on a busy machine this process may
// get the CPU much later than that.
const net = require('node:net');
const { performance } = require('node:perf_hooks');
const { readOptions, answerCalls, reportListening } = require('./child');

const options = readOptions();
const delay = Number(options.delay) || 0;
let stats = { connections: 0, closesForwarded: 0 };
// closesForwarded(n) calls waiting: { count, resolve }.
let waiting = [];

function closeForwarded() {
  stats.closesForwarded++;
  if (waiting.length === 0) return;
  const done = waiting.filter((w) => stats.closesForwarded >= w.count);
  waiting = waiting.filter((w) => stats.closesForwarded < w.count);
  for (const w of done) w.resolve(stats.closesForwarded);
}

/** Runs actions at their due time, strictly in the order they were queued. */
class Lane {
  constructor() {
    this.queue = [];
    this.timer = null;
    this.run = this.run.bind(this);
  }

  push(due, action) {
    this.queue.push({ due, action });
    if (!this.timer) this.arm();
  }

  arm() {
    const wait = Math.max(0, this.queue[0].due - performance.now());
    this.timer = setTimeout(this.run, wait);
  }

  run() {
    this.timer = null;
    while (this.queue.length && this.queue[0].due <= performance.now()) {
      this.queue.shift().action();
    }
    if (this.queue.length) this.arm();
  }

  clear() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue = [];
  }
}

function onConnection(client) {
  stats.connections++;
  const accepted = performance.now();
  // The handshake's round trip: nothing the client sends can leave before it.
  const readyAt = accepted + 2 * delay;
  const toTarget = new Lane();
  const toClient = new Lane();
  let targetClosed = false;
  let clientGone = false;
  // The target's close reached the client (counted once).
  let closeDelivered = false;
  const delivered = () => {
    if (closeDelivered) return;
    closeDelivered = true;
    closeForwarded();
  };

  const target = net.connect({ host: '127.0.0.1', port: options.targetPort, noDelay: true });
  client.setNoDelay(true);

  const resetClient = () => {
    if (!clientGone) {
      clientGone = true;
      client.resetAndDestroy();
    }
    if (targetClosed) delivered();
  };

  client.on('data', (chunk) => {
    toTarget.push(Math.max(performance.now(), readyAt) + delay, () => {
      if (targetClosed) {
        // Data for a closed connection: the server's stack answers with a reset.
        toClient.push(performance.now() + delay, resetClient);
      } else {
        target.write(chunk);
      }
    });
  });
  client.on('end', () => {
    toTarget.push(Math.max(performance.now(), readyAt) + delay, () => target.end());
  });
  client.on('error', () => {});
  client.on('close', () => {
    clientGone = true;
    if (targetClosed) delivered();
    toClient.clear();
    toTarget.push(performance.now() + delay, () => target.destroy());
  });

  target.on('data', (chunk) => {
    toClient.push(performance.now() + delay, () => {
      if (!clientGone) client.write(chunk);
    });
  });
  target.on('end', () => {
    targetClosed = true;
    toClient.push(performance.now() + delay, () => {
      // The callback: the FIN has left (or the socket failed first).
      if (!clientGone) client.end(delivered);
      else delivered();
    });
  });
  target.on('error', () => {});
  target.on('close', () => {
    const hadEnd = targetClosed;
    targetClosed = true;
    if (!hadEnd) toClient.push(performance.now() + delay, resetClient);
    // Once both sides are gone nothing is left to deliver.
    if (clientGone) toTarget.clear();
  });
}

const server = net.createServer(onConnection);

answerCalls({
  reset: () => {
    const previous = stats;
    stats = { connections: 0, closesForwarded: 0 };
    return previous;
  },
  closesForwarded: (count) => (stats.closesForwarded >= count
    ? stats.closesForwarded
    : new Promise((resolve) => { waiting.push({ count, resolve }); })),
});

server.listen(0, '127.0.0.1', () => reportListening(server.address().port));
