'use strict';

// The client side of the benchmarks' DNS server (servers/dns.js): a resolver
// that asks it, and a `lookup` for net over that resolver, for the clients
// that take no `dns` option of ours (Node's agent, undici, agentkeepalive).
const dns = require('node:dns');

/** A resolver asking only the benchmark's DNS server on `port`. */
function resolverFor(port) {
  const resolver = new dns.Resolver({ timeout: 1000, tries: 2 });
  resolver.setServers([`127.0.0.1:${port}`]);
  return resolver;
}

/**
 * A `lookup` for net that asks `resolver` on every call (what a fresh system
 * lookup would find): every address with `all`, as dns.lookup gives them.
 */
function lookupFor(resolver) {
  return (hostname, options, callback) => {
    resolver.resolve4(hostname, (err, addresses) => {
      if (err) callback(err);
      else if (options.all) callback(null, addresses.map((address) => ({ address, family: 4 })));
      else callback(null, addresses[0], 4);
    });
  };
}

module.exports = { resolverFor, lookupFor };
