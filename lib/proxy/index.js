'use strict';

// Requests through a proxy. The keep-alive agent calls in at three hooks,
// only when a proxy is configured:
//
//   addRequest       route(): rewrite an http request for the proxy (absolute
//                    form, Proxy-Authorization) unless NO_PROXY matches it
//   getName          poolName(): http requests share one pool per proxy;
//                    https requests get one pool per proxy + target + TLS identity
//   createConnection createConnection(): connect to the proxy (http), or open
//                    a CONNECT tunnel and deliver the TLS socket inside it
//                    through core's createConnection callback (https); the
//                    connection under a tunnel gets the agent's probes and
//                    connect timeout here
//
// Everything else (free timeouts, Keep-Alive hints, TTL, the check before
// reuse, maxSockets) applies to these sockets unchanged: they are ordinary
// pooled sockets to the agent.
const net = require('node:net');
const tls = require('node:tls');
const { resolveProxy } = require('./options');
const { bypasses } = require('./no_proxy');
const { openTunnel, authority } = require('./tunnel');
const { ProxyConnectionError, ConnectTimeoutError } = require('../errors');
const { holdPlace, releasePlace, unqueueDestroyed } = require('../core/agent_maps');
const { agentKeyOf, builtHeader, replaceBuiltHeader } = require('../core/private_fields');

// The request's own timeout (the `timeout` request option) for the CONNECT
// wait: Node 22+ puts it in createConnection's options itself, Node 18 and 20
// do not. Core copies options (own symbols included) into createSocket,
// createConnection and its queue, so it travels with the request.
const kRequestTimeout = Symbol('steady-agent.requestTimeout');

// TLS contexts for https: proxies, per `ca` value; bounded.
const CONTEXT_LIMIT = 16;
// Cached tunnel pool names; bounded.
const NAME_LIMIT = 1024;

/**
 * Rewrites an http request for a forward proxy: the request line in absolute
 * form (`GET http://host:port/path HTTP/1.1`) and Proxy-Authorization when
 * the proxy URL has credentials. ClientRequest has already written its
 * header when the headers came as an array or with
 * `Expect`; it is then edited in place, before anything is sent.
 */
function toAbsoluteForm(req, options, authorization) {
  const path = req.path;
  // CONNECT and `OPTIONS *` keep their forms (RFC 9112, 3.2.3 and 3.2.4);
  // a path already in absolute form stays as the caller wrote it.
  const rewrite = req.method !== 'CONNECT' && path[0] === '/';
  const target = rewrite ? `http://${authority(options.host, options.port)}${path}` : path;
  const header = builtHeader(req);
  if (typeof header === 'string' && header !== '') {
    const lineEnd = header.indexOf('\r\n');
    const auth = authorization !== undefined && !/\r\nproxy-authorization:/i.test(header)
      ? `\r\nProxy-Authorization: ${authorization}` : '';
    const rewritten = `${req.method} ${target} HTTP/1.1${auth}${header.slice(lineEnd)}`;
    if (!replaceBuiltHeader(req, header, rewritten)) return;
    if (rewrite) req.path = target;
    return;
  }
  if (rewrite) req.path = target;
  if (authorization !== undefined && !req.hasHeader('proxy-authorization')) {
    req.setHeader('Proxy-Authorization', authorization);
  }
}

class ProxyRoutes {
  #proxy;
  #noProxy;
  #tunnels; // https agent: CONNECT tunnels; http agent: forward requests
  #forwardPool;
  #contexts = new Map();
  // Tunnel pool names by the target's pool name: getName runs several times
  // per request, and a name built anew is a new string to hash each time.
  #tunnelPools = new Map();
  // The agent's ConnectionSetup, or null.
  #setup;

  constructor({ proxy, noProxy }, protocol, setup) {
    this.#setup = setup;
    this.#proxy = proxy;
    this.#noProxy = noProxy;
    this.#tunnels = protocol === 'https:';
    this.#forwardPool = `via ${proxy.origin}`;
  }

