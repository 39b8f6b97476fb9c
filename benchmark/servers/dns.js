'use strict';

// A DNS server on 127.0.0.1 (UDP), answering from a table the benchmark sets
// over IPC: the same server the tests use (test/support/dns_server.js).
//
// Options: { records: { name: { A: [...], AAAA: [...], ttl } } }
const { readOptions, answerCalls, reportListening } = require('./child');
const { createDnsServer } = require('../../test/support/dns_server');

const options = readOptions();

createDnsServer(options.records || {}).then((server) => {
  answerCalls({
    set: (name, records) => server.set(name, records),
    queries: (name) => server.queries(name),
  });
  reportListening(Number(server.address.split(':')[1]));
});
