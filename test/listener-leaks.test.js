'use strict';

// Listener build-up: code that adds a listener to the socket on every request
// and never removes it ends in Node's MaxListenersExceededWarning on a pooled
// socket. When the warning names one of an agent's sockets, the agent
// publishes it on steady-agent:socket:listeners, with the origin, the event,
// the listener count and the requests the socket has served.
//
// The warning is printed into the test run's output, so the traffic runs in
// a child process (with --no-warnings: the 'warning' event still fires).
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');

/** Runs `body` (an async function's body) in a new Node; resolves with what it wrote to stdout, parsed. */
function runChild(body) {
  const script = `
    const dc = require('node:diagnostics_channel');
    const { HttpAgent, HttpsAgent } = require(${JSON.stringify(root)});
    const { createServer, fixtures } = require(${JSON.stringify(path.join(root, 'test', 'support', 'servers'))});
    const { request } = require(${JSON.stringify(path.join(root, 'test', 'support', 'request'))});
    (async () => { ${body} })().then(
      (result) => process.stdout.write(JSON.stringify(result)),
      (err) => { console.error(err); process.exitCode = 1; },
    );
  `;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--no-warnings', '-e', script], (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

describe('steady-agent:socket:listeners', () => {
  for (const protocol of ['http:', 'https:']) {
    it(`publishes a listener leaked on every request once the warning fires (${protocol.slice(0, -1)})`, async () => {
      const result = await runChild(`
        const server = await createServer(${JSON.stringify(protocol)});
        const agent = ${protocol === 'https:' ? 'new HttpsAgent({ ca: fixtures.ca })' : 'new HttpAgent()'};
        const messages = [];
        dc.subscribe('steady-agent:socket:listeners', (message) => messages.push(message));
        const warnings = [];
        process.on('warning', (warning) => warnings.push(warning.name));
        let socket;
        for (let i = 0; i < 15; i++) {
          // The leak: a listener on the pooled socket, per request, never removed.
          const res = await request(server.url('/' + i), { agent });
          socket = res.socket;
          socket.on('close', function leakedListener() {});
          await new Promise((resolve) => setImmediate(resolve));
        }
        await new Promise((resolve) => setImmediate(resolve));
        const out = {
          warnings,
          messages: messages.map((m) => ({
            sameAgent: m.agent === agent,
            sameSocket: m.socket === socket,
            origin: m.origin,
            host: m.host,
            port: m.port,
            event: m.event,
            count: m.count,
            requests: m.requests,
            leaked: m.socket.listeners(m.event).filter((listener) => listener.name === 'leakedListener').length,
          })),
          port: server.port,
          created: agent.createSocketCount,
        };
        agent.destroy();
        await server.close();
        return out;
      `);
      assert.equal(result.created, 1, 'one socket served every request');
      assert.deepEqual(result.warnings, ['MaxListenersExceededWarning']);
      assert.equal(result.messages.length, 1, 'published once, as the warning fires once');
      const [message] = result.messages;
      assert.equal(message.sameAgent, true);
      assert.equal(message.sameSocket, true);
      assert.match(message.origin, new RegExp(`^127\\.0\\.0\\.1:${result.port}:`));
      assert.deepEqual([message.host, message.port, message.event], ['127.0.0.1', result.port, 'close']);
      // Node warns when an event passes 10 listeners.
      assert.equal(message.count, 11);
      // The leak grows with the requests: its listeners, at least the
      // requests minus the agent's and core's own.
      assert.ok(message.requests >= 2 && message.requests <= 11, JSON.stringify(message));
      assert.ok(message.leaked >= message.requests - 1, JSON.stringify(message));
    });
  }

  it('publishes nothing for an emitter that is not an agent\'s socket, nor without a subscriber', async () => {
    const result = await runChild(`
      const { EventEmitter } = require('node:events');
      const messages = [];
      const onMessage = (message) => messages.push(message);
      dc.subscribe('steady-agent:socket:listeners', onMessage);
      new HttpAgent(); // the process listener is there
      const emitter = new EventEmitter();
      for (let i = 0; i < 11; i++) emitter.on('x', () => {});
      await new Promise((resolve) => setTimeout(resolve, 10));
      const fromEmitter = messages.length;

      dc.unsubscribe('steady-agent:socket:listeners', onMessage);
      const server = await createServer('http:');
      const agent = new HttpAgent();
      const res = await request(server.url('/'), { agent });
      for (let i = 0; i < 11; i++) res.socket.on('close', () => {});
      await new Promise((resolve) => setTimeout(resolve, 10));
      agent.destroy();
      await server.close();
      return { fromEmitter, unsubscribed: messages.length };
    `);
    assert.deepEqual(result, { fromEmitter: 0, unsubscribed: 0 });
  });
});
