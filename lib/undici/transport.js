'use strict';

// The transport: the state of one dispatcher (options, origins, the sockets
// of each, what was learned) and what it does with it. undici keeps its own
// pools, parser and queue; we add, per request, one handler wrapper
// (./exchange.js), and per socket, one state object (./socket_state.js),
// both given this transport as an instance. Here: the sockets we make
// (undici's `connect` option), the queue bounds, the agent's learning and
// stale judgement applied to what the wrappers and states report, the close
// reasons, events and getStats(). The class over undici's Agent is
// ./dispatcher.js.
//
// Not here: socketActiveTTL, maxFreeSockets, proxies.
const net = require('node:net');
const debug = require('debug')('steady-agent');
const { subscribe, unsubscribe, track } = require('./channel');
const { SocketState, listen } = require('./socket_state');
const { TlsSessions } = require('./tls_sessions');
const { LegacyExchange, ControllerExchange, queueTimedOut, headerValue } = require('./exchange');
// Every module of the agent this transport uses, in one place.
const { normalizeOptions } = require('../options/normalize');
const { TLS_ACCEPTANCE_OPTIONS } = require('../options/tls_options');
const { OriginTable } = require('../observe/stats');
const { ServerLimits } = require('../policy/server_limits');
const { judgeFailure } = require('../policy/stale_judgement');
const { markError } = require('../agent/stale_marks');
const { ConnectTimeout } = require('../connect/connect_timeout');
const { now, roundMs } = require('../timers/clock');
const { CLOSE_REASONS } = require('../policy/close_reasons');
const { channels: events, publish } = require('../observe/channels');
const { QueueFullError, UnsupportedRequestError } = require('../errors');

// undici's keepAliveTimeout where freeSocketTimeout is 0 (no limit), and its
// keepAliveMaxTimeout: the longest a server's hint may keep a socket.
const NO_LIMIT_MS = 2 ** 31 - 1;

// The agent's options tls.connect takes, as https.Agent passes them on: every
// option that changes what the client accepts, so that none is dropped. The
// transport takes them per dispatcher, never per request (undici's dispatch
// options carry none), so one origin's connections all share them: the pools
// that the agent must keep apart by name cannot meet here.
// ALPNProtocols is the transport's own: undici speaks http/1.1 on these sockets.
const TLS_OPTIONS = Object.freeze([...TLS_ACCEPTANCE_OPTIONS.filter((key) => key !== 'ALPNProtocols'), 'family', 'hints']);

// The no-socket event's outcome per getStats() counter, as the agent names them.
const NO_SOCKET_OUTCOMES = Object.freeze({ queueFull: 'queue-full', queueTimeouts: 'queue-timeout', leftQueue: 'left-queue', refusedAfterClose: 'agent-closed' });

// ---- one origin ---------------------------------------------------------------------
class Origin {
  constructor(transport, key, host, port) {
    this.transport = transport;
    this.key = key; // undici's origin, as the requests name it
    this.name = `${host}:${port}:`; // the agent's pool name
    this.scheme = key.startsWith('https:') ? 'https' : 'http';
    this.host = host;
    this.port = port;
    this.connections = new Set(); // its SocketStates
    this.inFlight = 0; // dispatched and not ended
    this.queued = 0; // of those, waiting for a socket
    this.stats = transport.stats.use(this.name, host, port);
    // The longest idle time after which a reused socket got its response.
    this.aliveMs = 0;
    // The trial of the learned limit: when the socket that started it was
    // freed, and when it ends (Infinity: none is on trial).
    this.trialFrom = 0;
    this.trialEnd = Infinity;
  }
}

// ---- the transport ------------------------------------------------------------------
/** The state of one dispatcher: options, origins, sockets, what was learned. */
class Transport {
  constructor(options, resendBuffered) {
    const normalized = normalizeOptions(options);
    this.options = normalized;
    this.resendBuffered = resendBuffered;
    this.maxSockets = normalized.maxSockets ?? Infinity;
    this.maxQueue = normalized.maxQueue;
    this.queueTimeout = normalized.queueTimeout;
    this.margin = normalized.serverTimeoutMargin;
    this.uncapped = normalized.freeSocketTimeout === 0 ? Infinity : normalized.freeSocketTimeout;
    this.learn = normalized.learnServerTimeout;
    this.connectTimeout = ConnectTimeout.create(normalized.connectTimeout);
    this.limits = new ServerLimits();
    this.stats = new OriginTable();
    this.origins = new Map(); // undici's origin string -> Origin
    this.byName = new Map(); // pool name -> Origin, for connect()
    this.dns = null; // made in attach(): its events name the dispatcher
    this.tlsSessions = new TlsSessions(options?.maxCachedSessions);
    this.dispatcher = null;
    this.send = null; // undici's own dispatch, bound to the dispatcher
    this.closing = false;
    this.stopped = false;
    this.created = 0; // sockets made: their ids
    this.connect = this.connect.bind(this);
    subscribe();
  }

