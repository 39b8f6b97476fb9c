// The package imported from an ES module, by name (self-reference through
// package.json "exports"), default and named.
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import Agent, { HttpAgent, HttpsAgent, constants } from 'steady-agent';
import * as namespace from 'steady-agent';

const require = createRequire(import.meta.url);

describe('ESM entry (index.mjs)', () => {
  const cjs = require('steady-agent');

  // import.meta.resolve() is synchronous and unflagged from Node 18.19 / 20.6.
  it('resolves the "import" condition to index.mjs and "require" to index.js', () => {
    assert.equal(import.meta.resolve('steady-agent'), new URL('../index.mjs', import.meta.url).href);
    assert.equal(require.resolve('steady-agent'), require.resolve('../index.js'));
  });

  it('default export is the CommonJS export, which is HttpAgent', () => {
    assert.equal(Agent, cjs);
    assert.equal(Agent, HttpAgent);
  });

  it('named exports are the very same objects as the CommonJS ones', () => {
    assert.equal(HttpAgent, cjs.HttpAgent);
    assert.equal(HttpsAgent, cjs.HttpsAgent);
    assert.equal(constants, cjs.constants);
  });

  it('exports exactly default, HttpAgent, HttpsAgent and constants', () => {
    assert.deepEqual(Object.keys(namespace).sort(), ['HttpAgent', 'HttpsAgent', 'constants', 'default']);
  });

  it('constants are the same unique symbols', () => {
    const names = Object.keys(constants);
    assert.ok(names.length > 0);
    for (const name of names) assert.equal(typeof constants[name], 'symbol', name);
    assert.equal(new Set(Object.values(constants)).size, names.length);
  });

  it('instances are http.Agent / https.Agent, across module systems', () => {
    const httpAgent = new Agent();
    const httpsAgent = new HttpsAgent();
    try {
      assert.ok(httpAgent instanceof http.Agent);
      assert.ok(httpAgent instanceof cjs.HttpAgent);
      assert.ok(httpsAgent instanceof https.Agent);
      assert.ok(httpsAgent instanceof http.Agent);
      assert.ok(httpsAgent instanceof cjs.HttpsAgent);
      assert.ok(!(httpAgent instanceof https.Agent));
    } finally {
      httpAgent.destroy();
      httpsAgent.destroy();
    }
  });

  it('package.json is exported', () => {
    const pkg = require('steady-agent/package.json');
    assert.equal(pkg.name, 'steady-agent');
  });
});
