'use strict';

// A socket's life in the agent, apart from the hooks that start each step:
// created (createConnection) -> active, serving a request -> free, idle in
// core's pool (the agent's 'free' event, keepSocketAlive) -> reused
// (reuseSocket, or handed straight to a queued request on 'free') or expired
// (timeout, TTL, Keep-Alive hint, server close: agent/expiry.js) -> closed.
// What each socket's listeners hear is agent/socket_watch.js's. The agent
// class (agent/keep_alive.js) calls super in each of core's hooks and then
// one method here, so core's own checks (idle-socket data guard,
// TLS identity checks, proxy support) keep working on every Node version.
const debug = require('debug')('steady-agent');
const { agentOptions, connectionOptions, activeTimeout } = require('../options/normalize');
const { IdleLearning } = require('./idle_learning');
const { Expiry } = require('./expiry');
const { SocketWatch, LISTENERS } = require('./socket_watch');
const { whyRetired } = require('../policy/reuse_check');
const {
  dropUnusable, forgetEmptyPool, countOut, atTotalLimit,
} = require('../core/agent_maps');
const { agentKeyOf, requestOf, poolOptions } = require('../core/private_fields');
const { stateOf } = require('./socket_state');
const clock = require('../timers/clock');
const { watchErrors } = require('../core/socket_listeners');
const { responseHint, coreVetoedOnlyTheHint } = require('../policy/keep_alive_header');
const { AgentClosedError } = require('../errors');
const { createProxyRoutes } = require('../proxy');
const { PoolEvents } = require('../observe/events');
const { CLOSE_REASONS } = require('../policy/close_reasons');
const { QueueBounds } = require('./queue_bounds');
const { ConnectionSetup, keepProbesOff } = require('../connect/connection_setup');
const { races } = require('../connect/happy_eyeballs');
const { raceConnection, coreConnectReplaced } = require('../connect/agent_race');
const { placeFor, othersWaiting } = require('../policy/total_limit');
const { Shutdown } = require('./shutdown');
const { INIT_SOCKET, SOCKET_NAME } = require('../constants');

class SocketLifecycle {
  #agent;
  #config;
  // Learned idle limits and their probes.
  #learning;
  // Free deadlines, probes and closes.
  #expiry;
  // Proxy routing (proxy/), or null: without a proxy, one null check per hook.
  #proxy;
  // diagnostics_channel events and getStats().
  #events;
  // maxQueue and queueTimeout, or null: neither set.
  #queueBounds;
  // TCP keep-alive and connectTimeout for each new connection, or null.
  #setup;
  // close() and the count of sockets it waits for.
  #shutdown = new Shutdown();
  // The dns option (loaded only then), or null: off.
  #dns = null;
  // The listeners on each socket and what they do.
  #watch;

