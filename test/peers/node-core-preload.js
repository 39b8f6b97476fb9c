'use strict';

// Preloaded (`node -r`) into each of Node's own tests when it runs against
// steady-agent: STEADY_AGENT_DIR names the installed package. Core's tests
// then build our agents wherever they build Node's:
// - http.Agent and https.Agent are our classes, so `new http.Agent(options)`
//   gets the test's options untouched and our defaults for the rest
//   (keep-alive on, free and active timeouts);
// - called without `new`, as core's Agent may be and several tests do, they
//   still construct (a Proxy whose call is `new`; construct, subclassing,
//   instanceof and statics reach the class itself);
// - http.globalAgent and https.globalAgent are ours, made with the options
//   core makes its own with, so `agent: false` (a new agent of the global
//   agent's class) and requests without an agent use ours too.
// Loaded before the swap, the package extends core's own classes.
const http = require('node:http');
const https = require('node:https');
const { HttpAgent, HttpsAgent } = require(process.env.STEADY_AGENT_DIR);

const callable = (Agent) => new Proxy(Agent, { apply: (Target, self, args) => new Target(...args) });

function globalOptions(core) {
  const options = { keepAlive: true, scheduling: 'lifo', timeout: 5000 };
  if (core.options && core.options.proxyEnv !== undefined) options.proxyEnv = core.options.proxyEnv;
  return options;
}

http.Agent = callable(HttpAgent);
https.Agent = callable(HttpsAgent);
http.globalAgent = new HttpAgent(globalOptions(http.globalAgent));
https.globalAgent = new HttpsAgent(globalOptions(https.globalAgent));
