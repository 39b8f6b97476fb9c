'use strict';

// steady-agent/fetch where the global dispatcher is not the bundled undici's
// Agent: npm's undici, loaded first, installed its own. The bundled Agent
// class is then out of reach, and the requests go through the agent (the
// fallback, lib/fetch/adapter.js): still Node's fetch, still resent.
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

describe('steady-agent/fetch after npm\'s undici installed its global dispatcher', () => {
  const { keep } = closeAfterEach();

  it('falls back to the agent: a GET on a stale collision is still resent and applied once', async () => {
    const server = keep(await collisionServer('http:', { fails: secondOnConnection }));
    const outcome = await child(`
      require('undici');
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
        await fetch.close();
        process.stdout.write(JSON.stringify({ body, transports: [...transports] }));
      })();`, server.url('/'));
    assert.deepEqual(outcome, { body: 'ok GET /two', transports: ['HttpAgent'] });
    assert.equal(server.appliedTo('/two').length, 1);
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
