'use strict';

// The transport: the state of one dispatcher (options, origins, the sockets
// of each, what was learned) and what it does with it. undici keeps its own
// pools, parser and queue; we add, per request, one handler wrapper
// (./exchange.js), and per socket, one state object (./socket_state.js),
// both given this transport as an instance. Here: the sockets we make
// (undici's `connect` option), the queue bounds, the agent's learning and
// stale judgement applied to what the wrappers and states report, the close
// reasons, events and getStats(). The class over undici's Agent is
// ./dispatcher.js; which option goes where, ./options.js; the agent's
// limits on sockets (timeout, socketActiveTTL, maxFreeSockets,
// maxTotalSockets), ./socket_limits.js.
//
// Proxies (`proxy`, `noProxy`, `proxyEnv`, with the agent's meaning and
// lib/proxy's code): an https origin's sockets are CONNECT tunnels, one per
// socket, pooled by undici as any socket; an http origin's requests go to
// the proxy in absolute form (`GET http://host/path`), with
// Proxy-Authorization, on connections to the proxy pooled per origin.
const debug = require('debug')('steady-agent');
const { subscribe, unsubscribe } = require('./channel');
const { TlsSessions } = require('./tls_sessions');
const { LegacyExchange, ControllerExchange, queueTimedOut, headerValue, canResend } = require('./exchange');
const { sortOptions } = require('./options');
const { connector, forwardRequest } = require('./connector');
const { SocketLimits } = require('./socket_limits');
// Every module of the agent this transport uses, in one place.
const { normalizeOptions } = require('../options/normalize');
const { count } = require('../options/grammar');
const { createProxyRoutes } = require('../proxy');
const { OriginTable } = require('../observe/stats');
const { LearningEngine } = require('../policy/learning_engine');
const { judgeFailure } = require('../policy/stale_judgement');
const { markError } = require('../agent/stale_marks');
const { ConnectTimeout } = require('../connect/connect_timeout');
const { now, roundMs } = require('../timers/clock');
const { CLOSE_REASONS, transportCloseReason } = require('../state/close_reasons');
const { channels: events, publish } = require('../observe/channels');
const { QueueFullError, UnsupportedRequestError } = require('../errors');

// undici's keepAliveTimeout where freeSocketTimeout is 0 (no limit), and its
// keepAliveMaxTimeout: the longest a server's hint may keep a socket.
const NO_LIMIT_MS = 2 ** 31 - 1;

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
    // The proxy routes its requests go through, or null: direct.
    const routes = transport.proxies[this.scheme];
    this.proxy = routes !== null && routes.proxies({ host, port }) ? routes : null;
  }
}

