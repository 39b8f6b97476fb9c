'use strict';

// The sockets of the transport: undici's `connect` option, a function of
// ours, and what a new socket gets (its state, listeners, timers). A socket
// goes straight to its origin, to the proxy (an http origin's requests, in
// absolute form: forwardRequest), or through a CONNECT tunnel (an https
// origin's), by lib/proxy's code with the agent's meaning of `proxy`,
// `noProxy` and `proxyEnv`. Each tunnel is one socket, pooled by undici as
// any other. Under maxTotalSockets a connect may wait for a place
// (./socket_limits.js). The transport is an instance each function is
// given, never a require back.
const net = require('node:net');
const debug = require('debug')('steady-agent');
const { track } = require('./channel');
const { SocketState, listen } = require('./socket_state');
const { headerValue } = require('./exchange');
const { TLS_OPTIONS, NET_OPTIONS } = require('./options');
// Every module of the agent this file uses, in one place.
const { now } = require('../timers/clock');
const { channels: events } = require('../observe/channels');

/** undici's `connect` for `transport`: a socket of ours, connected (under maxTotalSockets, once there is a place). */
function connector(transport) {
  // `winner`: a socket connected already, by a Happy Eyeballs race
  // (lib/connect/undici_race.js), to an origin with no proxy.
  return function connect(params, callback, winner) {
    const secure = params.protocol === 'https:';
    const origin = transport.originOf(params);
    const open = (err) => {
      if (err) {
        callback(err, null);
        return;
      }
      try {
        openSocket(transport, origin, params, secure, callback, winner);
      } catch (error) {
        // net.connect or tls.connect refused its options: no socket holds the place.
        transport.limitsOfSockets.released();
        callback(error, null);
      }
    };
    if (transport.limitsOfSockets.place(open)) open();
  };
}

/** Opens a socket of `origin`: direct, to its proxy, or through a CONNECT tunnel. */
function openSocket(transport, origin, params, secure, callback, winner) {
  const options = transport.options;
  const host = origin.host;
  const connectOptions = { host, port: origin.port };
  for (const key of NET_OPTIONS) if (options[key] !== undefined) connectOptions[key] = options[key];
  if (params.localAddress != null) connectOptions.localAddress = params.localAddress;
  if (transport.dns !== null) connectOptions.lookup = transport.dns.lookup;
  if (secure) {
    connectOptions.servername = params.servername || options.servername || (net.isIP(host) ? undefined : host);
    connectOptions.ALPNProtocols = ['http/1.1'];
    for (const key of TLS_OPTIONS) if (options[key] !== undefined) connectOptions[key] = options[key];
  }
  const proxy = origin.proxy;
  if (proxy === null) {
    if (winner === undefined) {
      adopt(transport, origin, secure ? transport.tlsSessions.connect(connectOptions) : net.connect(connectOptions), secure, true, callback);
    } else if (secure) {
      adopt(transport, origin, transport.tlsSessions.connect({ ...connectOptions, socket: winner }), true, true, callback);
    } else {
      adopt(transport, origin, winner, false, true, callback, true);
    }
    return;
  }
  // The connection to the proxy carries the probes and the active timeout
  // (lib/proxy: the CONNECT wait is bounded by it).
  connectOptions.keepAlive = options.tcpKeepAlive;
  connectOptions.keepAliveInitialDelay = options.keepAliveMsecs;
  if (transport.limitsOfSockets.timeout > 0) connectOptions.timeout = transport.limitsOfSockets.timeout;
  if (!secure) {
    // An https: proxy is verified against the default roots and `ca`, for http origins too.
    if (options.ca !== undefined) connectOptions.ca = options.ca;
    const socket = proxy.connectForward(connectOptions);
    adopt(transport, origin, socket, socket.encrypted === true, true, callback);
    return;
  }
  const watch = (socket) => transport.connectTimeout?.watchTunnel(socket) ?? null;
  proxy.tunnel(connectOptions, (tlsOptions) => transport.tlsSessions.connect(tlsOptions), (err, socket) => {
    if (!err) {
      adopt(transport, origin, socket, true, false, callback);
      return;
    }
    transport.limitsOfSockets.released();
    callback(err, null);
  }, watch);
}

/**
 * `socket` (connecting) is one of `origin`'s: its state, listeners and
 * timers; `callback` once it is ready. `watchConnect`: the connect timeout
 * watches it (a tunnel's watch follows it already). `connected`: it is
 * ready now (a race's winner, over plain TCP).
 */
function adopt(transport, origin, socket, secure, watchConnect, callback, connected = false) {
  const options = transport.options;
  const state = new SocketState(origin, socket, secure, ++transport.created);
  track(socket, state);
  origin.connections.add(state);
  origin.stats.socketsCreated++;
  if (transport.dns !== null && origin.proxy === null) transport.dns.track(origin.host);
  socket.setNoDelay(true);
  if (options.tcpKeepAlive && origin.proxy === null) socket.setKeepAlive(true, options.keepAliveMsecs);
  listen(socket);
  transport.limitsOfSockets.created(state);
  if (watchConnect) transport.connectTimeout?.watch(socket);
  const ready = () => {
    socket.removeListener('error', failed);
    state.connected = true;
    state.connectMs = now() - state.createdAt;
    state.freedAt = now();
    if (events.create.hasSubscribers) transport.publish(events.create, {}, origin, socket);
    if (debug.enabled) debug('%s created', state.name);
    callback(null, socket);
  };
  const failed = (err) => {
    socket.removeListener(secure ? 'secureConnect' : 'connect', ready);
    callback(err, null);
  };
  if (connected) {
    ready();
    return;
  }
  socket.once(secure ? 'secureConnect' : 'connect', ready);
  socket.once('error', failed);
}

/**
 * An http request for a forward proxy: its target in absolute form, and
 * the proxy's credentials, unless the caller gave a Proxy-Authorization.
 */
function forwardRequest(opts, origin) {
  const path = opts.path ?? '/';
  const host = net.isIP(origin.host) === 6 ? `[${origin.host}]` : origin.host;
  const absolute = path[0] === '/' ? `http://${host}:${origin.port}${path}` : path;
  const authorization = origin.proxy.authorization;
  if (authorization === undefined || headerValue(opts.headers, 'proxy-authorization') !== undefined) return { ...opts, path: absolute };
  return { ...opts, path: absolute, headers: withHeader(opts.headers, 'proxy-authorization', authorization) };
}

/** `headers` (any of undici's forms) and one more, as a new object or array. */
function withHeader(headers, name, value) {
  if (headers == null) return [name, value];
  if (Array.isArray(headers)) return headers.length > 0 && Array.isArray(headers[0]) ? [...headers, [name, value]] : [...headers, name, value];
  if (typeof headers[Symbol.iterator] === 'function') {
    const flat = [];
    for (const [key, entry] of headers) flat.push(key, entry);
    return [...flat, name, value];
  }
  return { ...headers, [name]: value };
}

module.exports = { connector, forwardRequest };
