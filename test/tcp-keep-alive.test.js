'use strict';

// TCP keep-alive probes on every socket from the moment it connects, http and
// https: Node's tls.connect drops the keepAlive option before Node 26 and
// late 24.x (nodejs/node#47137, fixed by #62004), so without the agent an
// https socket has none until it first goes free; nor has any socket of an
// agent with keepAlive: false.
// The test reads the socket option back from the operating system: Linux
// lists a keep-alive timer (timer code 2) for each connection that has
// SO_KEEPALIVE set, in /proc/net/tcp, as `ss -tino` shows it
// ("timer:(keepalive,...)").
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { HttpAgent, HttpsAgent } = require('..');
const { PROTOCOLS } = require('./support/agents');
const { createHoldingServer, fixtures } = require('./support/servers');
const { startProxy } = require('./support/proxy');
const { request, waitFor } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');
const { timerOf, idleTimer, KEEPALIVE_TIMER } = require('./support/tcp_timers');

/** The one socket the agent holds, active (serving a request). */
function activeSocket(agent) {
  const [sockets] = Object.values(agent.sockets);
  assert.equal(sockets?.length, 1);
  return sockets[0];
}

describe('tcpKeepAlive option', () => {
  it('is a boolean, true by default', () => {
    assert.equal(new HttpAgent().options.tcpKeepAlive, true);
    assert.equal(new HttpsAgent({ tcpKeepAlive: 'false' }).options.tcpKeepAlive, false);
    assert.equal(new HttpAgent({ tcpKeepAlive: 0 }).options.tcpKeepAlive, false);
    assert.throws(() => new HttpAgent({ tcpKeepAlive: 'no' }),
      { name: 'InvalidOptionTypeError', code: 'ERR_INVALID_ARG_TYPE', option: 'tcpKeepAlive' });
  });
});

describe('TCP keep-alive probes from the moment a socket connects', () => {
  before(function () {
    if (!fs.existsSync('/proc/net/tcp')) this.skip(); // Linux only: the OS's view of the socket
  });

  const { keep, agentFor } = closeAfterEach();

  /**
   * The OS's timer on the one socket of an agent made with `options`, while
   * a request holds it; then that request's response.
   */
  async function timerWhileHeld(protocol, options) {
    const server = keep(await createHoldingServer(protocol));
    const agent = agentFor(protocol, options);
    const pending = request(server.url('/hold'), { agent });
    await waitFor(() => server.held === 1);
    const timer = await timerOf(activeSocket(agent));
    server.release();
    return { timer, res: await pending };
  }

  for (const protocol of PROTOCOLS) {
    it(`on an active ${protocol.slice(0, -1)} socket, its first request still in flight, after keepAliveMsecs`, async () => {
      const server = keep(await createHoldingServer(protocol));
      const timers = {};
      for (const keepAliveMsecs of [60000, 600000]) {
        const agent = agentFor(protocol, { keepAliveMsecs });
        const pending = request(server.url('/hold'), { agent });
        await waitFor(() => server.held === 1);
        timers[keepAliveMsecs] = await timerOf(activeSocket(agent));
        server.release();
        await pending;
      }
      assert.equal(timers[60000].code, KEEPALIVE_TIMER);
      assert.equal(timers[600000].code, KEEPALIVE_TIMER);
      // The delay is keepAliveMsecs, in ms (the system's default is two
      // hours); /proc counts in USER_HZ ticks, 100 a second.
      assert.ok(timers[600000].ticks > timers[60000].ticks, JSON.stringify(timers));
      assert.ok(timers[600000].ticks <= 600000 / 10 && timers[60000].ticks <= 60000 / 10, JSON.stringify(timers));
    });

    it(`on an active ${protocol.slice(0, -1)} socket of an agent that keeps none alive (keepAlive: false)`, async () => {
      const { timer } = await timerWhileHeld(protocol, { keepAlive: false });
      assert.equal(timer.code, KEEPALIVE_TIMER);
    });
  }

  for (const protocol of PROTOCOLS) {
    it(`tcpKeepAlive: false sets none (${protocol.slice(0, -1)}, keepAlive: false, for which Node asks none either)`, async () => {
      const { timer } = await timerWhileHeld(protocol, { keepAlive: false, tcpKeepAlive: false });
      assert.notEqual(timer.code, KEEPALIVE_TIMER);
    });
  }

  // connectTimeout alone still sets up each connection (its timer), and no
  // probes: the two settings are independent.
  for (const protocol of PROTOCOLS) {
    it(`tcpKeepAlive: false with connectTimeout sets none (${protocol.slice(0, -1)}), and the connection is made in time`, async () => {
      const { timer, res } = await timerWhileHeld(protocol, { keepAlive: false, tcpKeepAlive: false, connectTimeout: '1h' });
      assert.notEqual(timer.code, KEEPALIVE_TIMER);
      assert.equal(res.status, 200);
    });
  }

  it('tcpKeepAlive: false with connectTimeout through a CONNECT tunnel: none on the connection to the proxy', async () => {
    const proxy = keep(await startProxy());
    const ports = new Set();
    proxy.server.on('connection', (socket) => ports.add(socket.remotePort));
    const server = keep(await createHoldingServer('https:'));
    const agent = agentFor('https:', { proxy: proxy.url(), ca: fixtures.ca, keepAlive: false, tcpKeepAlive: false, connectTimeout: '1h' });
    const pending = request(server.url('/hold'), { agent });
    await waitFor(() => server.held === 1);
    assert.equal(ports.size, 1);
    assert.notEqual((await idleTimer([...ports][0], proxy.port)).code, KEEPALIVE_TIMER);
    server.release();
    assert.equal((await pending).status, 200);
  });

  for (const proxyProtocol of PROTOCOLS) {
    it(`through a CONNECT tunnel (${proxyProtocol.slice(0, -1)} proxy): on the connection to the proxy`, async () => {
      const proxy = keep(await startProxy({ protocol: proxyProtocol }));
      // The proxy sees the agent's port as the connection's remote port (an
      // https server emits 'connection' for the TCP and the TLS socket).
      const ports = new Set();
      proxy.server.on('connection', (socket) => ports.add(socket.remotePort));
      const server = keep(await createHoldingServer('https:'));
      const agent = agentFor('https:', { proxy: proxy.url(), ca: fixtures.ca });
      const pending = request(server.url('/hold'), { agent });
      await waitFor(() => server.held === 1);
      assert.equal(ports.size, 1, JSON.stringify({ ports: [...ports], connects: proxy.connects, accepted: proxy.accepted }));
      assert.equal((await idleTimer([...ports][0], proxy.port)).code, KEEPALIVE_TIMER);
      server.release();
      await pending;
    });
  }
});

