'use strict';

const assert = require('node:assert/strict');
const { constants } = require('..');
const { PROTOCOLS, createAgent } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request } = require('./support/request');

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

  it('HttpsAgent has core\'s https createConnection under CREATE_HTTPS_CONNECTION', () => {
    const agent = createAgent('https:');
    try {
      assert.equal(typeof agent[constants.CREATE_HTTPS_CONNECTION], 'function');
      assert.equal(typeof agent[constants.INIT_SOCKET], 'function');
    } finally {
      agent.destroy();
    }
  });
});
