'use strict';

// The origin server: answers every request with a short body, optionally
// after a delay, and counts the connections it accepts (and, over TLS, how
// many of them resumed a session) so a benchmark can tell how many sockets an
// agent opened.
//
// Options: { protocol: 'http' | 'https', delay: ms, keepAliveTimeout: ms,
//   batch: n, signal: path, host: address to listen on (127.0.0.1), port (0),
//   servedBy: answer with an `x-served-by: <host>` header (dns-flip.js tells
//   the addresses apart) }
//
// With `batch` and `signal` (instructions.js at more than one request in
// flight) the server answers in batches: it holds the responses until `batch`
// requests have arrived, answers them all, and once every answer has been
// handed to the kernel, and a moment more, writes one byte to the FIFO at
// `signal`. The client waits for that byte before its event loop polls again,
// so each batch's responses reach it in one poll, however fast or slow either
// process runs.
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const { readOptions, answerCalls, reportListening } = require('./child');

const options = readOptions();
const protocol = options.protocol || 'http';
const delay = Number(options.delay) || 0;
const BODY = Buffer.from('hello world\n');
const host = options.host || '127.0.0.1';
const HEADERS = { 'content-type': 'text/plain', 'content-length': BODY.length };
if (options.servedBy) HEADERS['x-served-by'] = host;
// A request for `/close` is answered with `Connection: close`: the client's
// next request opens a new connection (fetch-cost.js mixes them in).
const CLOSE_HEADERS = { ...HEADERS, connection: 'close' };

let stats = { connections: 0, resumed: 0, requests: 0 };
const open = new Set();

function respond(res) {
  res.writeHead(200, res.req.url === '/close' ? CLOSE_HEADERS : HEADERS);
  res.end(BODY);
}

const batched = createBatches(options);

// The body (if any) is read to the end before answering, as a real handler
// would: the Nagle scenario depends on it.
function onRequest(req, res) {
  stats.requests++;
  req.on('end', () => {
    if (batched !== null) batched(res);
    else if (delay > 0) setTimeout(respond, delay, res);
    else respond(res);
  });
  req.resume();
}

/** The batching answer (see the top of this file), or null without `batch`. */
function createBatches({ batch, signal }) {
  if (!(batch > 0) || typeof signal !== 'string') return null;
  // Read-write: opening a FIFO for writing alone would wait for the reader.
  const fd = fs.openSync(signal, fs.constants.O_RDWR);
  // A batch that does not fill (a request lost on the way) is answered with
  // 503 after this long, so the client fails its run instead of waiting.
  // Long: under valgrind on a loaded machine a batch may take minutes.
  const STALL_MS = 10 * 60 * 1000;
  // After the last answer's 'finish', the byte waits this long: an answer
  // handed to the kernel is on its way, not always in the client's socket
  // yet. (It did not remove the modes of https at 50 in flight: the widest
  // came from the client's GC flags, see instructions.js.) 20 ms a batch,
  // some 5 s a run, on top of minutes under valgrind.
  const SETTLE_MS = 20;
  const signalBatch = () => fs.writeSync(fd, 'x');
  let pending = [];
  let stall = null;
  const flush = (status) => {
    clearTimeout(stall);
    stall = null;
    const answering = pending;
    pending = [];
    let finished = 0;
    const onFinish = () => {
      if (++finished === answering.length) setTimeout(signalBatch, SETTLE_MS);
    };
    for (const res of answering) {
      res.once('finish', onFinish);
      if (status === 200) respond(res);
      else res.writeHead(status, { 'content-length': 0 }).end();
    }
  };
  return (res) => {
    pending.push(res);
    if (pending.length === batch) flush(200);
    else if (stall === null) stall = setTimeout(flush, STALL_MS, 503);
  };
}

let server;
if (protocol === 'https') {
  const { key, cert } = require('../lib/tls');
  server = https.createServer({ key, cert }, onRequest);
  server.on('secureConnection', (socket) => {
    stats.connections++;
    if (socket.isSessionReused()) stats.resumed++;
  });
} else {
  server = http.createServer(onRequest);
  server.on('connection', () => {
    stats.connections++;
  });
}
server.on('connection', (socket) => {
  open.add(socket);
  socket.once('close', () => open.delete(socket));
});
if (options.keepAliveTimeout != null) server.keepAliveTimeout = options.keepAliveTimeout;

answerCalls({
  stats: () => ({ ...stats, open: open.size }),
  reset: () => {
    const previous = { ...stats, open: open.size };
    stats = { connections: 0, resumed: 0, requests: 0 };
    return previous;
  },
  // Closes the connections it holds, so the next agent starts from nothing.
  dropConnections: () => {
    for (const socket of open) socket.destroy();
    return open.size;
  },
  // The server goes away, as a stopped instance does: no new connection is
  // accepted and the open ones are cut.
  shutdown: () => {
    server.close();
    for (const socket of open) socket.destroy();
    return open.size;
  },
});

server.listen(Number(options.port) || 0, host, () => reportListening(server.address().port));
