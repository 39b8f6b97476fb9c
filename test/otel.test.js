'use strict';

// steady-agent/otel: OpenTelemetry HTTP client metrics from the agent's
// events, read back through @opentelemetry/sdk-metrics' in-memory exporter
// and checked against known traffic (and against getStats()).
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { metrics } = require('@opentelemetry/api');
const { observeAgent } = require('steady-agent/otel');
const { PROTOCOLS, createAgent, total } = require('./support/agents');
const { createServer } = require('./support/servers');
const { request, waitFor } = require('./support/request');
const pkg = require('../package.json');

const root = path.join(__dirname, '..');
const { inMemoryMetrics } = require('./support/otel');

const freeCount = (agent) => total(agent.getCurrentStatus().freeSockets);

/** The open_connections value per state, for the points of one server. */
function openByState(found) {
  const byState = {};
  for (const point of found['http.client.open_connections']?.points ?? []) {
    byState[point.attributes['http.connection.state']] = point.value;
  }
  return byState;
}

for (const protocol of PROTOCOLS) {
  const scheme = protocol.slice(0, -1);

  describe(`steady-agent/otel (${protocol})`, () => {
    let server;
    let agent;
    let otel;
    let stop;

    beforeEach(async () => {
      server = await createServer(protocol);
      otel = inMemoryMetrics();
    });

    afterEach(async () => {
      if (stop) stop();
      if (agent) agent.destroy();
      stop = null;
      agent = null;
      await otel.shutdown();
      await server.close();
    });

    it('10 requests on one socket: one idle connection, then its duration once closed', async () => {
      agent = createAgent(protocol);
      stop = observeAgent(agent, { meterProvider: otel.meterProvider });
      for (let i = 0; i < 10; i++) {
        await request(server.url(`/${i}`), { agent });
        await waitFor(() => freeCount(agent) === 1);
      }
      let found = await otel.collect();
      assert.deepEqual(openByState(found), { active: 0, idle: 1 });
      const expected = { 'server.address': '127.0.0.1', 'server.port': server.port, 'url.scheme': scheme };
      for (const point of found['http.client.open_connections'].points) {
        assert.deepEqual(point.attributes, { ...expected, 'http.connection.state': point.attributes['http.connection.state'] });
        assert.equal(typeof point.attributes['server.port'], 'number');
      }
      assert.equal(found['http.client.connection.duration'], undefined);

      agent.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      found = await otel.collect();
      assert.deepEqual(openByState(found), { active: 0, idle: 0 });
      const duration = found['http.client.connection.duration'];
      assert.equal(duration.descriptor.unit, 's');
      assert.equal(duration.points.length, 1);
      assert.deepEqual(duration.points[0].attributes, expected);
      assert.equal(duration.points[0].value.count, 1);
      assert.ok(duration.points[0].value.sum > 0);
    });

    it('requests behind maxSockets: time_in_queue in seconds, as getStats() counts it in ms', async () => {
      agent = createAgent(protocol, { maxSockets: 1 });
      stop = observeAgent(agent, { meterProvider: otel.meterProvider });
      const pending = [1, 2, 3].map((i) => request(server.url(`/${i}`), { agent }));
      let found = await otel.collect();
      assert.deepEqual(openByState(found), { active: 1 });
      await Promise.all(pending);
      await waitFor(() => freeCount(agent) === 1);
      found = await otel.collect();
      const queue = found['http.client.request.time_in_queue'];
      assert.equal(queue.descriptor.unit, 's');
      assert.equal(queue.points.length, 1);
      assert.deepEqual(queue.points[0].attributes, { 'server.address': '127.0.0.1', 'server.port': server.port, 'url.scheme': scheme });
      const [stats] = Object.values(agent.getStats().origins);
      assert.equal(queue.points[0].value.count, 2);
      // getStats() shows whole milliseconds; the metric is unrounded.
      assert.ok(Math.abs(queue.points[0].value.sum * 1000 - stats.queueWaitMs.sum) <= 0.5 + 1e-6);
      assert.ok(Math.abs(queue.points[0].value.max * 1000 - stats.queueWaitMs.max) <= 0.5 + 1e-6);
      assert.deepEqual(openByState(found), { active: 0, idle: 1 });
    });

    it('counts the sockets the agent already had, and only this agent\'s', async () => {
      agent = createAgent(protocol);
      const other = createAgent(protocol);
      try {
        await request(server.url('/before'), { agent });
        await waitFor(() => freeCount(agent) === 1);
        stop = observeAgent(agent, { meterProvider: otel.meterProvider });
        await request(server.url('/other'), { agent: other });
        let found = await otel.collect();
        assert.deepEqual(openByState(found), { idle: 1 });
        await request(server.url('/after'), { agent });
        await waitFor(() => freeCount(agent) === 1);
        found = await otel.collect();
        assert.deepEqual(openByState(found), { active: 0, idle: 1 });
      } finally {
        other.destroy();
      }
    });

    it('a socket that left the agent before observing began (an upgrade) changes no gauge when it closes', async () => {
      server.server.on('upgrade', (req, socket) => {
        socket.on('error', () => {});
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      });
      agent = createAgent(protocol);
      const mod = require(protocol === 'https:' ? 'node:https' : 'node:http');
      const upgraded = await new Promise((resolve, reject) => {
        const req = mod.request(server.url(), { agent, headers: { Connection: 'Upgrade', Upgrade: 'echo' } });
        req.on('upgrade', (res, socket) => resolve(socket));
        req.on('error', reject);
        req.end();
      });
      stop = observeAgent(agent, { meterProvider: otel.meterProvider });
      upgraded.destroy();
      await waitFor(() => agent.closeSocketCount === 1);
      const found = await otel.collect();
      assert.deepEqual(openByState(found), {});
      assert.equal(found['http.client.connection.duration'].points[0].value.count, 1);
    });

    it('the returned function stops observing', async () => {
      agent = createAgent(protocol);
      stop = observeAgent(agent, { meterProvider: otel.meterProvider });
      stop();
      stop(); // twice is harmless
      await request(server.url(), { agent });
      await waitFor(() => freeCount(agent) === 1);
      const found = await otel.collect();
      assert.deepEqual(openByState(found), {});
    });
  });
}

