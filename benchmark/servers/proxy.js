'use strict';

// The forwarding proxy of the proxy scenario: an http server that forwards
// each request to the backend through the agent under test and streams the
// answer back. It reports the agent's getCurrentStatus() when asked.
//
// Options: { agent: candidate id, backendPort, maxSockets }
const http = require('node:http');
const { findCandidate, createClient } = require('../lib/agents');
const { readOptions, answerCalls, reportListening } = require('./child');

const options = readOptions();
const client = createClient(findCandidate(options.agent), {
  protocol: 'http',
  port: options.backendPort,
  agentOptions: { maxSockets: options.maxSockets },
});
const backendHost = `127.0.0.1:${options.backendPort}`;

let errors = 0;
let firstError = null;

// Hop-by-hop headers belong to the client's connection to us, not to ours to
// the backend (RFC 9110 7.6.1); `host` names the backend instead.
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host',
]);

function forwardHeaders(headers) {
  const out = {};
  for (const name of Object.keys(headers)) {
    if (!HOP_BY_HOP.has(name)) out[name] = headers[name];
  }
  return out;
}

function fail(res, err) {
  errors++;
  if (!firstError) firstError = String(err.code || err.message);
  if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
  res.end('bad gateway\n');
}

function viaAgent(req, res) {
  const headers = forwardHeaders(req.headers);
  headers.host = backendHost;
  const upstream = http.request({
    host: '127.0.0.1',
    port: options.backendPort,
    method: req.method,
    path: req.url,
    headers,
    agent: client.agent,
  }, (answer) => {
    res.writeHead(answer.statusCode, forwardHeaders(answer.headers));
    answer.pipe(res);
  });
  upstream.on('error', (err) => fail(res, err));
  req.pipe(upstream);
}

function viaPool(req, res) {
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  client.agent.request({
    path: req.url,
    method: req.method,
    headers: forwardHeaders(req.headers),
    body: hasBody ? req : null,
  }, (err, answer) => {
    if (err) {
      fail(res, err);
      return;
    }
    res.writeHead(answer.statusCode, forwardHeaders(answer.headers));
    answer.body.on('error', (error) => fail(res, error));
    answer.body.pipe(res);
  });
  if (!hasBody) req.resume();
}

const server = http.createServer(client.kind === 'pool' ? viaPool : viaAgent);

answerCalls({
  status: () => ({ agent: client.status(), errors, firstError }),
});

server.listen(0, '127.0.0.1', () => reportListening(server.address().port));
