'use strict';

// The proxy of the proxy-tunnel scenario: the `proxy` package (forwarding and
// CONNECT) over an http server, counting the connections it accepts and the
// CONNECT requests (tunnels) it serves, so the benchmark can tell how many
// tunnels each agent opened.
//
// `proxy` is an ES module only; it is loaded with import().
const http = require('node:http');
const { readOptions, answerCalls, reportListening } = require('./child');

readOptions();
let stats = { connections: 0, tunnels: 0 };
const open = new Set();

async function main() {
  const { createProxy } = await import('proxy');
  const server = createProxy(http.createServer());
  server.on('connection', (socket) => {
    stats.connections++;
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  server.on('connect', () => {
    stats.tunnels++;
  });
  answerCalls({
    stats: () => ({ ...stats, open: open.size }),
    reset: () => {
      const previous = { ...stats, open: open.size };
      stats = { connections: 0, tunnels: 0 };
      return previous;
    },
    // Ends the tunnels still open, so the next agent starts from nothing.
    dropConnections: () => {
      for (const socket of open) socket.destroy();
      return open.size;
    },
  });
  server.listen(0, '127.0.0.1', () => reportListening(server.address().port));
}

main();
