'use strict';

// Every event the library publishes, from the agent, steady-agent/fetch and
// steady-agent/undici, held against the message types index.d.ts declares
// (`ChannelMessages`): each message carries every field its interface (and
// the interfaces it extends) declares required, none undefined. The types
// are read with TypeScript's parser, so a field added to a type and not to
// a transport (or the reverse) fails here. Each client goes through the same
// traffic on loopback servers: new and reused sockets, a server's Keep-Alive
// hint, an idle limit learned from a server's closes, the queue (a wait, a
// request refused by maxQueue), a request after close(), a collision that is
// resent (transports), and the dns option.
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const ts = require('typescript');
const { HttpAgent } = require('steady-agent');
const { createFetch } = require('steady-agent/fetch');
const { createDispatcher } = require('steady-agent/undici');
const { CHANNEL_NAMES } = require('../lib/observe/channels');
const { UNDICI_MAJORS, collisionServer, secondOnConnection } = require('./support/fetch');
const { createDnsServer } = require('./support/dns_server');
const { createRawServer, onRequests, rawResponse } = require('./support/servers');
const { waitFor } = require('./support/request');

const newest = UNDICI_MAJORS.filter((entry) => entry.runs).at(-1);

/** index.d.ts's `ChannelMessages`: channel name -> the required field names of its message type. */
function declaredShapes() {
  const file = path.join(__dirname, '..', 'index.d.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const interfaces = new Map();
  const visit = (node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
    ts.forEachChild(node, visit);
  };
  visit(source);
  const required = (name) => {
    const node = interfaces.get(name);
    assert.ok(node, `index.d.ts declares ${name}`);
    const fields = new Set();
    for (const clause of node.heritageClauses ?? []) {
      for (const type of clause.types) for (const field of required(type.expression.getText(source))) fields.add(field);
    }
    for (const member of node.members) {
      if (ts.isPropertySignature(member) && member.questionToken === undefined) fields.add(member.name.getText(source).replace(/'/g, ''));
    }
    return fields;
  };
  const shapes = new Map();
  for (const member of interfaces.get('ChannelMessages').members) {
    shapes.set(member.name.text, required(member.type.typeName.getText(source)));
  }
  return shapes;
}

/** Every message on every channel of ours whose `agent` is `source`, as [channel, message]. */
function recordAll(source) {
  const seen = [];
  const listeners = Object.values(CHANNEL_NAMES).map((name) => {
    const listener = (message) => {
      if (message.agent === source) seen.push([name, message]);
    };
    dc.subscribe(name, listener);
    return [name, listener];
  });
  return { seen, stop: () => { for (const [name, listener] of listeners) dc.unsubscribe(name, listener); } };
}

/** A server: `/hint` answers with a Keep-Alive hint, `/hold` only at release(), the rest at once. */
function heldServer() {
  const held = [];
  const server = http.createServer((req, res) => {
    if (req.url === '/hint') res.setHeader('Keep-Alive', 'timeout=30');
    if (req.url === '/hold') held.push(res);
    else res.end('ok');
  });
  server.keepAliveTimeout = 30000;
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: (p) => `http://127.0.0.1:${server.address().port}${p}`,
    held,
    release() { for (const res of held.splice(0)) res.end('ok'); },
    close() {
      this.release();
      server.closeAllConnections();
      return new Promise((done) => server.close(done));
    },
  })));
}

// Each client: make(options) -> { source (the events' agent), get(url) -> text, close() }.
const CLIENTS = [
  {
    title: 'the agent',
    resends: false,
    make(options) {
      const agent = new HttpAgent(options);
      return {
        source: agent,
        get: (url) => new Promise((resolve, reject) => {
          http.get(url, { agent }, (res) => {
            let body = '';
            res.on('data', (chunk) => { body += chunk; });
            res.on('end', () => resolve(body));
          }).on('error', reject);
        }),
        close: () => agent.close(),
      };
    },
  },
  {
    title: 'steady-agent/fetch',
    resends: true,
    make(options) {
      const fetch = createFetch(options);
      return { source: fetch.dispatcher, get: async (url) => (await fetch(url)).text(), close: () => fetch.close() };
    },
  },
  {
    title: `createDispatcher (${newest.name})`,
    resends: true,
    make(options) {
      const undici = newest.load();
      const dispatcher = createDispatcher(undici, options);
      return { source: dispatcher, get: async (url) => (await undici.request(url, { dispatcher })).body.text(), close: () => dispatcher.close() };
    },
  },
];

