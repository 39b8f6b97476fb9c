'use strict';

// `steady-agent/fetch`: Node's own fetch, its requests sent through a
// dispatcher of ours. Each call is `globalThis.fetch(input, { ...init,
// dispatcher })`: Node's bundled undici (5.28 on Node 18 to 8 on Node 26)
// parses, redirects, decodes and builds the Response. Nothing here loads
// undici from npm.
//
// The dispatcher is, where we can reach it, a subclass of the bundled
// undici's own Agent class over steady-agent's transport
// (lib/undici/dispatcher.js). No module exports that class: it is the
// constructor of the global dispatcher the bundled undici installs when
// fetch first runs (globalThis[Symbol.for('undici.globalDispatcher.2')] on
// undici 7.? and 8, '.1' before; checked on Node 18.20, 20.20, 22.23, 24.21
// and 26.12). Where that dispatcher is not the bundled Agent (npm's undici
// was loaded first and installed its own, or the caller set another), its
// class would speak another major's protocol to Node's fetch: the requests
// then go through the agent instead (lib/fetch/adapter.js), slower but
// right with any global dispatcher.
//
// A call that failed on a reused connection before any byte of its response,
// that the agent judged replayable (idempotent, or keyed), is made once more
// at once, when its body can be made again and nothing else happened on the
// way: no redirect followed (the failed hop was not the request the caller
// made), no abort. Every other failure is Node's error as it was, with the
// agent's marked error as its `cause`.
const { AgentDispatch } = require('./adapter');
const { callReplayable, signalAborted } = require('./replay');
// Every module of the agent this file uses, in one place.
const { isReplayable } = require('../retry');
const { transportClass } = require('../undici/dispatcher');
const { channels, publish } = require('../observe/channels');

// Taken once: a caller who later sets globalThis.fetch to ours must not loop.
const nativeFetch = globalThis.fetch;

const GLOBAL_DISPATCHERS = [Symbol.for('undici.globalDispatcher.2'), Symbol.for('undici.globalDispatcher.1')];

/** True when `Class` is exported by a module loaded from a file (npm's undici), not Node's own. */
function loadedFromFile(Class) {
  for (const loaded of Object.values(require.cache)) {
    const exports = loaded?.exports;
    if (exports !== null && typeof exports === 'object' && exports.Agent === Class) return true;
  }
  return false;
}

let bundled; // the bundled undici's Agent class, null where unknown

/** The bundled undici's Agent class, or null: the global dispatcher's class, if it is Node's own Agent. */
function bundledAgent() {
  if (bundled !== undefined) return bundled;
  const installed = () => GLOBAL_DISPATCHERS.map((symbol) => globalThis[symbol]).find((value) => value != null);
  // The bundled undici loads, and installs its global dispatcher, at the
  // first fetch call (synchronously): a data: URL opens no connection.
  if (installed() === undefined && typeof nativeFetch === 'function') nativeFetch('data:,').then((res) => res.arrayBuffer(), () => {});
  const Class = installed()?.constructor;
  bundled = typeof Class === 'function' && Class.name === 'Agent' && typeof Class.prototype.dispatch === 'function' &&
    !loadedFromFile(Class) ? Class : null;
  return bundled;
}

// Known from the start: a steady-agent/fetch imported before npm's undici
// gets the bundled class even if npm's then installs its own dispatcher.
bundledAgent();

/** The transport for createFetch: the native one where the bundled Agent is reachable, else the adapter. */
function transportFor(options) {
  const Agent = bundledAgent();
  if (Agent === null) return new AgentDispatch(options);
  return new (transportClass(Agent, 'SteadyFetchDispatcher'))(options);
}

/**
 * A dispatcher for one fetch call, counting the requests fetch dispatched
 * through it: more than one means fetch followed a redirect.
 */
class CallDispatcher {
  dispatches = 0;
  opts = null; // of the last request dispatched

  constructor(transport) {
    this.transport = transport;
  }

  dispatch(opts, handler) {
    this.dispatches++;
    this.opts = opts;
    return this.transport.dispatch(opts, handler);
  }
}

/** The resend event: `call`'s request, failed with `err`, is sent again (the agent's fields, as the transport's events). */
function publishResend(transport, call, err) {
  const opts = call.opts;
  const url = new URL(String(opts.origin));
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  publish(channels.resend, {
    method: opts.method, path: opts.path, error: err.cause ?? err,
    agent: transport, origin: `${host}:${port}:`, host, port, scheme: url.protocol.slice(0, -1),
  });
}

/**
 * A `fetch` with agents of its own, made from `options` (the agent's:
 * validated as `new HttpAgent(options)` validates them).
 * @returns {typeof globalThis.fetch & { getStats(): object, close(): Promise<void> }}
 */
function createFetch(options) {
  if (typeof nativeFetch !== 'function') throw new Error('steady-agent/fetch needs the global fetch of Node 18 or later');
  const transport = transportFor(options);

  async function fetch(input, init) {
    // A dispatcher the caller chose is theirs: the call is Node's own.
    if (init != null && init.dispatcher != null) return nativeFetch(input, init);
    const first = new CallDispatcher(transport);
    try {
      return await nativeFetch(input, { ...init, dispatcher: first });
    } catch (err) {
      if (first.dispatches !== 1 || !isReplayable(err) || !callReplayable(input, init) || signalAborted(input, init)) throw err;
      if (channels.resend.hasSubscribers) publishResend(transport, first, err);
    }
    return nativeFetch(input, { ...init, dispatcher: transport });
  }

  fetch.getStats = () => transport.getStats();
  fetch.close = () => transport.close();
  // The dispatcher the events name as `agent` (steady-agent/otel's observeAgent takes it).
  fetch.dispatcher = transport;
  return fetch;
}

let shared = null;
const sharedFetch = () => (shared ??= createFetch());

/** The global fetch's signature, through the module's shared agents (made at the first call). */
function fetch(input, init) {
  return sharedFetch()(input, init);
}

module.exports = {
  fetch,
  createFetch,
  /** The shared fetch's counters. */
  getStats: () => (shared === null ? { origins: {} } : shared.getStats()),
  /** Closes the shared fetch's agents; a later call makes new ones. */
  close() {
    if (shared === null) return Promise.resolve();
    const closing = shared.close();
    shared = null;
    return closing;
  },
};
