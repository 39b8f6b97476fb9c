'use strict';

// Fixture certificates for real TLS on loopback. The CA signs a server
// certificate for localhost, alt.localhost and 127.0.0.1 and a client
// certificate; other-ca.pem signs nothing (a wrong CA for failure tests).
const fs = require('node:fs');
const path = require('node:path');

const dir = path.join(__dirname, '..', 'fixtures');
const read = (name) => fs.readFileSync(path.join(dir, name), 'utf8');

module.exports = {
  ca: read('ca.pem'),
  otherCa: read('other-ca.pem'),
  serverKey: read('server-key.pem'),
  serverCert: read('server-cert.pem'),
  clientKey: read('client-key.pem'),
  clientCert: read('client-cert.pem'),
  clientPfx: fs.readFileSync(path.join(dir, 'client.pfx')),
  clientPfxPassphrase: 'sekrit-pass',
};