describe('every published event has the fields index.d.ts declares', function () {
  this.timeout(20000);
  const shapes = declaredShapes();
  const handles = [];
  const keep = (handle) => {
    handles.push(handle);
    return handle;
  };
  afterEach(async () => {
    for (const handle of handles.splice(0).reverse()) await handle.close();
  });

  it('index.d.ts types every channel the library publishes on, and no other', () => {
    assert.deepEqual([...shapes.keys()].sort(), Object.values(CHANNEL_NAMES).sort());
  });

  for (const client of CLIENTS) {
    it(`${client.title}: every message carries its type's required fields`, async () => {
      const server = keep(await heldServer());
      const dns = keep(await createDnsServer({ 'svc.test': { A: ['127.0.0.1'], ttl: 30 } }));
      // Closes a connection 50 ms after each response: a limit to learn.
      const closing = keep(await createRawServer((socket) => {
        let timer;
        onRequests(socket, () => {
          clearTimeout(timer);
          socket.write(rawResponse('ok'));
          timer = setTimeout(() => socket.end(), 50);
        });
      }));
      const made = client.make({ maxSockets: 1, maxQueue: 1, dns: { resolver: dns.callbackResolver() } });
      const recorder = recordAll(made.source);
      keep({ close: async () => { recorder.stop(); } });
      let closed = false;
      keep({ close: async () => { if (!closed) await made.close(); } });

      // New, reused, the hint, and the host name through dns.
      const port = new URL(server.url('/')).port;
      await made.get(server.url('/hint'));
      await made.get(`http://svc.test:${port}/`);
      // The queue: one held, one waiting, one refused.
      const held = made.get(server.url('/hold'));
      await waitFor(() => server.held.length === 1);
      const queued = made.get(server.url('/queued'));
      await assert.rejects(made.get(server.url('/refused')));
      server.release();
      await Promise.all([held, queued]);
      // A limit learned from the server's idle closes.
      await made.get(`http://127.0.0.1:${closing.port}/`);
      await waitFor(() => recorder.seen.some(([name, message]) => name === CHANNEL_NAMES.close && message.port === closing.port));
      if (client.resends) {
        const collisions = keep(await collisionServer('http:', { fails: secondOnConnection }));
        await made.get(collisions.url('/1'));
        await made.get(collisions.url('/2'));
      }
      closed = true;
      await made.close();
      await assert.rejects(made.get(server.url('/after-close')));

      const expected = [
        CHANNEL_NAMES.create, CHANNEL_NAMES.reuse, CHANNEL_NAMES.free, CHANNEL_NAMES.close, CHANNEL_NAMES.serverIdleLimit,
        CHANNEL_NAMES.queued, CHANNEL_NAMES.dequeued, CHANNEL_NAMES.noSocket, CHANNEL_NAMES.dnsLookup,
      ];
      if (client.resends) expected.push(CHANNEL_NAMES.resend);
      const channels = new Set(recorder.seen.map(([name]) => name));
      for (const name of expected) assert.ok(channels.has(name), `${name} was published`);
      for (const [name, message] of recorder.seen) {
        for (const field of shapes.get(name)) {
          assert.ok(message[field] !== undefined, `${name} has ${field}: ${Object.keys(message).join(', ')}`);
        }
      }
      const outcomes = recorder.seen.filter(([name]) => name === CHANNEL_NAMES.noSocket).map(([, message]) => message.outcome);
      assert.deepEqual(outcomes.sort(), ['agent-closed', 'queue-full']);
      const learned = recorder.seen.filter(([name, message]) => name === CHANNEL_NAMES.serverIdleLimit && message.source === 'learned');
      assert.ok(learned.length >= 1, 'a learned limit was published');
    });
  }
});