  /** The dispatcher over this transport exists: events name it, and `send` is undici's own dispatch. */
  attach(dispatcher, send) {
    this.dispatcher = dispatcher;
    this.send = send;
    // Loaded only with the option, as the agent's.
    if (this.options.dns !== undefined) this.dns = new (require('./dns').TransportDns)(this.options.dns, dispatcher, this.byName);
  }

  /** The options undici's Agent gets. */
  agentOptions() {
    const options = this.options;
    return {
      connect: this.connect,
      connections: Number.isFinite(this.maxSockets) ? this.maxSockets : null,
      keepAliveTimeout: options.freeSocketTimeout === 0 ? NO_LIMIT_MS : options.freeSocketTimeout,
      keepAliveMaxTimeout: NO_LIMIT_MS,
      keepAliveTimeoutThreshold: this.margin,
    };
  }

  origin(key) {
    let origin = this.origins.get(key);
    if (origin === undefined) {
      const url = new URL(key);
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      origin = this.byName.get(`${host}:${port}:`) ?? new Origin(this, key, host, port);
      this.origins.set(key, origin);
      this.byName.set(origin.name, origin);
    }
    return origin;
  }

  /** Wraps `handler` and hands the request to undici. */
  dispatch(opts, handler) {
    if (opts.upgrade || opts.method === 'CONNECT') {
      throw new UnsupportedRequestError(opts.method === 'CONNECT' ? 'a CONNECT request' : 'an upgrade');
    }
    const key = opts.origin;
    const origin = this.origin(typeof key === 'string' ? key : String(key?.origin ?? key));
    const exchange = typeof handler.onRequestStart === 'function'
      ? new ControllerExchange(this, opts, handler, origin)
      : new LegacyExchange(this, opts, handler, origin);
    if (origin.inFlight >= this.maxSockets) {
      if (origin.queued >= this.maxQueue) {
        this.noSocket(origin, 'queueFull', null, opts);
        exchange.error(new QueueFullError(this.maxQueue));
        return true;
      }
      origin.queued++;
      origin.stats.queued();
      exchange.queuedAt = now();
      if (events.queued.hasSubscribers) this.publish(events.queued, { request: opts }, origin);
      if (this.queueTimeout > 0) exchange.queueTimer = setTimeout(queueTimedOut, this.queueTimeout, exchange);
    }
    origin.inFlight++;
    return this.send(opts, exchange);
  }

  /** A request after close(): refused, counted and published as the agent's are. */
  refused(opts) {
    const origin = this.origins.get(typeof opts.origin === 'string' ? opts.origin : String(opts.origin?.origin));
    if (origin !== undefined) this.noSocket(origin, 'refusedAfterClose', null, opts);
  }

  /** undici's connect: a socket of ours, connected (over `winner`: a race's, lib/connect/undici_race.js). */
  connect(params, callback, winner) {
    const secure = params.protocol === 'https:';
    const host = params.hostname.startsWith('[') ? params.hostname.slice(1, -1) : params.hostname;
    const port = Number(params.port || (secure ? 443 : 80));
    const origin = this.byName.get(`${host}:${port}:`) ?? this.origin(`${params.protocol}//${params.host ?? params.hostname}`);
    const options = this.options;
    const connectOptions = { host, port, localAddress: params.localAddress ?? options.localAddress };
    if (this.dns !== null) connectOptions.lookup = this.dns.lookup;
    let socket;
    if (secure) {
      const servername = params.servername || options.servername || (net.isIP(host) ? undefined : host);
      const tlsOptions = { ...connectOptions, servername, ALPNProtocols: ['http/1.1'] };
      for (const key of TLS_OPTIONS) if (options[key] !== undefined) tlsOptions[key] = options[key];
      socket = this.tlsSessions.connect(winner === undefined ? tlsOptions : { ...tlsOptions, socket: winner });
    } else {
      socket = winner ?? net.connect(connectOptions);
    }
    const state = new SocketState(origin, socket, secure, ++this.created);
    track(socket, state);
    origin.connections.add(state);
    origin.stats.socketsCreated++;
    if (this.dns !== null) this.dns.track(host);
    socket.setNoDelay(true);
    if (options.tcpKeepAlive) socket.setKeepAlive(true, options.keepAliveMsecs);
    listen(socket);
    this.connectTimeout?.watch(socket);
    const ready = () => {
      socket.removeListener('error', failed);
      state.connected = true;
      state.connectMs = now() - state.createdAt;
      state.freedAt = now();
      if (events.create.hasSubscribers) this.publish(events.create, {}, origin, socket);
      if (debug.enabled) debug('%s created', state.name);
      callback(null, socket);
    };
    const failed = (err) => {
      socket.removeListener(secure ? 'secureConnect' : 'connect', ready);
      callback(err, null);
    };
    if (winner !== undefined && !secure) return ready(); // connected already
    socket.once(secure ? 'secureConnect' : 'connect', ready);
    socket.once('error', failed);
    return socket;
  }

