'use strict';

// The I/O of the dns option: questions to a resolver and to the system's
// dns.lookup, each answered as a value (never a rejection), and the address
// families the machine's interfaces have.
const dns = require('node:dns');
const net = require('node:net');
const os = require('node:os');

// How long the list of configured address families (for the ADDRCONFIG
// hint) is reused before os.networkInterfaces() is read again.
const INTERFACES_TTL = 10 * 1000;

/** One record type's answer: { records } or { error }, never a rejection. */
function ask(resolver, method, host) {
  if (resolver instanceof dns.Resolver) {
    return new Promise((resolve) => {
      resolver[method](host, { ttl: true }, (error, records) => resolve(error ? { error } : { records }));
    });
  }
  try {
    return Promise.resolve(resolver[method](host, { ttl: true })).then((records) => ({ records }), (error) => ({ error }));
  } catch (error) {
    return Promise.resolve({ error });
  }
}

/** dns.lookup's whole answer, in the system's order: { addresses } or { error }. */
function systemLookup(host) {
  return new Promise((resolve) => {
    dns.lookup(host, { all: true, family: 0, order: 'verbatim', verbatim: true }, (error, addresses) => {
      resolve(error ? { error } : { addresses: addresses.map(({ address, family }) => ({ address, family })) });
    });
  });
}

// An IPv4 address as an IPv4-mapped IPv6 address reports it (a socket
// connected to ::ffff:127.0.0.2 is one to 127.0.0.2).
const unmapped = (address) => (address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address);

const isLoopback = (address) => address.startsWith('127.') || address === '::1';

/** The address families some non-loopback interface has (for the ADDRCONFIG hint). */
const interfaces = { at: -Infinity, 4: true, 6: true };
function configuredFamilies(now) {
  if (now - interfaces.at < INTERFACES_TTL) return interfaces;
  interfaces[4] = false;
  interfaces[6] = false;
  for (const list of Object.values(os.networkInterfaces())) {
    for (const { family, internal } of list) {
      // Node 18.0-18.3 gave the family as a number.
      if (!internal) interfaces[family === 'IPv6' || family === 6 ? 6 : 4] = true;
    }
  }
  interfaces.at = now;
  return interfaces;
}


module.exports = { ask, systemLookup, configuredFamilies, unmapped, isLoopback };
