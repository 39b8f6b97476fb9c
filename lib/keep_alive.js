'use strict';

// The keep-alive behaviour, written once as a mixin over a base agent class:
// HttpAgent = keepAlive(http.Agent), HttpsAgent = keepAlive(https.Agent).
//
// A socket's life: created (createConnection) -> active, serving a request
// -> free, idle in core's pool (the agent's 'free' event, keepSocketAlive)
// -> reused (reuseSocket, or handed straight to a queued request on 'free')
// or expired (timeout, TTL, Keep-Alive hint, server close) -> closed.
// Every transition goes through core's public hooks, and each hook calls
// super, so core's own checks (idle-socket data guard, TLS identity checks,
// proxy support) keep working on every Node version.
const debug = require('debug')('steady-agent');
const { normalizeOptions, agentOptions, connectionOptions, activeTimeout, socketFreeTimeout } = require('./options');
const { initCounters, statusSnapshot, takeStatusChanged } = require('./status');
const { idleAllowance, atDeadline } = require('./server_limits');
const { IdleLearning } = require('./idle_learning');
const { dropUnusable, takeOutOfPool, whyRetired } = require('./reuse_check');
const { SocketState, PHASES, stateOf, attachState } = require('./socket_state');
const clock = require('./clock');
const { FreeSocketSweeper, sweepFree } = require('./free_socket_sweeper');
const { PoolNames } = require('./pool_names');
const { publish } = require('./socket_name');
const {
  watch, unwatch, upgradeCall, coreFree, coreClose, coreTimeout, coreRemove, watchErrors, erroredWhileFree,
} = require('./socket_listeners');
const { responseHint, coreVetoedOnlyTheHint } = require('./keep_alive_header');
const { SocketTimeoutError, AgentDestroyedError, AgentClosedError } = require('./errors');
const { warnDeprecated } = require('./deprecate');
const { createProxyRoutes } = require('./proxy');
const { PoolEvents } = require('./events');
const { CLOSE_REASONS } = require('./close_reasons');
const { QueueBounds } = require('./queue_bounds');
const { ConnectionSetup, keepProbesOff } = require('./connection_setup');
const { placeFor, givePlaceUp, othersWaiting } = require('./total_limit');
const { Shutdown } = require('./shutdown');
const { ExpiredTimeout } = require('./timeout_event');
const { markFailure } = require('./stale_marks');
const {
  CURRENT_ID,
  CREATE_ID,
  INIT_SOCKET,
  SOCKET_NAME,
} = require('./constants');

// A socket's name in debug lines; one put in agent.freeSockets by hand has none.
const nameOf = (socket) => socket[SOCKET_NAME] ?? 'a socket put in the pool by hand';

/**
 * Builds a keep-alive agent class over `Base` (http.Agent or https.Agent).
 * @param {typeof import('http').Agent} Base
 * @param {{ name: string, getName?: (agent: object, options: object) => string }} spec
 *   `getName` replaces core's pool naming (https: no secrets in names).
 */