  /** The server closed `state`'s socket after `idleMs` idle: an observation (a collision when found by a request). */
  observe(state, idleMs, collision) {
    if (!this.learn || state.learnedFrom) return;
    state.learnedFrom = true;
    const origin = state.origin;
    const at = now();
    const learned = this.limits.observe(origin.name, { idleMs, now: at, collision, hinted: state.hinted, aliveMs: origin.aliveMs });
    if (learned.outcome === 'ignored') return;
    if (debug.enabled) debug('%s closed by the server after %d ms idle%s: %s, %s', state.name, roundMs(idleMs), collision ? ' (a request failed on it)' : '', learned.outcome, learned.why);
    if (learned.resetAlive) origin.aliveMs = 0;
    this.report(origin, learned);
  }

  /** A request on `state`'s socket failed as it closed, not a collision. */
  fault(state) {
    if (!this.learn || state.learnedFrom || state.closeReason !== null) return;
    state.learnedFrom = true;
    const origin = state.origin;
    const before = this.limits.limitOf(origin.name);
    const learned = this.limits.fault(origin.name, now());
    if (this.limits.limitOf(origin.name) !== before) this.report(origin, learned);
  }

  /** A request reused `state`'s socket after idleBeforeReuse ms and got its response. */
  alive(state, at) {
    const origin = state.origin;
    const idle = state.idleBeforeReuse;
    if (idle > origin.aliveMs) origin.aliveMs = idle;
    if (this.limits.size === 0) return;
    const refuted = this.limits.refute(origin.name, idle, at);
    if (refuted !== null) this.report(origin, refuted);
  }

  /** The trial of `origin`'s limit is over with nothing confirming it: it lapses. */
  lapse(origin, at) {
    origin.trialEnd = Infinity;
    if (this.limits.limitOf(origin.name) === undefined) return;
    // As if the socket that started the trial were still open, idle since
    // it was freed; but it was closed at the limit, so the words say what
    // happened: the trial passed without a close or a collision.
    const trialMs = at - origin.trialFrom;
    const refuted = this.limits.refute(origin.name, trialMs, at, true);
    if (refuted === null) return;
    refuted.why = `no server close or request failure in ${roundMs(trialMs)} ms of trial since a socket reached it`;
    if (debug.enabled) debug('%s: learned idle limit forgotten: %s', origin.name, refuted.why);
    this.report(origin, refuted);
  }

  /** What an observation did: stats, the event, and the idle sockets' deadlines. */
  report(origin, learned) {
    const record = this.limits.peek(origin.name);
    const ms = record?.limit;
    // A changed limit (or none) starts a new trial.
    if (learned.outcome !== 'refused' && learned.outcome !== 'held') origin.trialEnd = Infinity;
    const stats = origin.stats;
    stats.learned = ms === undefined ? null : Math.round(ms);
    stats.confidence = ms === undefined ? null : (record.confirmed ? 'confirmed' : 'tentative');
    if (events.serverIdleLimit.hasSubscribers) {
      this.publish(events.serverIdleLimit, {
        ms: stats.learned, source: 'learned', confidence: stats.confidence, outcome: learned.outcome, why: learned.why,
      }, origin);
    }
    if (stats.learned === null) this.stats.settle(stats);
    // A confirmed limit caps the idle sockets freed without it.
    if (ms !== undefined && record.confirmed) {
      for (const other of origin.connections) {
        if (other.active || !other.connected) continue;
        if (other.timer !== null) clearTimeout(other.timer);
        other.timer = null;
        other.arm();
      }
    }
  }

