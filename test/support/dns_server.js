'use strict';

// A real DNS server on 127.0.0.1 (UDP, port 0), answering from a table the
// test changes, for the `dns` option's tests and benchmark. Built on the
// dns2 package (a devDependency). A name in the table gets its A and AAAA
// records (an empty answer, NOERROR, for a type it has none of); any other
// name gets NXDOMAIN, as a real server would for a name it does not know.
const dns = require('node:dns');
const dns2 = require('dns2');

const { Packet } = dns2;

/**
 * Starts the server. `records` is { name: { A: [...], AAAA: [...], ttl } }
 * (ttl in seconds, 1 if not given). Resolves with a handle:
 *   set(name, { A, AAAA, ttl })  replace a name's records; remove(name) forget it
 *   mode                         'answer' (default), 'servfail', 'refused' or
 *                                'silent' (queries are read and never answered)
 *   queries(name), total         queries received for a name (any type), in all
 *   resolver(options)            a new dns.promises.Resolver asking only this
 *                                server; options go to its constructor
 *                                (default { timeout: 300, tries: 1 })
 *   callbackResolver(options)    the same, a callback-style dns.Resolver
 *   address                      '127.0.0.1:<port>'
 *   close()
 */
async function createDnsServer(records = {}) {
  const table = new Map();
  const counts = new Map();
  let total = 0;
  const set = (name, { A = [], AAAA = [], ttl = 1 } = {}) => {
    table.set(name.toLowerCase(), { A: [...A], AAAA: [...AAAA], ttl });
  };
  for (const [name, entry] of Object.entries(records)) set(name, entry);

  const handle = {
    mode: 'answer',
    set,
    remove(name) { table.delete(name.toLowerCase()); },
    queries(name) { return counts.get(name.toLowerCase()) ?? 0; },
    get total() { return total; },
  };

  const server = dns2.createServer({
    udp: true,
    handle(request, send) {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question.name.toLowerCase();
      total++;
      counts.set(name, (counts.get(name) ?? 0) + 1);
      if (handle.mode === 'silent') return;
      if (handle.mode === 'servfail') response.header.rcode = Packet.RCODE.SERVFAIL;
      else if (handle.mode === 'refused') response.header.rcode = Packet.RCODE.REFUSED;
      else if (!table.has(name)) response.header.rcode = Packet.RCODE.NXDOMAIN;
      else {
        const entry = table.get(name);
        const type = question.type === Packet.TYPE.AAAA ? 'AAAA' : 'A';
        if (question.type === Packet.TYPE.A || question.type === Packet.TYPE.AAAA) {
          for (const address of entry[type]) {
            response.answers.push({ name: question.name, type: question.type, class: Packet.CLASS.IN, ttl: entry.ttl, address });
          }
        }
      }
      send(response);
    },
  });
  // A malformed datagram is the sender's problem, never the test's.
  server.on('requestError', () => {});
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const { port } = server.addresses().udp;
  handle.address = `127.0.0.1:${port}`;
  const make = (Resolver, options) => {
    const resolver = new Resolver({ timeout: 300, tries: 1, ...options });
    resolver.setServers([handle.address]);
    return resolver;
  };
  handle.resolver = (options) => make(dns.promises.Resolver, options);
  handle.callbackResolver = (options) => make(dns.Resolver, options);
  handle.close = () => server.close();
  return handle;
}

module.exports = { createDnsServer };
