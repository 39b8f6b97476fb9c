'use strict';

// The keep-alive race server: a bare TCP server speaking just enough HTTP/1.1
// to answer GET requests, and POST requests whose body has a Content-Length
// (read in full before the answer; a chunked body is refused with 411 and
// the connection closed). Every response carries
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
//
// A POST is answered with a minimal chat completion (JSON), as an API such
// as openai's /v1/chat/completions would. Stats also count, per tag (the
// first segment of the path, e.g. /fetch/... -> fetch), the requests and the
// connections whose first request had that tag: benchmark/fetch-post-race.js
// runs several clients at once against one server and tells them apart so.
const http = require('node:http');
const net = require('node:net');
const { readOptions, answerCalls, reportListening } = require('./child');

const options = readOptions();
const hint = options.hint === undefined ? 2 : Number(options.hint);
const idleMs = hint > 0 ? hint * 1000 : Number(options.idle) || 2000;
const KEEP_ALIVE = hint > 0 ? `Keep-Alive: timeout=${hint}\r\n` : '';

function response(type, body) {
  return Buffer.from('HTTP/1.1 200 OK\r\n'
    + `Content-Type: ${type}\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\n`
    + 'Connection: keep-alive\r\n'
    + `${KEEP_ALIVE}\r\n${body}`);
}

const BODY = 'ok\n';
const RESPONSE = response('text/plain', BODY);
const COMPLETION = response('application/json', JSON.stringify({
  id: 'chatcmpl-race',
  object: 'chat.completion',
  created: 0,
  model: 'race-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
}));
const LENGTH_REQUIRED = Buffer.from('HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');

// usedConnections: connections that served at least one request, so that
// requests - usedConnections is the number of requests on reused sockets.
let stats = newStats();

function newStats() {
  return { connections: 0, usedConnections: 0, requests: 0, idleCloses: 0, tags: {} };
}

/** The tag of a request head: the first segment of its path ('' for /). */
function tagOf(head) {
  const path = head.slice(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
  return path.split('/')[1] ?? '';
}

/** Counts a request of `head` (the first of its connection: `first`) under its tag. */
function countTag(head, first) {
  const tag = tagOf(head);
  const counts = stats.tags[tag] ??= { requests: 0, connections: 0 };
  counts.requests++;
  if (first) counts.connections++;
}

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
  // The head of a request whose body is still being read, and the bytes of it left.
  let head = null;
  let bodyLeft = 0;

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
    for (;;) {
      if (head === null) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) break;
        head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        if (/^transfer-encoding:/im.test(head)) {
          socket.end(LENGTH_REQUIRED);
          return;
        }
        const length = /^content-length:\s*(\d+)/im.exec(head);
        bodyLeft = length === null ? 0 : Number(length[1]);
      }
      // latin1: one character per byte, so lengths are Content-Length's.
      if (buffered.length < bodyLeft) break;
      buffered = buffered.slice(bodyLeft);
      const request = head;
      head = null;
      stats.requests++;
      countTag(request, served === 0);
      if (served++ === 0) stats.usedConnections++;
      if (request.startsWith('GET /reset ')) {
        socket.destroy();
        return;
      }
      socket.write(request.startsWith('POST ') ? COMPLETION : RESPONSE);
      if (/^connection:\s*close/im.test(request)) {
        socket.end();
        return;
      }
    }
    if (buffered.length === 0 && head === null) {
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
    stats = newStats();
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