// tcpKeepAlive: false with keepAlive on (the default): core asks for probes
// at creation (net.connect's keepAlive option) and each time a socket enters
// the pool (keepSocketAlive); none is left on, while the first request is in
// flight, while the socket is free, and while it serves the next.
describe('tcpKeepAlive: false turns probes off for the socket\'s whole life', () => {
  before(function () {
    if (!fs.existsSync('/proc/net/tcp')) this.skip();
  });

  const { keep, agentOf, agentFor } = closeAfterEach();

  /** The OS's timer on the agent's one socket: active, then free, then active again. */
  async function lifeOf(protocol, options) {
    const server = keep(await createHoldingServer(protocol));
    const agent = agentFor(protocol, options);
    const timers = {};
    const first = request(server.url('/hold'), { agent });
    await waitFor(() => server.held === 1);
    const socket = activeSocket(agent);
    timers.active = (await timerOf(socket)).code;
    server.release();
    await first;
    await waitFor(() => Object.values(agent.freeSockets).flat().length === 1);
    timers.free = (await timerOf(socket)).code;
    const second = request(server.url('/hold'), { agent });
    await waitFor(() => server.held === 1);
    assert.equal(activeSocket(agent), socket);
    timers.reused = (await timerOf(socket)).code;
    server.release();
    await second;
    return timers;
  }

  for (const protocol of PROTOCOLS) {
    it(`${protocol.slice(0, -1)}: none while active, free or reused`, async () => {
      const timers = await lifeOf(protocol, { tcpKeepAlive: false });
      assert.notEqual(timers.active, KEEPALIVE_TIMER, JSON.stringify(timers));
      assert.notEqual(timers.free, KEEPALIVE_TIMER, JSON.stringify(timers));
      assert.notEqual(timers.reused, KEEPALIVE_TIMER, JSON.stringify(timers));
    });

    it(`${protocol.slice(0, -1)}: unset, probes stay on while active, free and reused, as before`, async () => {
      const timers = await lifeOf(protocol, {});
      assert.deepEqual(timers, { active: KEEPALIVE_TIMER, free: KEEPALIVE_TIMER, reused: KEEPALIVE_TIMER });
    });

    it(`${protocol.slice(0, -1)}: a subclass's own keepSocketAlive is kept, and probes stay off`, async () => {
      let calls = 0;
      const Base = protocol === 'https:' ? HttpsAgent : HttpAgent;
      class Counting extends Base {
        keepSocketAlive(socket) {
          calls++;
          return super.keepSocketAlive(socket);
        }
      }
      const server = keep(await createHoldingServer(protocol));
      const agent = agentOf(Counting, { tcpKeepAlive: false, ...(protocol === 'https:' ? { ca: fixtures.ca } : {}) });
      const { socket } = await request(server.url('/'), { agent });
      await waitFor(() => Object.values(agent.freeSockets).flat().length === 1);
      assert.equal(calls, 1);
      assert.notEqual((await timerOf(socket)).code, KEEPALIVE_TIMER);
    });
  }

  it('an agent without tcpKeepAlive: false gets no keepSocketAlive of its own', () => {
    for (const options of [{}, { tcpKeepAlive: true }]) {
      const agent = new HttpAgent(options);
      assert.equal(Object.hasOwn(agent, 'keepSocketAlive'), false);
      agent.destroy();
    }
    const off = new HttpAgent({ tcpKeepAlive: false });
    assert.equal(Object.hasOwn(off, 'keepSocketAlive'), true);
    off.destroy();
  });
});
