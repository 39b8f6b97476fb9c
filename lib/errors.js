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

/**
 * The agent was destroyed before the request was sent: queued behind
 * maxSockets during close(), or waiting for a proxy tunnel.
 */
class AgentDestroyedError extends Error {
  constructor() {
    super('The agent was destroyed before the request completed');
    this.name = 'AgentDestroyedError';
    this.code = 'ERR_AGENT_DESTROYED';
  }
}

/** `agent.close()` was called: the agent takes no new request. */
class AgentClosedError extends Error {
  constructor() {
    super('The agent is closed: it takes no new requests');
    this.name = 'AgentClosedError';
    this.code = 'ERR_AGENT_CLOSED';
  }
}

/** The request would have waited for a socket behind `maxQueue` others of its origin. */
class QueueFullError extends Error {
  constructor(maxQueue) {
    super(maxQueue === 0
      ? 'No socket is free and the request may not wait for one (maxQueue: 0)'
      : `No socket is free and ${maxQueue === 1 ? '1 request already waits' : `${maxQueue} requests already wait`} for one (maxQueue: ${maxQueue})`);
    this.name = 'QueueFullError';
    this.code = 'ERR_AGENT_QUEUE_FULL';
    this.maxQueue = maxQueue;
  }
}

/** The request waited `timeout` ms behind maxSockets without getting a socket; it was never sent. */
class QueueTimeoutError extends Error {
  constructor(timeout) {
    super(`The request waited ${timeout} ms for a socket without getting one (queueTimeout: ${timeout})`);
    this.name = 'QueueTimeoutError';
    this.code = 'ERR_AGENT_QUEUE_TIMEOUT';
    this.timeout = timeout;
  }
}

// What a connect timeout waited for, by phase.
const CONNECT_PHASES = Object.freeze({
  connect: 'the TCP connection',
  tls: 'the TLS handshake',
  proxy: 'the proxy\'s answer to CONNECT',
});

/**
 * A new socket was not ready for its request within `timeout` ms
 * (connectTimeout), or the system gave up on every address before that
 * (autoSelectFamily's AggregateError of timeouts). `phase` says what it was
 * waiting for: 'connect' (TCP), 'tls' (the handshake) or 'proxy' (the answer
 * to CONNECT). The code is the one the system gives a TCP connect that times
 * out, which client libraries (got, axios-retry) retry as a failed connection.
 */
class ConnectTimeoutError extends Error {
  constructor(phase, timeout) {
    super(`Connect timeout: still waiting for ${CONNECT_PHASES[phase]} (connectTimeout: ${timeout} ms)`);
    this.name = 'ConnectTimeoutError';
    this.code = 'ETIMEDOUT';
    this.phase = phase;
    this.timeout = timeout;
  }
}

/**
 * Every connection attempt of a Happy Eyeballs race failed (autoSelectFamily):
 * one cause per address, in the order they were tried, in `errors` (as any
 * AggregateError) and in `attempts` with the address each was for. `code` is
 * the first attempt's (ECONNREFUSED...), as with Node's own autoSelectFamily,
 * so that code that retries a refused connection sees one.
 */
class ConnectAttemptsError extends AggregateError {
  constructor(host, port, attempts) {
    const list = attempts.map(({ address, error }) => `${address} (${error.code ?? error.message})`).join(', ');
    super(attempts.map((attempt) => attempt.error), `Could not connect to ${host}:${port}: every address failed: ${list}`);
    this.name = 'ConnectAttemptsError';
    this.code = attempts[0].error.code ?? 'ERR_STEADY_CONNECT_ATTEMPTS';
    this.host = host;
    this.port = port;
    this.attempts = attempts.map(({ address, family, error }) => ({ address, family, error }));
  }
}

/**
 * A connection still being made (a Happy Eyeballs race) was given up:
 * agent.destroy() ended it (`reason` 'destroyed'), or its request was
 * aborted ('aborted'). The request hears what it hears on core's path when
 * its connecting socket is destroyed: 'socket hang up', ECONNRESET.
 */
