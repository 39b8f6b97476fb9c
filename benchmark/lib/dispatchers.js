'use strict';

// The fetch and undici clients of benchmark/race.js: Node's own fetch (a
// fresh dispatcher of the bundled undici per client, as a fresh agent),
// steady-agent/fetch, and undici.request through undici's Agent, through
// Agent with interceptors.retry, and through createDispatcher. Each client
// is { get(path) -> Promise<{ error, ms }>, close() }: what failed, and how
// long the request took (the added latency of a resend or a retry's wait).
//
// Loaded before npm's undici, so that steady-agent/fetch and Node's fetch
// keep the bundled undici's Agent (npm's undici would install its own global
// dispatcher).
const { createFetch } = require('../../lib/fetch');
const { createDispatcher } = require('../../lib/undici');

const REQUEST_TIMEOUT_MS = 10000;

// The bundled undici's Agent class: the global dispatcher's, installed by
// the first fetch (steady-agent/fetch's import makes that call).
const BundledAgent = [Symbol.for('undici.globalDispatcher.2'), Symbol.for('undici.globalDispatcher.1')]
  .map((symbol) => globalThis[symbol]).find((value) => value != null)?.constructor;

function nodeAtLeast(version) {
  const want = version.split('.').map(Number);
  const have = process.versions.node.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i] > want[i];
  return true;
}

// undici 7 where its engines allow (Node >= 20.18.1), else the undici 6 devDependency.
function npmUndici() {
  return nodeAtLeast('20.18.1') ? { undici: require('undici-7'), name: 'undici-7' } : { undici: require('undici'), name: 'undici' };
}

function versionOf(name) {
  return require(`${name}/package.json`).version;
}

/** Times `send()`, a promise that resolves once the body is read: { error, ms }. */
async function timed(send) {
  const started = performance.now();
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(resolve, REQUEST_TIMEOUT_MS, new Error('timed out')); });
  const error = await Promise.race([send().then((status) => (status === 200 ? null : new Error(`status ${status}`)), (err) => err), timeout]);
  clearTimeout(timer);
  return { error, ms: performance.now() - started };
}

function fetchClient(fetch, origin, close) {
  return {
    get: (path = '/') => timed(async () => {
      const res = await fetch(origin + path);
      await res.arrayBuffer();
      return res.status;
    }),
    close,
  };
}

function requestClient(undici, dispatcher, origin) {
  return {
    get: (path = '/') => timed(async () => {
      const res = await undici.request(origin + path, { dispatcher });
      await res.body.dump();
      return res.statusCode;
    }),
    close: () => dispatcher.destroy(),
  };
}

/** The candidates: { id, label, available, create(origin, options) } (options: steady-agent's). */
function dispatcherCandidates() {
  const { undici, name } = npmUndici();
  const version = versionOf(name);
  const hasRetry = typeof undici.interceptors?.retry === 'function';
  return [
    {
      id: 'node-fetch-global',
      label: `Node's fetch (undici ${process.versions.undici})`,
      available: BundledAgent !== undefined,
      create(origin) {
        const dispatcher = new BundledAgent();
        return fetchClient((url) => fetch(url, { dispatcher }), origin, () => dispatcher.destroy());
      },
    },
    {
      id: 'steady-fetch',
      label: 'steady-agent/fetch',
      available: true,
      create(origin, options) {
        const steady = createFetch(options);
        return fetchClient(steady, origin, () => steady.close());
      },
    },
    {
      id: 'undici-agent',
      label: `undici ${version} request + Agent`,
      available: true,
      create: (origin) => requestClient(undici, new undici.Agent(), origin),
    },
    {
      id: 'undici-retry',
      label: `undici ${version} request + Agent + interceptors.retry`,
      available: hasRetry,
      create: (origin) => requestClient(undici, new undici.Agent().compose(undici.interceptors.retry()), origin),
    },
    {
      id: 'undici-steady',
      label: `undici ${version} request + createDispatcher`,
      available: true,
      create: (origin, options) => requestClient(undici, createDispatcher(undici, options), origin),
    },
  ];
}

module.exports = { dispatcherCandidates, npmUndici, BundledAgent };
