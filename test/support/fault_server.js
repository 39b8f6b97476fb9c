'use strict';

// A misbehaving http server for the fault soak. It runs in a child process
// (child_process.fork), so that the test process's open file descriptors are
// the client's alone. The client picks the fault for each request by path:
//
//   /ok      200 with a body
//   /drop    closes the connection without answering
//   /slow    answers after SLOW_MS (longer than the client's timeout)
//   /close   answers with `Connection: close`
//   /cut     announces a body, sends half of it and closes the connection
//   /ka1     answers with `Keep-Alive: timeout=1`, then closes the connection
//            once it has been idle for a second, as announced
//   /500     500 with a body
//
// Messages to the parent: { type: 'listening', port } once ready, and
// { type: 'stats', open, accepted, requests } in answer to { type: 'stats' }.
// The parent stops it with { type: 'close' }.
const http = require('node:http');

const SLOW_MS = Number(process.env.FAULT_SERVER_SLOW_MS) || 400;
const BODY = 'x'.repeat(512);

const open = new Set();
let accepted = 0;
let requests = 0;
const pending = new Set(); // timers of slow answers and idle closes

function later(ms, fn) {
  const timer = setTimeout(() => {
    pending.delete(timer);
    fn();
  }, ms);
  pending.add(timer);
  return timer;
}

function cancel(timer) {
  if (timer === undefined) return;
  clearTimeout(timer);
  pending.delete(timer);
}

const kIdleClose = Symbol('idleClose');

function handle(req, res) {
  requests++;
  const socket = req.socket;
  // A new request on a connection that announced timeout=1 keeps it open.
  cancel(socket[kIdleClose]);
  socket[kIdleClose] = undefined;
  req.resume();

  switch (req.url) {
    case '/drop':
      socket.destroy();
      return;
    case '/slow':
      later(SLOW_MS, () => {
        if (!res.destroyed) res.end(BODY);
      });
      return;
    case '/close':
      res.setHeader('connection', 'close');
      res.end(BODY);
      return;
    case '/cut':
      res.setHeader('content-length', BODY.length * 2);
      res.write(BODY, () => socket.destroy());
      return;
    case '/ka1':
      res.setHeader('keep-alive', 'timeout=1');
      res.on('finish', () => {
        if (!socket.destroyed) socket[kIdleClose] = later(1000, () => socket.destroy());
      });
      res.end(BODY);
      return;
    case '/500':
      res.statusCode = 500;
      res.end('server error');
      return;
    default:
      res.end(BODY);
  }
}

const server = http.createServer(handle);
// Node's default; stated so the soak does not depend on the Node version.
server.keepAliveTimeout = 5000;
server.on('connection', (socket) => {
  accepted++;
  open.add(socket);
  socket.once('close', () => {
    open.delete(socket);
    cancel(socket[kIdleClose]);
  });
});
server.on('clientError', (err, socket) => socket.destroy());

process.on('message', (message) => {
  if (message.type === 'stats') {
    process.send({ type: 'stats', open: open.size, accepted, requests });
  } else if (message.type === 'close') {
    for (const timer of pending) clearTimeout(timer);
    pending.clear();
    for (const socket of open) socket.destroy();
    server.close(() => process.disconnect());
  }
});
// The parent went away without saying goodbye: do not linger.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  process.send({ type: 'listening', port: server.address().port });
});
