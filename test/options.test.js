'use strict';

const assert = require('node:assert/strict');
const { HttpAgent, HttpsAgent } = require('..');
const { normalizeOptions } = require('../lib/options/normalize');
const { createHttpServer } = require('./support/servers');
const { request } = require('./support/request');

describe('options', () => {
  const agents = [];
  const make = (Agent, options) => {
    const agent = new Agent(options);
    agents.push(agent);
    return agent;
  };
  afterEach(() => { for (const agent of agents.splice(0)) agent.destroy(); });

  for (const Agent of [HttpAgent, HttpsAgent]) {
    describe(Agent.name, () => {
      it('has agentkeepalive\'s defaults', () => {
        const agent = make(Agent);
        assert.equal(agent.keepAlive, true);
        assert.equal(agent.keepAliveMsecs, 1000);
        assert.equal(agent.maxSockets, Infinity);
        assert.equal(agent.maxFreeSockets, 256);
        assert.equal(agent.maxTotalSockets, Infinity);
        assert.equal(agent.scheduling, 'lifo');
        assert.equal(agent.options.keepAlive, true);
        assert.equal(agent.options.freeSocketTimeout, 4000);
        assert.equal(agent.options.timeout, 8000);
        assert.equal(agent.options.socketActiveTTL, 0);
        assert.equal(agent.options.serverTimeoutMargin, 1000);
        assert.equal(agent.options.learnServerTimeout, true);
      });

      it('timeout defaults to max(freeSocketTimeout * 2, 8000)', () => {
        assert.equal(make(Agent, { freeSocketTimeout: 1000 }).options.timeout, 8000);
        assert.equal(make(Agent, { freeSocketTimeout: 6000 }).options.timeout, 12000);
        assert.equal(make(Agent, { freeSocketTimeout: 6000, timeout: 500 }).options.timeout, 500);
      });

      it('accepts humanized durations', () => {
        const agent = make(Agent, {
          freeSocketTimeout: '30s',
          timeout: '1m',
          socketActiveTTL: '2h',
          serverTimeoutMargin: '500ms',
          keepAliveMsecs: '2s',
        });
        assert.equal(agent.options.freeSocketTimeout, 30000);
        assert.equal(agent.options.timeout, 60000);
        assert.equal(agent.options.socketActiveTTL, 2 * 3600 * 1000);
        assert.equal(agent.options.serverTimeoutMargin, 500);
        assert.equal(agent.keepAliveMsecs, 2000);
      });

      it('accepts strings whose meaning is clear, such as environment variables, and gives core their values', () => {
        const given = {
          maxSockets: '10',
          maxFreeSockets: ' 5\n',
          maxTotalSockets: '20',
          keepAlive: 'false',
          learnServerTimeout: 'FALSE',
          freeSocketTimeout: '3000',
          timeout: ' 30s ',
          keepAliveMsecs: '2500',
          socketActiveTTL: '1m',
          serverTimeoutMargin: '250',
          maxQueue: '0',
          queueTimeout: '2s',
        };
        const copy = { ...given };
        const agent = make(Agent, given);
        assert.deepEqual(given, copy, 'the caller\'s options are untouched');
        // What core's agent was constructed with, and what it reads.
        assert.equal(agent.maxSockets, 10);
        assert.equal(agent.maxFreeSockets, 5);
        assert.equal(agent.maxTotalSockets, 20);
        assert.equal(agent.keepAlive, false);
        assert.equal(agent.keepAliveMsecs, 2500);
        assert.equal(agent.options.keepAlive, false);
        assert.equal(agent.options.learnServerTimeout, false);
        assert.equal(agent.options.freeSocketTimeout, 3000);
        assert.equal(agent.options.timeout, 30000);
        assert.equal(agent.options.socketActiveTTL, 60000);
        assert.equal(agent.options.serverTimeoutMargin, 250);
        assert.equal(agent.options.agentKeepAliveTimeoutBuffer, 250);
        assert.equal(agent.options.maxQueue, 0);
        assert.equal(agent.options.queueTimeout, 2000);
      });

      it('reads booleans from true/false, 1/0 and their strings in any case', () => {
        const forms = [[true, true], ['true', true], ['TRUE', true], [' True ', true], [1, true], ['1', true],
          [false, false], ['false', false], ['False', false], [0, false], ['0', false], [-0, false]];
        for (const [given, expected] of forms) {
          const agent = make(Agent, { keepAlive: given, learnServerTimeout: given });
          assert.equal(agent.keepAlive, expected, `keepAlive: ${JSON.stringify(given)}`);
          assert.equal(agent.options.learnServerTimeout, expected, `learnServerTimeout: ${JSON.stringify(given)}`);
        }
      });

      it('reads counts from decimal digits and Infinity, as numbers or strings', () => {
        const forms = [['1', 1], ['010', 10], ['12345678', 12345678], ['Infinity', Infinity], ['infinity', Infinity],
          [' 7 ', 7], [3, 3], [Infinity, Infinity]];
        for (const [given, expected] of forms) {
          const agent = make(Agent, { maxSockets: given, maxFreeSockets: given, maxTotalSockets: given });
          assert.equal(agent.maxSockets, expected, `maxSockets: ${JSON.stringify(given)}`);
          assert.equal(agent.maxFreeSockets, expected, `maxFreeSockets: ${JSON.stringify(given)}`);
          assert.equal(agent.maxTotalSockets, expected, `maxTotalSockets: ${JSON.stringify(given)}`);
        }
      });

      it('refuses maxSockets 0 and maxFreeSockets 0, which core reads as its defaults, and says so', () => {
        for (const zero of [0, '0']) {
          assert.throws(() => make(Agent, { maxSockets: zero }), (err) => {
            assert.equal(err.code, 'ERR_OUT_OF_RANGE');
            assert.equal(err.option, 'maxSockets');
            assert.match(err.message, /"maxSockets".*read 0 as Infinity/);
            return true;
          });
          assert.throws(() => make(Agent, { maxFreeSockets: zero }), (err) => {
            assert.equal(err.code, 'ERR_OUT_OF_RANGE');
            assert.equal(err.option, 'maxFreeSockets');
            assert.match(err.message, /"maxFreeSockets".*read 0 as 256.*keepAlive: false/);
            return true;
          });
        }
      });

      it('passes core options through', () => {
        const agent = make(Agent, { maxSockets: 5, maxFreeSockets: 3, maxTotalSockets: 9, scheduling: 'fifo', keepAlive: false, localAddress: '127.0.0.1' });
        assert.equal(agent.maxSockets, 5);
        assert.equal(agent.maxFreeSockets, 3);
        assert.equal(agent.maxTotalSockets, 9);
        assert.equal(agent.scheduling, 'fifo');
        assert.equal(agent.keepAlive, false);
        assert.equal(agent.options.localAddress, '127.0.0.1');
      });

      it('keeps out of each request\'s options what only the agent reads', () => {
        const agent = make(Agent, { freeSocketTimeout: '5s', maxSockets: 7, scheduling: 'fifo', localAddress: '127.0.0.1' });
        // Core copies the own properties of agent.options into every request.
        const perRequest = { __proto__: null, ...agent.options };
        const keys = Object.keys(perRequest);
        for (const key of ['keepAlive', 'localAddress', 'timeout']) assert.ok(keys.includes(key), key);
        for (const key of ['freeSocketTimeout', 'socketActiveTTL', 'serverTimeoutMargin', 'learnServerTimeout',
          'keepAliveMsecs', 'maxSockets', 'scheduling', 'agentKeepAliveTimeoutBuffer']) {
          assert.ok(!keys.includes(key), key);
        }
        // The rest still reads as on agentkeepalive's agent.options.
        assert.equal(agent.options.freeSocketTimeout, 5000);
        assert.equal(agent.options.maxSockets, 7);
        assert.equal(agent.options.scheduling, 'fifo');
        assert.equal(agent.options.keepAliveMsecs, 1000);
        assert.equal(agent.options.agentKeepAliveTimeoutBuffer, 1000);
        assert.equal(agent.options.toString, undefined, 'no Object.prototype behind agent.options');
      });

      it('validates writes to agent.options.freeSocketTimeout and socketActiveTTL', () => {
        const agent = make(Agent, {});
        agent.options.freeSocketTimeout = '2s';
        assert.equal(agent.options.freeSocketTimeout, 2000);
        agent.options.socketActiveTTL = 500;
        assert.equal(agent.options.socketActiveTTL, 500);
        // The same forms as the constructor's.
        agent.options.freeSocketTimeout = ' 1500 ';
        assert.equal(agent.options.freeSocketTimeout, 1500);
        agent.options.socketActiveTTL = '1m';
        assert.equal(agent.options.socketActiveTTL, 60000);
        agent.options.freeSocketTimeout = '2s';
        assert.throws(() => { agent.options.freeSocketTimeout = -1; }, { code: 'ERR_OUT_OF_RANGE', option: 'freeSocketTimeout' });
        assert.throws(() => { agent.options.socketActiveTTL = 'soon'; }, { code: 'ERR_INVALID_ARG_TYPE', option: 'socketActiveTTL' });
        assert.equal(agent.options.freeSocketTimeout, 2000, 'a refused write changes nothing');
      });

      it('never modifies the caller\'s options', () => {
        const options = Object.freeze({ freeSocketTimeout: '5s', timeout: 9000, maxSockets: 2, custom: 'x' });
        const agent = make(Agent, options);
        assert.deepEqual(options, { freeSocketTimeout: '5s', timeout: 9000, maxSockets: 2, custom: 'x' });
        assert.notEqual(agent.options, options);
        assert.equal(agent.options.custom, 'x');
      });
    });
  }

  describe('string values govern requests (http)', () => {
    let server;
    before(async () => { server = await createHttpServer(); });
    after(() => server.close());

    it('keepAlive: \'false\' keeps no socket; maxSockets: \'1\' queues the second request', async () => {
      const closing = make(HttpAgent, { keepAlive: 'false' });
      const first = await request(server.url(), { agent: closing });
      const second = await request(server.url(), { agent: closing });
      assert.notEqual(second.socket, first.socket);
      assert.equal(second.reusedSocket, false);
      assert.equal(closing.createSocketCount, 2);

      const single = make(HttpAgent, { maxSockets: '1' });
      const both = await Promise.all([request(server.url(), { agent: single }), request(server.url(), { agent: single })]);
      assert.equal(both[1].socket, both[0].socket);
      assert.equal(both[1].reusedSocket, true);
      assert.equal(single.createSocketCount, 1);
    });
  });

  it('normalizes once into a new frozen object', () => {
    const input = { timeout: '2s' };
    const normalized = normalizeOptions(input);
    assert.ok(Object.isFrozen(normalized));
    assert.notEqual(normalized, input);
    assert.equal(normalized.timeout, 2000);
    assert.deepEqual(input, { timeout: '2s' });
  });

  it('accepts null and undefined as "no options"', () => {
    assert.equal(normalizeOptions(null).freeSocketTimeout, 4000);
    assert.equal(normalizeOptions(undefined).freeSocketTimeout, 4000);
    assert.equal(normalizeOptions({ timeout: null }).timeout, 8000);
  });

  it('keeps core\'s Keep-Alive buffer in step with serverTimeoutMargin unless given', () => {
    assert.equal(normalizeOptions({ serverTimeoutMargin: 250 }).agentKeepAliveTimeoutBuffer, 250);
    assert.equal(normalizeOptions({ agentKeepAliveTimeoutBuffer: 10 }).agentKeepAliveTimeoutBuffer, 10);
  });

  it('0 is a valid duration (freeSocketTimeout 0: no free-socket timeout)', () => {
    const normalized = normalizeOptions({ freeSocketTimeout: 0, timeout: 0, serverTimeoutMargin: 0 });
    assert.equal(normalized.freeSocketTimeout, 0);
    assert.equal(normalized.timeout, 0);
    assert.equal(normalized.serverTimeoutMargin, 0);
  });
});
