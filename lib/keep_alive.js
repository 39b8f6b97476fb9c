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
const { statusSnapshot, takeStatusChanged } = require('./status');
const { ServerLimits, idleAllowance, probeBound } = require('./server_limits');
const clock = require('./clock');
const { MAX_TIMER } = clock;
const { FreeSocketSweeper } = require('./free_socket_sweeper');
const { parseKeepAlive } = require('./keep_alive_header');
const { SocketTimeoutError, AgentDestroyedError, AgentClosedError } = require('./errors');
const { warnDeprecated } = require('./deprecate');
const { createProxyRoutes } = require('./proxy');
const { PoolEvents } = require('./events');
const { CLOSE_REASONS, recordCloseReason } = require('./close_reasons');
const { QueueBounds } = require('./queue_bounds');
const { Shutdown } = require('./shutdown');
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
// Times are clock.now() (monotonic) ms; see clock.js.
const kCreatedAt = Symbol('steady-agent.createdAt'); // for the TTL (SOCKET_CREATED_TIME is wall-clock)
const kIdleSince = Symbol('steady-agent.idleSince'); // on entering the free pool; 0 while active
const kFreeDeadline = Symbol('steady-agent.freeDeadline'); // time a free socket (or a probe) is closed at
const kIdleBeforeReuse = Symbol('steady-agent.idleBeforeReuse'); // ms the socket sat idle before its current request
const kProbeBound = Symbol('steady-agent.probeBound'); // ms a probe may stay idle; 0: the learned limit did not decide its deadline
const kRequestsLeft = Symbol('steady-agent.requestsLeft'); // requests the server still takes (Keep-Alive max)
const kServerTimeout = Symbol('steady-agent.serverTimeout'); // ms, from Keep-Alive timeout
const kClosedByAgent = Symbol('steady-agent.closedByAgent'); // we closed it: not a server close to learn from
const kConnected = Symbol('steady-agent.connected');
const kBytesReadWhenFreed = Symbol('steady-agent.bytesReadWhenFreed');
// The queued request a socket was handed to on 'free'; it may be aborted
// before it takes the socket, and then the socket served nothing new.
const kHandedTo = Symbol('steady-agent.handedTo');
// The options core created the socket with (its pool name, its TLS and
// socket options): core's removeSocket needs them.
const kCreateOptions = Symbol('steady-agent.createOptions');
// Taken out of core's maps already (an active timeout): core's own
// removeSocket on 'close' has nothing left to do.
const kRemoved = Symbol('steady-agent.removed');
// Left the agent for an HTTP upgrade: no longer one of the sockets it holds.
const kUpgraded = Symbol('steady-agent.upgraded');

// A socket's name in debug lines; one put in agent.freeSockets by hand has none.
const nameOf = (socket) => socket[SOCKET_NAME] ?? 'a socket put in the pool by hand';

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

