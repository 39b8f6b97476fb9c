'use strict';

// The test suite's fixture certificates: the server certificate is valid for
// localhost and 127.0.0.1 and signed by ca.pem, so clients verify it normally.
const fs = require('node:fs');
const path = require('node:path');

const dir = path.join(__dirname, '..', '..', 'test', 'fixtures');
const read = (name) => fs.readFileSync(path.join(dir, name), 'utf8');

module.exports = {
  ca: read('ca.pem'),
  key: read('server-key.pem'),
  cert: read('server-cert.pem'),
};
