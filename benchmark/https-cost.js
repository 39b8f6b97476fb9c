'use strict';

// Scenario 3, HTTPS: scenario 2 over TLS. Keep-alive agents pay the TLS
// handshake once per socket; agents without keep-alive pay it per request,
// cheaper when the agent resumes a cached TLS session, dearer when it cannot
// (the maxCachedSessions:0 row).
//
//   node benchmark/https-cost.js
//   BENCH_REQUESTS=10000 BENCH_NOKEEPALIVE_REQUESTS=2000 BENCH_ROUNDS=7 node benchmark/https-cost.js
const https = require('node:https');
const { runMain } = require('./lib/processes');
const { runCostScenario } = require('./lib/cost');

const noSessionCache = {
  id: 'node-no-keepalive-no-session-cache',
  kind: 'agent',
  keepAlive: false,
  label: () => 'https.Agent keepAlive:false maxCachedSessions:0',
  create: (_protocol, options) => new https.Agent({
    ...options, keepAlive: false, maxSockets: Infinity, maxCachedSessions: 0,
  }),
};

runMain(() => runCostScenario({
  id: 'https-cost',
  title: 'Client cost (https)',
  summary: 'Scenario 2 over TLS (TLS 1.3, fixture certificates): the handshake that keep-alive saves, '
    + 'and TLS session resumption on the new connections of agents without keep-alive.',
  protocol: 'https',
  extra: [noSessionCache],
  defaults: { requests: 1000, noKeepAliveRequests: 250, rounds: 41, warmup: 2000, concurrency: 50 },
}));
