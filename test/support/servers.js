'use strict';

// Real servers on 127.0.0.1, port 0, for the tests. Every helper resolves
// once the server listens and returns a handle whose close() also ends the
// connections still open, so an `after` hook never hangs.
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const tls = require('node:tls');
const fixtures = require('./tls');

function track(server) {
  const connections = new Set();
  let accepted = 0;
  const event = server instanceof tls.Server ? 'secureConnection' : 'connection';
  server.on(event, (socket) => {
    accepted++;
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  return {
    connections,
    get accepted() { return accepted; },
  };
}

// `at`: { host, port } (127.0.0.1, 0 if not given) or { path } (a Unix socket).
function listen(server, protocol, at = {}) {
  const tracker = track(server);
  const where = at.path !== undefined ? [at.path] : [at.port ?? 0, at.host ?? '127.0.0.1'];
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(...where, () => {
      server.removeListener('error', reject);
      const port = at.path === undefined ? server.address().port : undefined;
      const authority = at.path === undefined ? `${net.isIPv6(where[1]) ? `[${where[1]}]` : where[1]}:${port}` : 'localhost';
      resolve({
        server,
        port,
        protocol,
        origin: `${protocol}//${authority}`,
        url(path = '/') { return `${protocol}//${authority}${path}`; },
        connections: tracker.connections,
        get accepted() { return tracker.accepted; },
        close() {
          return new Promise((done) => {
            for (const socket of tracker.connections) socket.destroy();
            server.close(() => done());
          });
        },
      });
    });
  });
}

function defaultHandler(req, res) {
  req.resume();
  req.on('end', () => {
    res.setHeader('content-type', 'text/plain');
    res.end(`ok ${req.method} ${req.url}`);
  });
}

/**
 * An http server; `handler(req, res)` defaults to answering "ok METHOD URL".
 * `options.listen` says where: { host, port } (127.0.0.1, port 0) or { path }.
 */
function createHttpServer(handler = defaultHandler, { listen: at, ...options } = {}) {
  const server = http.createServer(options, handler);
  server.keepAliveTimeout = options.keepAliveTimeout ?? 30000;
  return listen(server, 'http:', at);
}

/** An https server with the fixture certificate for localhost and 127.0.0.1; `options.listen` as above. */
function createHttpsServer(handler = defaultHandler, { listen: at, ...options } = {}) {
  const server = https.createServer({
    key: fixtures.serverKey,
    cert: fixtures.serverCert,
    ...options,
  }, handler);
  server.keepAliveTimeout = options.keepAliveTimeout ?? 30000;
  return listen(server, 'https:', at);
}

/** http or https by name, for tests that run over both. */
function createServer(protocol, handler, options) {
  return protocol === 'https:' ? createHttpsServer(handler, options) : createHttpServer(handler, options);
}

/**
 * A scripted server: `onConnection(socket)` gets the raw socket (plain TCP, or
 * the decrypted TLS socket when protocol is 'https:') and writes HTTP by hand.
 */
function createRawServer(onConnection, protocol = 'http:') {
  const server = protocol === 'https:'
    ? tls.createServer({ key: fixtures.serverKey, cert: fixtures.serverCert }, onConnection)
    : net.createServer(onConnection);
  return listen(server, protocol);
}

/** Splits raw bytes into complete HTTP/1.1 requests (no request bodies). */
function onRequests(socket, onRequest) {
  let buffered = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk) => {
    buffered += chunk;
    let end;
    while ((end = buffered.indexOf('\r\n\r\n')) !== -1) {
      const head = buffered.slice(0, end);
      buffered = buffered.slice(end + 4);
      const [requestLine] = head.split('\r\n');
      const [method, path] = requestLine.split(' ');
      onRequest({ method, path, head });
    }
  });
  socket.on('error', () => {});
}

/** A complete HTTP/1.1 response with a body, as raw text. */
function rawResponse(body = 'ok', headers = {}) {
  const lines = ['HTTP/1.1 200 OK', `Content-Length: ${Buffer.byteLength(body)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

/** TLS client options that trust the fixture CA. */
const tlsClientOptions = Object.freeze({ ca: fixtures.ca });

/**
 * A server (http or https) that answers `/hold...` only when the test says
 * so, and anything else at once. `held` counts the requests it holds;
 * `release()` answers every one of them, `releaseOne()` the first.
 */
async function createHoldingServer(protocol) {
  const waiting = [];
  const handle = await createServer(protocol, (req, res) => {
    req.resume();
    const answer = () => res.end(`ok ${req.url}`);
    if (req.url.startsWith('/hold')) waiting.push(answer);
    else answer();
  });
  handle.release = () => { for (const answer of waiting.splice(0)) answer(); };
  handle.releaseOne = () => waiting.shift()();
  Object.defineProperty(handle, 'held', { get: () => waiting.length });
  return handle;
}

/**
 * A TCP server that accepts connections and never writes a byte: a TLS
 * server that never answers the handshake, a proxy that never answers
 * CONNECT. Resolves with { port, url(protocol), accepted, open, close() }.
 */
function createSilentServer() {
  const sockets = new Set();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    // Read (and drop) what comes, so that the client's FIN is seen and the
    // connection closes when the client ends it.
    socket.resume();
    socket.once('close', () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        port,
        url(protocol = 'http:') { return `${protocol}//127.0.0.1:${port}`; },
        get accepted() { return accepted; },
        get open() { return sockets.size; },
        close() {
          return new Promise((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          });
        },
      });
    });
  });
}

/** A port on 127.0.0.1 that refuses connections (a server bound, then closed). */
function refusedPort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

module.exports = {
  createHttpServer,
  createHttpsServer,
  createServer,
  createRawServer,
  createHoldingServer,
  onRequests,
  rawResponse,
  tlsClientOptions,
  refusedPort,
  createSilentServer,
  fixtures,
};
