'use strict';

// The keep-alive race server: a bare TCP server speaking just enough HTTP/1.1
// to answer GET requests without bodies. Every response carries
// `Keep-Alive: timeout=<hint>`, and a connection left idle for exactly
// hint seconds after its last response is destroyed, as a strict server
// does. A request sent on that connection at about that moment meets a
// closed socket: that is the race.
//
// Options: { hint: seconds }
const net = require('node:net');
const { readOptions, answerCalls, reportListening } = require('./child');

const options = readOptions();
const hint = Number(options.hint) || 2;
const idleMs = hint * 1000;
const BODY = 'ok\n';
const RESPONSE = Buffer.from('HTTP/1.1 200 OK\r\n'
  + 'Content-Type: text/plain\r\n'
  + `Content-Length: ${BODY.length}\r\n`
  + 'Connection: keep-alive\r\n'
  + `Keep-Alive: timeout=${hint}\r\n`
  + `\r\n${BODY}`);

let stats = { connections: 0, requests: 0, idleCloses: 0 };

const server = net.createServer((socket) => {
  stats.connections++;
  socket.setNoDelay(true);
  let buffered = '';
  let idleTimer = null;

  function closeIdle() {
    idleTimer = null;
    stats.idleCloses++;
    socket.destroy();
  }

  socket.on('data', (chunk) => {
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
      socket.write(RESPONSE);
      if (/^connection:\s*close/im.test(head)) {
        socket.end();
        return;
      }
    }
    if (buffered.length === 0) idleTimer = setTimeout(closeIdle, idleMs);
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    if (idleTimer) clearTimeout(idleTimer);
  });
});

answerCalls({
  reset: () => {
    const previous = stats;
    stats = { connections: 0, requests: 0, idleCloses: 0 };
    return previous;
  },
});

server.listen(0, '127.0.0.1', () => reportListening(server.address().port));
