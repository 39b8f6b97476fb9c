'use strict';

// The agent's listeners on its sockets (lib/socket_listeners.js): core's own
// per-socket closures ('free', 'close', 'timeout', 'agentRemove') are taken
// off and their work done by the agent's listeners, and net's 'end' listener
// is called by the agent's; an idle socket then carries no more listeners on
// those events than with Node's agent, the same ones request after request,
// and core's work is still done on each path: the pool, a close, an error on
// a free socket, a free socket's own timeout.
const assert = require('node:assert/strict');
const https = require('node:https');
const http = require('node:http');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer, fixtures } = require('./support/servers');
const { request, waitFor } = require('./support/request');

const EVENTS = ['free', 'close', 'timeout', 'agentRemove', 'end', 'error'];
const CORE_CLOSURES = ['onFree', 'onClose', 'onTimeout', 'onRemove'];

// listeners(): a once wrapper (core's on a free socket's 'error') is new on every free; what it wraps is not.
const idleListeners = (socket) => Object.fromEntries(EVENTS.map((event) => [event, socket.listeners(event)]));
const counts = (socket) => Object.fromEntries(EVENTS.map((event) => [event, socket.listenerCount(event)]));

for (const protocol of PROTOCOLS) {
  describe(`the agent's socket listeners (${protocol})`, () => {
    let server;
    let agent;
    before(async () => { server = await createServer(protocol); });
    after(() => server.close());
    afterEach(() => agent.destroy());

    it('an idle socket has core\'s listeners\' work done by the agent\'s: no more listeners than with Node\'s agent', async () => {
      agent = createAgent(protocol);
      const mod = protocol === 'https:' ? https : http;
      const nodeAgent = new mod.Agent({ keepAlive: true, ca: fixtures.ca });
      try {
        const ours = (await request(server.url(), { agent })).socket;
        const core = (await request(server.url(), { agent: nodeAgent })).socket;
        await waitFor(() => total(agent.getCurrentStatus().freeSockets) === 1 && Object.keys(nodeAgent.freeSockets).length === 1);
        const expected = counts(core);
        assert.equal(expected.free, 1, 'core\'s own, with Node\'s agent');
        assert.equal(expected.error, 1, 'core\'s, while the socket is free');
        assert.deepEqual(counts(ours), expected);
        for (const event of EVENTS) {
          const names = ours.listeners(event).map((listener) => listener.name);
          assert.ok(!names.some((name) => CORE_CLOSURES.includes(name)), `no closure of core's on '${event}': ${names}`);
        }
      } finally {
        nodeAgent.destroy();
      }
    });

    it('an idle socket keeps the same listeners, in order, request after request; a caller\'s hears its event once', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      const url = server.url();
      const first = await request(url, { agent });
      const socket = first.socket;
      const idle = idleListeners(socket);
      for (let i = 0; i < 3; i++) {
        const res = await request(url, { agent });
        assert.equal(res.socket, socket, 'the same socket, reused');
        assert.deepEqual(idleListeners(socket), idle);
      }
      // A caller's listener joins the agent's and hears the close once; the
      // agent still counts it, and core's count and maps let it go.
      let heard = 0;
      socket.on('close', () => { heard++; });
      const closed = new Promise((resolve) => socket.once('close', resolve));
      agent.destroy();
      await closed;
      assert.equal(heard, 1);
      assert.equal(agent.closeSocketCount, 1);
      assert.equal(agent.totalSocketCount, 0);
      assert.deepEqual(Object.keys(agent.freeSockets), []);
    });

    it('free, the socket has core\'s \'error\' listener only; reused, the agent\'s again, first, and an error then is counted and reaches the request', async () => {
      agent = createAgent(protocol);
      const first = await request(server.url(), { agent });
      const socket = first.socket;
      await waitFor(() => total(agent.getCurrentStatus().freeSockets) === 1);
      assert.deepEqual(socket.listeners('error').map((listener) => listener.name), ['freeSocketErrorListener']);
      const req = (protocol === 'https:' ? https : http).get(server.url(), { agent });
      const requestError = new Promise((resolve) => req.on('error', resolve));
      const reused = await new Promise((resolve) => req.on('socket', (s) => setImmediate(() => resolve(s))));
      assert.equal(reused, socket, 'the pooled socket, reused');
      const during = reused.listeners('error').map((listener) => listener.name);
      assert.equal(during[0], 'error', `the agent's, before the request's: ${during}`);
      assert.ok(during.length >= 2, during.join());
      reused.destroy(new Error('injected while active'));
      assert.equal((await requestError).message, 'injected while active');
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(agent.errorSocketCount, 1);
    });

    it('a once listener taking itself off as the event is emitted does not make the next listener missed', async () => {
      agent = createAgent(protocol);
      const { socket } = await request(server.url(), { agent });
      // Before the agent's (at index 0 of the array the agent made), then after it.
      const heard = [];
      socket.prependOnceListener('close', () => heard.push('first, once'));
      socket.once('close', () => heard.push('second, once'));
      socket.on('close', () => heard.push('third'));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      socket.destroy();
      await closed;
      assert.deepEqual(heard, ['first, once', 'second, once', 'third']);
      assert.equal(agent.closeSocketCount, 1, 'the agent\'s listener heard it');
      assert.equal(agent.totalSocketCount, 0);
    });

    it('the server\'s close of an idle socket: out of the pool and of totalSocketCount once, as core\'s listener did', async () => {
      agent = createAgent(protocol);
      const { socket } = await request(server.url(), { agent });
      assert.equal(agent.totalSocketCount, 1);
      for (const serverSide of server.connections) serverSide.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(socket.destroyed, true);
      assert.equal(agent.totalSocketCount, 0);
      assert.deepEqual(Object.keys(agent.freeSockets), []);
      assert.deepEqual(Object.keys(agent.sockets), []);
      // The next request gets a new socket.
      const next = await request(server.url(), { agent });
      assert.notEqual(next.socket, socket);
      assert.equal(agent.totalSocketCount, 1);
    });

    it('an error on a free socket: out of the pool and of totalSocketCount once (its \'agentRemove\', then its close)', async () => {
      agent = createAgent(protocol);
      const { socket } = await request(server.url(), { agent });
      socket.destroy(new Error('injected'));
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(agent.errorSocketCount, 1);
      assert.equal(agent.totalSocketCount, 0);
      assert.deepEqual(Object.keys(agent.freeSockets), []);
      assert.equal(socket.listenerCount('free'), 0, 'core\'s \'agentRemove\' takes the \'free\' listener off');
      assert.equal(socket.listenerCount('agentRemove'), 0);
    });

    it('a free socket\'s own timeout (a caller\'s setTimeout): destroyed in the pool, as core\'s listener did, and counted', async () => {
      agent = createAgent(protocol, { freeSocketTimeout: 60000 });
      const { socket } = await request(server.url(), { agent });
      socket.setTimeout(10);
      await waitFor(() => agent.closeSocketCount === 1);
      assert.equal(socket.destroyed, true);
      assert.equal(agent.timeoutSocketCount, 1);
      assert.equal(agent.totalSocketCount, 0);
      assert.deepEqual(Object.keys(agent.freeSockets), []);
    });
  });
}

