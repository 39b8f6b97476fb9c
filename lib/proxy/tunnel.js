'use strict';

// CONNECT tunnels: a connection to the proxy, `CONNECT host:port`, and once
// the proxy answers 2xx, TLS to the target over that connection. The TLS
// socket is the one the agent pools, counts and hands to requests; the
// connection under it lives and dies with it.
const { isIP } = require('node:net');
const debug = require('debug')('steady-agent');
const { ProxyTunnelError } = require('../errors');
const clock = require('../clock');

// A CONNECT answer is a status line and a few headers; more than this is not one.
const MAX_HEAD = 16 * 1024;

/** `host:port` as a CONNECT request target (an IPv6 address in brackets). */
function authority(host, port) {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Opens a tunnel over `socket` (a fresh connection to `proxy`) to the target
 * in `options`. Calls `done(err)` or `done(null, tlsSocket)` exactly once;
 * `connectTls(options)` starts TLS over the tunnel (core's https
 * createConnection, for its session cache). `connectWatch`: the connect
 * timeout's watch on `socket` (lib/connect_timeout.js), or null; it is
 * handed the TLS socket, whose handshake ends the wait.
 */
function openTunnel(socket, { proxy, options, timeout, connectWatch, connectTls, done }) {
  const target = authority(options.host, options.port);
  const started = debug.enabled ? clock.now() : 0;
  let head = '';
  let settled = false;

  const log = (outcome) => {
    if (debug.enabled) {
      debug('tunnel to %s through %s: %s in %d ms', target, proxy.origin, outcome, clock.roundMs(clock.now() - started));
    }
  };

  function cleanup() {
    settled = true;
    socket.removeListener('data', onData);
    socket.removeListener('error', fail);
    socket.removeListener('end', onEnd);
    socket.removeListener('close', onEnd);
    socket.removeListener('timeout', onTimeout);
  }

  function fail(err) {
    if (settled) return;
    cleanup();
    socket.destroy();
    log(err.statusCode ?? err.code);
    done(err);
  }

  function tunnelError(message, extra) {
    return new ProxyTunnelError(`Could not open a tunnel to ${target} through proxy ${proxy.origin}: ${message}`, {
      proxy: proxy.origin, target, ...extra,
    });
  }

  function onEnd() {
    fail(tunnelError('the proxy closed the connection before answering CONNECT'));
  }

  function onTimeout() {
    fail(tunnelError(`no answer to CONNECT within ${timeout} ms`, { timeout }));
  }

  function onData(chunk) {
    head += chunk.toString('latin1');
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) {
      if (head.length > MAX_HEAD) fail(tunnelError('the answer to CONNECT has no end of headers'));
      return;
    }
    const statusLine = head.slice(0, head.indexOf('\r\n'));
    const match = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine);
    if (match === null) {
      fail(tunnelError(`the answer to CONNECT is not HTTP: ${JSON.stringify(statusLine.slice(0, 80))}`));
      return;
    }
    const statusCode = Number(match[1]);
    if (statusCode < 200 || statusCode > 299) {
      fail(tunnelError(`the proxy answered ${statusLine.slice(9, 9 + 80)}`, { statusCode }));
      return;
    }
    // The target speaks only after our TLS hello: bytes here would be lost
    // under TLS or taken for the handshake.
    if (head.length > end + 4) {
      fail(tunnelError('the proxy sent data after its answer to CONNECT'));
      return;
    }
    cleanup();
    // The active timeout now belongs to the TLS socket (options.timeout).
    socket.setTimeout(0);
    let tls;
    try {
      tls = connectTls({ ...options, socket });
    } catch (err) {
      socket.destroy();
      log(err.code ?? err.message);
      done(err);
      return;
    }
    if (connectWatch !== null) connectWatch.follow(tls);
    // One lives and dies with the other. Errors of the connection under TLS
    // (a reset) reach the TLS socket, whose listeners report them.
    tls.once('close', () => socket.destroy());
    socket.on('error', (err) => tls.destroy(err));
    socket.once('close', () => tls.destroy());
    log(statusCode);
    done(null, tls);
  }

  socket.on('data', onData);
  socket.on('error', fail);
  socket.on('end', onEnd);
  socket.on('close', onEnd);
  // The connection to the proxy carries the active timeout (the request's,
  // else the agent's): it covers connecting and waiting for the CONNECT answer.
  socket.on('timeout', onTimeout);
  const authorization = proxy.authorization;
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${
    authorization === undefined ? '' : `Proxy-Authorization: ${authorization}\r\n`}\r\n`);
}

module.exports = { openTunnel, authority };
