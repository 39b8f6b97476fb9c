'use strict';

// The keep-alive race server: a bare TCP server speaking just enough HTTP/1.1
// to answer GET requests without bodies. Every response carries
// `Keep-Alive: timeout=<hint>`, and a connection left idle for exactly
// hint seconds after its last response is destroyed, as a strict server
// does. A request sent on that connection at about that moment meets a
// closed socket: that is the race.
//
// Options: { hint: seconds, idle: ms, node: boolean }. With `hint: 0` the
// server announces nothing and closes connections idle for `idle` ms (default
// 2000): a hintless server, whose limit a client can only learn. With
// `node: true` it is Node's own http.Server with keepAliveTimeout = hint
// seconds (it announces `Keep-Alive: timeout=<hint>` itself).
//
// Calls: reset() returns the stats so far and starts new ones; drain() closes
// every idle connection at once, as a draining server does
// (server.closeIdleConnections()); restart() closes every connection, idle or
// not, as a deploy does (server.closeAllConnections()). A request for
// /reset is read, then its connection destroyed without an answer (an
// application error, a proxy's reset).
const http = require('node:http');
const net = require('node:net');
const { readOptions, answerCalls, reportListening } = require('./child');

const options = readOptions();
const hint = options.hint === undefined ? 2 : Number(options.hint);
const idleMs = hint > 0 ? hint * 1000 : Number(options.idle) || 2000;
const BODY = 'ok\n';
const RESPONSE = Buffer.from('HTTP/1.1 200 OK\r\n'
  + 'Content-Type: text/plain\r\n'
  + `Content-Length: ${BODY.length}\r\n`
  + 'Connection: keep-alive\r\n'
  + (hint > 0 ? `Keep-Alive: timeout=${hint}\r\n` : '')
  + `\r\n${BODY}`);

// usedConnections: connections that served at least one request, so that
// requests - usedConnections is the number of requests on reused sockets.
let stats = { connections: 0, usedConnections: 0, requests: 0, idleCloses: 0 };
const idle = new Set();
const open = new Set();

const kUsed = Symbol('used');

function nodeServer() {
  const node = http.createServer((req, res) => {
    stats.requests++;
    if (!req.socket[kUsed]) {
      req.socket[kUsed] = true;
      stats.usedConnections++;
    }
    req.resume();
    if (req.url === '/reset') {
      req.socket.destroy();
      return;
    }
    res.setHeader('content-type', 'text/plain');
    res.end(BODY);
  });
  node.keepAliveTimeout = idleMs;
  node.on('connection', () => { stats.connections++; });
  return node;
}

const server = options.node ? nodeServer() : net.createServer((socket) => {
  stats.connections++;
  open.add(socket);
  socket.setNoDelay(true);
  let buffered = '';
  let idleTimer = null;
  let served = 0;

  function closeIdle() {
    idleTimer = null;
    stats.idleCloses++;
    socket.destroy();
  }
  socket.closeIdle = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    socket.destroy();
  };

  socket.on('data', (chunk) => {
    idle.delete(socket);
    if (idleTimer) {
      clearTimeout(idleTimer);
      idleTimer = null;
    }
    buffered += chunk.toString('latin1');
    let end;
    while ((end = buffered.indexOf('\r\n\r\n')) !== -1) {
      const head = buffered.slice(0, end);
      buffered = buffered.slice(end + 4);
      stats.requests++;
      if (served++ === 0) stats.usedConnections++;
      if (head.startsWith('GET /reset ')) {
        socket.destroy();
        return;
      }
      socket.write(RESPONSE);
      if (/^connection:\s*close/im.test(head)) {
        socket.end();
        return;
      }
    }
    if (buffered.length === 0) {
      idleTimer = setTimeout(closeIdle, idleMs);
      idle.add(socket);
    }
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    idle.delete(socket);
    open.delete(socket);
    if (idleTimer) clearTimeout(idleTimer);
  });
});

answerCalls({
  reset: () => {
    const previous = stats;
    stats = { connections: 0, usedConnections: 0, requests: 0, idleCloses: 0 };
    return previous;
  },
  drain: () => {
    if (options.node) {
      server.closeIdleConnections();
      return null;
    }
    const count = idle.size;
    for (const socket of idle) socket.closeIdle();
    idle.clear();
    return count;
  },
  restart: () => {
    if (options.node) {
      server.closeAllConnections();
      return null;
    }
    const count = open.size;
    for (const socket of open) socket.closeIdle();
    return count;
  },
});

server.listen(0, '127.0.0.1', () => reportListening(server.address().port));
