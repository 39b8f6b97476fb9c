'use strict';

// A scripted keep-alive server over raw sockets, for tests that need exact
// control of what a server announces, when it answers and when it closes an
// idle connection. HTTP is written by hand; for https the server wraps each
// TCP connection in TLS itself, so that a test can still reset the TCP
// connection under the TLS session.
//
// Every connection is logged: the requests it got, the ones it dropped and
// who closed it first ('client' when the server saw the client's FIN or the
// connection closed without the server closing it, 'server' otherwise).
const tls = require('node:tls');
const { createRawServer, onRequests, rawResponse, fixtures } = require('./servers');

let secureContext = null;

function serverContext() {
  secureContext ??= tls.createSecureContext({ key: fixtures.serverKey, cert: fixtures.serverCert });
  return secureContext;
}

/**
 * options:
 *   respond(request, conn): the raw response to write (a string), null to drop
 *     the connection without answering, or a promise of either. `request` is
 *     { method, path, head, index } (index: 1 for the connection's first request).
 *     Default: a 200 'ok' response with no Keep-Alive header.
 *   idleTimeout: ms; the server closes a connection this long after its last
 *     response if no byte of a new request has arrived (0: never). A function
 *     (conn) => ms gives each connection its own limit.
 *   idleClose: how: 'destroy' (FIN, as Node's server does), 'end' (half-close,
 *     FIN, the server could still read) or 'reset' (TCP RST).
 *   onIdleClose(conn): called as the server closes an idle connection, before
 *     it does: the client's side has not heard of it yet.
 *
 * Resolves with { port, url(path), connections, accepted, closedBy(who), close() }.
 */
async function createScriptedServer(protocol, options = {}) {
  const {
    respond = () => rawResponse('ok'),
    idleTimeout = 0,
    idleClose = 'destroy',
    onIdleClose = null,
  } = options;
  const connections = [];

  const onConnection = (tcp) => {
    tcp.on('error', () => {});
    const socket = protocol === 'https:'
      ? new tls.TLSSocket(tcp, { isServer: true, secureContext: serverContext() })
      : tcp;
    const conn = {
      id: connections.length,
      socket,
      tcp,
      requests: 0,
      dropped: 0,
      pending: 0,
      closedBy: null,
      closed: false,
      idleClosed: false,
      timer: null,
    };
    connections.push(conn);

    const clearIdleTimer = () => {
      if (conn.timer !== null) clearTimeout(conn.timer);
      conn.timer = null;
    };
    const closeIdle = () => {
      conn.timer = null;
      if (conn.closed || conn.closedBy !== null) return;
      conn.closedBy = 'server';
      conn.idleClosed = true;
      if (onIdleClose !== null) onIdleClose(conn);
      if (idleClose === 'end') socket.end();
      else if (idleClose === 'reset') tcp.resetAndDestroy();
      else socket.destroy();
    };

    // Any byte of a new request keeps the connection open, as in Node's server.
    socket.on('data', clearIdleTimer);
    socket.on('end', () => {
      if (conn.closedBy === null) conn.closedBy = 'client';
    });
    const onClose = () => {
      clearIdleTimer();
      if (conn.closedBy === null) conn.closedBy = 'client';
      conn.closed = true;
    };
    socket.on('close', onClose);
    // Node 18 may not close a TLS socket whose TCP socket was reset under it.
    if (socket !== tcp) {
      tcp.on('close', () => {
        socket.destroy();
        onClose();
      });
    }

    onRequests(socket, async (request) => {
      conn.requests++;
      conn.pending++;
      const reply = await respond({ ...request, index: conn.requests }, conn);
      conn.pending--;
      if (conn.closed || socket.destroyed) return;
      if (reply === null) {
        conn.dropped++;
        if (conn.closedBy === null) conn.closedBy = 'server';
        socket.destroy();
        return;
      }
      socket.write(reply);
      const limit = typeof idleTimeout === 'function' ? idleTimeout(conn) : idleTimeout;
      if (conn.pending === 0 && limit > 0) {
        clearIdleTimer();
        conn.timer = setTimeout(closeIdle, limit);
      }
    });
  };

  const handle = await createRawServer(onConnection, 'http:');
  return {
    port: handle.port,
    protocol,
    url(path = '/') { return `${protocol}//127.0.0.1:${handle.port}${path}`; },
    connections,
    get accepted() { return connections.length; },
    get dropped() { return connections.reduce((sum, conn) => sum + conn.dropped, 0); },
    /** How many connections `who` ('client' or 'server') closed first. */
    closedBy(who) { return connections.filter((conn) => conn.closedBy === who).length; },
    close() {
      for (const conn of connections) clearTimeout(conn.timer);
      return handle.close();
    },
  };
}

/** The pool name in a socket's SOCKET_NAME, `sock[<id>#<pool>]`. */
function poolOf(socketName) {
  const match = /^sock\[\d+#(.*)\]$/.exec(socketName);
  return match === null ? undefined : match[1];
}

module.exports = { createScriptedServer, poolOf, rawResponse };