describe('steady-agent/otel: the global meter provider and loading', () => {
  it('uses the global meter provider when none is given', async () => {
    const server = await createServer('http:');
    const otel = inMemoryMetrics();
    const agent = createAgent('http:');
    metrics.setGlobalMeterProvider(otel.meterProvider);
    const stop = observeAgent(agent);
    try {
      await request(server.url(), { agent });
      await waitFor(() => freeCount(agent) === 1);
      assert.deepEqual(openByState(await otel.collect()), { active: 0, idle: 1 });
    } finally {
      stop();
      metrics.disable();
      agent.destroy();
      await otel.shutdown();
      await server.close();
    }
  });

  it('refuses what is not a steady-agent agent', () => {
    assert.throws(() => observeAgent(new (require('node:http').Agent)()), TypeError);
    assert.throws(() => observeAgent(undefined), TypeError);
  });

  function node(args, cwd = root) {
    return new Promise((resolve, reject) => {
      execFile(process.execPath, args, { cwd }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(stdout.trim());
      });
    });
  }

  it('require(\'steady-agent\') never loads @opentelemetry/api', async () => {
    const loaded = await node(['-e', `
      const Agent = require('steady-agent');
      new Agent().destroy();
      console.log(Object.keys(require.cache).filter((file) => file.includes('@opentelemetry')).length);`]);
    assert.equal(loaded, '0');
  });

  it('without @opentelemetry/api installed, says which package to install (CommonJS and ESM)', async function () {
    // The package as npm installs it, in a project that has its dependencies
    // but not the optional peer.
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'steady-no-otel-'));
    try {
      const modules = path.join(project, 'node_modules');
      const installed = path.join(modules, 'steady-agent');
      fs.mkdirSync(installed, { recursive: true });
      for (const entry of ['package.json', 'index.js', 'index.mjs', 'lib']) {
        fs.cpSync(path.join(root, entry), path.join(installed, entry), { recursive: true });
      }
      for (const dependency of Object.keys(pkg.dependencies)) {
        fs.symlinkSync(path.dirname(require.resolve(`${dependency}/package.json`)), path.join(modules, dependency), 'dir');
      }
      let found = true;
      try { require.resolve('@opentelemetry/api', { paths: [installed] }); } catch { found = false; }
      if (found) this.skip(); // a node_modules above the temporary folder has it

      const report = `(err) => console.log(JSON.stringify({ code: err.code, name: err.name, message: err.message }))`;
      const cjs = JSON.parse(await node(['-e', `try { require('steady-agent/otel'); } catch (err) { (${report})(err); }`], project));
      const esm = JSON.parse(await node(['--input-type=module', '-e', `import('steady-agent/otel').catch(${report});`], project));
      for (const outcome of [cjs, esm]) {
        assert.equal(outcome.code, 'MODULE_NOT_FOUND');
        assert.equal(outcome.name, 'PeerDependencyMissingError');
        assert.match(outcome.message, /^steady-agent\/otel needs @opentelemetry\/api \^1\.9\.0, .*: npm install @opentelemetry\/api$/);
      }
      // The package itself loads without it.
      assert.equal(await node(['-e', `const Agent = require('steady-agent'); new Agent().destroy(); console.log('ok');`], project), 'ok');
    } finally {
      fs.rmSync(project, { recursive: true, force: true });
    }
  });

  it('import(\'steady-agent/otel\') works from an ES module', async () => {
    const type = await node(['--input-type=module', '-e', `
      import { observeAgent } from 'steady-agent/otel';
      console.log(typeof observeAgent);`]);
    assert.equal(type, 'function');
  });
});
