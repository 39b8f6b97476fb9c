'use strict';

// Graceful shutdown: on SIGTERM, agent.close() refuses new requests, lets
// the ones in flight (and any queued behind maxSockets) finish, closes every
// socket as soon as it is free, and resolves when none is left; then the
// process ends by itself. Run: node example/graceful-shutdown.js
//
// To stay self-contained the demo sends itself SIGTERM while three slow
// requests are in flight (a fourth waits in the queue behind maxSockets: 3).
const http = require('node:http');
const { HttpAgent } = require('steady-agent');

const agent = new HttpAgent({ maxSockets: 3, freeSocketTimeout: '30s' });

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

async function main() {
  let received = 0;
  const server = http.createServer((req, res) => {
    received++;
    if (received === 3) process.kill(process.pid, 'SIGTERM'); // three in flight, one queued
    setTimeout(() => res.end(`done ${req.url}`), 300);
  });
  server.keepAliveTimeout = 60000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;

  process.once('SIGTERM', async () => {
    const { sockets, requests } = agent.getCurrentStatus();
    const count = (perOrigin) => Object.values(perOrigin).reduce((sum, n) => sum + n, 0);
    console.log(`SIGTERM: closing the agent with ${count(sockets)} requests in flight and ${count(requests)} queued`);
    const closed = agent.close();
    // A request made from now on fails with ERR_AGENT_CLOSED.
    get(`${origin}/late`).catch((err) => console.log(`a new request: ${err.code}`));
    await closed;
    console.log('agent closed: no socket left');
    server.close(() => console.log('server closed'));
  });

  process.once('exit', (code) => {
    const status = agent.getCurrentStatus();
    console.log(`exit ${code}: ${status.requestCount} requests served, `
      + `${status.closeSocketCount}/${status.createSocketCount} sockets closed`);
  });

  for (const path of ['/a', '/b', '/c', '/d']) {
    get(`${origin}${path}`).then((body) => console.log(`response: ${body}`), (err) => console.log(err.message));
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
