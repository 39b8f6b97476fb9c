'use strict';

const assert = require('node:assert/strict');
const {
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
  PeerDependencyMissingError,
  DnsNotFoundError,
  UnsupportedOptionError,
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

  it('UnsupportedOptionError names the option, the entry point and why', () => {
    const err = new UnsupportedOptionError('createFetch', 'scheduling', 'undici picks the connection');
    assert.ok(err instanceof TypeError);
    assert.equal(err.name, 'UnsupportedOptionError');
    assert.equal(err.code, 'ERR_STEADY_UNSUPPORTED_OPTION');
    assert.equal(err.option, 'scheduling');
    assert.equal(err.entry, 'createFetch');
    assert.equal(err.message, 'createFetch() cannot apply the "scheduling" option: undici picks the connection');
  });

  it('AgentDestroyedError has code ERR_AGENT_DESTROYED', () => {
    const err = new AgentDestroyedError();
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'AgentDestroyedError');
    assert.equal(err.code, 'ERR_AGENT_DESTROYED');
  });

  it('PeerDependencyMissingError keeps Node\'s MODULE_NOT_FOUND and says what to install', () => {
    const cause = Object.assign(new Error('Cannot find module \'@opentelemetry/api\''), { code: 'MODULE_NOT_FOUND' });
    const err = new PeerDependencyMissingError('steady-agent/otel', '@opentelemetry/api', '^1.9.0', cause);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'PeerDependencyMissingError');
    assert.equal(err.code, 'MODULE_NOT_FOUND');
    assert.equal(err.dependency, '@opentelemetry/api');
    assert.equal(err.cause, cause);
    assert.equal(err.message,
      'steady-agent/otel needs @opentelemetry/api ^1.9.0, an optional peer dependency that is not installed: npm install @opentelemetry/api');
  });

  it('AgentClosedError has code ERR_AGENT_CLOSED', () => {
    const err = new AgentClosedError();
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'AgentClosedError');
    assert.equal(err.code, 'ERR_AGENT_CLOSED');
    assert.equal(err.message, 'The agent is closed: it takes no new requests');
  });

  it('QueueFullError has code ERR_AGENT_QUEUE_FULL and the limit', () => {
    const err = new QueueFullError(3);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'QueueFullError');
    assert.equal(err.code, 'ERR_AGENT_QUEUE_FULL');
    assert.equal(err.maxQueue, 3);
    assert.equal(err.message, 'No socket is free and 3 requests already wait for one (maxQueue: 3)');
    assert.equal(new QueueFullError(0).message, 'No socket is free and the request may not wait for one (maxQueue: 0)');
  });

  it('QueueTimeoutError has code ERR_AGENT_QUEUE_TIMEOUT and the timeout', () => {
    const err = new QueueTimeoutError(2000);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'QueueTimeoutError');
    assert.equal(err.code, 'ERR_AGENT_QUEUE_TIMEOUT');
    assert.equal(err.timeout, 2000);
    assert.equal(err.message, 'The request waited 2000 ms for a socket without getting one (queueTimeout: 2000)');
  });

  it('ConnectTimeoutError has code ETIMEDOUT, the phase and the timeout', () => {
    const err = new ConnectTimeoutError('tls', 3000);
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'ConnectTimeoutError');
    assert.equal(err.code, 'ETIMEDOUT');
    assert.equal(err.phase, 'tls');
    assert.equal(err.timeout, 3000);
    assert.equal(err.message, 'Connect timeout: still waiting for the TLS handshake (connectTimeout: 3000 ms)');
    assert.match(new ConnectTimeoutError('connect', 5).message, /the TCP connection \(connectTimeout: 5 ms\)$/);
    assert.match(new ConnectTimeoutError('proxy', 5).message, /the proxy's answer to CONNECT/);
  });

  it('ConnectAttemptsError is an AggregateError of each address\'s error, with the first one\'s code', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 192.0.2.1:443'), { code: 'ECONNREFUSED' });
    const timedOut = Object.assign(new Error('connect ETIMEDOUT [2001:db8::1]:443'), { code: 'ETIMEDOUT' });
    const err = new ConnectAttemptsError('example.com', 443, [
      { address: '192.0.2.1', family: 4, error: refused },
      { address: '2001:db8::1', family: 6, error: timedOut },
    ]);
    assert.ok(err instanceof AggregateError);
    assert.equal(err.name, 'ConnectAttemptsError');
    assert.equal(err.code, 'ECONNREFUSED');
    assert.deepEqual(err.errors, [refused, timedOut]);
    assert.deepEqual(err.attempts.map((a) => [a.address, a.family, a.error]), [['192.0.2.1', 4, refused], ['2001:db8::1', 6, timedOut]]);
    assert.equal(err.message, 'Could not connect to example.com:443: every address failed: 192.0.2.1 (ECONNREFUSED), 2001:db8::1 (ETIMEDOUT)');
    const uncoded = new ConnectAttemptsError('example.com', 80, [{ address: '192.0.2.1', family: 4, error: new Error('odd') }]);
    assert.equal(uncoded.code, 'ERR_STEADY_CONNECT_ATTEMPTS');
    assert.match(uncoded.message, /192\.0\.2\.1 \(odd\)$/);
  });

  it('SocketHangUpError is core\'s socket hang up, with why the connection was given up', () => {
    const err = new SocketHangUpError('aborted');
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'SocketHangUpError');
    assert.equal(err.message, 'socket hang up');
    assert.equal(err.code, 'ECONNRESET');
    assert.equal(err.reason, 'aborted');
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

  it('DnsNotFoundError carries dns.lookup\'s code, errno, syscall, hostname and message', () => {
    const err = new DnsNotFoundError('svc.test');
    assert.ok(err instanceof Error);
    assert.equal(err.name, 'DnsNotFoundError');
    assert.equal(err.code, 'ENOTFOUND');
    assert.equal(err.errno, -3008);
    assert.equal(err.syscall, 'getaddrinfo');
    assert.equal(err.hostname, 'svc.test');
    assert.equal(err.message, 'getaddrinfo ENOTFOUND svc.test');
  });
});