// A Node whose agent names its listeners otherwise (or anything that listens
// after core's on the same events) keeps core's own listeners on the socket:
// the agent adds its own beside them, as before it took core's over, and
// core's do core's work.
describe('the agent\'s socket listeners where core\'s are not recognised (http:)', () => {
  let server;
  let agent;
  before(async () => { server = await createServer('http:'); });
  after(() => server.close());
  afterEach(() => agent.destroy());

  // An agent whose sockets get a listener of their own right after core's
  // 'free', 'close' and 'timeout' listeners (added as core adds its next
  // one: 'newListener' comes before a listener is added), so that core's is
  // no longer the last one on its event.
  function agentWithListenersAfterCore(options) {
    const base = createAgent('http:', options);
    const createConnection = base.createConnection.bind(base);
    base.createConnection = (...args) => {
      const socket = createConnection(...args);
      const previous = { onClose: 'free', onTimeout: 'close', onRemove: 'timeout' };
      socket.on('newListener', function added(event, listener) {
        const after = previous[listener.name];
        if (after === undefined) return;
        if (listener.name === 'onRemove') this.removeListener('newListener', added);
        this.on(after, function afterCore() {});
      });
      return socket;
    };
    return base;
  }

  it('keeps core\'s listeners, adds the agent\'s beside them, and counts a close, a free socket\'s error and its timeout once', async () => {
    agent = agentWithListenersAfterCore({ freeSocketTimeout: 60000 });
    const first = await request(server.url(), { agent });
    const socket = first.socket;
    await waitFor(() => total(agent.getCurrentStatus().freeSockets) === 1);
    for (const [event, name] of [['free', 'onFree'], ['close', 'onClose'], ['timeout', 'onTimeout'], ['agentRemove', 'onRemove']]) {
      assert.ok(socket.listeners(event).some((listener) => listener.name === name), `core's ${name} stays`);
    }
    assert.ok(socket.listeners('error').some((listener) => listener.name === 'error'), 'the agent\'s \'error\' stays while free');
    // Reused: the same socket, the request counted.
    const second = await request(server.url(), { agent });
    assert.equal(second.socket, socket);
    assert.equal(agent.requestCount, 2);
    // An error on the free socket: counted once, out of the pool and of totalSocketCount once.
    await waitFor(() => total(agent.getCurrentStatus().freeSockets) === 1);
    socket.destroy(new Error('injected while free'));
    await waitFor(() => agent.closeSocketCount === 1);
    assert.equal(agent.errorSocketCount, 1);
    assert.equal(agent.totalSocketCount, 0);
    assert.deepEqual(Object.keys(agent.freeSockets), []);
    // A free socket's own timeout: core's listener destroys it, the agent counts it.
    const third = await request(server.url(), { agent });
    await waitFor(() => total(agent.getCurrentStatus().freeSockets) === 1);
    third.socket.setTimeout(10);
    await waitFor(() => agent.closeSocketCount === 2);
    assert.equal(agent.timeoutSocketCount, 1);
    assert.equal(agent.totalSocketCount, 0);
  });
});