  announced(origin, ms) {
    origin.stats.announced = ms;
    if (events.serverIdleLimit.hasSubscribers) this.publish(events.serverIdleLimit, { ms, source: 'announced' }, origin);
  }

  /**
   * The request of `exchange` failed on `state`'s socket: the agent's marks,
   * learning, and the peers. Returns true for a collision (a stale socket).
   */
  judge(state, exchange, err) {
    const at = now();
    const limit = state.hinted ?? this.limits.limitOf(state.origin.name);
    const opts = exchange.opts;
    const marks = judgeFailure({
      requestsBefore: state.requestsFinished,
      idleMs: state.idleBeforeReuse,
      sinceStartMs: at - state.requestStartedAt,
      connectMs: state.connectMs,
      responseBytes: state.socket.bytesRead - state.bytesReadWhenFreed,
      knownLimitMs: limit,
      method: opts.method,
      idempotencyKey: headerValue(opts.headers, 'idempotency-key'),
      xIdempotencyKey: headerValue(opts.headers, 'x-idempotency-key'),
    });
    if (marks === null) return false;
    markError(err, marks);
    if (!marks.staleSocket) return false;
    this.observe(state, marks.socketIdleMs, true);
    // The origin's idle sockets that sat at least as long are probably closed too.
    for (const other of state.origin.connections) {
      if (other !== state && !other.active && other.connected && at - other.freedAt >= marks.socketIdleMs) {
        other.close(CLOSE_REASONS.STALE_PEER);
      }
    }
    return true;
  }

  /** `state`'s socket closed. */
  closed(state) {
    if (state.timer !== null) {
      clearTimeout(state.timer);
      state.timer = null;
    }
    const origin = state.origin;
    origin.connections.delete(state);
    if (this.dns !== null) this.dns.untrack(origin.host);
    let reason = state.closeReason;
    if (reason === null) {
      if (this.closing) reason = CLOSE_REASONS.AGENT_CLOSE;
      else if (state.errored) reason = CLOSE_REASONS.ERROR;
      else if (state.serverClosed) reason = CLOSE_REASONS.SERVER_CLOSE;
      else if (!state.active && state.requestsFinished > 0) reason = CLOSE_REASONS.FREE_TIMEOUT; // undici's idle timeout
      else reason = CLOSE_REASONS.ERROR;
    }
    const stats = origin.stats;
    stats.closed(reason);
    if (events.close.hasSubscribers) {
      this.publish(events.close, { reason, requests: state.requestsFinished, lifetimeMs: now() - state.createdAt }, origin, state.socket);
    }
    if (debug.enabled) debug('%s closed after %d requests', state.name, state.requestsFinished);
    this.stats.settle(stats);
  }

  /**
   * A request (`request`: undici's dispatch options, the events' `request`)
   * left without a socket: its counter, and the no-socket event (outcome as
   * the agent names it).
   */
  noSocket(origin, counter, waitedMs, request) {
    origin.stats.noSocket(counter, waitedMs);
    if (events.noSocket.hasSubscribers) this.publish(events.noSocket, { request, outcome: NO_SOCKET_OUTCOMES[counter], waitedMs: waitedMs ?? 0 }, origin);
  }

  publish(channel, message, origin, socket) {
    message.agent = this.dispatcher;
    message.origin = origin.name;
    message.host = origin.host;
    message.port = origin.port;
    message.scheme = origin.scheme;
    if (socket !== undefined) message.socket = socket;
    publish(channel, message);
  }

  /** getStats(): the agent's shape. */
  getStats() {
    const origins = {};
    for (const origin of new Set(this.byName.values())) {
      let active = 0;
      let free = 0;
      for (const state of origin.connections) {
        if (state.active) active++;
        else if (state.connected) free++;
      }
      const view = { sockets: { [origin.name]: { length: active } }, freeSockets: { [origin.name]: { length: free } }, requests: { [origin.name]: { length: origin.queued } } };
      origins[origin.name] = origin.stats.toJSON(view);
    }
    const result = { origins };
    if (this.dns !== null) result.dns = this.dns.snapshot();
    return result;
  }

  /** Everything of ours is gone: timers, dns, the channel subscription. */
  stop() {
    if (this.send === null || this.stopped) return;
    this.stopped = true;
    for (const origin of this.byName.values()) {
      for (const state of origin.connections) {
        if (state.timer !== null) clearTimeout(state.timer);
        state.timer = null;
      }
    }
    if (this.dns !== null) this.dns.stop();
    unsubscribe();
  }
}

module.exports = { Transport };