function keepAlive(Base, { name, getName: naming }) {
  class KeepAliveAgent extends Base {
    #config;
    // Learned idle limits and their probes (lib/idle_learning.js).
    #learning;
    #sweeper = new FreeSocketSweeper((now) => sweepFree(this.#sweeper, now, (state) => this.#freeDue(state, now)));
    // Set while core's addRequest runs, until it names the pool (see getName).
    #picking = false;
    // Set while core's createSocket runs, until its createConnection call
    // (see createSocket).
    #creating = null;
    // The socket core's createSocket set up, while INIT_SOCKET takes it on.
    #fromCore = null;
    // The 'timeout' emitted on an expired socket (lib/timeout_event.js).
    #expiredTimeout = new ExpiredTimeout();
    // Core's http pool names, kept (lib/pool_names.js); https pools are
    // named by `naming`.
    #poolNames = naming === undefined ? new PoolNames() : null;
    #coreName = (options) => super.getName(options);

    // Proxy routing (lib/proxy), or null: without a proxy, one null check per hook.
    #proxy = null;
    // diagnostics_channel events and getStats() (lib/events.js).
    #events = new PoolEvents(this);
    // The pool core's addRequest named, to see a request it queued.
    #pickedPool;
    // maxQueue and queueTimeout (lib/queue_bounds.js), or null: neither set.
    #queueBounds = null;
    // TCP keep-alive and connectTimeout for each new connection
    // (lib/connection_setup.js).
    #setup = null;
    // close() and the count of sockets it waits for (lib/shutdown.js).
    #shutdown = new Shutdown();
    // The dns option (lib/dns.js, loaded only then), or null: off.
    #dns = null;

    constructor(options) {
      const config = normalizeOptions(options);
      super(config);
      initCounters(this); // agentkeepalive's counters (lib/status.js)
      // Our own settings; freeSocketTimeout and socketActiveTTL change when
      // the caller writes them to agent.options.
      this.#config = { ...config };
      this.options = agentOptions(this.options, this.#config, this);
      this.#setup = ConnectionSetup.create(config, this.keepAliveMsecs);
      if (!config.tcpKeepAlive) keepProbesOff(this);
      this.#proxy = createProxyRoutes(config.proxy, this.protocol, this.#setup); // proxy: null without one
      this.#queueBounds = QueueBounds.create(config, this.#events);
      this.#learning = new IdleLearning(config.learnServerTimeout, this.#events, (pool) => this.#tighten(pool));
      if (config.dns !== undefined) {
        const { AgentDns } = require('./dns');
        this.#dns = new AgentDns(config.dns, this, (socket, state) => this.#retire(socket, state, CLOSE_REASONS.DNS));
      }
      this[CURRENT_ID] = 0;
    }

    // Core frees a socket by emitting 'free' on the agent, to its own
    // listener (added by the base constructor), which pools the socket or
    // hands it to a queued request. The agent sees the pool and the queue
    // first, as core is about to change them. Here rather than as a
    // listener: with two listeners, every emit copies the list of them, and
    // 'free' comes once a request.
    emit(event, socket) {
      if (event === 'free') this.#socketFreed(socket);
      return super.emit.apply(this, arguments);
    }

    // ---- naming and picking a free socket ----------------------------------

    addRequest(req, options, port, localAddress) {
      // After close(), as core fails a request that gets no socket: the
      // error reaches the request on the next tick.
      if (this.#shutdown.closing) {
        this.#events.refusedAfterClose(req, options, port, localAddress); // observability
        req.onSocket(null, new AgentClosedError());
        return;
      }
      // Proxy: absolute-form rewrite of http requests (lib/proxy).
      if (this.#proxy !== null) options = this.#proxy.route(req, options, port, localAddress);
      // Inside super.addRequest, core calls getName (naming the pool), then
      // takes the last (lifo) or first (fifo) socket of freeSockets[pool] and
      // calls reuseSocket on it, or queues the request, or calls createSocket.
      // The check before reuse must run after the naming and before the
      // taking, and getName is the only hook between the two: #picking tells
      // it that this call is the one.
      this.#picking = true;
      try {
        super.addRequest(req, options, port, localAddress);
        // Core queued the request behind maxSockets (it is last in the queue).
        if (this.requests[this.#pickedPool]?.at(-1) === req) this.#queued(req, this.#pickedPool, options);
      } finally {
        this.#picking = false;
      }
    }

    #queued(req, pool, options) {
      // maxQueue may turn it away; queueTimeout starts its timer.
      if (this.#queueBounds !== null && !this.#queueBounds.admit(this, req, pool, options)) return;
      this.#events.requestQueued(req, pool, options); // observability
    }

    getName(options = {}) {
      // Core names a socket's pool again on its every 'free' and close (the
      // 'free' handler and removeSocket), from the options its createSocket
      // made the socket with, where it recorded the name this method gave
      // then: the same name, twice a request, without building it again.
      if (!this.#picking) {
        const known = options._agentKey;
        if (known !== undefined) return known;
      }
      let pool = naming === undefined ? this.#poolNames.nameOf(options, this.#coreName) : naming(this, options);
      // Proxy: pools named after the proxy (lib/proxy).
      if (this.#proxy !== null) pool = this.#proxy.poolName(pool, options);
      // Core's addRequest names the pool and then takes a free socket from it
      // without asking us. This is the one moment between the two: make sure
      // the socket it is about to take is alive.
      if (this.#picking) {
        this.#picking = false;
        this.#pickedPool = pool;
        // The one clock read of a reuse: a stalled event loop has kept the
        // sweeper from closing sockets whose deadline passed.
        if (this.freeSockets[pool] !== undefined) {
          dropUnusable(this.freeSockets, pool, this.scheduling === 'fifo', clock.now(), this.#config.socketActiveTTL, this.#dropUnusable);
        }
        // Every place under maxTotalSockets taken, and none free here: core
        // would queue the request until some socket closes.
        else if (this.totalSocketCount >= this.maxTotalSockets) this.#makeRoom(pool);
      }
      return pool;
    }

    // A socket the check before reuse turned away, out of the pool already.
    #dropUnusable = (socket, state, reason) => {
      if (reason === CLOSE_REASONS.FREE_TIMEOUT) this.#deadlinePassed(socket, state);
      else this.#close(socket, state, reason);
    };

    // ---- created -------------------------------------------------------------

    // Core's createSocket is where a connection becomes one of the pool's
    // sockets: it calls createConnection, then hands core's listeners and the
    // request the socket that will serve it (for a proxy tunnel, the tunnelled
    // socket, through the callback, not the one returned). That socket, and
    // only that one, is initialised and counted here.
    createSocket(req, options, callback) {
      const creation = { options };
      this.#creating = creation;
      const made = this.#shutdown.creatingOne(); // close() waits for it
      try {
        super.createSocket(req, options, (err, socket) => {
          // A failure before there was a socket of ours (a proxy tunnel);
          // destroy() ending a tunnel under way is not one.
          if (err) {
            if (!(err instanceof AgentDestroyedError)) this.#events.socketCreateFailed();
          } else {
            this.#fromCore = socket; // if INIT_SOCKET throws, never the next socket
            this[INIT_SOCKET](socket, creation.options);
            this.#fromCore = null;
          }
          made();
          callback(err, socket);
        });
      } catch (err) {
        made(); // createConnection threw: no socket, and no callback
        throw err;
      } finally {
        this.#creating = null;
      }
    }

    // Every argument form core's accepts, `(options[, callback])` and https's
    // `(port[, host][, options][, callback])`, goes through unchanged.
    createConnection(...args) {
      const creation = this.#creating;
      this.#creating = null;
      // dns: core's own copy of the options gets the cache's lookup.
      if (creation !== null && this.#dns !== null) this.#dns.connecting(args[0], this.#proxy);
      let socket;
      try {
        // Proxy: for core's createSocket, connect to the proxy instead; a
        // CONNECT tunnel answers through core's callback (lib/proxy).
        socket = creation !== null && this.#proxy !== null && this.#proxy.proxies(args[0])
          ? this.#proxy.createConnection(this, args[0], args[1], (tlsOptions) => super.createConnection(tlsOptions))
          : super.createConnection(...args);
      } catch (err) {
        // TLS options that make no secure context (a wrong pfx passphrase)
        // throw here, to the caller of http.request, as with core's agent.
        // Core has made the pool's entry in `sockets` already and never
        // removes it after a throw.
        const pool = args[0]?._agentKey;
        if (pool !== undefined && this.sockets[pool]?.length === 0) delete this.sockets[pool];
        throw err;
      }
      // TCP keep-alive and the connect timeout, from the start (a CONNECT
      // tunnel returns no socket: lib/proxy sets up its connection).
      if (this.#setup !== null && socket) this.#setup.opened(socket);
      // Called by core's createSocket (the merged options name the pool), or
      // directly by the caller: then the socket is initialised here, as
      // agentkeepalive does.
      if (creation !== null) creation.options = args[0];
      else if (socket) this[INIT_SOCKET](socket, connectionOptions(args));
      return socket;
    }

    [CREATE_ID]() {
      const id = this[CURRENT_ID]++;
      if (this[CURRENT_ID] >= Number.MAX_SAFE_INTEGER) this[CURRENT_ID] = 0;
      return id;
    }

    [INIT_SOCKET](socket, options) {
      if (stateOf(socket) !== undefined || socket[SOCKET_NAME] !== undefined) return;
      const pool = options._agentKey ?? this.getName(options);
      const entry = this.#events.origin(pool, options);
      const state = attachState(socket, new SocketState(socket, this, options, entry, clock.now(), this[CREATE_ID](), Date.now()));
      publish(socket); // agentkeepalive's socket properties, read from `state`
      // Nagle off on every socket: core's https client did not set it before
      // Node 24.15, and a request written in two pieces then waits for the
      // server's delayed ACK (~40 ms).
      socket.setNoDelay(true);
      this.#shutdown.opened();
      if (this.#dns !== null) this.#dns.socketCreated(state, options); // follows its host's answer
      this.#events.socketCreated(socket, state);
      watch(socket, state, KeepAliveAgent.#on, this.#fromCore === socket);
      if (debug.enabled) debug('%s created', socket[SOCKET_NAME]);
    }

    // The listeners on every socket (lib/socket_listeners.js); `this` is the
    // socket. Where core's own listener was taken off, the agent's does its
    // work first (the core* calls).
    static #on = Object.freeze({
      connect() { stateOf(this).connect(clock.now()); },
      free() { coreFree(this, stateOf(this), KeepAliveAgent.#on); },
      end() { stateOf(this).agent.#requestFailed(this, null); },
      timeout() {
        const state = stateOf(this);
        coreTimeout(this, state);
        state.agent.#timeoutEvent(this);
      },
      error(err) { stateOf(this).agent.#socketErrored(this, err); },
      close() {
        const state = stateOf(this);
        coreClose(this, state);
        state.agent.#socketClosed(this);
      },
      // Core's part (it calls removeSocket, which sees an upgrade), or on a
      // socket core did not set up: core also emits 'agentRemove' when it
      // destroys a free socket after an error: that one is closing in the
      // agent's hands, not leaving them.
      agentRemove() {
        const state = stateOf(this);
        const errored = erroredWhileFree(this, state);
        if (coreRemove(this, state, KeepAliveAgent.#on)) {
          if (errored) state.agent.#freeSocketErrored(this, state, this.errored ?? null);
          return;
        }
        this.removeListener('agentRemove', KeepAliveAgent.#on.agentRemove); // once
        if (!state.idle) state.agent.#handOver(this, state);
      },
    });

    // An HTTP upgrade took the socket: the new owner handles it from now on.
    #handOver(socket, state) {
      state.upgrade(CLOSE_REASONS.UPGRADE); // observability
      this.#shutdown.left();
      unwatch(socket, KeepAliveAgent.#on);
    }

    // ---- active -> free, or straight to a queued request ---------------------

    #socketFreed(socket) {
      const state = stateOf(socket);
      if (state === undefined) return; // put in agent.freeSockets by hand, and freed by core
      const req = socket._httpMessage;
      if (state.handedTo !== null) state.freedAfterHandoff(req); // an aborted handoff given back
      // A 'free' without a finished request: a fresh socket core made for a
      // queued request, or a request aborted before it ran. Each request is
      // counted once, by number: holding on to the request object until the
      // socket's next one would keep it, its response and their buffers
      // alive through garbage collections.
      if (req != null && req.res != null && state.finishRequest()) this.#events.requestFinished(state);
      // Otherwise core puts the socket in the pool (keepSocketAlive) or
      // destroys it.
      const queue = this.requests[state.pool];
      if (queue === undefined || queue.length === 0 || !socket.writable) return;

      // Core hands the socket straight to the first queued request, without
      // reuseSocket: it would keep the free timeout and reusedSocket false.
      if (req != null) this.#readServerHint(state, req.res);
      const reason = this.#whyRetired(socket, state, this.#config.socketActiveTTL > 0 ? clock.now() : 0);
      if (reason !== null) {
        // Core then sees an unwritable socket and destroys it; the queued
        // request gets a new socket when this one closes.
        this.#close(socket, state, reason);
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

    // Why a socket that just served a request must serve no other
    // (lib/reuse_check.js), or its address left its host's answer (dns).
    #whyRetired(socket, state, now) {
      const reason = whyRetired(state, now, this.#config.socketActiveTTL);
      if (reason !== null || state.dnsHost === null) return reason;
      return this.#dns.retires(socket, state) ? CLOSE_REASONS.DNS : null;
    }

    /** The server's Keep-Alive header on the response the socket just served. */
    #readServerHint(state, res) {
      state.hint(res != null ? responseHint(res) : null);
      this.#events.serverHint(state);
    }

    keepSocketAlive(socket) {
      const state = stateOf(socket);
      if (!super.keepSocketAlive(socket) && !coreVetoedOnlyTheHint(this, socket)) {
        if (debug.enabled) debug('%s not kept: core refused it (the server\'s hint, or a per-request TLS identity check)', socket[SOCKET_NAME]);
        state.close(CLOSE_REASONS.NOT_KEPT); // observability: core destroys it
        return false;
      }
      this.#readServerHint(state, socket._httpMessage?.res);
      // A reuse that got its response: the server's limit is above its idle time.
      const now = clock.now();
      if (state.idleBeforeReuse > 0) this.#learning.alive(state, now);
      // After close(), every socket closes as soon as it is free.
      let reason = this.#shutdown.closing ? CLOSE_REASONS.AGENT_CLOSE
        : this.#whyRetired(socket, state, now);
      // Its place under maxTotalSockets serves a request of another origin
      // (core starts a socket for it when this one closes: lib/total_limit.js).
      if (reason === null && this.totalSocketCount >= this.maxTotalSockets && othersWaiting(this, state.pool)) reason = CLOSE_REASONS.TOTAL_LIMIT;
      if (reason !== null) {
        // Core destroys a socket it may not keep.
        state.close(reason);
        if (debug.enabled) debug('%s not kept: %s', socket[SOCKET_NAME], reason);
        return false;
      }
      const timeout = this.#freeTimeout(socket, state, now);
      if (timeout <= 0) {
        if (debug.enabled) debug('%s not kept: the server\'s idle limit is within the margin', socket[SOCKET_NAME]);
        state.close(CLOSE_REASONS.NOT_KEPT); // observability: core destroys it
        return false;
      }
      // Core has put the socket on the agent timeout (or its own reading of
      // the server's hint) and would close it when that fires. Where that is
      // before our deadline, disarm it; reuse arms the active timeout again.
      const armed = socket.timeout;
      if (armed > 0 && armed < timeout) socket.setTimeout(0);
      state.free(now, now + timeout, socket.bytesRead);
      if (timeout !== Infinity) this.#sweeper.watch(state, now + timeout);
      this.#events.socketFree(socket, state, timeout);
      if (debug.enabled) debug('%s free, closes after %d ms idle', socket[SOCKET_NAME], clock.roundMs(timeout));
      return true;
    }

    // A free socket or a probe reached its deadline (lib/free_socket_sweeper.js).
    #freeDue(state, now) {
      const socket = state.socket;
      if (state.phase !== PHASES.FREE) { // a probe
        if (this.#learning.outlived(socket, state, now)) this.#probeOutlived(socket, state, now);
        return;
      }
      // The limits may have changed since it was freed (server_limits.js decides).
      const next = this.#atDeadline(socket, state, now);
      if (next.action === 'wait') {
        state.freeDeadline = state.freedAt + next.timeout;
        this.#sweeper.watch(state, state.freeDeadline);
      } else if (next.action === 'probe') {
        this.#removeFromPool(socket, state);
        this.#startProbe(socket, state, next.bound);
      } else {
        this.#expireFree(socket, state);
      }
    }

    // The check before reuse found a free socket's deadline passed before
    // the sweep (the event loop was late): as at its deadline, the first of
    // its origin to reach a learned limit becomes the probe.
    #deadlinePassed(socket, state) {
      const now = clock.now();
      const next = state === undefined ? null : this.#atDeadline(socket, state, now);
      if (next?.action === 'probe') {
        this.#sweeper.unwatch(state);
        this.#startProbe(socket, state, next.bound);
      } else {
        this.#expireFree(socket, state);
      }
    }

    // The first socket of its origin to reach a learned limit, out of the
    // pool already, stays open as a probe; core's own timer is off meanwhile.
    #startProbe(socket, state, bound) {
      if (socket.timeout > 0) socket.setTimeout(0);
      this.#sweeper.watch(state, this.#learning.startProbe(socket, state, bound));
    }

    // A probe still open at its bound: its limit is forgotten, and it goes
    // back to the pool for what is left of its free timeout.
    #probeOutlived(socket, state, now) {
      const next = this.#atDeadline(socket, state, now);
      if (next.action !== 'wait' || this.#shutdown.closing) {
        this.#expireFree(socket, state);
        return;
      }
      state.backToPool(state.freedAt + next.timeout);
      // Where a request takes it last: it is the oldest socket of the pool.
      const free = (this.freeSockets[state.pool] ??= []);
      if (this.scheduling === 'fifo') free.push(socket);
      else free.unshift(socket);
      this.#sweeper.watch(state, state.freeDeadline);
    }

    #atDeadline(socket, state, now) {
      const config = this.#config;
      const pool = state.pool;
      return atDeadline(this.#uncapped(socket, state, now), state.serverTimeout, this.#learning.recordOf(pool),
        this.#learning.probing(pool), config.serverTimeoutMargin, state.freeDeadline - state.freedAt);
    }

    // A limit became confirmed: free sockets of `pool` freed without it
    // (while a probe tried it) are capped now.
    #tighten(pool) {
      const free = this.freeSockets[pool];
      if (free === undefined) return;
      const now = clock.now();
      for (const socket of free) {
        const state = stateOf(socket);
        if (state === undefined || state.phase !== PHASES.FREE) continue;
        const deadline = state.freedAt + this.#freeTimeout(socket, state, now);
        if (deadline < state.freeDeadline) {
          state.freeDeadline = deadline;
          this.#sweeper.watch(state, deadline);
        }
      }
    }

    /** How long the socket may stay idle (server_limits.js decides); its state's limitedBy says which limit did. */
    #freeTimeout(socket, state, now) {
      const config = this.#config;
      const uncapped = this.#uncapped(socket, state, now);
      const allowed = idleAllowance(uncapped, state.serverTimeout, this.#learning.capOf(state.pool), config.serverTimeoutMargin);
      if (allowed.limitedBy !== null) state.limitedBy = allowed.limitedBy;
      return allowed.timeout;
    }

    // The free timeout from options, the per-socket override and the TTL
    // (Infinity: none); its state's limitedBy says which.
    #uncapped(socket, state, now) {
      const config = this.#config;
      const base = socketFreeTimeout(socket, config.freeSocketTimeout, debug);
      const ttl = config.socketActiveTTL;
      const ttlLeft = ttl > 0 ? ttl - (now - state.createdAt) : Infinity;
      const uncapped = base === 0 ? Infinity : base;
      if (ttlLeft < uncapped) {
        state.limitedBy = 'ttl';
        return ttlLeft;
      }
      state.limitedBy = 'freeSocketTimeout';
      return uncapped;
    }

    // ---- free -> active --------------------------------------------------------

    reuseSocket(socket, req) {
      super.reuseSocket(socket, req);
      // A socket someone put in agent.freeSockets by hand: the agent takes
      // it on, in the pool core just took it from.
      let state = stateOf(socket);
      if (state === undefined || state.agent !== this) {
        this[INIT_SOCKET](socket, { _agentKey: this.#pickedPool });
        state = stateOf(socket);
      }
      this.#activate(socket, state);
    }

    #activate(socket, state) {
      watchErrors(socket, state, KeepAliveAgent.#on);
      state.activate();
      this.#setActiveTimeout(socket);
      this.#events.socketReused(socket, state);
      if (debug.enabled) debug('%s reused for request %d', socket[SOCKET_NAME], state.requests);
    }

    #setActiveTimeout(socket) {
      const timeout = activeTimeout(this.options, this.#config.timeout);
      if (socket.timeout !== timeout) socket.setTimeout(timeout);
    }

    // ---- expiry and close ------------------------------------------------------

    /**
     * A free socket reached its deadline. As agentkeepalive's, it emits
     * 'timeout' once it has left the pool and can no longer be written, so a
     * listener sees what agentkeepalive shows it; our own listener sees a
     * socket we closed and lets it be.
     */
    #expireFree(socket, state) {
      this.#events.socketTimedOut(state);
      this.#retire(socket, state, CLOSE_REASONS.FREE_TIMEOUT);
      this.#expiredTimeout.emit(this, socket);
    }

    // The socket's own 'timeout' (socket.setTimeout: the active timeout).
    #timeoutEvent(socket) {
      this.#expiredTimeout.restore(this);
      const state = stateOf(socket);
      // The 'timeout' #expireFree emits on a socket it has closed.
      if (state.closedBy === 'agent' || state.learnedFrom) return;
      this.#events.socketTimedOut(state);
      // A free socket on a timer of its own (a subclass's keepSocketAlive
      // armed one): its 'timeout' is being emitted already.
      if (state.idle) {
        this.#retire(socket, state, CLOSE_REASONS.FREE_TIMEOUT);
        return;
      }
      // The caller listening for 'timeout' on its request decides itself. The
      // request's listeners are all the caller's: core adds its own to the
      // socket, never to the request.
      const req = socket._httpMessage;
      if (req != null && req.listenerCount('timeout') > 0) {
        if (debug.enabled) debug('%s timed out; the request handles it', socket[SOCKET_NAME]);
        return;
      }
      const timeout = socket.timeout;
      if (debug.enabled) debug('%s timed out after %d ms while active: destroyed', socket[SOCKET_NAME], clock.roundMs(timeout));
      state.close(CLOSE_REASONS.ACTIVE_TIMEOUT);
      // Out of agent.sockets before the request hears of it, and a request
      // queued behind it gets its new socket now, as in agentkeepalive.
      this.removeSocket(socket, state.createOptions);
      state.removed = true;
      socket.destroy(new SocketTimeoutError(timeout, socket[SOCKET_NAME]));
    }

    // Core calls this on every 'close', when it pools a socket, and from its
    // 'agentRemove' listener. Once more for a socket already removed would
    // start a second socket for the same queue, beyond maxSockets.
    removeSocket(socket, options) {
      const state = stateOf(socket);
      if (state?.removed === true) return;
      super.removeSocket(socket, options);
      if (upgradeCall(socket, state)) this.#handOver(socket, state);
    }

    #socketErrored(socket, err) {
      const state = stateOf(socket);
      if (state.idle) {
        this.#freeSocketErrored(socket, state, err);
        return;
      }
      this.#events.socketErrored(state);
      if (debug.enabled) debug('%s error: %s %s', socket[SOCKET_NAME], err.code || err.name, err.message);
      this.#requestFailed(socket, err);
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') this.#learning.collision(socket, state, clock.now());
      // Anywhere else, counting must hide nothing: the error is the caller's,
      // as it would be without the agent. Our listener is the only one when
      // no request is attached, or the caller took its own off; then, as
      // agentkeepalive does (it re-emits when it is the socket's only
      // 'error' listener), it is emitted again without ours, so it reaches
      // the caller's process as an unhandled 'error' would, instead of being
      // swallowed by our counting.
      if (socket.listenerCount('error') === 1) {
        socket.removeListener('error', KeepAliveAgent.#on.error);
        socket.emit('error', err);
      }
    }

    // An error on a free socket (or a probe) is counted and ends it; it never
    // reaches the process. Core's listener destroys the socket (`err`: null
    // if it kept none); take it out of the pool now.
    #freeSocketErrored(socket, state, err) {
      this.#events.socketErrored(state);
      if (debug.enabled) {
        if (err === null) debug('%s error while free (not kept by the socket)', socket[SOCKET_NAME]);
        else debug('%s error: %s %s', socket[SOCKET_NAME], err.code || err.name, err.message);
      }
      this.#removeFromPool(socket, state);
    }

    // A request on `socket` failed: with `err`, or with the 'socket hang up'
    // that core's 'end' listener, after ours, is about to create (err null).
    // Its error is marked; after a stale collision the free sockets idle as
    // long close, so a retry gets a younger socket (lib/stale_marks.js).
    #requestFailed(socket, err) {
      const state = stateOf(socket);
      if (state.idle || state.closedBy === 'agent') return;
      const knownLimit = state.serverTimeout ?? this.#learning.limitOf(state.pool);
      const stale = markFailure(socket, state, err, clock.now(), knownLimit, this.freeSockets[state.pool]);
      for (const older of stale) this.#retire(older, stateOf(older), CLOSE_REASONS.STALE_PEER);
    }

    #socketClosed(socket) {
      const state = stateOf(socket);
      const wasFree = state.idle;
      this.#learning.socketClosed(socket, state, clock.now()); // the server's close, learned from
      this.#sweeper.unwatch(state);
      if (state.dnsHost !== null) this.#dns.socketClosed(state);
      // Core's 'close' listener, which runs before ours, has just counted out
      // a place given to another socket already (#makeRoom, givePlaceUp).
      if (state.placeGivenUp) this.totalSocketCount++;
      this.#events.socketClosed(socket, state, wasFree);
      if (debug.enabled) debug('%s closed after %d requests', socket[SOCKET_NAME], state.requestsFinished);
      if (state.phase !== 'upgraded') this.#shutdown.left();
    }

    // A free socket closes before its time: out of the pool, then destroyed.
    #retire(socket, state, reason) {
      this.#removeFromPool(socket, state);
      this.#close(socket, state, reason);
    }

    // Every place under maxTotalSockets is taken, and core is about to queue
    // a request of `pool`: an idle socket of another origin, or a probe,
    // gives its place up (lib/total_limit.js).
    #makeRoom(pool) {
      const socket = placeFor(this, pool, this.#learning.probes());
      if (socket === null) return;
      const state = stateOf(socket);
      this.#learning.closed(socket, state); // a probe no longer
      givePlaceUp(this, state);
      this.#retire(socket, state, CLOSE_REASONS.TOTAL_LIMIT);
    }

    #close(socket, state, reason) {
      state?.close(reason); // a socket put in the pool by hand has no state
      if (debug.enabled) debug('%s closing: %s', nameOf(socket), reason);
      socket.destroy();
    }

    // Core takes a socket out of its free pool only on 'close', which comes a
    // tick or more after destroy(); until then addRequest could hand it out.
    #removeFromPool(socket, state) {
      this.#sweeper.unwatch(state);
      takeOutOfPool(this.freeSockets, state.pool, socket);
    }

    /**
     * Closes every socket, as core's agent does; requests queued behind
     * maxSockets are served on new connections, as core's agent serves them
     * (during close(), they fail: lib/shutdown.js).
     */
    destroy() {
      this.#shutdown.destroying(this);
      this.#closeProbes(CLOSE_REASONS.DESTROY);
      super.destroy();
      this.#stopTimers();
    }

    /**
     * Closes the agent gracefully: new requests fail with ERR_AGENT_CLOSED,
     * idle sockets close now, requests in flight and queued ones are served,
     * and each socket closes as soon as it is free. The promise (the same one
     * on every call) resolves when the agent holds no socket; destroy()
     * ends what is left at once.
     */
    close() {
      if (this.#shutdown.closing) return this.#shutdown.close();
      const promise = this.#shutdown.close();
      for (const socket of this.#shutdown.takeFree(this)) this.#close(socket, stateOf(socket), CLOSE_REASONS.AGENT_CLOSE);
      this.#closeProbes(CLOSE_REASONS.AGENT_CLOSE);
      this.#stopTimers();
      return promise;
    }

    #closeProbes(reason) {
      for (const probe of this.#learning.takeProbes()) this.#close(probe, stateOf(probe), reason);
    }

    #stopTimers() {
      this.#sweeper.stop();
      if (this.#dns !== null) this.#dns.stop();
    }

    [Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')]() {
      return this.close();
    }

    // ---- status ------------------------------------------------------------------

    /** True when a counter changed since the last read of statusChanged. */
    get statusChanged() { return takeStatusChanged(this); }

    /** agentkeepalive's status object, with its keys exactly. */
    getCurrentStatus() { return statusSnapshot(this); }

    /** The learned idle limits, `{ origin: ms }`: a new object on each read. */
    get serverIdleTimeouts() { return this.#learning.toJSON(); }

    /**
     * Per-origin counters and pool sizes (lib/events.js), and with the dns
     * option each host's cached answer: a new plain object on every call.
     */
    getStats() {
      const stats = this.#events.stats();
      if (this.#dns !== null) stats.dns = this.#dns.snapshot();
      return stats;
    }

    // ---- deprecated (agentkeepalive 4.x) -------------------------------------------

    get freeSocketKeepAliveTimeout() {
      warnDeprecated('getFreeSocketKeepAliveTimeout');
      return this.#config.freeSocketTimeout;
    }

    get timeout() {
      warnDeprecated('getTimeout');
      return activeTimeout(this.options, this.#config.timeout);
    }

    get socketActiveTTL() {
      warnDeprecated('getSocketActiveTTL');
      return this.#config.socketActiveTTL;
    }
  }

  Object.defineProperty(KeepAliveAgent, 'name', { value: name });
  return KeepAliveAgent;
}

module.exports = { keepAlive };
