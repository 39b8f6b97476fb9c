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
const { normalizeOptions, agentOptions } = require('./options');
const { Counters } = require('./status');
const { ServerIdleLimits } = require('./server_idle_limits');
const { FreeSocketSweeper } = require('./free_socket_sweeper');
const { parseKeepAlive } = require('./keep_alive_header');
const { SocketTimeoutError, AgentDestroyedError } = require('./errors');
const { warnDeprecated } = require('./deprecate');
const { PoolEvents, channels } = require('./events'); // observability: events and getStats()
const { CLOSE_REASONS, recordCloseReason } = require('./close_reasons');
const {
  CURRENT_ID,
  CREATE_ID,
  INIT_SOCKET,
  SOCKET_CREATED_TIME,
  SOCKET_NAME,
  SOCKET_REQUEST_COUNT,
  SOCKET_REQUEST_FINISHED_COUNT,
} = require('./constants');

// Our tags on sockets. The sockets are core's objects, so module-local
// Symbols rather than fields.
const kAgent = Symbol('steady-agent.agent');
const kPool = Symbol('steady-agent.pool'); // the pool (origin) name
const kIdleSince = Symbol('steady-agent.idleSince'); // Date.now() on entering the free pool; 0 while active
const kFreeDeadline = Symbol('steady-agent.freeDeadline'); // Date.now() time a free socket is closed at
const kRequestsLeft = Symbol('steady-agent.requestsLeft'); // requests the server still takes (Keep-Alive max)
const kServerTimeout = Symbol('steady-agent.serverTimeout'); // ms, from Keep-Alive timeout
const kClosedByAgent = Symbol('steady-agent.closedByAgent'); // we closed it: not a server close to learn from
const kConnected = Symbol('steady-agent.connected');
const kBytesReadWhenFreed = Symbol('steady-agent.bytesReadWhenFreed');

/**
 * The Keep-Alive response header, from the raw headers: on a socket handed
 * straight to a queued request nothing has built `res.headers` yet, and the
 * whole object would be built for this one field.
 */
function keepAliveHeader(res) {
  const raw = res.rawHeaders;
  let value;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 10 && (name === 'Keep-Alive' || name.toLowerCase() === 'keep-alive')) {
      // A header sent on several lines is one list, as res.headers joins it.
      value = value === undefined ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
    }
  }
  return value;
}

/**
 * Builds a keep-alive agent class over `Base` (http.Agent or https.Agent).
 * @param {typeof import('http').Agent} Base
 * @param {{ name: string, getName?: (agent: object, options: object) => string }} spec
 *   `getName` replaces core's pool naming (https: no secrets in names).
 */
