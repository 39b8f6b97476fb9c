'use strict';

// Watch an agent in production: poll `statusChanged` and log the status only
// when something happened, read the per-origin counters of `getStats()`, and
// listen to the pool events on diagnostics_channel (why each socket closed,
// how long requests waited behind maxSockets). Run: node example/monitoring.js
//
// A real service would poll every few seconds (or export the counters to its
// metrics system); this demo polls every second for three seconds while it
// sends bursts of requests to a local server, then stops.
const diagnosticsChannel = require('node:diagnostics_channel');
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

// Events: published only while someone subscribes. Each message carries the
// agent, so a process with several agents can tell them apart.
let queuedWaits = 0;
function onClose({ agent: from, origin, reason, requests, lifetimeMs }) {
  if (from !== agent) return;
  console.log(`[event] ${origin} socket closed: ${reason} after ${requests} requests (${Math.round(lifetimeMs)} ms)`);
}
function onDequeued({ agent: from }) {
  if (from === agent) queuedWaits++;
}
diagnosticsChannel.subscribe('steady-agent:socket:close', onClose);
diagnosticsChannel.subscribe('steady-agent:request:dequeued', onDequeued);

function logStats() {
  for (const [origin, stats] of Object.entries(agent.getStats().origins)) {
    console.log(`[stats] ${origin} requests=${stats.requests} reused=${stats.reusedRequests}`
      + ` created=${stats.socketsCreated} closed=${stats.socketsClosed} closeReasons=${JSON.stringify(stats.closeReasons)}`
      + ` waited=${stats.queueWaitMs.count} (max ${stats.queueWaitMs.max.toFixed(1)} ms)`);
  }
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
    for (let round = 0; Date.now() - started < LOAD_MS; round++) {
      const burst = 1 + (round % 6); // 1..6 concurrent requests, more than maxSockets at times
      await Promise.all(Array.from({ length: burst }, () => get(url)));
      sent += burst;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log(`[load] sent ${sent} requests; now idle`);
    await new Promise((resolve) => setTimeout(resolve, RUN_MS - (Date.now() - started)));
  } finally {
    clearInterval(poller);
    monitor();
    logStats();
    console.log(`[event] ${queuedWaits} requests waited for a socket`);
    agent.destroy();
    diagnosticsChannel.unsubscribe('steady-agent:socket:close', onClose);
    diagnosticsChannel.unsubscribe('steady-agent:request:dequeued', onDequeued);
    server.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
