'use strict';

// `steady-agent/fetch`: Node's own fetch, its requests sent through the
// agent. Each call is `globalThis.fetch(input, { ...init, dispatcher })`
// with a dispatcher of ours (lib/fetch/adapter.js): Node's bundled undici
// (5.28 on Node 18 to 8 on Node 26) parses, redirects, decodes and builds
// the Response; the agent owns the connections. Nothing here loads undici
// from npm.
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

// Taken once: a caller who later sets globalThis.fetch to ours must not loop.
const nativeFetch = globalThis.fetch;

/**
 * A dispatcher for one fetch call, counting the requests fetch dispatched
 * through it: more than one means fetch followed a redirect.
 */
class CallDispatcher {
  dispatches = 0;

  constructor(transport) {
    this.transport = transport;
  }

  dispatch(opts, handler) {
    this.dispatches++;
    return this.transport.dispatch(opts, handler);
  }
}

/**
 * A `fetch` with agents of its own, made from `options` (the agent's:
 * validated as `new HttpAgent(options)` validates them).
 * @returns {typeof globalThis.fetch & { getStats(): object, close(): Promise<void> }}
 */
function createFetch(options) {
  if (typeof nativeFetch !== 'function') throw new Error('steady-agent/fetch needs the global fetch of Node 18 or later');
  const transport = new AgentDispatch(options);

  async function fetch(input, init) {
    // A dispatcher the caller chose is theirs: the call is Node's own.
    if (init != null && init.dispatcher != null) return nativeFetch(input, init);
    const first = new CallDispatcher(transport);
    try {
      return await nativeFetch(input, { ...init, dispatcher: first });
    } catch (err) {
      if (first.dispatches !== 1 || !isReplayable(err) || !callReplayable(input, init) || signalAborted(input, init)) throw err;
    }
    return nativeFetch(input, { ...init, dispatcher: transport });
  }

  fetch.getStats = () => transport.getStats();
  fetch.close = () => transport.close();
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