class SocketHangUpError extends Error {
  constructor(reason) {
    super('socket hang up');
    this.name = 'SocketHangUpError';
    this.code = 'ECONNRESET';
    this.reason = reason;
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

/**
 * A `proxy` option, or a proxy URL read from `proxyEnv`, that is not an
 * http: or https: URL. The message names the option and what is wrong, and
 * never repeats the value: it may hold the proxy's credentials.
 */
class InvalidProxyOptionError extends TypeError {
  constructor(option, problem) {
    super(`The "${option}" option must be an http: or https: proxy URL: ${problem}`);
    this.name = 'InvalidProxyOptionError';
    this.code = 'ERR_INVALID_ARG_VALUE';
    this.option = option;
  }
}

/**
 * A CONNECT tunnel through a proxy could not be established: the proxy
 * answered with a non-2xx status (`statusCode`, 407 for missing or wrong
 * credentials), closed the connection, or did not answer within `timeout` ms.
 * `proxy` is the proxy's origin without credentials; `target` is host:port.
 * The code is Node's own for its built-in proxy support.
 */
class ProxyTunnelError extends Error {
  constructor(message, { proxy, target, statusCode, timeout } = {}) {
    super(message);
    this.name = 'ProxyTunnelError';
    this.code = 'ERR_PROXY_TUNNEL';
    this.proxy = proxy;
    this.target = target;
    if (statusCode !== undefined) this.statusCode = statusCode;
    if (timeout !== undefined) this.timeout = timeout;
  }
}

/**
 * The connection to the proxy failed before it was up (refused, unreachable,
 * no address, or for an https: proxy a failed handshake). The system's error
 * is the `cause`; its `code` (ECONNREFUSED...), `errno`, `syscall`, `address`
 * and `port` are copied, so handlers and retry rules written for them still
 * match. `proxy` is the proxy's origin, without credentials.
 */
class ProxyConnectionError extends Error {
  constructor(proxy, cause) {
    super(`Could not connect to the proxy ${proxy}: ${cause.message || cause.code}`, { cause });
    this.name = 'ProxyConnectionError';
    for (const key of ['code', 'errno', 'syscall', 'address', 'port']) {
      if (cause[key] !== undefined) this[key] = cause[key];
    }
    this.proxy = proxy;
  }
}

/**
 * A subpath needs an optional peer dependency that is not installed
 * (`steady-agent/otel` without `@opentelemetry/api`). The code is Node's own
 * for a module it cannot find, so handlers written for that still work; the
 * message says what to install. `cause` is Node's error.
 */
class PeerDependencyMissingError extends Error {
  constructor(subpath, dependency, range, cause) {
    super(`${subpath} needs ${dependency} ${range}, an optional peer dependency that is not installed: npm install ${dependency}`, { cause });
    this.name = 'PeerDependencyMissingError';
    this.code = 'MODULE_NOT_FOUND';
    this.dependency = dependency;
  }
}

/**
 * The `dns` option's lookup found no address for `hostname` (of the family
 * asked for): the error dns.lookup gives for it, with the same code, errno,
 * syscall and message, so that code written for dns.lookup's errors sees one.
 */
class DnsNotFoundError extends Error {
  constructor(hostname) {
    super(`getaddrinfo ENOTFOUND ${hostname}`);
    this.name = 'DnsNotFoundError';
    this.code = 'ENOTFOUND';
    this.errno = -3008; // libuv's UV_EAI_NONAME, the same on every platform
    this.syscall = 'getaddrinfo';
    this.hostname = hostname;
  }
}

/**
 * A request steady-agent/fetch or steady-agent/undici cannot send through
 * the agent: an upgrade, CONNECT, another protocol, a body it cannot write.
 */
class UnsupportedRequestError extends Error {
  constructor(what) {
    super(`steady-agent's dispatcher cannot send ${what}: it sends HTTP/1.1 requests through the agent`);
    this.name = 'UnsupportedRequestError';
    this.code = 'ERR_STEADY_UNSUPPORTED_REQUEST';
  }
}

/**
 * An option steady-agent/fetch or steady-agent/undici cannot apply: it
 * throws rather than being ignored. `entry` is the function given it
 * (createFetch, createDispatcher), `reason` says why and what to use.
 */
class UnsupportedOptionError extends TypeError {
  constructor(entry, option, reason) {
    super(`${entry}() cannot apply the "${option}" option: ${reason}`);
    this.name = 'UnsupportedOptionError';
    this.code = 'ERR_STEADY_UNSUPPORTED_OPTION';
    this.option = option;
    this.entry = entry;
  }
}

/** createDispatcher() was given something other than undici 6, 7 or 8. */
class UnsupportedUndiciError extends TypeError {
  constructor(found) {
    super(`createDispatcher(undici) takes the undici module, major 6, 7 or 8 (require('undici')); got ${found}`);
    this.name = 'UnsupportedUndiciError';
    this.code = 'ERR_STEADY_UNSUPPORTED_UNDICI';
    this.found = found;
  }
}

module.exports = {
  UnsupportedRequestError,
  UnsupportedUndiciError,
  UnsupportedOptionError,
  SocketTimeoutError,
  AgentDestroyedError,
  AgentClosedError,
  QueueFullError,
  QueueTimeoutError,
  ConnectTimeoutError,
  ConnectAttemptsError,
  SocketHangUpError,
  InvalidOptionTypeError,
  InvalidOptionValueError,
  InvalidProxyOptionError,
  ProxyTunnelError,
  ProxyConnectionError,
  PeerDependencyMissingError,
  DnsNotFoundError,
};
