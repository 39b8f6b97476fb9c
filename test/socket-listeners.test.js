'use strict';

// The agent's listeners on its sockets (lib/socket_listeners.js): where they
// share an event with core's or net's own, they sit in an array made with
// room for a request's listener. Each request's listeners join and leave it;
// what stays on an idle socket is the same functions, in the same order,
// request after request, and every listener still hears its event once.
const assert = require('node:assert/strict');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request } = require('./support/request');

const EVENTS = ['close', 'timeout', 'end', 'error'];

// listeners(): a once wrapper (core's on a free socket's 'error') is new on every free; what it wraps is not.
const idleListeners = (socket) => Object.fromEntries(EVENTS.map((event) => [event, socket.listeners(event)]));

for (const protocol of PROTOCOLS) {
  describe(`the agent's socket listeners (${protocol})`, () => {
    let server;
    let agent;
    before(async () => { server = await createServer(protocol); });
    after(() => server.close());
    afterEach(() => agent.destroy());

    it('an idle socket keeps the same listeners, in order, request after request; a caller\'s hears its event once', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      const url = server.url();
      const first = await request(url, { agent });
      const socket = first.socket;
      const idle = idleListeners(socket);
      assert.ok(idle.close.length >= 2 && idle.timeout.length >= 2, 'core\'s and the agent\'s');
      for (let i = 0; i < 3; i++) {
        const res = await request(url, { agent });
        assert.equal(res.socket, socket, 'the same socket, reused');
        assert.deepEqual(idleListeners(socket), idle);
      }
      // A caller's listener joins the array and hears the close once; the
      // agent still counts it.
      let heard = 0;
      socket.on('close', () => { heard++; });
      const closed = new Promise((resolve) => socket.once('close', resolve));
      agent.destroy();
      await closed;
      assert.equal(heard, 1);
      assert.equal(agent.closeSocketCount, 1);
    });
  });
}