  /**
   * Called by the agent's constructor, after super() and its counters.
   * @param {object} agent
   * @param {object} config normalizeOptions(the caller's options)
   */
  constructor(agent, config) {
    this.#agent = agent;
    this.#events = new PoolEvents(agent);
    // Our own settings; freeSocketTimeout and socketActiveTTL change when
    // the caller writes them to agent.options.
    this.#config = { ...config };
    agent.options = agentOptions(agent.options, this.#config, agent);
    this.#setup = ConnectionSetup.create(config, agent.keepAliveMsecs);
    if (!config.tcpKeepAlive) keepProbesOff(agent);
    this.#proxy = createProxyRoutes(config.proxy, agent.protocol, this.#setup); // null without one
    this.#queueBounds = QueueBounds.create(config, this.#events);
    this.#learning = new IdleLearning(config.learnServerTimeout, this.#events, (pool) => this.#expiry.tighten(pool));
    this.#expiry = new Expiry(agent, this.#config, this.#learning, this.#events, this.#shutdown);
    if (config.dns !== undefined) {
      const { AgentDns } = require('../dns/agent_dns');
      this.#dns = new AgentDns(config.dns, agent, (socket, state) => this.#expiry.retire(socket, state, CLOSE_REASONS.DNS));
    }
    this.#watch = new SocketWatch(agent, this.#events, this.#learning, this.#expiry, this.#shutdown, this.#dns);
  }

  /** What the listeners on each socket reach: agent[WATCH]. */
  get watch() { return this.#watch; }

  /** Our settings, as live options change them. */
  get config() { return this.#config; }

  /** Proxy routing, or null. */
  get proxy() { return this.#proxy; }

  // ---- naming and picking a free socket ------------------------------------

  /**
   * A request reaches addRequest: the options core should see, or undefined
   * after close() (the request then fails on the next tick, as core fails a
   * request that gets no socket).
   */
  requesting(req, options, port, localAddress) {
    if (this.#shutdown.closing) {
      this.#events.refusedAfterClose(req, options, port, localAddress); // observability
      req.onSocket(null, new AgentClosedError());
      return undefined;
    }
    // Proxy: absolute-form rewrite of http requests.
    return this.#proxy === null ? options : this.#proxy.route(req, options, port, localAddress);
  }

  /** Core queued `req` behind maxSockets: maxQueue may turn it away; queueTimeout starts its timer. */
  queued(req, pool, options) {
    if (this.#queueBounds !== null && !this.#queueBounds.admit(this.#agent, req, pool, options)) return;
    this.#events.requestQueued(req, pool, options); // observability
  }

  /**
   * Core's addRequest named `pool` and is about to take a free socket from
   * it without asking us: make sure that socket is alive.
   */
  picking(pool) {
    const agent = this.#agent;
    // The one clock read of a reuse: a stalled event loop has kept the
    // sweeper from closing sockets whose deadline passed.
    if (agent.freeSockets[pool] !== undefined) {
      dropUnusable(agent.freeSockets, pool, agent.scheduling === 'fifo', clock.now(), this.#config.socketActiveTTL, this.#dropUnusable);
    }
    // Every place under maxTotalSockets taken, and none free here: core
    // would queue the request until some socket closes.
    else if (atTotalLimit(agent)) this.#makeRoom(pool);
  }

  // A socket the check before reuse turned away, out of the pool already.
  #dropUnusable = (socket, state, reason) => {
    if (reason === CLOSE_REASONS.FREE_TIMEOUT) this.#expiry.deadlinePassed(socket, state);
    else this.#expiry.close(socket, state, reason);
  };

  // Every place under maxTotalSockets is taken, and core is about to queue
  // a request of `pool`: an idle socket of another origin, or a probe,
  // gives its place up.
  #makeRoom(pool) {
    const socket = placeFor(this.#agent, pool, this.#learning.probes());
    if (socket === null) return;
    const state = stateOf(socket);
    this.#learning.closed(socket, state); // a probe no longer
    countOut(this.#agent); // core counts it out on its 'close', and decides on this request now
    state.placeGivenUp = true;
    state.removed = true;
    this.#expiry.retire(socket, state, CLOSE_REASONS.TOTAL_LIMIT);
  }

  // ---- created ---------------------------------------------------------------

  /** Core's createSocket begins for `req`: what its callback and createConnection share. */
  creating(options, req) {
    return { options, made: this.#shutdown.creatingOne(), raced: false, req }; // close() waits for it
  }

  /** Core's createSocket called back: `socket` is the one that serves the request. */
  created(err, socket, creation) {
    this.#watch.created(err, socket, creation);
  }

  /** agent[INIT_SOCKET]: tags and watches a new socket, once. */
  initSocket(socket, options) {
    this.#watch.initSocket(socket, options);
  }

  /**
   * The agent's createConnection, with `connect` calling core's. `creation`
   * is core's createSocket under way, or null: a direct call.
   */
  createConnection(args, creation, connect) {
    // dns: core's own copy of the options gets the cache's lookup.
    if (creation !== null && this.#dns !== null) this.#dns.connecting(args[0], this.#proxy);
    // Happy Eyeballs: a host name's addresses raced (lib/connect); the
    // socket comes through core's callback.
    if (creation !== null && typeof args[1] === 'function' && races(args[0]) && !this.#proxy?.proxies(args[0])
      && !coreConnectReplaced(this.#agent.protocol)) {
      creation.options = args[0];
      creation.raced = true; // counted as a socket from now on
      return raceConnection(this.#agent, args[0], args[1], creation.req, {
        connectTls: this.#agent.protocol === 'https:' ? connect : null,
        setup: this.#setup,
        report: this.#events.raceReport(agentKeyOf(args[0]), args[0]),
      });
    }
    let socket;
    try {
      // Proxy: for core's createSocket, connect to the proxy instead; a
      // CONNECT tunnel answers through core's callback.
      socket = creation !== null && this.#proxy !== null && this.#proxy.proxies(args[0])
        ? this.#proxy.createConnection(this.#agent, args[0], args[1], connect)
        : connect(...args);
    } catch (err) {
      // TLS options that make no secure context (a wrong pfx passphrase)
      // throw here, to the caller of http.request, as with core's agent.
      // Core has made the pool's entry in `sockets` already and never
      // removes it after a throw.
      if (args[0] != null) forgetEmptyPool(this.#agent, agentKeyOf(args[0]));
      throw err;
    }
    // TCP keep-alive and the connect timeout, from the start (a CONNECT
    // tunnel returns no socket: proxy/ sets up its connection).
    if (this.#setup !== null && socket) this.#setup.opened(socket);
    // Called by core's createSocket (the merged options name the pool), or
    // directly by the caller: then the socket is initialised here, as
    // agentkeepalive does.
    if (creation !== null) creation.options = args[0];
    else if (socket) this.#agent[INIT_SOCKET](socket, connectionOptions(args));
    return socket;
  }

  // ---- active -> free, or straight to a queued request -----------------------

  /** Core is about to pool `socket` or hand it to a queued request. */
  socketFreed(socket) {
    const state = stateOf(socket);
    if (state === undefined) return; // put in agent.freeSockets by hand, and freed by core
    const req = requestOf(socket);
    if (state.handedTo !== null) state.freedAfterHandoff(req); // an aborted handoff given back
    // A 'free' without a finished request: a fresh socket core made for a
    // queued request, or a request aborted before it ran. Each request is
    // counted once, by number: holding on to the request object until the
    // socket's next one would keep it, its response and their buffers
    // alive through garbage collections.
    if (req != null && req.res != null && state.finishRequest()) this.#events.requestFinished(state);
    // Otherwise core puts the socket in the pool (keepSocketAlive) or
    // destroys it.
    const queue = this.#agent.requests[state.pool];
    if (queue === undefined || queue.length === 0 || !socket.writable) return;
    // Core hands the socket straight to the first queued request, without
    // reuseSocket: it would keep the free timeout and reusedSocket false.
    if (req != null) this.#readServerHint(state, req.res);
    const reason = this.#whyRetired(socket, state, this.#config.socketActiveTTL > 0 ? clock.now() : 0);
    if (reason !== null) {
      // Core then sees an unwritable socket and destroys it; the queued
      // request gets a new socket when this one closes.
      this.#expiry.close(socket, state, reason);
      return;
    }
    const next = queue[0];
    if (state.requestsFinished > 0) next.reusedSocket = true;
    if (state.requests === state.requestsFinished) {
      state.handTo(next, clock.now(), socket.bytesRead);
      this.#activate(socket, state);
    } else {
      state.idleBeforeReuse = 0;
      this.#setActiveTimeout(socket);
    }
  }

  // Why a socket that just served a request must serve no other, or its
  // address left its host's answer (dns).
  #whyRetired(socket, state, now) {
    const reason = whyRetired(state, now, this.#config.socketActiveTTL);
    if (reason !== null || state.dnsHost === null) return reason;
    return this.#dns.retires(socket, state) ? CLOSE_REASONS.DNS : null;
  }

  // The server's Keep-Alive header on the response the socket just served.
  #readServerHint(state, res) {
    state.hint(res != null ? responseHint(res) : null);
    this.#events.serverHint(state);
  }

  /** keepSocketAlive after core's (`kept`: core's answer): whether the socket goes to the pool. */
  keepAlive(socket, kept) {
    const state = stateOf(socket);
    if (!kept && !coreVetoedOnlyTheHint(this.#agent, requestOf(socket)?.res)) {
      if (debug.enabled) debug('%s not kept: core refused it (the server\'s hint, or a per-request TLS identity check)', socket[SOCKET_NAME]);
      state.markClosing(CLOSE_REASONS.NOT_KEPT); // observability: core destroys it
      return false;
    }
    this.#readServerHint(state, requestOf(socket)?.res);
    // A reuse that got its response: the server's limit is above its idle time.
    const now = clock.now();
    if (state.idleBeforeReuse > 0) this.#learning.alive(state, now);
    const reason = this.#whyNotKept(socket, state, now);
    if (reason !== null) {
      // Core destroys a socket it may not keep.
      state.markClosing(reason);
      if (debug.enabled) debug('%s not kept: %s', socket[SOCKET_NAME], reason);
      return false;
    }
    const timeout = this.#expiry.freeTimeout(socket, state, now);
    if (timeout <= 0) {
      if (debug.enabled) debug('%s not kept: the server\'s idle limit is within the margin', socket[SOCKET_NAME]);
      state.markClosing(CLOSE_REASONS.NOT_KEPT); // observability: core destroys it
      return false;
    }
    // Core has put the socket on the agent timeout (or its own reading of
    // the server's hint) and would close it when that fires. Where that is
    // before our deadline, disarm it; reuse arms the active timeout again.
    const armed = socket.timeout;
    if (armed > 0 && armed < timeout) socket.setTimeout(0);
    state.free(now, now + timeout, socket.bytesRead);
    if (timeout !== Infinity) this.#expiry.watch(state, now + timeout);
    this.#events.socketFree(socket, state, timeout);
    if (debug.enabled) debug('%s free, closes after %d ms idle', socket[SOCKET_NAME], clock.roundMs(timeout));
    return true;
  }

  #whyNotKept(socket, state, now) {
    const agent = this.#agent;
    // After close(), every socket closes as soon as it is free.
    if (this.#shutdown.closing) return CLOSE_REASONS.AGENT_CLOSE;
    const reason = this.#whyRetired(socket, state, now);
    if (reason !== null) return reason;
    // Its place under maxTotalSockets serves a request of another origin
    // (core starts a socket for it when this one closes: policy/total_limit).
    if (atTotalLimit(agent) && othersWaiting(agent, state.pool)) return CLOSE_REASONS.TOTAL_LIMIT;
    return null;
  }

  // ---- free -> active ----------------------------------------------------------

  /** Core's reuseSocket handed `socket`, from `pool`, to a request. */
  reused(socket, pool) {
    // A socket someone put in agent.freeSockets by hand: the agent takes
    // it on, in the pool core just took it from.
    let state = stateOf(socket);
    if (state === undefined || state.agent !== this.#agent) {
      this.#agent[INIT_SOCKET](socket, poolOptions(pool));
      state = stateOf(socket);
    }
    this.#activate(socket, state);
  }

  #activate(socket, state) {
    watchErrors(socket, state, LISTENERS);
    state.activate();
    this.#setActiveTimeout(socket);
    this.#events.socketReused(socket, state);
    if (debug.enabled) debug('%s reused for request %d', socket[SOCKET_NAME], state.requests);
  }

  #setActiveTimeout(socket) {
    const timeout = activeTimeout(this.#agent.options, this.#config.timeout);
    if (socket.timeout !== timeout) socket.setTimeout(timeout);
  }

  // ---- errors, timeouts and close ------------------------------------------------

  /** Core's removeSocket ran for `socket`: an upgrade hands it over. */
  removed(socket, state) {
    this.#watch.removed(socket, state);
  }

  // ---- shutdown and status -------------------------------------------------------

  /** destroy(), before core's: every socket is closing, and no timer stays. */
  destroying() {
    this.#shutdown.destroying(this.#agent);
    this.#closeProbes(CLOSE_REASONS.DESTROY);
    this.#stopTimers();
  }

  /** close(): the one promise of every call. */
  close() {
    if (this.#shutdown.closing) return this.#shutdown.close();
    const promise = this.#shutdown.close();
    for (const socket of this.#shutdown.takeFree(this.#agent)) this.#expiry.close(socket, stateOf(socket), CLOSE_REASONS.AGENT_CLOSE);
    this.#closeProbes(CLOSE_REASONS.AGENT_CLOSE);
    this.#stopTimers();
    return promise;
  }

  #closeProbes(reason) {
    for (const probe of this.#learning.takeProbes()) this.#expiry.close(probe, stateOf(probe), reason);
  }

  #stopTimers() {
    this.#expiry.stop();
    if (this.#dns !== null) this.#dns.stop();
  }

  /** The learned idle limits, `{ origin: ms }`. */
  learnedLimits() { return this.#learning.toJSON(); }

  /** getStats(): a new plain object on every call. */
  stats() {
    const stats = this.#events.stats();
    if (this.#dns !== null) stats.dns = this.#dns.snapshot();
    return stats;
  }

}

module.exports = { SocketLifecycle };
