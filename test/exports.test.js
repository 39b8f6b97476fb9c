'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const http = require('node:http');
const https = require('node:https');
const Agent = require('..');
const { HttpAgent, HttpsAgent, constants } = Agent;
const { createHttpsServer, fixtures } = require('./support/servers');
const { request } = require('./support/request');

describe('exports', () => {
  it('the default export is HttpAgent, with HttpAgent, HttpsAgent and constants on it', () => {
    assert.equal(Agent, HttpAgent);
    assert.equal(Agent.HttpAgent, HttpAgent);
    assert.equal(typeof HttpsAgent, 'function');
    assert.equal(Agent.constants, constants);
    assert.equal(HttpAgent.name, 'HttpAgent');
    assert.equal(HttpsAgent.name, 'HttpsAgent');
  });

  it('steady-agent/otel exports observeAgent, and both agents have getStats()', () => {
    const otel = require('steady-agent/otel');
    assert.deepEqual(Object.keys(otel), ['observeAgent']);
    assert.equal(typeof otel.observeAgent, 'function');
    for (const Class of [HttpAgent, HttpsAgent]) {
      const agent = new Class();
      try {
        assert.deepEqual(agent.getStats(), { origins: {} });
      } finally {
        agent.destroy();
      }
    }
  });

  it('steady-agent/retry exports isReplayable and a helper per client, and loads none of those clients', () => {
    const retry = require('steady-agent/retry');
    assert.deepEqual(Object.keys(retry).sort(), [
      'axiosRetryCondition', 'axiosRetryOptions', 'gotRetryOptions', 'isReplayable', 'request', 'wrapFetch',
    ]);
    // In a process of its own: this one has loaded the clients for other tests.
    const loaded = JSON.parse(execFileSync(process.execPath, [
      '-e', "require('steady-agent/retry'); process.stdout.write(JSON.stringify(Object.keys(require.cache)))",
    ], { cwd: __dirname, encoding: 'utf8' }));
    for (const name of ['axios', 'axios-retry', 'got', 'got-13', 'node-fetch', 'node-fetch-2']) {
      assert.equal(loaded.some((file) => file.includes(`/node_modules/${name}/`)), false, `${name} was loaded`);
    }
  });

  it('steady-agent/fetch and /undici export their functions and never load undici from npm', () => {
    assert.deepEqual(Object.keys(require('steady-agent/fetch')).sort(), ['close', 'createFetch', 'fetch', 'getStats']);
    assert.deepEqual(Object.keys(require('steady-agent/undici')), ['createDispatcher']);
    // In a process of its own, through a fetch: npm's undici would install
    // its global dispatcher at import time.
    const loaded = JSON.parse(execFileSync(process.execPath, ['-e', `
      const steady = require('steady-agent/fetch');
      require('steady-agent/undici');
      steady.fetch('http://127.0.0.1:9/').catch(() => {}).finally(async () => {
        await steady.close();
        process.stdout.write(JSON.stringify(Object.keys(require.cache)));
      });`], { cwd: __dirname, encoding: 'utf8' }));
    assert.equal(loaded.some((file) => /\/node_modules\/undici[^/]*\//.test(file)), false, 'undici was loaded');
  });

  it('HttpAgent is an http.Agent with keep-alive on', () => {
    const agent = new HttpAgent();
    try {
      assert.ok(agent instanceof http.Agent);
      assert.equal(agent.keepAlive, true);
      assert.equal(agent.defaultPort, 80);
      assert.equal(agent.protocol, 'http:');
    } finally {
      agent.destroy();
    }
  });

  it('HttpsAgent is an https.Agent (unlike agentkeepalive\'s) with default port 443', () => {
    const agent = new HttpsAgent();
    try {
      assert.ok(agent instanceof https.Agent);
      assert.ok(agent instanceof http.Agent);
      assert.equal(agent.keepAlive, true);
      assert.equal(agent.defaultPort, 443);
      assert.equal(agent.protocol, 'https:');
      assert.equal(agent.maxCachedSessions, 100);
    } finally {
      agent.destroy();
    }
  });

  it('can be constructed without options and subclassed', () => {
    class MyAgent extends HttpAgent {}
    const agent = new MyAgent();
    try {
      assert.ok(agent instanceof HttpAgent);
      assert.equal(typeof agent.getCurrentStatus, 'function');
    } finally {
      agent.destroy();
    }
  });

  describe('HttpsAgent keeps core\'s TLS session cache working', () => {
    let server;
    before(async () => { server = await createHttpsServer(); });
    after(() => server.close());

    it('a new connection resumes the session of the previous one', async () => {
      const agent = new HttpsAgent({ ca: fixtures.ca, maxCachedSessions: 10 });
      try {
        const first = await request(server.url(), { agent, servername: 'localhost' });
        assert.equal(first.socket.isSessionReused(), false);
        first.socket.destroy();
        const second = await request(server.url(), { agent, servername: 'localhost' });
        assert.notEqual(second.socket, first.socket);
        assert.equal(second.socket.isSessionReused(), true);
      } finally {
        agent.destroy();
      }
    });

    it('maxCachedSessions: 0 turns resumption off', async () => {
      const agent = new HttpsAgent({ ca: fixtures.ca, maxCachedSessions: 0 });
      try {
        const first = await request(server.url(), { agent, servername: 'localhost' });
        first.socket.destroy();
        const second = await request(server.url(), { agent, servername: 'localhost' });
        assert.equal(second.socket.isSessionReused(), false);
      } finally {
        agent.destroy();
      }
    });
  });
});