function keepAlive(Base, { name, getName: naming }) {
  class KeepAliveAgent extends Base {
    #config;
    #counters = new Counters();
    #serverIdleLimits = new ServerIdleLimits();
    #sweeper = new FreeSocketSweeper((now) => this.#sweepFree(now));
    // Set while core's addRequest runs, until it names the pool (see getName).
    #picking = false;
    #events = new PoolEvents(this); // observability: diagnostics_channel events and getStats()
    #pickedPool; // observability: the pool core's addRequest named (to see a request it queued)

    constructor(options) {
      const config = normalizeOptions(options);
      super(config);
      this.options = agentOptions(this.options);
      this.#config = config;
      this[CURRENT_ID] = 0;
      // Before core's own 'free' listener (added by the base constructor), so
      // that we see the pool and the queue as core is about to change them.
      this.prependListener('free', KeepAliveAgent.#onAgentFree);
    }

    // ---- naming and picking a free socket ----------------------------------

    addRequest(req, options, port, localAddress) {
      this.#picking = true;
      try {
        super.addRequest(req, options, port, localAddress);
        // Observability: core queued the request behind maxSockets (it is last in the queue).
        if (this.requests[this.#pickedPool]?.at(-1) === req) this.#events.requestQueued(req, this.#pickedPool, options);
      } finally {
        this.#picking = false;
      }
    }

    getName(options = {}) {
      const pool = naming === undefined ? super.getName(options) : naming(this, options);
      // Core's addRequest names the pool and then takes a free socket from it
      // without asking us. This is the one moment between the two: make sure
      // the socket it is about to take is alive.
      if (this.#picking) {
        this.#picking = false;
        this.#pickedPool = pool; // observability
        if (this.freeSockets[pool] !== undefined) this.#dropUnusableFree(pool);
      }
      return pool;
    }

    #dropUnusableFree(pool) {
      const free = this.freeSockets[pool];
      const fifo = this.scheduling === 'fifo';
      const now = this.#config.socketActiveTTL > 0 ? Date.now() : 0;
      while (free.length > 0) {
        const socket = fifo ? free[0] : free[free.length - 1];
        const reason = this.#unusable(socket, now);
        if (reason === null) return;
        if (fifo) free.shift();
        else free.pop();
        this.#close(socket, reason);
      }
      // Core would delete the empty list too; it may not get the chance.
      delete this.freeSockets[pool];
    }

    #unusable(socket, now) {
      if (socket.destroyed || !socket.writable) return CLOSE_REASONS.UNUSABLE; // closed
      // EOF: the server's FIN ends our side too, so the socket is no longer
      // writable (above); an EOF still queued behind unread bytes shows as
      // readableLength.
      if (socket.readableLength > 0) return CLOSE_REASONS.UNUSABLE; // unread data from the server
      // Bytes that came while the socket sat idle were read by no one. Node
      // 22+ closes such a socket itself; on older versions the bytes would
      // be lost, or taken for the next response.
      if (socket.bytesRead !== socket[kBytesReadWhenFreed]) return CLOSE_REASONS.UNUSABLE; // unexpected data while idle
      if (now !== 0 && now - socket[SOCKET_CREATED_TIME] >= this.#config.socketActiveTTL) return CLOSE_REASONS.TTL;
      return null;
    }

    // ---- created -------------------------------------------------------------

    createConnection(options, callback) {
      // A createConnection that answers through the callback (a proxy tunnel)
      // gets its socket initialised there; one that returns it, here.
      const done = (err, socket) => {
        if (!err && socket) this[INIT_SOCKET](socket, options);
        callback(err, socket);
      };
      let socket;
      try {
        socket = super.createConnection(options, typeof callback === 'function' ? done : callback);
      } catch (err) {
        // TLS options that make no secure context (a wrong pfx passphrase)
        // throw here, to the caller of http.request, as with core's agent.
        // Core has made the pool's entry in `sockets` already and never
        // removes it after a throw.
        const pool = options._agentKey;
        if (pool !== undefined && this.sockets[pool]?.length === 0) delete this.sockets[pool];
        throw err;
      }
      if (socket) this[INIT_SOCKET](socket, options);
      return socket;
    }

    [CREATE_ID]() {
      const id = this[CURRENT_ID]++;
      if (this[CURRENT_ID] >= Number.MAX_SAFE_INTEGER) this[CURRENT_ID] = 0;
      return id;
    }

    [INIT_SOCKET](socket, options) {
      if (socket[SOCKET_NAME] !== undefined) return;
      const pool = options._agentKey ?? this.getName(options);
      socket[kAgent] = this;
      socket[kPool] = pool;
      socket[kIdleSince] = 0;
      socket[kRequestsLeft] = Infinity;
      socket[kServerTimeout] = undefined;
      socket[kClosedByAgent] = false;
      socket[kConnected] = false;
      socket[SOCKET_NAME] = `sock[${this[CREATE_ID]()}#${pool}]`;
      socket[SOCKET_CREATED_TIME] = Date.now();
      socket[SOCKET_REQUEST_COUNT] = 1;
      socket[SOCKET_REQUEST_FINISHED_COUNT] = 0;
      // Nagle off on every socket: core's https client did not set it before
      // Node 24.15, and a request written in two pieces then waits for the
      // server's delayed ACK (~40 ms).
      socket.setNoDelay(true);
      this.#counters.socketCreated();
      this.#events.socketCreated(socket, pool, options); // observability
      KeepAliveAgent.#watch(socket);
      if (debug.enabled) debug('%s created', socket[SOCKET_NAME]);
    }

    static #watch(socket) {
      if (socket.encrypted) socket.once('secureConnect', KeepAliveAgent.#onConnect);
      else if (socket.connecting) socket.once('connect', KeepAliveAgent.#onConnect);
      else socket[kConnected] = true;
      socket.on('timeout', KeepAliveAgent.#onTimeout);
      socket.on('error', KeepAliveAgent.#onError);
      socket.on('close', KeepAliveAgent.#onClose);
      socket.once('agentRemove', KeepAliveAgent.#onAgentRemove);
    }

    // Listeners shared by all sockets; `this` is the socket.
    static #onConnect() { this[kConnected] = true; }
    static #onTimeout() { this[kAgent].#socketTimedOut(this); }
    static #onError(err) { this[kAgent].#socketErrored(this, err); }
    static #onClose() { this[kAgent].#socketClosed(this); }

    // The socket leaves the agent (an HTTP upgrade): the new owner handles it
    // from now on. 'close' stays, so the socket still counts as closed.
    static #onAgentRemove() {
      recordCloseReason(this, CLOSE_REASONS.UPGRADE); // observability
      this.removeListener('secureConnect', KeepAliveAgent.#onConnect);
      this.removeListener('connect', KeepAliveAgent.#onConnect);
      this.removeListener('timeout', KeepAliveAgent.#onTimeout);
      this.removeListener('error', KeepAliveAgent.#onError);
    }

    // ---- active -> free, or straight to a queued request ---------------------

    static #onAgentFree(socket) { this.#socketFreed(socket); }

    #socketFreed(socket) {
      const req = socket._httpMessage;
      // A 'free' without a finished request: a fresh socket core made for a
      // queued request, or a request aborted before it ran. Each request is
      // counted once, by number: holding on to the request object until the
      // socket's next one would keep it, its response and their buffers
      // alive through garbage collections.
      if (req != null && socket[SOCKET_REQUEST_FINISHED_COUNT] < socket[SOCKET_REQUEST_COUNT]) {
        socket[SOCKET_REQUEST_FINISHED_COUNT]++;
        this.#counters.requestFinished();
        this.#events.requestFinished(socket); // observability
      }
      // Otherwise core puts the socket in the pool (keepSocketAlive) or
      // destroys it.
      const queue = this.requests[socket[kPool]];
      if (queue === undefined || queue.length === 0 || !socket.writable) return;

      // Core hands the socket straight to the first queued request, without
      // reuseSocket: it would keep the free timeout and reusedSocket false.
      if (req != null) this.#readServerHint(socket, req.res);
      if (req != null) this.#events.serverHint(socket, socket[kServerTimeout]); // observability
      const reason = this.#retired(socket);
      if (reason !== null) {
        // Core then sees an unwritable socket and destroys it; the queued
        // request gets a new socket when this one closes.
        this.#close(socket, reason);
        return;
      }
      const next = queue[0];
      if (socket[SOCKET_REQUEST_FINISHED_COUNT] > 0) next.reusedSocket = true;
      if (socket[SOCKET_REQUEST_COUNT] === socket[SOCKET_REQUEST_FINISHED_COUNT]) this.#activate(socket);
      else this.#setActiveTimeout(socket);
    }

    /** The server's Keep-Alive header on the response the socket just served. */
    #readServerHint(socket, res) {
      const hint = res != null ? parseKeepAlive(keepAliveHeader(res)) : null;
      if (hint === null) {
        socket[kServerTimeout] = undefined;
        return;
      }
      socket[kServerTimeout] = hint.timeout === undefined ? undefined : hint.timeout * 1000;
      if (hint.max !== undefined) socket[kRequestsLeft] = hint.max;
    }

    /** Why the socket must serve no further request, or null. */
    #retired(socket, now = 0) {
      if (socket[kRequestsLeft] <= 0) return CLOSE_REASONS.KEEP_ALIVE_MAX; // the server's Keep-Alive max reached
      const ttl = this.#config.socketActiveTTL;
      if (ttl > 0 && (now || Date.now()) - socket[SOCKET_CREATED_TIME] >= ttl) return CLOSE_REASONS.TTL;
      return null;
    }

    keepSocketAlive(socket) {
      if (!super.keepSocketAlive(socket) && !this.#coreVetoedOnlyTheHint(socket)) {
        if (debug.enabled) debug('%s not kept: core refused it (the server\'s hint, or a per-request TLS identity check)', socket[SOCKET_NAME]);
        recordCloseReason(socket, CLOSE_REASONS.NOT_KEPT); // observability
        return false;
      }
      this.#readServerHint(socket, socket._httpMessage?.res);
      this.#events.serverHint(socket, socket[kServerTimeout]); // observability
      const now = Date.now();
      const reason = this.#retired(socket, now);
      if (reason !== null) {
        // Core destroys a socket it may not keep.
        socket[kClosedByAgent] = true;
        recordCloseReason(socket, reason); // observability
        if (debug.enabled) debug('%s not kept: %s', socket[SOCKET_NAME], reason);
        return false;
      }
      const timeout = this.#freeTimeout(socket, now);
      if (timeout <= 0) {
        if (debug.enabled) debug('%s not kept: the server\'s idle limit is within the margin', socket[SOCKET_NAME]);
        recordCloseReason(socket, CLOSE_REASONS.NOT_KEPT); // observability
        return false;
      }
      // Core has put the socket on the agent timeout (or its own reading of
      // the server's hint) and would close it when that fires. Where that is
      // before our deadline, disarm it; reuse arms the active timeout again.
      const armed = socket.timeout;
      if (armed > 0 && armed < timeout) socket.setTimeout(0);
      socket[kIdleSince] = now;
      socket[kFreeDeadline] = now + timeout;
      socket[kBytesReadWhenFreed] = socket.bytesRead;
      if (timeout !== Infinity) this.#sweeper.schedule(now + timeout);
      // Observability: which limit set the timeout is only worked out when someone watches.
      this.#events.socketFree(socket, timeout, channels.free.hasSubscribers ? this.#freeTimeoutLimitedBy(socket, timeout, now) : undefined);
      if (debug.enabled) debug('%s free, closes after %d ms idle', socket[SOCKET_NAME], timeout);
      return true;
    }

    /** Closes the free sockets whose deadline has come; returns the next deadline. */
    #sweepFree(now) {
      let next = Infinity;
      const expired = [];
      for (const pool in this.freeSockets) {
        for (const socket of this.freeSockets[pool]) {
          const deadline = socket[kFreeDeadline];
          // Timers run on a millisecond clock: a deadline within 1 ms is due.
          if (deadline <= now + 1) expired.push(socket);
          else if (deadline < next) next = deadline;
        }
      }
      for (const socket of expired) {
        this.#counters.socketTimedOut();
        this.#events.socketTimedOut(socket); // observability
        this.#evict(socket, CLOSE_REASONS.FREE_TIMEOUT);
      }
      return next;
    }

    /**
     * Node 20 (and 22 before `agentKeepAliveTimeoutBuffer`) refuse a socket
     * whose `Keep-Alive: timeout=N` is within their fixed 1 s buffer, after
     * doing the rest of their work (keep-alive probes, unref, timer). Where
     * that was the only reason, `serverTimeoutMargin` decides instead. Newer
     * Node takes our margin as its buffer, and then agrees with us.
     */
    #coreVetoedOnlyTheHint(socket) {
      if (this.agentKeepAliveTimeoutBuffer !== undefined) return false;
      const res = socket._httpMessage?.res;
      if (res == null) return false;
      const match = /^timeout=(\d+)/.exec(keepAliveHeader(res) ?? '');
      return match !== null && Number(match[1]) * 1000 <= 1000;
    }

    /** How long the socket may stay idle: the smallest of every limit we know. */
    #freeTimeout(socket, now) {
      const config = this.#config;
      // A per-socket override (urllib sets these).
      let timeout = socket.freeSocketTimeout ?? socket.freeSocketKeepAliveTimeout;
      if (typeof timeout !== 'number') timeout = config.freeSocketTimeout;
      if (timeout === 0) timeout = Infinity;
      const margin = config.serverTimeoutMargin;
      const announced = socket[kServerTimeout];
      if (announced !== undefined) timeout = Math.min(timeout, announced - margin);
      if (this.#serverIdleLimits.size > 0) {
        const learned = this.#serverIdleLimits.get(socket[kPool]);
        if (learned !== undefined) timeout = Math.min(timeout, learned - margin);
      }
      const ttl = config.socketActiveTTL;
      if (ttl > 0) timeout = Math.min(timeout, ttl - (now - socket[SOCKET_CREATED_TIME]));
      return timeout;
    }

    /** Observability: which of #freeTimeout's limits gave `timeout` (for the socket:free event). */
    #freeTimeoutLimitedBy(socket, timeout, now) {
      const config = this.#config;
      const ttl = config.socketActiveTTL;
      if (ttl > 0 && timeout === ttl - (now - socket[SOCKET_CREATED_TIME])) return 'ttl';
      const learned = this.#serverIdleLimits.size > 0 ? this.#serverIdleLimits.get(socket[kPool]) : undefined;
      if (learned !== undefined && timeout === learned - config.serverTimeoutMargin) return 'learned';
      const announced = socket[kServerTimeout];
      if (announced !== undefined && timeout === announced - config.serverTimeoutMargin) return 'hint';
      return 'freeSocketTimeout';
    }

    // ---- free -> active --------------------------------------------------------

    reuseSocket(socket, req) {
      super.reuseSocket(socket, req);
      this.#activate(socket);
    }

    #activate(socket) {
      socket[kIdleSince] = 0;
      socket[SOCKET_REQUEST_COUNT]++;
      socket[kRequestsLeft]--;
      this.#setActiveTimeout(socket);
      this.#events.socketReused(socket); // observability
      if (debug.enabled) debug('%s reused for request %d', socket[SOCKET_NAME], socket[SOCKET_REQUEST_COUNT]);
    }

    #setActiveTimeout(socket) {
      const timeout = this.#config.timeout;
      if (socket.timeout !== timeout) socket.setTimeout(timeout);
    }

    // ---- expiry and close ------------------------------------------------------

    #socketTimedOut(socket) {
      this.#counters.socketTimedOut();
      this.#events.socketTimedOut(socket); // observability
      if (socket[kIdleSince] !== 0) {
        this.#evict(socket, CLOSE_REASONS.FREE_TIMEOUT);
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
      if (debug.enabled) debug('%s timed out after %d ms while active: destroyed', socket[SOCKET_NAME], timeout);
      socket[kClosedByAgent] = true;
      recordCloseReason(socket, CLOSE_REASONS.ACTIVE_TIMEOUT); // observability
      socket.destroy(new SocketTimeoutError(timeout, socket[SOCKET_NAME]));
    }

    #socketErrored(socket, err) {
      // destroy() is a shutdown, not a socket failure.
      if (err instanceof AgentDestroyedError) return;
      if (socket[kConnected]) this.#counters.socketErrored();
      else this.#counters.socketCreateFailed();
      this.#events.socketErrored(socket); // observability
      if (debug.enabled) debug('%s error: %s %s', socket[SOCKET_NAME], err.code || err.name, err.message);
      // An error on a free socket is counted and ends it; it never reaches the
      // process. Core's listener destroys the socket; take it out of the pool now.
      if (socket[kIdleSince] !== 0) this.#removeFromPool(socket);
    }

    #socketClosed(socket) {
      this.#counters.socketClosed();
      // A socket that closes while idle in the pool was closed by the server
      // (a FIN, or a reset: an error, then a close), unless we closed it.
      if (socket[kIdleSince] !== 0) this.#learnServerIdleLimit(socket);
      this.#events.socketClosed(socket, socket[kIdleSince] !== 0); // observability
      if (debug.enabled) debug('%s closed after %d requests', socket[SOCKET_NAME], socket[SOCKET_REQUEST_FINISHED_COUNT]);
    }

    /** The server closed a socket that sat idle in our pool: remember how long it sat. */
    #learnServerIdleLimit(socket) {
      if (!this.#config.learnServerTimeout || socket[kClosedByAgent]) return;
      // Bytes from the server while idle (Node 22+ core destroys the socket
      // on them) say the server misbehaved, not when it closes idle sockets.
      if (socket.bytesRead !== socket[kBytesReadWhenFreed]) return;
      socket[kClosedByAgent] = true; // learn once per socket
      const idle = Date.now() - socket[kIdleSince];
      const forgotten = this.#serverIdleLimits.record(socket[kPool], idle);
      this.#events.serverIdleLimitLearned(socket[kPool], this.#serverIdleLimits.get(socket[kPool]), forgotten); // observability
      if (debug.enabled) debug('%s closed by the server after %d ms idle', socket[SOCKET_NAME], idle);
    }

    #evict(socket, reason) {
      this.#removeFromPool(socket);
      this.#close(socket, reason);
    }

    #close(socket, reason) {
      socket[kClosedByAgent] = true;
      recordCloseReason(socket, reason); // observability: reason is one of CLOSE_REASONS
      if (debug.enabled) debug('%s closing: %s', socket[SOCKET_NAME], reason);
      socket.destroy();
    }

    // Core takes a socket out of its free pool only on 'close', which comes a
    // tick or more after destroy(); until then addRequest could hand it out.
    #removeFromPool(socket) {
      const pool = socket[kPool];
      const free = this.freeSockets[pool];
      if (free === undefined) return;
      const index = free.indexOf(socket);
      if (index === -1) return;
      free.splice(index, 1);
      if (free.length === 0) delete this.freeSockets[pool];
    }

    /**
     * Closes every socket. Requests in flight and requests queued behind
     * maxSockets fail with ERR_AGENT_DESTROYED. As with core's agent, a request
     * made afterwards opens a new socket.
     */
    destroy() {
      const queued = this.requests;
      for (const pool of Object.keys(queued)) {
        const requests = queued[pool];
        delete queued[pool];
        for (const req of requests) req.onSocket(null, new AgentDestroyedError());
      }
      for (const pool of Object.keys(this.sockets)) {
        for (const socket of this.sockets[pool]) {
          socket[kClosedByAgent] = true;
          recordCloseReason(socket, CLOSE_REASONS.DESTROY); // observability
          socket.destroy(new AgentDestroyedError());
        }
      }
      for (const pool of Object.keys(this.freeSockets)) {
        for (const socket of this.freeSockets[pool]) socket[kClosedByAgent] = true;
        for (const socket of this.freeSockets[pool]) recordCloseReason(socket, CLOSE_REASONS.DESTROY); // observability
      }
      super.destroy();
      this.#sweeper.stop();
    }

    // ---- status ------------------------------------------------------------------

    /** True when a counter changed since the last read of statusChanged. */
    get statusChanged() { return this.#counters.takeChanged(); }

    getCurrentStatus() {
      return this.#counters.snapshot(this, this.#serverIdleLimits.toJSON());
    }

    /** Per-origin counters and pool sizes: a new plain object on every call (lib/events.js). */
    getStats() { return this.#events.stats(); }

    get createSocketCount() { return this.#counters.createSocketCount; }
    get createSocketErrorCount() { return this.#counters.createSocketErrorCount; }
    get closeSocketCount() { return this.#counters.closeSocketCount; }
    get errorSocketCount() { return this.#counters.errorSocketCount; }
    get timeoutSocketCount() { return this.#counters.timeoutSocketCount; }
    get requestCount() { return this.#counters.requestCount; }

    // ---- deprecated (agentkeepalive 4.x) -------------------------------------------

    get freeSocketKeepAliveTimeout() {
      warnDeprecated('getFreeSocketKeepAliveTimeout');
      return this.#config.freeSocketTimeout;
    }

    get timeout() {
      warnDeprecated('getTimeout');
      return this.#config.timeout;
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
