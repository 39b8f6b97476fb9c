'use strict';

// The local servers the README's snippets talk to: http on 127.0.0.1:3000 and
// https on localhost:3443, each answering "hello" to every request, until
// Ctrl-C. Run: npm run serve (or node example/server.js); PORT and HTTPS_PORT
// choose other ports (0: any free one).
//
// The https certificate is the test fixture for localhost, signed by the
// fixture CA: a client trusts it with NODE_EXTRA_CA_CERTS, as printed below.
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');

const fixtures = path.join(__dirname, '..', 'test', 'fixtures');
const read = (name) => fs.readFileSync(path.join(fixtures, name));

function hello(req, res) {
  req.resume();
  req.on('end', () => res.end('hello'));
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.address().port));
  });
}

function portFrom(name, fallback) {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new RangeError(`${name} must be a port number (0 to 65535), got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

async function main() {
  const httpServer = http.createServer(hello);
  const httpsServer = https.createServer({ key: read('server-key.pem'), cert: read('server-cert.pem') }, hello);
  // https listens on the address "localhost" resolves to here, the one a
  // client resolving "localhost" on this machine connects to first.
  const httpPort = await listen(httpServer, portFrom('PORT', 3000), '127.0.0.1');
  const httpsPort = await listen(httpsServer, portFrom('HTTPS_PORT', 3443), 'localhost');

  console.log(`http://127.0.0.1:${httpPort}/ and https://localhost:${httpsPort}/ answer "hello" (Ctrl-C stops them)`);
  console.log(`https clients trust the test CA with: NODE_EXTRA_CA_CERTS=${path.join(fixtures, 'ca.pem')}`);

  const stop = () => {
    httpServer.close();
    httpsServer.close();
    httpServer.closeAllConnections?.();
    httpsServer.closeAllConnections?.();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err.message);
  process.exitCode = 1;
});
