'use strict';

// `steady-agent/fetch`: Node's own fetch, its requests sent through a
// dispatcher of ours. Each call is `globalThis.fetch(input, { ...init,
// dispatcher })`: Node's bundled undici (5.28 on Node 18 to 8 on Node 26)
// parses, redirects, decodes and builds the Response. Nothing here loads
// undici from npm.
//
// The dispatcher is a subclass of an undici Agent class over
// steady-agent's transport (lib/undici/dispatcher.js): of the bundled
// undici's Agent where we can reach it, else of the Agent class the bundled
// fetch itself dispatches through (npm's undici, installed as the global
// dispatcher: undici keeps its global dispatcher usable by every major's
// fetch). No module exports the bundled class: it is the constructor of the
// global dispatcher the bundled undici installs when it loads, at the
// first fetch call (globalThis[Symbol.for('undici.globalDispatcher.2')] on
// undici 8, '.1' before; checked on Node 18.20, 20.20, 22.23, 24.22 and
// 26.12). Where npm's undici installed its dispatcher first and the bundled
// undici is not loaded yet, the bundled one is loaded with that global
// slot empty, its Agent taken, and the global put back as it was: the
// import order changes nothing. Only where the dispatcher the bundled fetch
// reads is no Agent (the caller set another kind) do the requests go
// through the agent instead (lib/fetch/adapter.js); getStats().transport
// says which.
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
// The slot the bundled fetch reads its global dispatcher from: '.2' from undici 8 on.
const BUNDLED_SLOT = Number(String(process.versions.undici ?? '0').split('.')[0]) >= 8 ? GLOBAL_DISPATCHERS[0] : GLOBAL_DISPATCHERS[1];

/** True when `Class` is exported by a module loaded from a file (npm's undici), not Node's own. */
function loadedFromFile(Class) {
  for (const loaded of Object.values(require.cache)) {
    const exports = loaded?.exports;
    if (exports !== null && typeof exports === 'object' && exports.Agent === Class) return true;
  }
  return false;
}

/** `value`'s class, if it is an undici Agent class; else null. */
function agentClass(value) {
  const Class = value?.constructor;
  return typeof Class === 'function' && Class.name === 'Agent' && typeof Class.prototype.dispatch === 'function' ? Class : null;
}

/**
 * Loads the bundled undici with its global slot empty, so that it installs
 * its own Agent; then puts every slot back as it was (where the slot was
 * empty already, what the bundled undici installs stays: it would have
 * anyway). Returns that Agent's class, or null (the bundled undici was
 * loaded already: it installs nothing, and the call fails at once).
 */
function loadBundledAside() {
  const saved = GLOBAL_DISPATCHERS.map((symbol) => globalThis[symbol]);
  const aside = globalThis[BUNDLED_SLOT] !== undefined;
  let Class = null;
  try {
    if (aside) globalThis[BUNDLED_SLOT] = undefined;
    try {
      nativeFetch('data:,').then((res) => res.arrayBuffer(), () => {});
    } catch {
      // the bundled undici was loaded already and found no dispatcher
    }
    const installed = globalThis[BUNDLED_SLOT];
    if (installed != null && !loadedFromFile(installed.constructor)) Class = agentClass(installed);
  } finally {
    if (aside) GLOBAL_DISPATCHERS.forEach((symbol, i) => { globalThis[symbol] = saved[i]; });
  }
  return Class;
}

let bundled; // { Agent, name }: the Agent class the transport subclasses, null for the adapter

/** The Agent class steady-agent/fetch's transport subclasses, and what it is; `Agent` null for the adapter. */
function transportAgent() {
  if (bundled !== undefined) return bundled;
  if (typeof nativeFetch !== 'function') return (bundled = { Agent: null, name: 'agent' });
  const installed = () => GLOBAL_DISPATCHERS.map((symbol) => globalThis[symbol]).find((value) => value != null);
  // The bundled undici loads, and installs its global dispatcher, at the
  // first fetch call (synchronously): a data: URL opens no connection.
  if (installed() === undefined) nativeFetch('data:,').then((res) => res.arrayBuffer(), () => {});
  const current = globalThis[BUNDLED_SLOT] ?? installed();
  let Class = agentClass(current);
  if (Class !== null && !loadedFromFile(Class)) return (bundled = { Agent: Class, name: 'undici (bundled)' });
  Class = loadBundledAside();
  if (Class !== null) return (bundled = { Agent: Class, name: 'undici (bundled)' });
  // The bundled fetch dispatches through npm's Agent: so does the transport.
  Class = agentClass(globalThis[BUNDLED_SLOT]);
  bundled = Class !== null ? { Agent: Class, name: 'undici (npm)' } : { Agent: null, name: 'agent' };
  return bundled;
}

// Known from the start: a steady-agent/fetch imported before npm's undici
// gets the bundled class even if npm's then installs its own dispatcher.
transportAgent();

/** The transport for createFetch: the native one where an Agent class is reachable, else the adapter. */
function transportFor(options) {
  const { Agent } = transportAgent();
  if (Agent === null) return new AgentDispatch(options);
  return new (transportClass(Agent, 'SteadyFetchDispatcher'))(options, { entry: 'createFetch' });
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

  const transportName = transportAgent().name;
  // The transport is named without changing the counters' shape, the
  // agent's on every transport: a property that is not enumerable.
  fetch.getStats = () => Object.defineProperty(transport.getStats(), 'transport', { value: transportName });
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
