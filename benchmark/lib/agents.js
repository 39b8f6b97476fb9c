'use strict';

// The agents every scenario compares, and one small client over each so the
// scenarios drive them all through the same code. Node agents are driven
// through http(s).request; undici's Pool through its own request API.
const http = require('node:http');
const https = require('node:https');
const AgentKeepAlive = require('agentkeepalive');

const SteadyAgent = require('../..');

const versionOf = (name) => require(`${name}/package.json`).version;
const moduleFor = (protocol) => (protocol === 'https' ? https : http);

const CANDIDATES = [
  {
    id: 'steady-agent',
    kind: 'agent',
    label: () => 'steady-agent',
    create: (protocol, options) => (protocol === 'https'
      ? new SteadyAgent.HttpsAgent(options)
      : new SteadyAgent(options)),
  },
  {
    id: 'node-keepalive',
    kind: 'agent',
    label: (protocol) => `${protocol}.Agent keepAlive:true`,
    create: (protocol, options) => new (moduleFor(protocol).Agent)({ ...options, keepAlive: true }),
  },
  {
    id: 'node-no-keepalive',
    kind: 'agent',
    keepAlive: false,
    label: (protocol) => `${protocol}.Agent keepAlive:false`,
    // No maxSockets: with a finite maxSockets Node sends `Connection:
    // keep-alive` and hands a finished socket to a queued request, so the
    // agent would not be a no-keep-alive baseline. The callers bound the
    // requests in flight themselves.
    create: (protocol, options) => new (moduleFor(protocol).Agent)({ ...options, keepAlive: false, maxSockets: Infinity }),
  },
  {
    id: 'agentkeepalive',
    kind: 'agent',
    label: () => `agentkeepalive ${versionOf('agentkeepalive')}`,
    create: (protocol, options) => (protocol === 'https'
      ? new AgentKeepAlive.HttpsAgent(options)
      : new AgentKeepAlive(options)),
  },
  {
    id: 'undici',
    kind: 'pool',
    label: () => `undici ${versionOf('undici')} Pool`,
    // undici is required here, not at the top: loading it starts compiling
    // its WebAssembly HTTP parser in the background, and instructions.js
    // counted that in the runs of every other agent, a different share of it
    // on the main thread each time (glibc's heap state with it).
    create: (protocol, options, origin) => new (require('undici').Pool)(origin, {
      connections: options.maxSockets || null,
      connect: options.ca ? { ca: options.ca } : undefined,
    }),
  },
];

/**
 * The candidates to run, in a fixed order. BENCH_AGENTS (comma-separated
 * ids) narrows the list, e.g. BENCH_AGENTS=steady-agent for profiling.
 * `extra` appends scenario-specific variants.
 */
function candidates({ include, extra = [] } = {}) {
  let list = CANDIDATES.concat(extra);
  if (include) list = list.filter((c) => include.includes(c.id));
  const only = process.env.BENCH_AGENTS;
  if (only) {
    const wanted = only.split(',').map((s) => s.trim()).filter(Boolean);
    list = list.filter((c) => wanted.includes(c.id));
  }
  return list;
}

function findCandidate(id) {
  const found = CANDIDATES.find((c) => c.id === id);
  if (!found) throw new Error(`unknown agent id ${id}`);
  return found;
}

/**
 * Creates the agent (or pool) for `candidate` aimed at 127.0.0.1:port and a
 * client over it:
 *   get(cb)   one GET /, cb(err, statusCode) once the body has been read
 *   status()  the agent's getCurrentStatus(), when it has one
 *   close()   destroys the agent or pool
 */
function createClient(candidate, { protocol = 'http', port, agentOptions = {} }) {
  const origin = `${protocol}://127.0.0.1:${port}`;
  const agent = candidate.create(protocol, agentOptions, origin);
  const base = { id: candidate.id, label: candidate.label(protocol), kind: candidate.kind, agent, origin };
  if (candidate.kind === 'pool') {
    return { ...base, get: poolGet(agent), status: () => null, close: () => agent.destroy() };
  }
  return {
    ...base,
    get: agentGet(moduleFor(protocol), { host: '127.0.0.1', port, path: '/', agent }),
    status: () => (typeof agent.getCurrentStatus === 'function' ? agent.getCurrentStatus() : null),
    close: () => {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

// One options object for every request: the request path should cost what
// the agent costs, not what building options costs.
function agentGet(mod, options) {
  return function get(cb) {
    let done = false;
    const finish = (err, status) => {
      if (done) return;
      done = true;
      cb(err, status);
    };
    const req = mod.request(options, (res) => {
      res.on('end', () => finish(null, res.statusCode));
      res.on('error', finish);
      res.resume();
    });
    req.on('error', finish);
    req.end();
  };
}

function poolGet(pool) {
  const options = { path: '/', method: 'GET' };
  return function get(cb) {
    pool.request(options, (err, data) => {
      if (err) {
        cb(err);
        return;
      }
      let done = false;
      const finish = (error) => {
        if (done) return;
        done = true;
        cb(error, data.statusCode);
      };
      data.body.on('end', () => finish(null));
      data.body.on('error', finish);
      data.body.resume();
    });
  };
}

module.exports = { candidates, findCandidate, createClient, moduleFor, versionOf };
