'use strict';

// A real HTTP proxy on 127.0.0.1, port 0: the `proxy` package (forwarding
// and CONNECT, with Basic authentication), over an http server or an https
// server with the fixture certificate. It counts what reaches it, so tests
// can tell how many connections and tunnels the agent opened.
//
// `proxy` is an ES module only: it is loaded with import(), as require() of
// an ES module works only from Node 20.19 and 22.12.
const http = require('node:http');
const https = require('node:https');
const fixtures = require('./tls');
const { createSilentServer } = require('./servers');

let createProxy;

async function loadProxy() {
  createProxy ??= (await import('proxy')).createProxy;
  return createProxy;
}

/**
 * options:
 *   protocol: 'http:' (default) or 'https:'
 *   auth: { username, password } to require Basic credentials (407 otherwise)
 *
 * Resolves with { port, protocol, url(credentials?), accepted, connects,
 * requests, authFailures, close() }: accepted counts connections to the proxy,
 * connects CONNECT requests, requests forwarded (absolute-form) requests and
 * requestLines their request lines.
 */
async function startProxy({ protocol = 'http:', auth } = {}) {
  const make = await loadProxy();
  const server = protocol === 'https:'
    ? https.createServer({ key: fixtures.serverKey, cert: fixtures.serverCert })
    : http.createServer();
  const sockets = new Set();
  const stats = { accepted: 0, connects: 0, requests: 0, authFailures: 0, requestLines: [], proxyAuthorization: [] };
  server.on(protocol === 'https:' ? 'secureConnection' : 'connection', (socket) => {
    stats.accepted++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // The TCP connections too: a TLS handshake that fails never becomes a secureConnection.
  if (protocol === 'https:') {
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
  }
  server.on('connect', (req) => {
    stats.connects++;
    stats.requestLines.push(`${req.method} ${req.url}`);
    stats.proxyAuthorization.push(req.headers['proxy-authorization']);
  });
  server.on('request', (req) => {
    stats.requests++;
    stats.requestLines.push(`${req.method} ${req.url}`);
    stats.proxyAuthorization.push(req.headers['proxy-authorization']);
  });
  make(server);
  if (auth !== undefined) {
    const expected = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    server.authenticate = (req) => {
      const ok = req.headers['proxy-authorization'] === expected;
      if (!ok) stats.authFailures++;
      return ok;
    };
  }
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    server,
    port,
    protocol,
    /** The proxy URL, with `user:pass@` when credentials are given (already encoded). */
    url(credentials) {
      return `${protocol}//${credentials ? `${credentials}@` : ''}127.0.0.1:${port}`;
    },
    get accepted() { return stats.accepted; },
    get connects() { return stats.connects; },
    get requests() { return stats.requests; },
    get authFailures() { return stats.authFailures; },
    get requestLines() { return stats.requestLines; },
    get proxyAuthorization() { return stats.proxyAuthorization; },
    get open() { return sockets.size; },
    close() {
      return new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
    },
  };
}

/**
 * A "proxy" that accepts connections and never answers: for CONNECT timeouts
 * (a silent server, support/servers.js). Resolves with { port, url(),
 * accepted, open, close() }.
 */
function startSilentProxy() {
  return createSilentServer();
}

module.exports = { startProxy, startSilentProxy };
