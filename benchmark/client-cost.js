'use strict';

// Scenario 2, client cost: CPU microseconds per request in the client process,
// per agent, as a median of per-round ratios to Node's keep-alive agent.
//
//   node benchmark/client-cost.js
//   BENCH_REQUESTS=20000 BENCH_ROUNDS=7 node benchmark/client-cost.js
//
// Defaults: 2000 requests per agent per round, 51 rounds. Single rounds
// swing by ±50% on a shared 2-core machine; many short rounds, each ratio
// taken between runs a second or two apart, give a median that repeats
// within a few percent, where a few long rounds do not.
const { runMain } = require('./lib/processes');
const { runCostScenario } = require('./lib/cost');

runMain(() => runCostScenario({
  id: 'client-cost',
  title: 'Client cost (http)',
  summary: 'One process sends N GET requests, 50 in flight, through each agent to a backend in another process; '
    + 'CPU µs per request from process.cpuUsage(), agents interleaved in rounds with a rotating order.',
  protocol: 'http',
  defaults: { requests: 2000, noKeepAliveRequests: 500, rounds: 51, warmup: 5000, concurrency: 50 },
}));
