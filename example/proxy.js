'use strict';

// Keep-alive through a proxy: https requests go through one pooled CONNECT
// tunnel, http requests (absolute form) share keep-alive connections to the
// proxy, and NO_PROXY hosts go direct.
// Run: node example/proxy.js
//
// The example starts its own proxy (the `proxy` package, with Basic
// authentication) and servers on 127.0.0.1. In real use, pass your proxy's
// URL, or `proxyEnv: process.env` to read HTTPS_PROXY / HTTP_PROXY / NO_PROXY.
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const { HttpAgent, HttpsAgent } = require('steady-agent');

const fixtures = path.join(__dirname, '..', 'test', 'fixtures');
const read = (name) => fs.readFileSync(path.join(fixtures, name));

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

function get(url, agent) {
  const mod = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    mod.get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode, body, reused: res.req.reusedSocket }));
    }).on('error', reject);
  });
}

async function main() {
  // A proxy that wants credentials (user "demo", password "s3cret").
  const { createProxy } = await import('proxy');
  const proxyServer = createProxy(http.createServer());
  const expected = `Basic ${Buffer.from('demo:s3cret').toString('base64')}`;
  proxyServer.authenticate = (req) => req.headers['proxy-authorization'] === expected;
  const seen = [];
  proxyServer.on('connect', (req) => seen.push(`CONNECT ${req.url}`));
  proxyServer.on('request', (req) => seen.push(`${req.method} ${req.url}`));
  const proxyPort = await listen(proxyServer);

  const secure = https.createServer({ key: read('server-key.pem'), cert: read('server-cert.pem') },
    (req, res) => res.end(`secure hello from ${req.url}`));
  const securePort = await listen(secure);
  const plain = http.createServer((req, res) => res.end(`hello from ${req.url}`));
  const plainPort = await listen(plain);

  const proxy = `http://demo:s3cret@127.0.0.1:${proxyPort}`;
  const httpsAgent = new HttpsAgent({ proxy, ca: read('ca.pem') });
  const httpAgent = new HttpAgent({ proxy, noProxy: 'localhost' });

  for (let i = 1; i <= 3; i++) {
    const res = await get(`https://127.0.0.1:${securePort}/${i}`, httpsAgent);
    console.log(`GET https /${i} -> ${res.status} "${res.body}" (${res.reused ? 'reused tunnel' : 'new tunnel'})`);
  }
  for (let i = 1; i <= 2; i++) {
    const res = await get(`http://127.0.0.1:${plainPort}/${i}`, httpAgent);
    console.log(`GET http /${i} -> ${res.status} "${res.body}" (${res.reused ? 'reused' : 'new'} connection to the proxy)`);
  }
  // localhost is in noProxy: straight to the server.
  const direct = await get(`http://localhost:${plainPort}/direct`, httpAgent);
  console.log(`GET http://localhost/direct -> ${direct.status} (no proxy)`);

  console.log(`tunnels opened: ${httpsAgent.createSocketCount}, https requests: ${httpsAgent.requestCount}`);
  console.log('pools:', Object.keys(httpsAgent.getCurrentStatus().freeSockets).join(', '));
  console.log('the proxy saw:', seen.map((line) => line.replace(/\d{4,5}/g, 'PORT')).join(' | '));

  httpsAgent.destroy();
  httpAgent.destroy();
  await Promise.all([proxyServer, secure, plain].map((server) => new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(resolve);
  })));
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