/** The options a direct createConnection call names its socket's pool by, in any argument form. */
function connectionOptions(args) {
  const [port, host] = args;
  const given = args.find((arg) => arg !== null && typeof arg === 'object') ?? {};
  const options = { ...given };
  if (typeof port === 'number') options.port = port;
  if (typeof host === 'string') options.host = host;
  return options;
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
    #serverIdleLimits = new ServerLimits(256, (origin) => this.#events.serverIdleLimitChanged(origin, undefined, 'evicted'));
    // Per pool, the one socket taken out of the pool at the learned limit and
    // kept open to see when the server closes it (see server_limits.js).
    #probes = new Map();
    #sweeper = new FreeSocketSweeper((now) => this.#sweepFree(now));
    // Set while core's addRequest runs, until it names the pool (see getName).
    #picking = false;
    // Set while core's createSocket runs, until its createConnection call
    // (see createSocket).
    #creating = null;

    // agentkeepalive's counters: plain numbers a monitoring loop may reset.
    createSocketCount = 0;
    createSocketErrorCount = 0;
    closeSocketCount = 0;
    errorSocketCount = 0;
    timeoutSocketCount = 0;
    requestCount = 0;
    createSocketCountLastCheck = 0;
    createSocketErrorCountLastCheck = 0;
    closeSocketCountLastCheck = 0;
    errorSocketCountLastCheck = 0;
    timeoutSocketCountLastCheck = 0;
    requestCountLastCheck = 0;
    // Proxy routing (lib/proxy), or null: without a proxy, one null check per hook.
    #proxy = null;
    // diagnostics_channel events and getStats() (lib/events.js).
    #events = new PoolEvents(this);
    // The pool core's addRequest named, to see a request it queued.
    #pickedPool;
    // Which limit the last #freeTimeout() call was decided by (socket:free's limitedBy).
    #freeLimitedBy = 'freeSocketTimeout';
    // maxQueue and queueTimeout (lib/queue_bounds.js), or null: neither set.
    #queueBounds = null;
    // close() and the count of sockets it waits for (lib/shutdown.js).
    #shutdown = new Shutdown();

    constructor(options) {
      const config = normalizeOptions(options);
      super(config);
      // Our own settings; freeSocketTimeout and socketActiveTTL change when
      // the caller writes them to agent.options.
      this.#config = { ...config };
      this.options = agentOptions(this.options, this.#config);
      this.#proxy = createProxyRoutes(config.proxy, this.protocol); // proxy: null without one
      this.#queueBounds = QueueBounds.create(config);
      this[CURRENT_ID] = 0;
      // Before core's own 'free' listener (added by the base constructor), so
      // that we see the pool and the queue as core is about to change them.
      this.prependListener('free', KeepAliveAgent.#onAgentFree);
    }

    // ---- naming and picking a free socket ----------------------------------

    addRequest(req, options, port, localAddress) {
      // After close(), as core fails a request that gets no socket: the
      // error reaches the request on the next tick.
      if (this.#shutdown.closing) {
        req.onSocket(null, new AgentClosedError());
        return;
      }
      // Proxy: absolute-form rewrite of http requests (lib/proxy).
      if (this.#proxy !== null) options = this.#proxy.route(req, options, port, localAddress);
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
      if (this.#queueBounds !== null && !this.#queueBounds.admit(this, req, pool)) return;
      this.#events.requestQueued(req, pool, options); // observability
    }

    getName(options = {}) {
      let pool = naming === undefined ? super.getName(options) : naming(this, options);
      // Proxy: pools named after the proxy (lib/proxy).
      if (this.#proxy !== null) pool = this.#proxy.poolName(pool, options);
      // Core's addRequest names the pool and then takes a free socket from it
      // without asking us. This is the one moment between the two: make sure
      // the socket it is about to take is alive.
      if (this.#picking) {
        this.#picking = false;
        this.#pickedPool = pool;
        if (this.freeSockets[pool] !== undefined) this.#dropUnusableFree(pool);
      }
      return pool;
    }

    #dropUnusableFree(pool) {
      const free = this.freeSockets[pool];
      const fifo = this.scheduling === 'fifo';
      // The one clock read of a reuse: a stalled event loop has kept the
      // sweeper from closing sockets whose deadline passed.
      const now = clock.now();
      while (free.length > 0) {
        const socket = fifo ? free[0] : free[free.length - 1];
        const reason = this.#unusable(socket, now);
        if (reason === null) {
          socket[kIdleBeforeReuse] = now - socket[kIdleSince];
          return;
        }
        if (fifo) free.shift();
        else free.pop();
        if (reason === CLOSE_REASONS.FREE_TIMEOUT) this.#freeSocketTimedOut(socket);
        else this.#close(socket, reason);
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
      if (socket.bytesRead !== socket[kBytesReadWhenFreed]) {
        // Or a socket put in agent.freeSockets by hand, which the agent never
        // freed and so has no count to compare; one that never connected
        // has no connection to reuse either. Asked only here, off the path
        // of a reuse that goes ahead.
        if (debug.enabled && socket.pending) debug('%s never connected: not reused', nameOf(socket));
        return CLOSE_REASONS.UNUSABLE;
      }
      if (socket[kFreeDeadline] <= now) return CLOSE_REASONS.FREE_TIMEOUT;
      const ttl = this.#config.socketActiveTTL;
      if (ttl > 0 && now - socket[kCreatedAt] >= ttl) return CLOSE_REASONS.TTL;
      return null;
    }

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
            if (!(err instanceof AgentDestroyedError)) this.#socketCreateFailed();
          } else {
            this[INIT_SOCKET](socket, creation.options);
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
      let socket;
      try {
        // Proxy: for core's createSocket, connect to the proxy instead; a
        // CONNECT tunnel answers through core's callback (lib/proxy).
        socket = creation !== null && this.#proxy !== null && this.#proxy.handles(args[0])
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
      if (socket[SOCKET_NAME] !== undefined) return;
      const pool = options._agentKey ?? this.getName(options);
      socket[kHandedTo] = null;
      socket[kCreateOptions] = options;
      socket[kRemoved] = false;
      socket[kAgent] = this;
      socket[kPool] = pool;
      socket[kIdleSince] = 0;
      socket[kIdleBeforeReuse] = 0;
      socket[kProbeBound] = 0;
      socket[kCreatedAt] = clock.now();
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
      this.createSocketCount++;
      this.#shutdown.opened();
      this.#events.socketCreated(socket, pool, options);
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
      this[kUpgraded] = true;
      this[kAgent].#shutdown.left();
      this.removeListener('secureConnect', KeepAliveAgent.#onConnect);
      this.removeListener('connect', KeepAliveAgent.#onConnect);
      this.removeListener('timeout', KeepAliveAgent.#onTimeout);
      this.removeListener('error', KeepAliveAgent.#onError);
    }

    // ---- active -> free, or straight to a queued request ---------------------

    static #onAgentFree(socket) { this.#socketFreed(socket); }

    #socketFreed(socket) {
      const req = socket._httpMessage;
      const handedTo = socket[kHandedTo];
      if (handedTo !== null) {
        socket[kHandedTo] = null;
        // Handed to a queued request that was aborted before it took the
        // socket: core frees it again, with the previous request still
        // attached (Node 18-22) or the aborted one, which has no response
        // (Node 24+ attaches it when handing the socket over). It served
        // nothing, and spent no slot of the server's Keep-Alive max.
        if (handedTo !== req || req.res == null) {
          socket[SOCKET_REQUEST_COUNT]--;
          socket[kRequestsLeft]++;
        }
      }
      // A 'free' without a finished request: a fresh socket core made for a
      // queued request, or a request aborted before it ran. Each request is
      // counted once, by number: holding on to the request object until the
      // socket's next one would keep it, its response and their buffers
      // alive through garbage collections.
      if (req != null && req.res != null && socket[SOCKET_REQUEST_FINISHED_COUNT] < socket[SOCKET_REQUEST_COUNT]) {
        socket[SOCKET_REQUEST_FINISHED_COUNT]++;
        this.requestCount++;
        this.#events.requestFinished(socket);
      }
      // Otherwise core puts the socket in the pool (keepSocketAlive) or
      // destroys it.
      const queue = this.requests[socket[kPool]];
      if (queue === undefined || queue.length === 0 || !socket.writable) return;

      // Core hands the socket straight to the first queued request, without
      // reuseSocket: it would keep the free timeout and reusedSocket false.
      if (req != null) this.#readServerHint(socket, req.res);
      const reason = this.#retired(socket);
      if (reason !== null) {
        // Core then sees an unwritable socket and destroys it; the queued
        // request gets a new socket when this one closes.
        this.#close(socket, reason);
        return;
      }
      const next = queue[0];
      socket[kIdleBeforeReuse] = 0;
      if (socket[SOCKET_REQUEST_FINISHED_COUNT] > 0) next.reusedSocket = true;
      if (socket[SOCKET_REQUEST_COUNT] === socket[SOCKET_REQUEST_FINISHED_COUNT]) {
        socket[kHandedTo] = next;
        this.#activate(socket);
      } else {
        this.#setActiveTimeout(socket);
      }
    }

    /** The server's Keep-Alive header on the response the socket just served. */
    #readServerHint(socket, res) {
      const hint = res != null ? parseKeepAlive(keepAliveHeader(res)) : null;
      socket[kServerTimeout] = hint === null || hint.timeout === undefined ? undefined : hint.timeout * 1000;
      if (hint !== null && hint.max !== undefined) socket[kRequestsLeft] = hint.max;
      this.#events.serverHint(socket, socket[kServerTimeout]);
    }

    /** Why the socket must serve no further request, or null. */
    #retired(socket, now = 0) {
      if (socket[kRequestsLeft] <= 0) return CLOSE_REASONS.KEEP_ALIVE_MAX; // the server's Keep-Alive max reached
      const ttl = this.#config.socketActiveTTL;
      if (ttl > 0 && (now || clock.now()) - socket[kCreatedAt] >= ttl) return CLOSE_REASONS.TTL;
      return null;
    }

    keepSocketAlive(socket) {
      if (!super.keepSocketAlive(socket) && !this.#coreVetoedOnlyTheHint(socket)) {
        if (debug.enabled) debug('%s not kept: core refused it (the server\'s hint, or a per-request TLS identity check)', socket[SOCKET_NAME]);
        recordCloseReason(socket, CLOSE_REASONS.NOT_KEPT); // observability
        return false;
      }
      this.#readServerHint(socket, socket._httpMessage?.res);
      const now = clock.now();
      // After close(), every socket closes as soon as it is free.
      const reason = this.#shutdown.closing ? CLOSE_REASONS.AGENT_CLOSE : this.#retired(socket, now);
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
      this.#events.socketFree(socket, timeout, this.#freeLimitedBy);
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
        if (socket[kProbeBound] > 0 && !this.#probes.has(socket[kPool])) {
          const deadline = this.#startProbe(socket);
          if (deadline < next) next = deadline;
          continue;
        }
        this.#freeSocketTimedOut(socket);
      }
      for (const [pool, probe] of this.#probes) {
        const deadline = probe[kFreeDeadline];
        if (deadline > now + 1) {
          if (deadline < next) next = deadline;
          continue;
        }
        // The server kept the socket idle for longer than the learned limit
        // allowed, as long as the probe may wait: the limit was wrong.
        this.#probes.delete(pool);
        if (debug.enabled) debug('%s probe still open after %d ms idle: learned limit forgotten', probe[SOCKET_NAME], now - probe[kIdleSince]);
        this.#forgetLimit(pool);
        this.#freeSocketTimedOut(probe);
      }
      return next;
    }

    /**
     * The socket reached the learned idle limit of its origin: out of the
     * pool, where no request can get it, but open, to see when the server
     * closes it (#socketClosed learns from that). Returns its new deadline.
     */
    #startProbe(socket) {
      this.#removeFromPool(socket);
      this.#probes.set(socket[kPool], socket);
      socket[kFreeDeadline] = socket[kIdleSince] + socket[kProbeBound];
      if (debug.enabled) debug('%s reached the learned idle limit: out of the pool, watched for %d ms idle', socket[SOCKET_NAME], socket[kProbeBound]);
      return socket[kFreeDeadline];
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
      // Core vetoes a timeout of N s where N * 1000 - 1000 <= 0. Its parser
      // reads only a leading `timeout=N`, ours any; core got here only by a
      // veto, and a veto for the hint means the leading timeout, which is
      // also the first one ours finds.
      const hint = parseKeepAlive(keepAliveHeader(res));
      return hint !== null && hint.timeout !== undefined && hint.timeout <= 1;
    }

    /** How long the socket may stay idle: the smallest of every limit we know. */
    #freeTimeout(socket, now) {
      const config = this.#config;
      // A per-socket override (urllib sets these).
      let timeout = socket.freeSocketTimeout ?? socket.freeSocketKeepAliveTimeout;
      if (typeof timeout !== 'number' || !(timeout >= 0)) {
        if (timeout !== undefined && debug.enabled) debug('%s per-socket freeSocketTimeout %o ignored: not a non-negative number', socket[SOCKET_NAME], timeout);
        timeout = config.freeSocketTimeout;
      }
      if (timeout === 0) timeout = Infinity;
      let limitedBy = 'freeSocketTimeout';
      const ttl = config.socketActiveTTL;
      if (ttl > 0) {
        const left = ttl - (now - socket[kCreatedAt]);
        if (left < timeout) {
          timeout = left;
          limitedBy = 'ttl';
        }
      }
      const learned = this.#serverIdleLimits.size > 0 ? this.#serverIdleLimits.get(socket[kPool]) : undefined;
      const allowed = idleAllowance(timeout, socket[kServerTimeout], learned, config.serverTimeoutMargin);
      // Where the learned limit decided, the socket may become its probe.
      socket[kProbeBound] = allowed.limitedBy === 'learned' ? probeBound(learned, timeout) : 0;
      this.#freeLimitedBy = allowed.limitedBy ?? limitedBy;
      return allowed.timeout;
    }

    // ---- free -> active --------------------------------------------------------

    reuseSocket(socket, req) {
      super.reuseSocket(socket, req);
      // A socket someone put in agent.freeSockets by hand: the agent takes
      // it on, in the pool core just took it from.
      if (socket[kAgent] !== this) this[INIT_SOCKET](socket, { _agentKey: this.#pickedPool });
      this.#activate(socket);
    }

    #activate(socket) {
      socket[kIdleSince] = 0;
      socket[SOCKET_REQUEST_COUNT]++;
      socket[kRequestsLeft]--;
      this.#setActiveTimeout(socket);
      this.#events.socketReused(socket);
      if (debug.enabled) debug('%s reused for request %d', socket[SOCKET_NAME], socket[SOCKET_REQUEST_COUNT]);
    }

    #setActiveTimeout(socket) {
      const timeout = this.#activeTimeout();
      if (socket.timeout !== timeout) socket.setTimeout(timeout);
    }

    // agent.options.timeout, read where a socket is armed: core reads it there
    // too, and a caller may have changed it since construction.
    #activeTimeout() {
      const timeout = this.options.timeout;
      if (typeof timeout !== 'number' || !(timeout >= 0)) return this.#config.timeout;
      return timeout > MAX_TIMER ? MAX_TIMER : timeout;
    }

    // ---- expiry and close ------------------------------------------------------

    /**
     * A free socket reached its deadline. As agentkeepalive's, it emits
     * 'timeout' once it has left the pool and can no longer be written, so a
     * listener sees what agentkeepalive shows it; our own listener sees a
     * socket we closed and lets it be.
     */
    #freeSocketTimedOut(socket) {
      this.#timedOut(socket);
      this.#evict(socket, CLOSE_REASONS.FREE_TIMEOUT);
      socket.emit('timeout');
    }

    #timedOut(socket) {
      this.timeoutSocketCount++;
      this.#events.socketTimedOut(socket);
    }

    #socketTimedOut(socket) {
      // The 'timeout' #freeSocketTimedOut emits on a socket it has closed.
      if (socket[kClosedByAgent]) return;
      this.#timedOut(socket);
      // A free socket on a timer of its own (a subclass's keepSocketAlive
      // armed one): its 'timeout' is being emitted already.
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
      recordCloseReason(socket, CLOSE_REASONS.ACTIVE_TIMEOUT);
      // Out of agent.sockets before the request hears of it, and a request
      // queued behind it gets its new socket now, as in agentkeepalive.
      this.removeSocket(socket, socket[kCreateOptions]);
      socket[kRemoved] = true;
      socket.destroy(new SocketTimeoutError(timeout, socket[SOCKET_NAME]));
    }

    // Core calls this on every 'close' (and when it pools a socket). Once
    // more for a socket already removed would start a second socket for the
    // same queue, beyond maxSockets.
    removeSocket(socket, options) {
      if (socket[kRemoved] === true) return;
      super.removeSocket(socket, options);
    }

    #socketCreateFailed() {
      this.createSocketErrorCount++;
    }

    #socketErrored(socket, err) {
      if (socket[kConnected]) this.errorSocketCount++;
      else this.#socketCreateFailed();
      this.#events.socketErrored(socket);
      if (debug.enabled) debug('%s error: %s %s', socket[SOCKET_NAME], err.code || err.name, err.message);
      // An error on a free socket is counted and ends it; it never reaches the
      // process. Core's listener destroys the socket; take it out of the pool now.
      if (socket[kIdleSince] !== 0) {
        this.#removeFromPool(socket);
        return;
      }
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') this.#learnFromCollision(socket);
      // Anywhere else, counting must hide nothing: with no other listener
      // (no request attached, or one taken off by the caller), the error is
      // the caller's, as it would be without the agent. So does agentkeepalive.
      if (socket.listenerCount('error') === 1) {
        socket.removeListener('error', KeepAliveAgent.#onError);
        socket.emit('error', err);
      }
    }

    #socketClosed(socket) {
      this.closeSocketCount++;
      // A socket that closes while idle in the pool was closed by the server
      // (a FIN, or a reset: an error, then a close), unless we closed it.
      const wasFree = socket[kIdleSince] !== 0;
      if (wasFree) this.#learnServerIdleLimit(socket, clock.now() - socket[kIdleSince], false);
      // The server's FIN before the response ('socket hang up').
      else if (socket.readableEnded) this.#learnFromCollision(socket);
      if (this.#probes.get(socket[kPool]) === socket) this.#probes.delete(socket[kPool]);
      this.#events.socketClosed(socket, wasFree);
      if (debug.enabled) debug('%s closed after %d requests', socket[SOCKET_NAME], socket[SOCKET_REQUEST_FINISHED_COUNT]);
      if (socket[kUpgraded] !== true) this.#shutdown.left();
    }

    /**
     * A request on a socket reused after sitting idle failed before any
     * byte of its response: the server closed the socket at about that idle
     * time, as if it had closed it in the pool.
     */
    #learnFromCollision(socket) {
      const idle = socket[kIdleBeforeReuse];
      if (idle > 0) this.#learnServerIdleLimit(socket, idle, true);
    }

    /** The server closed a socket after it sat idle `idle` ms: learn from it. */
    /** A probe outlived the learned limit of `pool`: it was wrong. */
    #forgetLimit(pool) {
      this.#serverIdleLimits.forget(pool);
      this.#events.serverIdleLimitChanged(pool, undefined, 'probe');
    }

    #learnServerIdleLimit(socket, idle, collision) {
      if (!this.#config.learnServerTimeout || socket[kClosedByAgent]) return;
      // Bytes from the server while idle (Node 22+ core destroys the socket
      // on them) say the server misbehaved, not when it closes idle sockets;
      // after a reuse, bytes mean the response had begun.
      if (socket.bytesRead !== socket[kBytesReadWhenFreed]) return;
      socket[kClosedByAgent] = true; // learn once per socket
      const pool = socket[kPool];
      const before = this.#serverIdleLimits.peek(pool);
      const learned = this.#serverIdleLimits.observe(pool, idle, clock.now(), collision);
      if (debug.enabled) debug('%s closed by the server after %d ms idle%s: %s', socket[SOCKET_NAME], Math.round(idle), collision ? ' (a request failed on it)' : '', learned);
      const after = this.#serverIdleLimits.peek(pool);
      if (after !== before) this.#events.serverIdleLimitChanged(pool, after, collision ? 'collision' : learned);
    }

    #evict(socket, reason) {
      this.#removeFromPool(socket);
      this.#close(socket, reason);
    }

    #close(socket, reason) {
      socket[kClosedByAgent] = true;
      recordCloseReason(socket, reason); // observability: reason is one of CLOSE_REASONS
      if (debug.enabled) debug('%s closing: %s', nameOf(socket), reason);
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
     * Closes every socket, as core's agent does: a request still waiting for
     * its response fails with 'socket hang up' (ECONNRESET); one whose
     * response has arrived sees no request error (a body cut short shows on
     * the response). Requests queued behind maxSockets are served, as core's
     * agent and agentkeepalive serve them: core opens a new connection for
     * them as each destroyed socket closes. During close(), which opens no
     * new connection, they fail with ERR_AGENT_DESTROYED instead. As with
     * core's agent, a request made afterwards opens a new socket.
     */
    destroy() {
      // Only a closing agent gives up its queue: otherwise core's
      // removeSocket, on each socket's 'close', starts a new connection for it.
      if (this.#shutdown.closing) {
        const queued = this.requests;
        for (const pool of Object.keys(queued)) {
          const requests = queued[pool];
          delete queued[pool];
          for (const req of requests) req.onSocket(null, new AgentDestroyedError());
        }
      }
      for (const map of [this.sockets, this.freeSockets]) {
        for (const pool of Object.keys(map)) {
          for (const socket of map[pool]) {
            socket[kClosedByAgent] = true;
            recordCloseReason(socket, CLOSE_REASONS.DESTROY);
          }
        }
      }
      // A connection still opening a proxy tunnel holds its place in
      // agent.sockets without being a socket of ours yet: it ends as any
      // socket of the agent does, and its request, never sent, fails with
      // ERR_AGENT_DESTROYED.
      for (const pool of Object.keys(this.sockets)) {
        for (const socket of this.sockets[pool]) {
          if (socket[SOCKET_NAME] === undefined) socket.destroy(new AgentDestroyedError());
        }
      }
      for (const probe of this.#probes.values()) this.#close(probe, CLOSE_REASONS.DESTROY);
      this.#probes.clear();
      super.destroy();
      this.#sweeper.stop();
    }

    /**
     * Closes the agent gracefully: new requests fail with ERR_AGENT_CLOSED,
     * idle sockets close now, requests in flight and queued ones are served,
     * and each socket closes as soon as it is free. The promise (the same one
     * on every call) resolves when the agent holds no socket; destroy()
     * ends what is left at once.
     */
    close() {
      const closing = this.#shutdown.closing;
      const promise = this.#shutdown.close();
      if (!closing) {
        // Out of the pool first: core takes a socket out only on its 'close',
        // a tick or more after destroy().
        const free = this.freeSockets;
        for (const pool of Object.keys(free)) {
          const sockets = free[pool];
          delete free[pool];
          for (const socket of sockets) this.#close(socket, CLOSE_REASONS.AGENT_CLOSE);
        }
        for (const probe of this.#probes.values()) this.#close(probe, CLOSE_REASONS.AGENT_CLOSE);
        this.#probes.clear();
        this.#sweeper.stop();
      }
      return promise;
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
    get serverIdleTimeouts() { return this.#serverIdleLimits.toJSON(); }

    /** Per-origin counters and pool sizes: a new plain object on every call (lib/events.js). */
    getStats() { return this.#events.stats(); }

    // ---- deprecated (agentkeepalive 4.x) -------------------------------------------

    get freeSocketKeepAliveTimeout() {
      warnDeprecated('getFreeSocketKeepAliveTimeout');
      return this.#config.freeSocketTimeout;
    }

    get timeout() {
      warnDeprecated('getTimeout');
      return this.#activeTimeout();
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
