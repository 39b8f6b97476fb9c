// steady-agent/fetch and steady-agent/undici imported from an ES module, by
// name (self-reference through package.json "exports"): the very functions
// the CommonJS entries export.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fetch, createFetch, getStats, close } from 'steady-agent/fetch';
import * as fetchNamespace from 'steady-agent/fetch';
import { createDispatcher } from 'steady-agent/undici';
import * as undiciNamespace from 'steady-agent/undici';

const require = createRequire(import.meta.url);

describe('ESM entries of steady-agent/fetch and steady-agent/undici', () => {
  it('resolve "import" to the .mjs wrappers and "require" to lib/', () => {
    assert.equal(import.meta.resolve('steady-agent/fetch'), new URL('../fetch.mjs', import.meta.url).href);
    assert.equal(import.meta.resolve('steady-agent/undici'), new URL('../undici.mjs', import.meta.url).href);
    assert.equal(require.resolve('steady-agent/fetch'), require.resolve('../lib/fetch/index.js'));
    assert.equal(require.resolve('steady-agent/undici'), require.resolve('../lib/undici/index.js'));
  });

  it('export the CommonJS functions themselves, and nothing else', () => {
    const cjsFetch = require('steady-agent/fetch');
    assert.equal(fetch, cjsFetch.fetch);
    assert.equal(createFetch, cjsFetch.createFetch);
    assert.equal(getStats, cjsFetch.getStats);
    assert.equal(close, cjsFetch.close);
    assert.equal(createDispatcher, require('steady-agent/undici').createDispatcher);
    assert.deepEqual(Object.keys(fetchNamespace).sort(), ['close', 'createFetch', 'fetch', 'getStats']);
    assert.deepEqual(Object.keys(undiciNamespace), ['createDispatcher']);
  });

  it('a dispatcher made from an ES module namespace of undici is its Dispatcher', async () => {
    const undici = await import('undici');
    const dispatcher = createDispatcher(undici);
    assert.ok(dispatcher instanceof undici.Dispatcher);
    await dispatcher.close();
  });
});
