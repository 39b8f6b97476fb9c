'use strict';

// Node's own http.Server, over plain TCP or over TLS that this module wraps
// around each TCP connection itself, so that a handler can reset the TCP
// connection under a request (a TLS socket cannot be reset): what a server
// that crashes, restarts or closes an idle connection at that very moment,
// or a middlebox, does to a request.
const http = require('node:http');
const tls = require('node:tls');
const { createRawServer, fixtures } = require('./servers');

let secureContext = null;

/**
 * `handler(req, res, conn)` answers as an http.Server handler does; `conn`
 * is the connection: { index (1 for its first request), requests, reset()
 * (TCP RST), end() (FIN) }.
 *
 * Resolves with { port, protocol, url(path), connections (every conn, in
 * order), close() }.
 */
async function createResetServer(protocol, handler) {
  const connections = [];
  const bySocket = new WeakMap();
  const server = http.createServer((req, res) => {
    const conn = bySocket.get(req.socket);
    conn.requests++;
    handler(req, res, { ...conn, index: conn.requests });
  });
  server.keepAliveTimeout = 30000;

  const raw = await createRawServer((tcp) => {
    tcp.on('error', () => {});
    const socket = protocol === 'https:'
      ? new tls.TLSSocket(tcp, { isServer: true, secureContext: (secureContext ??= tls.createSecureContext({ key: fixtures.serverKey, cert: fixtures.serverCert })) })
      : tcp;
    const conn = {
      requests: 0,
      reset: () => tcp.resetAndDestroy(),
      end: () => socket.destroy(),
    };
    connections.push(conn);
    bySocket.set(socket, conn);
    socket.on('error', () => {});
    // Node 18 may not close a TLS socket whose TCP socket was reset under it.
    if (socket !== tcp) tcp.on('close', () => socket.destroy());
    server.emit('connection', socket);
  });

  return {
    port: raw.port,
    protocol,
    url(path = '/') { return `${protocol}//127.0.0.1:${raw.port}${path}`; },
    connections,
    close() {
      server.close();
      return raw.close();
    },
  };
}

module.exports = { createResetServer };
