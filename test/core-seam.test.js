'use strict';

// lib/core/, the one seam onto Node's internals, against the Node running
// the test: every private field, listener name and map the agent relies on
// is where lib/core/ says it is. .ci/run runs this on every supported major.
const assert = require('node:assert/strict');
const http = require('node:http');
const { once } = require('node:events');
const { HttpAgent } = require('..');
const { agentKeyOf, requestOf, poolOptions, builtHeader, replaceBuiltHeader } = require('../lib/core/private_fields');
const { takeOutOfPool, countOut, countIn, unqueue } = require('../lib/core/agent_maps');
const { ExpiredTimeout } = require('../lib/core/expired_timeout');
const { stateOf } = require('../lib/state/socket_state');

describe(`core seam (Node ${process.version})`, () => {
  let server;
  let port;
  before(async () => {
    server = http.createServer((req, res) => res.end('ok'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = server.address().port;
  });
  after(() => server.close());

  async function get(agent, extra = {}) {
    const req = http.get({ host: '127.0.0.1', port, agent, ...extra });
    const [res] = await once(req, 'response');
    res.resume();
    await once(res, 'end');
    return req;
  }

  it('core\'s createSocket records the pool name in the options it makes the socket with (_agentKey)', async () => {
    const agent = new http.Agent({ keepAlive: true });
    let made;
    const createConnection = agent.createConnection;
    agent.createConnection = function (options, cb) {
      made = options;
      return createConnection.call(this, options, cb);
    };
    try {
      await get(agent);
      assert.equal(agentKeyOf(made), agent.getName(made));
      assert.equal(agentKeyOf(poolOptions('a:1:')), 'a:1:');
    } finally {
      agent.destroy();
    }
  });

  it('a socket serving a request names it (_httpMessage)', async () => {
    const agent = new HttpAgent();
    try {
      const req = http.get({ host: '127.0.0.1', port, agent });
      const [socket] = await once(req, 'socket');
      assert.equal(requestOf(socket), req);
      const [res] = await once(req, 'response');
      res.resume();
      await once(res, 'end');
    } finally {
      agent.destroy();
    }
  });

  it('core\'s four listeners and net\'s \'end\' listener are found by name and taken over', async () => {
    const agent = new HttpAgent();
    try {
      await get(agent);
      const [socket] = Object.values(agent.freeSockets)[0];
      assert.equal(stateOf(socket).coreListens, true);
      for (const event of ['free', 'close', 'timeout', 'agentRemove']) {
        assert.equal(socket.listeners(event).some((f) => ['onFree', 'onClose', 'onTimeout', 'onRemove'].includes(f.name)), false, event);
      }
      assert.equal(socket.listeners('end').some((f) => f.name === 'onReadableStreamEnd'), false);
      assert.equal(socket.listeners('end').some((f) => f.name === 'endAfterNet'), true);
    } finally {
      agent.destroy();
    }
  });

  it('a header built before a socket comes is rewritten in place, and its queued copy with Expect (_header, outputData)', () => {
    const agent = new http.Agent({ maxSockets: 1 });
    try {
      const req = http.request({ host: '127.0.0.1', port, agent, path: '/x', headers: { Expect: '100-continue' } });
      req.on('error', () => {});
      const header = builtHeader(req);
      assert.equal(typeof header, 'string');
      assert.match(header, /^GET \/x HTTP\/1.1\r\n/);
      const rewritten = header.replace('GET /x', 'GET http://h/x');
      assert.equal(replaceBuiltHeader(req, header, rewritten), true);
      assert.equal(builtHeader(req), rewritten);
      req.destroy();
    } finally {
      agent.destroy();
    }
  });

  it('the agent\'s maps and count: a free socket out, a queued request out, a place counted out and in', async () => {
    const agent = new HttpAgent({ maxSockets: 1 });
    try {
      await get(agent);
      const pool = Object.keys(agent.freeSockets)[0];
      const [socket] = agent.freeSockets[pool];
      takeOutOfPool(agent.freeSockets, pool, socket);
      assert.equal(agent.freeSockets[pool], undefined);
      socket.destroy();
      const count = agent.totalSocketCount;
      countOut(agent);
      assert.equal(agent.totalSocketCount, count - 1);
      countIn(agent);
      assert.equal(agent.totalSocketCount, count);
      const first = http.get({ host: '127.0.0.1', port, agent });
      const second = http.get({ host: '127.0.0.1', port, agent });
      second.on('error', () => {});
      assert.deepEqual(agent.requests[pool], [second]);
      assert.equal(unqueue(agent, pool, second), true);
      assert.equal(agent.requests[pool], undefined);
      second.destroy();
      const [res] = await once(first, 'response');
      res.resume();
      await once(res, 'end');
    } finally {
      agent.destroy();
    }
  });

  it('an expired socket\'s \'timeout\' is emitted with the pools hidden from core\'s listener, and they come back', async () => {
    const agent = new http.Agent({ keepAlive: true });
    try {
      await get(agent);
      const pools = agent.freeSockets;
      const [socket] = Object.values(pools)[0];
      let seen;
      socket.once('timeout', () => { seen = Object.keys(agent.freeSockets).length; });
      new ExpiredTimeout().emit(agent, socket);
      assert.equal(seen, 0);
      assert.equal(agent.freeSockets, pools);
      assert.equal(socket.destroyed, false); // core's listener found no pool to take it from
    } finally {
      agent.destroy();
    }
  });
});
