'use strict';

// Debug logging: `DEBUG=steady-agent` logs each socket transition through the
// `debug` package, and nothing is logged while it is off.
const assert = require('node:assert/strict');
const net = require('node:net');
const { format } = require('node:util');
const createDebug = require('debug');
const { createAgent } = require('./support/agents');
const { createHttpServer, createRawServer, onRequests, rawResponse } = require('./support/servers');
const { request, waitFor } = require('./support/request');
const { frontDoors } = require('./support/fetch');

/**
 * Captures what `debug` logs during each test of the suite it is called in,
 * and turns it off after: `lines` (every line so far) and `logged(pattern)`.
 */
function captureDebug() {
  const lines = [];
  let originalLog;
  beforeEach(() => {
    lines.length = 0;
    originalLog = createDebug.log;
    createDebug.log = (...args) => lines.push(format(...args));
  });
  afterEach(() => {
    createDebug.disable();
    createDebug.log = originalLog;
  });
  return { lines, logged: (pattern) => lines.some((line) => pattern.test(line)) };
}

describe('debug logging', () => {
  const { lines, logged } = captureDebug();
  let agent;
  const servers = [];
  afterEach(async () => {
    if (agent) agent.destroy();
    for (const server of servers.splice(0)) await server.close();
  });

  it('logs nothing while disabled', async () => {
    const server = await createHttpServer();
    servers.push(server);
    agent = createAgent('http:');
    await request(server.url(), { agent });
    await request(server.url(), { agent });
    assert.deepEqual(lines, []);
  });

  it('logs creation, free, reuse, a timeout the request handles, an error and the close', async () => {
    createDebug.enable('steady-agent');
    let hold;
    const server = await createHttpServer((req, res) => {
      if (req.url === '/hold') hold = res;
      else res.end('ok');
    });
    servers.push(server);
    agent = createAgent('http:', { timeout: 100 });
    const first = await request(server.url(), { agent });
    await new Promise((resolve, reject) => {
      const req = require('node:http').get(server.url('/hold'), { agent }, (res) => res.resume().on('end', resolve));
      req.on('timeout', () => hold.end('late'));
      req.on('error', reject);
    });
    first.socket.destroy(new Error('injected'));
    await waitFor(() => agent.closeSocketCount === 1);
    const name = /sock\[0#127\.0\.0\.1:\d+:\]/.source;
    assert.ok(logged(new RegExp(`steady-agent ${name} created`)), lines.join('\n'));
    assert.ok(logged(new RegExp(`${name} free, closes after 4000 ms idle`)));
    assert.ok(logged(new RegExp(`${name} reused for request 2`)));
    assert.ok(logged(new RegExp(`${name} timed out; the request handles it`)));
    assert.ok(logged(new RegExp(`${name} error: Error injected`)));
    assert.ok(logged(new RegExp(`${name} closed after 2 requests`)));
  });

  it('logs a server\'s idle close it learns, and a socket not kept because of the hint', async () => {
    createDebug.enable('steady-agent');
    // Answers /hint with `Keep-Alive: timeout=1`, others with no hint, and
    // closes a connection idle for 50 ms.
    const server = await createRawServer((socket) => {
      let timer;
      onRequests(socket, ({ path }) => {
        clearTimeout(timer);
        socket.write(rawResponse('ok', path === '/hint' ? { 'Keep-Alive': 'timeout=1' } : {}));
        timer = setTimeout(() => socket.end(), 50);
      });
    });
    servers.push(server);
    agent = createAgent('http:');
    await request(server.url('/'), { agent });
    await waitFor(() => agent.closeSocketCount === 1);
    assert.ok(logged(/closed by the server after \d+ ms idle/), lines.join('\n'));
    await request(server.url('/hint'), { agent });
    // Node 22+ takes the margin as its own buffer and refuses the socket
    // itself; Node 18 and 20 leave the decision to the agent.
    assert.ok(logged(/sock\[1#[^\]]+\] not kept: /), lines.join('\n'));
  });

  it('says "never connected" of a socket put in the pool by hand that never connected, and serves the request on a new one', async () => {
    createDebug.enable('steady-agent');
    const server = await createHttpServer();
    servers.push(server);
    agent = createAgent('http:');
    const stranger = new net.Socket();
    agent.freeSockets[agent.getName({ host: '127.0.0.1', port: server.port })] = [stranger];
    const res = await request(server.url(), { agent });
    assert.equal(res.status, 200);
    assert.notEqual(res.socket, stranger);
    assert.equal(stranger.destroyed, true);
    assert.ok(logged(/a socket put in the pool by hand never connected: not reused/), lines.join('\n'));
    assert.ok(logged(/a socket put in the pool by hand closing: unusable/), lines.join('\n'));
    assert.ok(!logged(/undefined/), lines.join('\n'));
  });
});

// The same lines from steady-agent/fetch and createDispatcher, whose sockets
// are named as the agent names its own.
describe('debug logging on the fetch and undici transports', () => {
  const DOORS = frontDoors();
  const { lines, logged } = captureDebug();
  const handles = [];
  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.close();
  });

  for (const door of DOORS) {
    it(`${door.title}: creation, free, reuse, a server's idle close it learns from, and the close`, async () => {
      createDebug.enable('steady-agent');
      // Closes a connection idle for 300 ms.
      const server = await createRawServer((socket) => {
        let timer;
        onRequests(socket, () => {
          clearTimeout(timer);
          socket.write(rawResponse('ok'));
          timer = setTimeout(() => socket.end(), 300);
        });
      });
      handles.push(server);
      const client = door.make();
      handles.unshift(client);
      await client.get(server.url('/'));
      // undici takes the socket back a turn after the response.
      await waitFor(() => logged(/free, closes after/));
      await new Promise((resolve) => setTimeout(resolve, 20));
      await client.get(server.url('/'));
      await waitFor(() => logged(/closed after 2 requests/));
      const name = /sock\[1#127\.0\.0\.1:\d+:\]/.source;
      assert.ok(logged(new RegExp(`steady-agent ${name} created`)), lines.join('\n'));
      assert.ok(logged(new RegExp(`${name} free, closes after 4000 ms idle`)), lines.join('\n'));
      assert.ok(logged(new RegExp(`${name} reused for request 2`)), lines.join('\n'));
      assert.ok(logged(new RegExp(`${name} closed by the server after \\d+ ms idle: learned`)), lines.join('\n'));
      assert.ok(logged(new RegExp(`${name} closed after 2 requests`)), lines.join('\n'));
    });
  }

  it('logs nothing while disabled', async () => {
    const server = await createHttpServer();
    handles.push(server);
    const client = DOORS[0].make();
    handles.unshift(client);
    await client.get(server.url());
    await client.get(server.url());
    assert.deepEqual(lines, []);
  });
});
