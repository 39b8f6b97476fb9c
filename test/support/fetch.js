'use strict';

// Servers and clients for the fetch and undici tests.
//
// steady-agent/fetch first: it finds the bundled undici's Agent class before
// any test loads npm's undici (which would install its global dispatcher and
// leave steady-agent/fetch on its fallback, test/fetch-fallback.test.js).
require('steady-agent/fetch');
const http = require('node:http');
const { createResetServer } = require('./reset_server');
const { fixtures } = require('./servers');

/**
 * A server on real loopback (support/reset_server.js) that records each
 * request it applies (answers), with its body, and resets the TCP
 * connection under the requests `fails(req, conn)` picks, before applying
 * them: a stale collision, the server having closed the connection as the
 * request arrived. `slowReset`: instead, the picked request is applied, and
 * the connection reset `slowReset` ms later without an answer.
 * `answer(req, res, conn)`: a custom answer for the others.
 */
async function collisionServer(protocol, { fails = () => false, slowReset = 0, answer } = {}) {
  const applied = [];
  const server = await createResetServer(protocol, (req, res, conn) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const fail = fails(req, conn);
      if (fail && slowReset === 0) {
        conn.reset();
        return;
      }
      applied.push({ method: req.method, url: req.url, body: Buffer.concat(chunks).toString(), connection: server.connections.length });
      if (fail) {
        setTimeout(conn.reset, slowReset);
        return;
      }
      if (answer !== undefined) answer(req, res, conn);
      else res.end(`ok ${req.method} ${req.url}`);
    });
  });
  server.applied = applied;
  server.appliedTo = (url) => applied.filter((entry) => entry.url === url);
  return server;
}

/**
 * A server that announces no idle limit (no Keep-Alive header) and closes a
 * connection idle `limit` ms after its last response, as a silent server
 * does. A request that reaches a connection idle `limit - window` ms or more
 * meets a reset (TCP RST) and is never applied: the request a real network
 * has in flight as the server closes (a round trip wide), on loopback.
 * `answer(req, res)` answers the others, once their body is read.
 *
 * Resolves with { url(path), applied (each request answered: { method, url,
 * body }), counts: { connections, resets, keptOff }, close() }. `keptOff`:
 * connections the client closed while idle in the window, as it does to
 * keep a request off them.
 */
async function windowServer({ limit, window, answer = (req, res) => res.end('ok') }) {
  const applied = [];
  const counts = { connections: 0, resets: 0, keptOff: 0 };
  const idleSince = new WeakMap(); // socket -> when its last response ended
  const timers = new Map(); // socket -> its idle close
  const server = http.createServer((req, res) => {
    const socket = req.socket;
    clearTimeout(timers.get(socket));
    timers.delete(socket);
    const since = idleSince.get(socket);
    idleSince.delete(socket);
    if (since !== undefined && performance.now() - since >= limit - window) {
      counts.resets++;
      socket.resetAndDestroy();
      return;
    }
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      applied.push({ method: req.method, url: req.url, body: Buffer.concat(chunks).toString() });
      res.on('finish', () => {
        idleSince.set(socket, performance.now());
        timers.set(socket, setTimeout(() => {
          timers.delete(socket);
          idleSince.delete(socket);
          socket.destroy();
        }, limit));
      });
      answer(req, res);
    });
  });
  server.keepAliveTimeout = 0; // no idle limit of Node's, and no Keep-Alive header
  server.on('connection', (socket) => {
    counts.connections++;
    socket.on('close', () => {
      const since = idleSince.get(socket);
      if (since !== undefined && performance.now() - since >= limit - window) counts.keptOff++;
      clearTimeout(timers.get(socket));
      timers.delete(socket);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (path = '/') => `http://127.0.0.1:${server.address().port}${path}`,
    applied,
    counts,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(resolve);
    }),
  };
}

/** The second request on a connection fails: the first warms the pool up. */
const secondOnConnection = (req, conn) => conn.index === 2;

/** Options for an agent of `protocol` that trusts the fixture CA. */
const tlsOptions = (protocol) => (protocol === 'https:' ? { ca: fixtures.ca } : {});

/** The rejection of `promise`; fails the test if it resolves. */
async function rejection(promise) {
  const outcome = await promise.then((value) => ({ value }), (err) => ({ err }));
  if (outcome.err === undefined) throw new Error(`expected a rejection, got ${outcome.value?.status ?? outcome.value?.statusCode}`);
  return outcome.err;
}

/** Node version at least `major.minor.patch`. */
function nodeAtLeast(version) {
  const want = version.split('.').map(Number);
  const have = process.versions.node.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    if (have[i] !== want[i]) return have[i] > want[i];
  }
  return true;
}

/**
 * The undici majors installed as devDependencies, each with the Node it
 * needs (its package.json `engines`): `load()` requires it, only where it runs.
 */
const UNDICI_MAJORS = Object.freeze([
  { name: 'undici', major: 6, node: '18.17.0' },
  { name: 'undici-7', major: 7, node: '20.18.1' },
  { name: 'undici-8', major: 8, node: '22.19.0' },
].map((entry) => ({ ...entry, runs: nodeAtLeast(entry.node), load: () => require(entry.name) })));

/**
 * Both front doors, each made with steady-agent's options: a created fetch,
 * and createDispatcher with the newest undici that runs here. Each made one
 * is { dispatcher, get(url) -> the body's text, close() }.
 */
function frontDoors() {
  const { createFetch } = require('steady-agent/fetch');
  const { createDispatcher } = require('steady-agent/undici');
  const newest = UNDICI_MAJORS.filter((entry) => entry.runs).at(-1);
  return [
    {
      title: 'steady-agent/fetch',
      make: (options) => {
        const fetch = createFetch(options);
        return { dispatcher: fetch.dispatcher, get: async (url) => (await fetch(url)).text(), close: () => fetch.close() };
      },
    },
    {
      title: `createDispatcher (${newest.name})`,
      make: (options) => {
        const undici = newest.load();
        const dispatcher = createDispatcher(undici, options);
        return { dispatcher, get: async (url) => (await undici.request(url, { dispatcher })).body.text(), close: () => dispatcher.close() };
      },
    },
  ];
}

module.exports = {
  collisionServer, windowServer, secondOnConnection, tlsOptions, rejection, nodeAtLeast, UNDICI_MAJORS, frontDoors,
};
