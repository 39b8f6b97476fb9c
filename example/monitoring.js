'use strict';

// Watch an agent in production: poll `statusChanged` and log the status only
// when something happened. Run: node example/monitoring.js
//
// A real service would poll every few seconds (or export the counters to its
// metrics system); this demo polls every second for three seconds while it
// sends bursts of requests to a local server, then stops.
const http = require('node:http');
const { HttpAgent } = require('steady-agent');

const POLL_MS = 1000;
const LOAD_MS = 2000;
const RUN_MS = 3200;

const agent = new HttpAgent({
  maxSockets: 4,
  freeSocketTimeout: '500ms', // short, so the demo shows idle sockets closing
});

function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
}

function monitor() {
  // Reading statusChanged marks the counters as seen, so each change is
  // logged once.
  if (!agent.statusChanged) {
    console.log('[monitor] no change');
    return;
  }
  const status = agent.getCurrentStatus();
  const total = (perOrigin) => Object.values(perOrigin).reduce((sum, n) => sum + n, 0);
  console.log(`[monitor] status changed: created=${status.createSocketCount} closed=${status.closeSocketCount}`
    + ` requests=${status.requestCount} errors=${status.errorSocketCount} timeouts=${status.timeoutSocketCount}`
    + ` active=${total(status.sockets)} idle=${total(status.freeSockets)} queued=${total(status.requests)}`);
  console.log(`[monitor] ${JSON.stringify(status)}`);
}

async function main() {
  const server = http.createServer((req, res) => setTimeout(() => res.end('ok'), 20));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;

  const started = Date.now();
  const poller = setInterval(monitor, POLL_MS);
  try {
    let sent = 0;
    while (Date.now() - started < LOAD_MS) {
      const burst = 1 + (sent % 6); // 1..6 concurrent requests, more than maxSockets at times
      await Promise.all(Array.from({ length: burst }, () => get(url)));
      sent += burst;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log(`[load] sent ${sent} requests; now idle`);
    await new Promise((resolve) => setTimeout(resolve, RUN_MS - (Date.now() - started)));
  } finally {
    clearInterval(poller);
    monitor();
    agent.destroy();
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
