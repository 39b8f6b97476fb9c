'use strict';

const assert = require('node:assert/strict');
const { constants } = require('..');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor } = require('./support/request');

const NAMES = [
  'CURRENT_ID', 'CREATE_ID', 'INIT_SOCKET', 'CREATE_HTTPS_CONNECTION',
  'SOCKET_CREATED_TIME', 'SOCKET_NAME', 'SOCKET_REQUEST_COUNT', 'SOCKET_REQUEST_FINISHED_COUNT',
];

describe('constants', () => {
  it('are the agentkeepalive symbols, distinct and frozen', () => {
    assert.deepEqual(Object.keys(constants).sort(), [...NAMES].sort());
    for (const name of NAMES) assert.equal(typeof constants[name], 'symbol', name);
    assert.equal(new Set(Object.values(constants)).size, NAMES.length);
    assert.ok(Object.isFrozen(constants));
  });

  for (const protocol of PROTOCOLS) {
    describe(`sockets carry them (${protocol})`, () => {
      let server;
      let agent;
      beforeEach(async () => {
        server = await createServer(protocol);
        agent = createAgent(protocol);
      });
      afterEach(async () => {
        agent.destroy();
        await server.close();
      });

      it('SOCKET_NAME, SOCKET_CREATED_TIME and the request counts', async () => {
        const before = Date.now();
        const first = await request(server.url(), { agent });
        const socket = first.socket;
        const pool = Object.keys(agent.freeSockets)[0];
        assert.equal(socket[constants.SOCKET_NAME], `sock[0#${pool}]`);
        assert.ok(pool.startsWith(`127.0.0.1:${server.port}:`), pool);
        assert.ok(socket[constants.SOCKET_CREATED_TIME] >= before);
        assert.ok(socket[constants.SOCKET_CREATED_TIME] <= Date.now());
        assert.equal(socket[constants.SOCKET_REQUEST_COUNT], 1);
        assert.equal(socket[constants.SOCKET_REQUEST_FINISHED_COUNT], 1);

        const second = await request(server.url(), { agent });
        assert.equal(second.socket, socket);
        assert.equal(socket[constants.SOCKET_REQUEST_COUNT], 2);
        assert.equal(socket[constants.SOCKET_REQUEST_FINISHED_COUNT], 2);
      });

      it('counts requests assigned apart from requests finished', async () => {
        const first = await request(server.url(), { agent });
        const socket = first.socket;
        const pending = request(server.url('/slow'), { agent });
        assert.equal(socket[constants.SOCKET_REQUEST_COUNT], 2);
        assert.equal(socket[constants.SOCKET_REQUEST_FINISHED_COUNT], 1);
        await pending;
        assert.equal(socket[constants.SOCKET_REQUEST_FINISHED_COUNT], 2);
      });

      it('are the socket\'s own enumerable properties; a caller\'s write takes effect', async () => {
        const first = await request(server.url(), { agent });
        const socket = first.socket;
        const own = Object.getOwnPropertySymbols(socket).filter((key) => Object.values(constants).includes(key));
        assert.deepEqual(own.map(String).sort(), ['SOCKET_CREATED_TIME', 'SOCKET_NAME', 'SOCKET_REQUEST_COUNT', 'SOCKET_REQUEST_FINISHED_COUNT']
          .map((name) => String(constants[name])).sort());
        for (const key of own) assert.equal(Object.getOwnPropertyDescriptor(socket, key).enumerable, true);
        socket[constants.SOCKET_NAME] = 'mine';
        socket[constants.SOCKET_CREATED_TIME] = 5;
        assert.equal(socket[constants.SOCKET_NAME], 'mine');
        assert.equal(socket[constants.SOCKET_CREATED_TIME], 5);
        // The counts are the agent's: a request finishes when it has counted
        // it, and the next one is counted from what was written.
        socket[constants.SOCKET_REQUEST_COUNT] = 10;
        socket[constants.SOCKET_REQUEST_FINISHED_COUNT] = 9;
        const second = await request(server.url(), { agent });
        assert.equal(second.socket, socket);
        assert.equal(socket[constants.SOCKET_REQUEST_COUNT], 11);
        assert.equal(socket[constants.SOCKET_REQUEST_FINISHED_COUNT], 10);
      });

      it('socket ids count up per agent', async () => {
        const [a, b] = await Promise.all([request(server.url(), { agent }), request(server.url(), { agent })]);
        const ids = [a.socket, b.socket].map((s) => /^sock\[(\d+)#/.exec(s[constants.SOCKET_NAME])[1]).sort();
        assert.deepEqual(ids, ['0', '1']);
        assert.equal(agent[constants.CURRENT_ID], 2);
      });
    });
  }

  it('the socket id counter wraps before Number.MAX_SAFE_INTEGER', () => {
    const agent = createAgent('http:');
    try {
      agent[constants.CURRENT_ID] = Number.MAX_SAFE_INTEGER - 2;
      assert.equal(agent[constants.CREATE_ID](), Number.MAX_SAFE_INTEGER - 2);
      assert.equal(agent[constants.CREATE_ID](), Number.MAX_SAFE_INTEGER - 1);
      assert.equal(agent[constants.CURRENT_ID], 0);
      assert.equal(agent[constants.CREATE_ID](), 0);
      assert.equal(agent[constants.CREATE_ID](), 1);
    } finally {
      agent.destroy();
    }
  });

  describe('CREATE_HTTPS_CONNECTION and INIT_SOCKET', () => {
    let server;
    before(async () => { server = await createServer('https:'); });
    after(() => server.close());

    it('CREATE_HTTPS_CONNECTION is core\'s https createConnection: a TLS socket the agent does not track', async () => {
      const agent = createAgent('https:');
      const socket = agent[constants.CREATE_HTTPS_CONNECTION]({ host: '127.0.0.1', port: server.port, ca: agent.options.ca, servername: 'localhost' });
      try {
        await new Promise((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
        assert.equal(socket.encrypted, true);
        assert.equal(socket[constants.SOCKET_NAME], undefined);
        assert.equal(agent.createSocketCount, 0);
      } finally {
        socket.destroy();
        agent.destroy();
      }
    });

    it('INIT_SOCKET tags and counts a socket once, connected or not, with or without a pool key', async () => {
      const agent = createAgent('http:');
      const net = require('node:net');
      const socket = net.connect(server.port, '127.0.0.1');
      try {
        await new Promise((resolve) => socket.once('connect', resolve));
        agent[constants.INIT_SOCKET](socket, { host: '127.0.0.1', port: server.port });
        assert.equal(socket[constants.SOCKET_NAME], `sock[0#127.0.0.1:${server.port}:]`);
        agent[constants.INIT_SOCKET](socket, { host: 'elsewhere', port: 1 });
        assert.equal(socket[constants.SOCKET_NAME], `sock[0#127.0.0.1:${server.port}:]`);
        assert.equal(agent.createSocketCount, 1);
        // Already connected: an error now is an error of a working socket.
        // The caller listens, so the agent only counts it.
        const seen = [];
        socket.on('error', (err) => seen.push(err.message));
        socket.destroy(new Error('boom'));
        await waitFor(() => agent.closeSocketCount === 1);
        assert.equal(agent.errorSocketCount, 1);
        assert.equal(agent.createSocketErrorCount, 0);
        assert.deepEqual(seen, ['boom']);
      } finally {
        socket.destroy();
        agent.destroy();
      }
    });
  });
});
