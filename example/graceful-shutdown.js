'use strict';

// Graceful shutdown: on SIGTERM, start no new requests, let the ones in
// flight finish, then destroy the agent so no idle socket keeps the process
// alive. Run: node example/graceful-shutdown.js
//
// To stay self-contained the demo sends itself SIGTERM while three slow
// requests are in flight.
const http = require('node:http');
const { HttpAgent } = require('steady-agent');

const agent = new HttpAgent({ freeSocketTimeout: '30s' }); // long: only destroy() ends these sockets
const inFlight = new Set();
let shuttingDown = false;

function get(url) {
  if (shuttingDown) return Promise.reject(new Error('shutting down: request refused'));
  const pending = new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
  inFlight.add(pending);
  const forget = () => inFlight.delete(pending);
  pending.then(forget, forget);
  return pending;
}

async function main() {
  let received = 0;
  const server = http.createServer((req, res) => {
    received++;
    if (received === 3) process.kill(process.pid, 'SIGTERM'); // all three are in flight
    setTimeout(() => res.end(`done ${req.url}`), 300);
  });
  server.keepAliveTimeout = 60000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;

  process.once('SIGTERM', async () => {
    shuttingDown = true;
    console.log(`SIGTERM: waiting for ${inFlight.size} in-flight requests`);
    const results = await Promise.allSettled([...inFlight]);
    const ok = results.filter((result) => result.status === 'fulfilled').length;
    console.log(`${ok}/${results.length} in-flight requests finished`);

    agent.destroy();
    server.close(() => console.log('server closed'));
  });

  // Nothing is left to keep the event loop alive once the sockets have
  // closed, so the process ends by itself.
  process.once('exit', (code) => {
    const status = agent.getCurrentStatus();
    const count = (perOrigin) => Object.values(perOrigin).reduce((sum, n) => sum + n, 0);
    console.log(`exit ${code}: ${status.requestCount} requests served, `
      + `${status.closeSocketCount}/${status.createSocketCount} sockets closed, `
      + `${count(status.sockets) + count(status.freeSockets)} left in the pool`);
  });

  for (const path of ['/a', '/b', '/c']) {
    get(`${origin}${path}`).then((body) => console.log(`response: ${body}`), (err) => console.log(err.message));
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
