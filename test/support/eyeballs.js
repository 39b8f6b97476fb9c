'use strict';

// A host name with two addresses, each doing what a Happy Eyeballs test
// needs, for test/happy-eyeballs.test.js: a real DNS server (dns2, over
// UDP) answers the name with 127.0.0.2 and 127.0.0.3 (and ::1 where asked),
// and on one port each address serves, refuses, drops SYNs (a full accept
// queue: support/blackhole.js) or answers late (the same, released when
// the test says).
const dc = require('node:diagnostics_channel');
const net = require('node:net');
const { createDnsServer } = require('./dns_server');
const { startBlackhole } = require('./blackhole');
const { createServer } = require('./servers');

// The name the certificate in test/fixtures holds besides localhost.
const HOST = 'alt.localhost';

/** Whether this machine has ::1 on loopback. */
function hasIpv6Loopback() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(0, '::1', () => server.close(() => resolve(true)));
  });
}

/**
 * Starts what each address does, on one port. `roles`: { address: role },
 * in the order the DNS server gives them; role is 'serve', 'refuse',
 * 'drop' or 'slow' (drops until release(), then serves).
 * Resolves with { port, dns, lookup, lookups, url(path), release(), close() }:
 * `dns`, the DNS server; `lookup`, a lookup of the caller's asking it (for a
 * client without the dns option), `lookups` the options it was called with.
 */
async function startHost(protocol, roles) {
  const addresses = Object.keys(roles);
  const v4 = addresses.filter((address) => net.isIPv4(address));
  const v6 = addresses.filter((address) => net.isIPv6(address));
  const closers = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const dns = await createDnsServer({ [HOST]: { A: v4, AAAA: v6, ttl: 60 } });
    closers.push(() => dns.close());
    const held = [];
    const port = await listenAll(protocol, roles, held, closers);
    const resolver = dns.callbackResolver();
    const lookups = [];
    const lookup = (hostname, options, callback) => {
      lookups.push(options);
      resolver.resolve4(hostname, (err4, a) => resolver.resolve6(hostname, (err6, aaaa) => {
        const list = [...(a ?? []).map((address) => ({ address, family: 4 })), ...(aaaa ?? []).map((address) => ({ address, family: 6 }))];
        if (list.length === 0) callback(err4 ?? err6);
        else if (options.all) callback(null, list);
        else callback(null, list[0].address, list[0].family);
      }));
    };
    const url = (path = '/') => `${protocol}//${HOST}:${port}${path}`;
    const release = () => { for (const hole of held) hole.release(); };
    return { port, dns, lookup, lookups, url, release, close };
  } catch (err) {
    await close();
    throw err;
  }
}

// Every role on one port: the child processes pick it, the servers follow;
// a port taken on one of the addresses starts over.
async function listenAll(protocol, roles, held, closers) {
  for (let attempt = 0; ; attempt++) {
    const mark = closers.length;
    let port = 0;
    try {
      for (const [address, role] of Object.entries(roles)) {
        if (role === 'drop' || role === 'slow') {
          let hole;
          try {
            hole = await startBlackhole([address], role === 'slow' ? { held: true, protocol, port } : { port });
          } catch {
            throw Object.assign(new Error(`port ${port} is taken on ${address}`), { code: 'EADDRINUSE' });
          }
          closers.push(() => hole.close());
          if (role === 'slow') held.push(hole);
          port = hole.port;
        }
      }
      for (const [address, role] of Object.entries(roles)) {
        if (role === 'serve') {
          const server = await createServer(protocol, (req, res) => res.end(`ok ${req.socket.localAddress}`), { listen: { host: address, port } });
          closers.push(() => server.close());
          port = server.port;
        } else if (role === 'refuse' && port === 0) {
          port = await freePort(address);
        }
      }
      return port;
    } catch (err) {
      for (const closer of closers.splice(mark).reverse()) await closer();
      if (err.code !== 'EADDRINUSE' || attempt === 5) throw err;
    }
  }
}

// A port nothing listens on at `address` (it refuses).
function freePort(address) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, address, () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Collects the steady-agent:connect:attempt messages until stop(). */
function watchAttempts() {
  const messages = [];
  const onMessage = (message) => messages.push(message);
  dc.subscribe('steady-agent:connect:attempt', onMessage);
  return {
    messages,
    of(outcome) { return messages.filter((message) => message.outcome === outcome); },
    stop() { dc.unsubscribe('steady-agent:connect:attempt', onMessage); },
  };
}

/** The sockets and timers the process holds (Node's own count, by type). */
function handles() {
  const info = process.getActiveResourcesInfo();
  return { sockets: info.filter((type) => type === 'TCPSocketWrap').length, timers: info.filter((type) => type === 'Timeout').length };
}

module.exports = { HOST, startHost, watchAttempts, handles, hasIpv6Loopback };
