'use strict';

// Every error the agent creates, each with a stable `code` and a `name`.
const { inspect } = require('node:util');

function show(value) {
  return inspect(value, { depth: 1, breakLength: Infinity, maxStringLength: 80 });
}

/**
 * A socket serving a request was idle for `timeout` ms and the caller had no
 * 'timeout' listener. The message is agentkeepalive's, word for word: code in
 * the wild compares it. The details are properties.
 */
class SocketTimeoutError extends Error {
  constructor(timeout, socketName) {
    super('Socket timeout');
    this.name = 'SocketTimeoutError';
    this.code = 'ERR_SOCKET_TIMEOUT';
    this.timeout = timeout;
    this.socketName = socketName;
  }
}

/** The agent was destroyed while the request was queued behind maxSockets, never sent. */
class AgentDestroyedError extends Error {
  constructor() {
    super('The agent was destroyed before the request completed');
    this.name = 'AgentDestroyedError';
    this.code = 'ERR_AGENT_DESTROYED';
  }
}

/** An option has the wrong type, or a duration string that cannot be parsed. */
class InvalidOptionTypeError extends TypeError {
  constructor(option, expected, value) {
    super(`The "${option}" option must be ${expected}. Received ${show(value)}`);
    this.name = 'InvalidOptionTypeError';
    this.code = 'ERR_INVALID_ARG_TYPE';
    this.option = option;
    this.value = value;
  }
}

/** An option has the right type but an impossible value (negative, NaN, 0 sockets...). */
class InvalidOptionValueError extends RangeError {
  constructor(option, expected, value) {
    super(`The "${option}" option must be ${expected}. Received ${show(value)}`);
    this.name = 'InvalidOptionValueError';
    this.code = 'ERR_OUT_OF_RANGE';
    this.option = option;
    this.value = value;
  }
}

module.exports = {
  SocketTimeoutError,
  AgentDestroyedError,
  InvalidOptionTypeError,
  InvalidOptionValueError,
};
