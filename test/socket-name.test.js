'use strict';

// agentkeepalive's socket name, sock[<id>#<pool>], exactly as given, whatever
// the characters of the pool name (lib/socket_name.js makes it one flat
// string where it can).
const assert = require('node:assert/strict');
const { socketName } = require('../lib/agent/socket_name');

describe('socket name (lib/socket_name.js)', () => {
  it('is sock[<id>#<pool>] for a pool name of one-byte characters', () => {
    assert.equal(socketName(7, 'example.test:443:'), 'sock[7#example.test:443:]');
    assert.equal(socketName(0, 'caf\u00e9.test:80:'), 'sock[0#caf\u00e9.test:80:]');
  });

  it('keeps a host name\'s characters as they are, composed or decomposed, not normalised', () => {
    const decomposed = 'cafe\u0301.test:80:';
    const name = socketName(12, decomposed);
    assert.equal(name, `sock[12#${decomposed}]`);
    assert.equal(name.length, 'sock[12#]'.length + decomposed.length);
    assert.equal(socketName(3, '\u4f8b\u3048.test:80:'), 'sock[3#\u4f8b\u3048.test:80:]');
  });
});
