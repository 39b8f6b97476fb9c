'use strict';

// The options of tls.connect that change what a client sends or accepts: a
// connection made under one value must never serve a request that asked for
// another. The agent keeps its https pools apart by them (with whatever else
// the running Node's own getName reads: agent/tls_name.js), and the undici
// transport passes every one of them to tls.connect. `passphrase` (Node counts
// it only with key or pfx), `checkServerIdentity` and `secureContext` (some
// Nodes' getName ignores them) included.
const TLS_ACCEPTANCE_OPTIONS = Object.freeze([
  'ca', 'cert', 'key', 'pfx', 'passphrase', 'clientCertEngine', 'privateKeyEngine', 'privateKeyIdentifier',
  'rejectUnauthorized', 'checkServerIdentity', 'secureContext', 'allowPartialTrustChain', 'crl',
  'minVersion', 'maxVersion', 'secureProtocol', 'secureOptions', 'ciphers', 'sigalgs', 'ecdhCurve',
  'honorCipherOrder', 'dhparam', 'minDHSize', 'sessionIdContext', 'session', 'requestOCSP',
  'pskCallback', 'pskIdentityHint', 'ALPNProtocols', 'certificateCompression',
]);

module.exports = { TLS_ACCEPTANCE_OPTIONS };