// ---- the transport ------------------------------------------------------------------
/** The state of one dispatcher: options, origins, sockets, what was learned. */
class Transport {
  constructor(options, resendBuffered, entry = 'createDispatcher') {
    const sorted = sortOptions(options, entry);
    const normalized = normalizeOptions(sorted.agent);
    this.options = normalized;
    this.undiciOptions = sorted.undici;
    this.limitsOfSockets = new SocketLimits(this, {
      // The agent's default active timeout is not the transport's: undici's
      // headersTimeout and bodyTimeout bound a quiet response already.
      timeout: sorted.timeoutGiven ? normalized.timeout : 0,
      socketActiveTTL: normalized.socketActiveTTL,
      maxFreeSockets: normalized.maxFreeSockets ?? Infinity,
      maxTotalSockets: count('maxTotalSockets', normalized.maxTotalSockets, 1) ?? Infinity,
    });
    this.proxies = {
      http: createProxyRoutes(normalized.proxy, 'http:', null),
      https: createProxyRoutes(normalized.proxy, 'https:', null),
    };
    this.resendBuffered = resendBuffered;
    this.keepAlive = normalized.keepAlive;
    this.maxSockets = normalized.maxSockets ?? Infinity;
    this.maxQueue = normalized.maxQueue;
    this.queueTimeout = normalized.queueTimeout;
    this.margin = normalized.serverTimeoutMargin;
    this.uncapped = normalized.freeSocketTimeout === 0 ? Infinity : normalized.freeSocketTimeout;
    this.connectTimeout = ConnectTimeout.create(normalized.connectTimeout);
    // The learning engine; its probe of an origin is a trial of time here
    // ({ from, end }: see socket_state.js).
    this.engine = new LearningEngine(normalized.learnServerTimeout);
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
    this.connect = connector(this);
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
      ...this.undiciOptions,
      connect: this.connect,
      connections: Number.isFinite(this.maxSockets) ? this.maxSockets : null,
      keepAliveTimeout: options.freeSocketTimeout === 0 ? NO_LIMIT_MS : options.freeSocketTimeout,
      keepAliveMaxTimeout: this.undiciOptions.keepAliveMaxTimeout ?? NO_LIMIT_MS,
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

  /** The origin undici's connect `params` are for. */
  originOf(params) {
    const host = params.hostname.startsWith('[') ? params.hostname.slice(1, -1) : params.hostname;
    const port = Number(params.port || (params.protocol === 'https:' ? 443 : 80));
    return this.byName.get(`${host}:${port}:`) ?? this.origin(`${params.protocol}//${params.host ?? params.hostname}`);
  }

  /** Wraps `handler` and hands the request to undici. */
  dispatch(opts, handler) {
    if (opts.upgrade || opts.method === 'CONNECT') {
      throw new UnsupportedRequestError(opts.method === 'CONNECT' ? 'a CONNECT request' : 'an upgrade');
    }
    const key = opts.origin;
    const origin = this.origin(typeof key === 'string' ? key : String(key?.origin ?? key));
    // keepAlive: false: undici closes the connection after the response.
    if (!this.keepAlive) opts = { ...opts, reset: true };
    if (origin.proxy !== null && origin.scheme === 'http') opts = forwardRequest(opts, origin);
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
    if (!canResend(opts) && this.keepOff(origin, exchange)) return true;
    return this.send(opts, exchange);
  }

  /**
   * A request that cannot be sent again goes to `origin`, and undici may
   * hand it any idle socket: those that idled past a learned limit in doubt
   * are closed first, and the request is handed over once they have closed
   * (undici has let their connections go: undici 7 closes an origin's pool
   * whose last connection went while a request waited in it). Returns true
   * when it waits.
   */
  keepOff(origin, exchange) {
    const engine = this.engine;
    // No limit in doubt (a hint only lowers what a socket may idle, and undici keeps to it).
    if (origin.connections.size === 0 || engine.strictFreeTimeout(origin.name, this.uncapped, undefined, this.margin) === Infinity) return false;
    const at = now();
    let closing = 0;
    for (const state of origin.connections) {
      if (state.active || !state.connected || state.requestsFinished === 0 || state.socket.destroyed) continue;
      const idle = at - state.freedAt;
      if (idle < engine.strictFreeTimeout(origin.name, this.uncapped, state.hinted, this.margin)) continue;
      if (debug.enabled) debug('%s idle %d ms, past a learned limit in doubt: closed before a request that cannot be sent again', state.name, roundMs(idle));
      state.close(CLOSE_REASONS.FREE_TIMEOUT);
      closing++;
      state.socket.once('close', () => {
        if (--closing === 0) exchange.send(null);
      });
    }
    if (closing > 0 && engine.keptOff(origin.name) && debug.enabled) debug('%s: a lapsed idle limit no longer kept to', origin.name);
    return closing > 0;
  }

  /** A request after close(): refused, counted and published as the agent's are. */
  refused(opts) {
    const origin = this.origins.get(typeof opts.origin === 'string' ? opts.origin : String(opts.origin?.origin));
    if (origin !== undefined) this.noSocket(origin, 'refusedAfterClose', null, opts);
  }

  /**
   * The server closed `state`'s socket after `idleMs` idle (a collision when
   * found by a request). A close of our own (the dispatcher closing, a
   * socket we destroyed) is never evidence.
   */
  observe(state, idleMs, collision) {
    if (state.learnedFrom || state.closeReason !== null || this.closing) return;
    state.learnedFrom = true;
    const origin = state.origin;
    const engine = this.engine;
    const at = now();
    const verdict = collision
      ? engine.collided(origin.name, idleMs, at, state.hinted)
      : engine.closedIdle(origin.name, idleMs, at, state.hinted);
    if (verdict !== null && debug.enabled) {
      debug('%s closed by the server after %d ms idle%s: %s, %s', state.name, roundMs(idleMs), collision ? ' (a request failed on it)' : '', verdict.outcome, verdict.why);
    }
    this.report(origin, verdict);
  }

  /** A request on `state`'s socket failed as it closed, not a collision. */
  fault(state) {
    if (state.learnedFrom || state.closeReason !== null || this.closing) return;
    state.learnedFrom = true;
    this.report(state.origin, this.engine.failedInFlight(state.origin.name, now()));
  }

  /** A request reused `state`'s socket after idleBeforeReuse ms and got its response. */
  alive(state) {
    this.report(state.origin, this.engine.reused(state.origin.name, state.idleBeforeReuse));
  }

  /** `origin`'s trial, if its time is over at `at` with nothing confirming the limit: it lapses. */
  lapseDue(origin, at) {
    const trial = this.engine.probeOf(origin.name);
    if (trial === undefined || trial.end > at) return;
    const verdict = this.engine.trialLapsed(origin.name, trial);
    if (verdict !== null && debug.enabled) debug('%s: learned idle limit forgotten: %s', origin.name, verdict.why);
    this.report(origin, verdict);
  }

  /** What a verdict of the engine says: stats, the event, and the idle sockets' deadlines. */
  report(origin, verdict) {
    if (verdict === null) return;
    // A changed limit (or none) starts a new trial.
    if (verdict.outcome !== 'refused' && verdict.outcome !== 'held') this.engine.endProbe(origin.name, this.engine.probeOf(origin.name));
    const stats = origin.stats;
    stats.learned = verdict.ms === null ? null : Math.round(verdict.ms);
    stats.confidence = verdict.confidence;
    if (events.serverIdleLimit.hasSubscribers) {
      this.publish(events.serverIdleLimit, {
        ms: stats.learned, source: 'learned', confidence: stats.confidence, outcome: verdict.outcome, why: verdict.why,
      }, origin);
    }
    if (stats.learned === null) this.stats.settle(stats);
    // A confirmed limit caps the idle sockets freed without it.
    if (verdict.confidence === 'confirmed') {
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
    const limit = state.hinted ?? this.engine.limitOf(state.origin.name);
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
    if (this.dns !== null && origin.proxy === null) this.dns.untrack(origin.host);
    this.limitsOfSockets.closed(state);
    const reason = transportCloseReason(state.closeReason, this.closing, state.errored, state.serverClosed,
      !state.active && state.requestsFinished > 0);
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
      origins[origin.name] = origin.stats.toJSON(view, this.engine.evidenceOf(origin.name));
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
    this.limitsOfSockets.stop();
    unsubscribe();
  }
}

module.exports = { Transport };
