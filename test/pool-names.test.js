'use strict';

// lib/pool_names.js: the http pool names the agent keeps give exactly what
// core's getName gives, for every option core's getName reads, on whatever
// Node runs the tests.
const assert = require('node:assert/strict');
const http = require('node:http');
const { PoolNames, LIMIT } = require('../lib/agent/pool_names');
const { HttpAgent } = require('..');

const coreName = (options) => http.Agent.prototype.getName.call(new http.Agent(), options);

const HOSTS = ['example.com', '127.0.0.1', '::1', '', undefined, 'localhost'];
const PORTS = [80, '80', 8080, '8080', 0, '', undefined, NaN];
const EXTRAS = [
  {},
  { localAddress: '127.0.0.2' },
  { localAddress: '' },
  { family: 4 },
  { family: 6 },
  { family: 0 },
  { family: '4' },
  { socketPath: '/tmp/a.sock' },
  { socketPath: '' },
  { path: '/ignored', method: 'POST', servername: 'other' },
];

function* everyOptions() {
  for (const host of HOSTS) {
    for (const port of PORTS) {
      for (const extra of EXTRAS) yield { __proto__: null, host, port, ...extra };
    }
  }
}

describe('pool names (http)', () => {
  it('every name is core\'s, asked once or many times, in any order', () => {
    const names = new PoolNames();
    const all = [...everyOptions()];
    for (let round = 0; round < 3; round++) {
      for (const options of round === 1 ? all.slice().reverse() : all) {
        assert.equal(names.nameOf(options, coreName), coreName(options), JSON.stringify({ ...options }));
      }
    }
  });

  it('the agent\'s getName is core\'s', () => {
    const agent = new HttpAgent();
    try {
      for (const options of everyOptions()) {
        assert.equal(agent.getName(options), coreName(options));
        assert.equal(agent.getName(options), coreName(options));
      }
    } finally {
      agent.destroy();
    }
  });

  it('asks core once for a host and port it named before, again when the port changes', () => {
    const names = new PoolNames();
    const asked = [];
    const counting = (options) => { asked.push(options.port); return coreName(options); };
    names.nameOf({ host: 'a.test', port: 1 }, counting);
    names.nameOf({ host: 'a.test', port: 1 }, counting);
    names.nameOf({ host: 'a.test', port: 2 }, counting);
    names.nameOf({ host: 'a.test', port: 2 }, counting);
    names.nameOf({ host: 'a.test', port: 1 }, counting);
    assert.deepEqual(asked, [1, 2, 1]);
  });

  it('keeps at most LIMIT hosts', () => {
    const names = new PoolNames();
    const asked = [];
    const counting = (options) => { asked.push(options.host); return coreName(options); };
    for (let i = 0; i <= LIMIT; i++) names.nameOf({ host: `h${i}.test`, port: 80 }, counting);
    assert.equal(asked.length, LIMIT + 1);
    // The map started again with the last host: the first is asked again, the last is not.
    names.nameOf({ host: `h${LIMIT}.test`, port: 80 }, counting);
    names.nameOf({ host: 'h0.test', port: 80 }, counting);
    assert.deepEqual(asked.slice(LIMIT + 1), ['h0.test']);
  });
});
