'use strict';

// getStats() has one shape whatever sends the requests: the agent,
// steady-agent/fetch and createDispatcher give the same keys, nested the
// same way, with values of the same types, after the same requests (a new
// socket, a reused one, a server's Keep-Alive hint, the dns option), so that
// a dashboard written for one reads the others.
const assert = require('node:assert/strict');
const http = require('node:http');
const { HttpAgent } = require('steady-agent');
const { createFetch } = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { UNDICI_MAJORS } = require('./support/fetch');
const { createDnsServer } = require('./support/dns_server');
const { createHttpServer } = require('./support/servers');

const newest = UNDICI_MAJORS.filter((entry) => entry.runs).at(-1);

/** The shape of a value: objects by their keys (sorted), everything else by its type. */
function shape(value) {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, shape(value[key])]));
}

/** Host and port names differ from run to run: the shape of the first origin and of the first dns host. */
function statsShape(stats) {
  assert.equal(Object.keys(stats.origins).length, 1, Object.keys(stats.origins).join(', '));
  const [origin] = Object.values(stats.origins);
  const [host] = Object.values(stats.dns ?? {});
  return { keys: Object.keys(stats).sort(), origin: shape(origin), dns: host === undefined ? null : shape(host) };
}

const CLIENTS = [
  {
    title: 'the agent',
    make(options) {
      const agent = new HttpAgent(options);
      return {
        stats: () => agent.getStats(),
        get: (url) => new Promise((resolve, reject) => {
          http.get(url, { agent }, (res) => res.resume().on('end', resolve)).on('error', reject);
        }),
        close: () => agent.close(),
      };
    },
  },
  {
    title: 'steady-agent/fetch',
    make(options) {
      const fetch = createFetch(options);
      return { stats: () => fetch.getStats(), get: async (url) => (await fetch(url)).text(), close: () => fetch.close() };
    },
  },
  {
    title: `createDispatcher (${newest.name})`,
    make(options) {
      const undici = newest.load();
      const dispatcher = createDispatcher(undici, options);
      return {
        stats: () => dispatcher.getStats(),
        get: async (url) => (await undici.request(url, { dispatcher })).body.text(),
        close: () => dispatcher.close(),
      };
    },
  },
];

describe('getStats() has the same shape on every transport', function () {
  this.timeout(20000);
  const handles = [];
  after(async () => {
    for (const handle of handles.splice(0)) await handle.close();
  });

  it('the agent, steady-agent/fetch and createDispatcher, after the same requests', async () => {
    const server = await createHttpServer((req, res) => {
      res.setHeader('Keep-Alive', 'timeout=30');
      res.end('ok');
    });
    const dns = await createDnsServer({ 'svc.test': { A: ['127.0.0.1'], ttl: 30 } });
    handles.push(server, dns);
    const shapes = [];
    for (const client of CLIENTS) {
      const made = client.make({ dns: { resolver: dns.callbackResolver() } });
      handles.unshift(made);
      const url = `http://svc.test:${server.port}/`;
      await made.get(url);
      await new Promise((resolve) => setTimeout(resolve, 20)); // undici takes the socket back a turn later
      await made.get(url);
      shapes.push([client.title, statsShape(made.stats())]);
    }
    const [[, agentShape], ...others] = shapes;
    assert.deepEqual(agentShape.keys, ['dns', 'origins']);
    for (const [title, other] of others) assert.deepEqual(other, agentShape, title);
  });
});
