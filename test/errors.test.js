'use strict';

const assert = require('node:assert/strict');
const {
  SocketTimeoutError,
  AgentDestroyedError,
  InvalidOptionTypeError,
  InvalidOptionValueError,
} = require('../lib/errors');

describe('errors', () => {
  it('SocketTimeoutError has code ERR_SOCKET_TIMEOUT and the timeout', () => {
    const err = new SocketTimeoutError(1500, 'sock[1#localhost:80:]');
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'SocketTimeoutError');
    assert.equal(err.code, 'ERR_SOCKET_TIMEOUT');
    assert.equal(err.timeout, 1500);
    // agentkeepalive's message, exactly: code in the wild compares it.
    assert.equal(err.message, 'Socket timeout');
    assert.equal(err.socketName, 'sock[1#localhost:80:]');
  });

  it('AgentDestroyedError has code ERR_AGENT_DESTROYED', () => {
    const err = new AgentDestroyedError();
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'AgentDestroyedError');
    assert.equal(err.code, 'ERR_AGENT_DESTROYED');
  });

  it('InvalidOptionTypeError is a TypeError naming the option and the value', () => {
    const err = new InvalidOptionTypeError('timeout', 'a duration', 'soon');
    assert.ok(err instanceof TypeError);
    assert.equal(err.name, 'InvalidOptionTypeError');
    assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
    assert.equal(err.option, 'timeout');
    assert.equal(err.value, 'soon');
    assert.equal(err.message, 'The "timeout" option must be a duration. Received \'soon\'');
  });

  it('InvalidOptionValueError is a RangeError naming the option and the value', () => {
    const err = new InvalidOptionValueError('maxSockets', 'an integer >= 1', 0);
    assert.ok(err instanceof RangeError);
    assert.equal(err.name, 'InvalidOptionValueError');
    assert.equal(err.code, 'ERR_OUT_OF_RANGE');
    assert.equal(err.option, 'maxSockets');
    assert.equal(err.value, 0);
    assert.equal(err.message, 'The "maxSockets" option must be an integer >= 1. Received 0');
  });
});
