'use strict';

// steady-agent/fetch where the global dispatcher is not the bundled undici's
// Agent. npm's undici, loaded first, installed its own: the transport is the
// same (the bundled Agent, loaded aside, or npm's, which the bundled fetch
// dispatches through itself). Only where the global dispatcher is no Agent
// at all, and the bundled one was installed and replaced before, do the
// requests go through the agent (the fallback, lib/fetch/adapter.js): still
// Node's fetch, still resent, and getStats().transport says so.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const { closeAfterEach } = require('./support/cleanup');
const { collisionServer, secondOnConnection } = require('./support/fetch');

/** Runs `script` in a Node process of its own; resolves its stdout, parsed. */
function child(script, url) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script, url], { cwd: __dirname }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

describe('steady-agent/fetch after npm\'s undici installed its global dispatcher', function () {
  // Each test starts a Node process, which loads undici: slow on a loaded machine.
  this.timeout(120000);
  const { keep } = closeAfterEach();

  it('where the global dispatcher is no Agent, falls back to the agent: a stale GET is still resent', async () => {
    const server = keep(await collisionServer('http:', { fails: secondOnConnection }));
    const outcome = await child(`
      // The bundled undici installs its Agent at the first fetch; then another kind replaces it.
      globalThis.fetch('data:,').then((res) => res.arrayBuffer());
      const undici = require('undici');
      const other = new undici.RetryAgent(new undici.Agent());
      // Both slots: the bundled undici reads '.2' from its major 8 (Node 26).
      for (const slot of ['undici.globalDispatcher.1', 'undici.globalDispatcher.2']) {
        if (Object.hasOwn(globalThis, Symbol.for(slot))) globalThis[Symbol.for(slot)] = other;
      }
      const dc = require('node:diagnostics_channel');
      const { createFetch } = require('steady-agent/fetch');
      const fetch = createFetch();
      const transports = new Set();
      dc.subscribe('steady-agent:socket:create', (message) => transports.add(message.agent.constructor.name));
      const url = process.argv[1];
      (async () => {
        await (await fetch(url + 'warm')).text();
        await new Promise((resolve) => setTimeout(resolve, 30));
        const res = await fetch(url + 'two');
        const body = await res.text();
        const transport = fetch.getStats().transport;
        await fetch.close();
        process.stdout.write(JSON.stringify({ body, transports: [...transports], transport }));
      })();`, server.url('/'));
    assert.deepEqual(outcome, { body: 'ok GET /two', transports: ['HttpAgent'], transport: 'agent' });
    assert.equal(server.appliedTo('/two').length, 1);
  });

  it('with npm\'s undici loaded first, takes the bundled Agent all the same', async () => {
    const server = keep(await collisionServer('http:'));
    const outcome = await child(`
      const dc = require('node:diagnostics_channel');
      require('undici');
      const { createFetch } = require('steady-agent/fetch');
      const fetch = createFetch();
      let named = 0;
      dc.subscribe('steady-agent:socket:create', (message) => { if (message.agent === fetch.dispatcher) named++; });
      (async () => {
        const body = await (await fetch(process.argv[1])).text();
        const transport = fetch.getStats().transport;
        await fetch.close();
        process.stdout.write(JSON.stringify({ body, named, transport, name: fetch.dispatcher.constructor.name }));
      })();`, server.url('/one'));
    assert.deepEqual(outcome, { body: 'ok GET /one', named: 1, transport: 'undici (bundled)', name: 'SteadyFetchDispatcher' });
  });

  it('takes the bundled Agent when steady-agent/fetch was loaded first', async () => {
    const server = keep(await collisionServer('http:'));
    const outcome = await child(`
      const dc = require('node:diagnostics_channel');
      const { createFetch } = require('steady-agent/fetch');
      require('undici');
      const fetch = createFetch();
      const transports = new Set();
      dc.subscribe('steady-agent:socket:create', (message) => transports.add(message.agent.constructor.name));
      (async () => {
        const body = await (await fetch(process.argv[1])).text();
        await fetch.close();
        process.stdout.write(JSON.stringify({ body, transports: [...transports] }));
      })();`, server.url('/one'));
    assert.deepEqual(outcome, { body: 'ok GET /one', transports: ['SteadyFetchDispatcher'] });
  });
});