  /**
   * addRequest: rewrites an http request for the proxy, and returns the
   * options core gets for `req` (the same object, as a rule: copying them
   * would cost every request, and core copies them twice more).
   */
  route(req, options, port, localAddress) {
    // The legacy form addRequest(req, host, port, localAddress).
    if (typeof options === 'string') options = { host: options, port, localAddress };
    if (options == null || !this.proxies(options)) return options;
    if (!this.#tunnels) {
      toAbsoluteForm(req, options, this.#proxy.authorization);
      return options;
    }
    // Only a request with a timeout of its own pays for a copy (the agent's
    // options would override the request's `timeout` in core's copies).
    const timeout = req.timeout;
    return timeout > 0 ? { __proto__: null, ...options, [kRequestTimeout]: timeout } : options;
  }

  /**
   * Whether a request with these options goes through the proxy. Decided
   * from the target each time it is asked (addRequest, getName,
   * createConnection): without NO_PROXY entries, that is a length check.
   */
  proxies(options) {
    return !options.socketPath && !bypasses(this.#noProxy, options.host || 'localhost', options.port);
  }

  /** The proxy's host name (the `dns` option resolves it for the connection to the proxy). */
  get host() {
    return this.#proxy.host;
  }

  /** getName: the pool of a proxied request (`name` is the usual one). */
  poolName(name, options) {
    if (!this.proxies(options)) return name;
    if (this.#tunnels) {
      let pool = this.#tunnelPools.get(name);
      if (pool === undefined) {
        if (this.#tunnelPools.size >= NAME_LIMIT) this.#tunnelPools.clear();
        pool = `${name} via ${this.#proxy.origin}`;
        this.#tunnelPools.set(name, pool);
      }
      return pool;
    }
    return options.localAddress ? `${this.#forwardPool} from ${options.localAddress}` : this.#forwardPool;
  }

  /**
   * createConnection for a proxied request. http: returns the connection to
   * the proxy. https: returns undefined and calls `callback` once, with the
   * TLS socket inside the tunnel or the error that ended it (core's
   * createSocket always passes one; only its requests are tagged).
   */
  createConnection(agent, options, callback, connectTls) {
    const socket = this.#connect(options);
    if (!this.#tunnels) return socket;
    // Core's maps, touched directly: core counts a socket against maxSockets
    // and maxTotalSockets only once createConnection delivers it, so every
    // request arriving while a tunnel is being established would open a
    // tunnel of its own. The connection to the proxy holds the place of the
    // TLS socket to come (agent.destroy() ends it there too).
    const name = agentKeyOf(options);
    holdPlace(agent, name, socket);
    openTunnel(socket, {
      proxy: this.#proxy,
      options,
      timeout: options[kRequestTimeout] || options.timeout,
      // The agent sets up the sockets createConnection returns; this one
      // it never sees, and the connect timeout runs on through the tunnel.
      connectWatch: this.#setup === null ? null : this.#setup.openedTunnel(socket),
      connectTls,
      done(err, tlsSocket) {
        if (err) {
          callback(err);
          process.nextTick(serveQueue, agent, socket, options);
          return;
        }
        releasePlace(agent, name, socket);
        callback(null, tlsSocket);
      },
    });
    return undefined;
  }

  /** The proxy's Proxy-Authorization value, or undefined (a transport that sends forward requests itself). */
  get authorization() {
    return this.#proxy.authorization;
  }

  /**
   * For a transport that pools its sockets itself (steady-agent/undici): the
   * connection to the proxy, for http requests in absolute form.
   */
  connectForward(options) {
    return this.#connect(options);
  }

  /**
   * For a transport that pools its sockets itself: a CONNECT tunnel to
   * options.host:options.port, and `connectTls(options)` over it. Calls
   * `done(err)` or `done(null, socket)` once; returns the connection to the
   * proxy. `connectWatch`: the connect timeout's watch on that connection
   * (ConnectTimeout#watchTunnel), or null.
   */
  tunnel(options, connectTls, done, watch) {
    const socket = this.#connect(options);
    openTunnel(socket, {
      proxy: this.#proxy, options, timeout: options.timeout, connectWatch: watch(socket), connectTls, done,
    });
    return socket;
  }

  #connect(options) {
    const proxy = this.#proxy;
    const connectOptions = {
      host: proxy.host,
      port: proxy.port,
      localAddress: options.localAddress,
      lookup: options.lookup,
      timeout: options[kRequestTimeout] || options.timeout,
      keepAlive: options.keepAlive,
      keepAliveInitialDelay: options.keepAliveInitialDelay,
      noDelay: true,
    };
    if (proxy.protocol === 'http:') return namingProxyInErrors(net.connect(connectOptions), proxy.origin, 'connect');
    connectOptions.servername = proxy.servername;
    connectOptions.ALPNProtocols = ['http/1.1'];
    const context = this.#context(options.ca);
    if (context !== undefined) connectOptions.secureContext = context;
    return namingProxyInErrors(tls.connect(connectOptions), proxy.origin, 'secureConnect');
  }

  /**
   * The TLS context for an https: proxy: the default roots (system store,
   * NODE_EXTRA_CA_CERTS) plus the agent's `ca`. A `ca` option alone would
   * replace the default roots.
   */
  #context(ca) {
    if (ca === undefined || ca === null) return undefined;
    let context = this.#contexts.get(ca);
    if (context !== undefined) return context;
    context = tls.createSecureContext();
    // addCACert: what createSecureContext itself calls for each `ca` entry
    // (Node 18 to 26), here on top of the default roots rather than instead of them.
    for (const cert of Array.isArray(ca) ? ca : [ca]) context.context.addCACert(cert);
    if (this.#contexts.size >= CONTEXT_LIMIT) this.#contexts.clear();
    this.#contexts.set(ca, context);
    return context;
  }
}

/**
 * Until the connection to the proxy is up (`ready`), an error that ends it
 * becomes a ProxyConnectionError: a bare ECONNREFUSED would not say that it
 * was the proxy that refused. net and tls end a failed connection with
 * destroy(err), whose error every 'error' listener (the request's included)
 * receives; the socket's own destroy comes back once it is up. The connect
 * timeout's error says what it waited for already.
 */
function namingProxyInErrors(socket, origin, ready) {
  const destroy = socket.destroy;
  socket.destroy = function destroyNamingProxy(err) {
    if (err != null && !(err instanceof ConnectTimeoutError) && !(err instanceof ProxyConnectionError)) {
      err = new ProxyConnectionError(origin, err);
    }
    return destroy.call(this, err);
  };
  socket.once(ready, () => { delete socket.destroy; });
  return socket;
}

/**
 * After a tunnel failed: core never saw a socket for it, so nothing would
 * start one for the requests queued behind it (maxSockets). Runs after the
 * failed request has settled (its onSocket tick), so that it is marked
 * destroyed.
 */
function serveQueue(agent, socket, options) {
  // Core's map, touched directly: core leaves a queued request in the queue
  // when the socket it started for it fails, and one that failed that way
  // would be picked again below, forever.
  const name = agentKeyOf(options);
  unqueueDestroyed(agent, name);
  releasePlace(agent, name, socket);
  // Core's own "a socket of this pool went away": it starts a socket for the
  // first queued request, whose failure or success then reaches that request
  // through core's usual path.
  agent.removeSocket(socket, options);
}

/**
 * The agent's proxy routes, or null: no proxy configured.
 * `setup`: the agent's ConnectionSetup, or null.
 */
function createProxyRoutes(settings, protocol, setup) {
  const resolved = resolveProxy(settings, protocol);
  return resolved === null ? null : new ProxyRoutes(resolved, protocol, setup);
}

module.exports = { createProxyRoutes };
