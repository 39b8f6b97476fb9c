'use strict';

// The native transport of both front doors: a subclass of an undici `Agent`
// class (the caller's npm undici for steady-agent/undici, the bundled one
// Node's fetch uses for steady-agent/fetch) whose sockets we make ourselves,
// through undici's `connect` option. undici keeps its own pools, parser and
// queue; we add, per request, one handler wrapper, and per socket, one state
// object. What we know and what we do:
//
// - A socket's life: made in connect() (dns, connectTimeout, TCP keep-alive);
//   active from the moment undici writes a request on it (the
//   `undici:client:sendHeaders` channel, the only channel we subscribe to:
//   it names the socket); idle from the request's end (the wrapper's
//   onComplete / onResponseEnd); closed (its 'close', with the reason read
//   from what we saw: the server's FIN or an error, our own close, undici's
//   idle timeout).
// - The request a socket serves: undici calls the handler's onConnect /
//   onRequestStart and then, synchronously and on the same socket, publishes
//   sendHeaders; the wrapper leaves itself in `starting` in between (checked
//   on undici 5.28 to 8).
// - A failure: undici hands the same error to the wrapper before any handler
//   of the caller's sees it: the wrapper judges it (lib/stale_judgement.js,
//   the agent's rule), marks it as the agent marks its errors, learns from a
//   collision, closes the origin's peers that idled as long, and, where the
//   dispatcher resends, sends a replayable request with a buffered body once
//   more before the caller hears of the failure.
// - Idle limits: undici closes an idle socket itself after keepAliveTimeout
//   (our freeSocketTimeout) or the server's hint less
//   keepAliveTimeoutThreshold (our serverTimeoutMargin). A learned limit
//   (lib/server_limits.js: the agent's rules, fed the same facts: idle
//   closes by the server, collisions, faults, and the longest idle time
//   after which a reused socket got its response) closes it sooner, by one
//   lazy timer per socket, armed only for origins with a learned limit.
//   Destroying an idle socket is safe for undici: it drops the client's
//   connection and opens another for the next request.
// - Trying a learned limit: undici cannot take an idle socket out of its
//   pool, so no socket can stay open past the limit where no request gets
//   it, as the agent's probe does. Instead the trial is one of time: the
//   first socket to reach the limit starts it (atDeadline's 'probe'), and
//   once probeBound has passed since that socket was freed with no server
//   close or collision confirming the limit, it lapses (refute(..., probe)):
//   forgotten, held, and tested by the next requests, which reuse sockets
//   past it. A real limit shows again as a collision after longer idle,
//   which confirms the held one; a one-off reset never does.
//
// Not here: socketActiveTTL, maxFreeSockets, proxies.
const dc = require('node:diagnostics_channel');
const net = require('node:net');
const tls = require('node:tls');
// Every module of the agent this transport uses, in one place.
const { normalizeOptions } = require('../options/normalize');
const { OriginTable } = require('../observe/stats');
const { ServerLimits } = require('../policy/server_limits');
const { idleAllowance, atDeadline, capOf } = require('../policy/free_timeout');
const { judgeFailure } = require('../policy/stale_judgement');
const { markError } = require('../agent/stale_marks');
const { parseKeepAlive } = require('../policy/keep_alive_header');
const { ConnectTimeout } = require('../connect/connect_timeout');
const { now } = require('../timers/clock');
const { isReplayable } = require('../retry');
const { CLOSE_REASONS } = require('../policy/close_reasons');
const { channels: events, publish } = require('../observe/channels');
const { QueueFullError, QueueTimeoutError, UnsupportedRequestError } = require('../errors');

// undici's keepAliveTimeout where freeSocketTimeout is 0 (no limit), and its
// keepAliveMaxTimeout: the longest a server's hint may keep a socket.
const NO_LIMIT_MS = 2 ** 31 - 1;

// The agent's options tls.connect takes, as https.Agent passes them on.
const TLS_OPTIONS = Object.freeze([
  'ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'ciphers', 'ecdhCurve', 'crl', 'sigalgs',
  'minVersion', 'maxVersion', 'secureOptions', 'secureProtocol', 'honorCipherOrder', 'dhparam', 'sessionIdContext',
  'privateKeyEngine', 'privateKeyIdentifier', 'checkServerIdentity', 'clientCertEngine', 'family', 'hints',
]);

// The no-socket event's outcome per getStats() counter, as the agent names them.
const NO_SOCKET_OUTCOMES = Object.freeze({ queueFull: 'queue-full', queueTimeouts: 'queue-timeout', leftQueue: 'left-queue' });

// ---- the one channel, shared by every transport of the process ---------------

// Held: on Node 18 a channel nobody holds may be collected with its subscribers.
const sendHeaders = dc.channel('undici:client:sendHeaders');
const states = new WeakMap(); // our sockets -> SocketState
let subscribers = 0;
// The wrapper whose request undici is about to write (set in its onConnect).
let starting = null;

function onSendHeaders(message) {
  const state = states.get(message.socket);
  if (state === undefined) return;
  const exchange = starting;
  starting = null;
  if (exchange !== null) state.started(exchange);
}

function subscribe() {
  if (subscribers++ === 0) dc.subscribe(sendHeaders.name, onSendHeaders);
}

function unsubscribe() {
  if (--subscribers === 0) dc.unsubscribe(sendHeaders.name, onSendHeaders);
}

// ---- bodies and headers ---------------------------------------------------------

/** A body undici can write again as it is: none, a string or bytes. */
function bufferedBody(body) {
  return body === undefined || body === null || typeof body === 'string' || ArrayBuffer.isView(body) || body instanceof ArrayBuffer;
}

/** A request header's value, from any of the forms undici takes (object, flat array, iterable of pairs). */
function headerValue(headers, lower) {
  if (headers == null) return undefined;
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) {
      for (const [name, value] of headers) if (String(name).toLowerCase() === lower) return value;
      return undefined;
    }
    for (let i = 0; i < headers.length; i += 2) if (String(headers[i]).toLowerCase() === lower) return headers[i + 1];
    return undefined;
  }
  if (typeof headers[Symbol.iterator] === 'function') {
    for (const [name, value] of headers) if (String(name).toLowerCase() === lower) return value;
    return undefined;
  }
  for (const name in headers) if (name.toLowerCase() === lower) return headers[name];
  return undefined;
}

/** `keep-alive` from undici's raw response headers (Buffers or strings), or undefined. */
function rawKeepAlive(raw) {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length === 10 && name.toString().toLowerCase() === 'keep-alive') return raw[i + 1].toString();
  }
  return undefined;
}

// ---- one socket -------------------------------------------------------------------

class SocketState {
  constructor(origin, socket, secure) {
    this.origin = origin;
    this.socket = socket;
    this.secure = secure;
    this.createdAt = now();
    this.connectMs = 0;
    this.connected = false;
    this.active = false;
    this.requestsFinished = 0;
    this.freedAt = this.createdAt;
    this.idleBeforeReuse = 0;
    this.requestStartedAt = 0;
    this.bytesReadWhenFreed = 0;
    this.hinted = undefined; // ms, the server's Keep-Alive timeout
    this.exchange = null; // the request it serves
    this.serverClosed = false; // FIN from the server
    this.errored = false;
    this.closeReason = null; // ours, when we closed it
    this.learnedFrom = false; // its close was weighed already
    this.deadline = Infinity; // when an idle socket goes, by a learned limit
    this.allowedMs = Infinity; // the idle time that deadline allows
    this.timer = null;
  }

  /** undici wrote `exchange`'s request on the socket. */
  started(exchange) {
    const at = now();
    this.active = true;
    this.exchange = exchange;
    exchange.state = this;
    this.requestStartedAt = at;
    this.idleBeforeReuse = this.requestsFinished > 0 ? at - this.freedAt : 0;
    if (this.requestsFinished > 0) {
      this.origin.stats.reusedRequests++;
      if (events.reuse.hasSubscribers) this.origin.transport.publish(events.reuse, {}, this.origin, this.socket);
    }
  }

  /** Its request ended: idle from now, until the next or a limit. */
  finished() {
    const at = now();
    this.active = false;
    this.exchange = null;
    this.requestsFinished++;
    this.freedAt = at;
    this.bytesReadWhenFreed = this.socket.bytesRead;
    const origin = this.origin;
    origin.stats.requests++;
    const transport = origin.transport;
    if (events.free.hasSubscribers) transport.publish(events.free, {}, origin, this.socket);
    if (this.idleBeforeReuse > 0) transport.alive(this, at);
    if (origin.trialEnd <= at) transport.lapse(origin, at);
    this.arm();
  }

  /**
   * Sets the idle socket's deadline. undici closes the socket itself after
   * freeSocketTimeout, or, where the server hinted, after the hint less the
   * margin: a timer of ours only where a shorter limit applies (a learned
   * one, or freeSocketTimeout under a longer hint).
   */
  arm() {
    const origin = this.origin;
    const transport = origin.transport;
    const cap = transport.limits.size === 0 ? undefined : capOf(transport.limits.peek(origin.name), origin.trialEnd !== Infinity);
    const hinted = this.hinted;
    this.allowedMs = Infinity;
    if (cap === undefined && (hinted === undefined || hinted - transport.margin <= transport.uncapped)) return;
    const allowed = idleAllowance(transport.uncapped, hinted, cap, transport.margin);
    if (allowed.limitedBy === 'hint' || (allowed.limitedBy === null && hinted === undefined)) return;
    this.allowedMs = allowed.timeout;
    this.deadline = this.freedAt + allowed.timeout;
    if (this.timer === null) this.timer = setTimeout(idleCheck, Math.max(this.deadline - now(), 1), this);
  }

  /** Closes the socket now, for `reason` (the first reason given wins). */
  close(reason) {
    this.closeReason ??= reason;
    this.socket.destroy();
  }
}

// One lazy timer per socket: a socket busy again when it fires lets it go
// (finished() arms the next); one still idle before its deadline waits on.
// At the deadline, the limits as they are now decide (atDeadline): close
// it, wait longer (a limit lapsed or is on trial), or close it and start the
// origin's trial (see the header: the socket cannot be kept as a probe).
function idleCheck(state) {
  state.timer = null;
  if (state.active || state.socket.destroyed || state.allowedMs === Infinity) return;
  const at = now();
  const left = state.deadline - at;
  if (left > 0) {
    state.timer = setTimeout(idleCheck, Math.max(left, 1), state);
    return;
  }
  const origin = state.origin;
  const transport = origin.transport;
  if (origin.trialEnd <= at) transport.lapse(origin, at);
  const record = transport.limits.size === 0 ? undefined : transport.limits.peek(origin.name);
  const decision = atDeadline(transport.uncapped, state.hinted, record, origin.trialEnd !== Infinity, transport.margin, state.allowedMs);
  if (decision.action === 'wait') {
    state.arm();
    return;
  }
  if (decision.action === 'probe') {
    origin.trialFrom = state.freedAt;
    origin.trialEnd = state.freedAt + decision.bound;
  }
  state.close(CLOSE_REASONS.FREE_TIMEOUT);
}

// Socket listeners, named: `this` is the socket.
// An idle socket the server closed (a FIN, or a reset) is an observation,
// unless bytes came while it was idle: a server that misbehaved says nothing
// of when it closes idle sockets.
function idleClose(state) {
  if (!state.active && state.connected && state.requestsFinished > 0 && state.socket.bytesRead === state.bytesReadWhenFreed) {
    state.origin.transport.observe(state, now() - state.freedAt, false);
  }
}

function onSocketEnd() {
  const state = states.get(this);
  if (!state.serverClosed && !state.errored) idleClose(state);
  state.serverClosed = true;
}

function onSocketError() {
  const state = states.get(this);
  if (!state.errored && !state.serverClosed) idleClose(state);
  state.errored = true;
}

function onSocketClose() {
  const state = states.get(this);
  state.origin.transport.closed(state);
}

// ---- one origin ---------------------------------------------------------------------

class Origin {
  constructor(transport, key, host, port) {
    this.transport = transport;
    this.key = key; // undici's origin, as the requests name it
    this.name = `${host}:${port}:`; // the agent's pool name
    this.scheme = key.startsWith('https:') ? 'https' : 'http';
    this.host = host;
    this.port = port;
    this.sockets = new Set();
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

// ---- one request ---------------------------------------------------------------------

/** What both handler protocols' wrappers share: the request's facts and our judgement of its failure. */
class Exchange {
  constructor(transport, opts, handler, origin) {
    this.transport = transport;
    this.opts = opts;
    this.handler = handler;
    this.origin = origin;
    this.state = null; // the socket's, once undici wrote the request
    this.responded = false;
    this.resent = false;
    this.queuedAt = 0;
    this.queueTimer = null;
    this.failed = null; // an error we gave the handler before undici started the request
  }

  /** undici is about to write the request; false when we already failed it. */
  starting() {
    if (this.queuedAt !== 0) this.dequeued();
    if (this.failed !== null) return false;
    starting = this;
    return true;
  }

  dequeued() {
    const origin = this.origin;
    const waitedMs = now() - this.queuedAt;
    origin.queued--;
    origin.stats.waited(waitedMs);
    if (events.dequeued.hasSubscribers) this.transport.publish(events.dequeued, { waitedMs }, origin);
    this.queuedAt = 0;
    if (this.queueTimer !== null) {
      clearTimeout(this.queueTimer);
      this.queueTimer = null;
    }
  }

  headers(raw, keepAlive) {
    this.responded = true;
    const state = this.state;
    if (state === null) return;
    const hint = keepAlive === undefined ? undefined : parseKeepAlive(keepAlive)?.timeout;
    const ms = hint === undefined ? undefined : hint * 1000;
    state.hinted = ms;
    const stats = this.origin.stats;
    if (stats.announced !== (ms ?? null)) this.transport.announced(this.origin, ms ?? null);
  }

  /** The response ended. */
  ended() {
    this.origin.inFlight--;
    const state = this.state;
    if (state !== null) state.finished();
  }

  /**
   * The request failed with `err`: marks it when it met a reused socket, and
   * returns true when it was sent again instead of reaching the handler.
   */
  failedWith(err) {
    const state = this.state;
    this.state = null;
    if (this.queuedAt !== 0) {
      this.origin.queued--;
      this.transport.noSocket(this.origin, 'leftQueue', now() - this.queuedAt);
      this.queuedAt = 0;
      clearTimeout(this.queueTimer);
    }
    if (state !== null) {
      state.active = false;
      state.exchange = null;
      this.origin.stats.errors++;
      const collision = !this.responded && this.transport.judge(state, this, err);
      // Failed as its connection closed, and not a collision: a fault (with
      // other closes at once, a restart).
      if (!collision && (state.serverClosed || state.errored)) this.transport.fault(state);
    }
    if (this.transport.resendBuffered && !this.resent && !this.responded && state !== null &&
        bufferedBody(this.opts.body) && isReplayable(err)) {
      this.resent = true;
      // After undici's own handling of the close: undici 7.30's Agent closes
      // an origin's pool when its last connection goes, in the same tick,
      // and a request sent to it now would end that pool's next socket.
      queueMicrotask(() => this.resend(err));
      return true;
    }
    this.origin.inFlight--;
    return false;
  }

  /** Sends the request again; a dispatcher stopped meanwhile fails it with `err`, its first failure. */
  resend(err) {
    try {
      if (this.transport.stopped) throw err;
      this.transport.send(this.opts, this);
    } catch (error) {
      this.origin.inFlight--;
      this.error(error);
    }
  }

  /** Fails the request before undici started it (queueTimeout): the handler hears now, undici's abort comes at its start. */
  failEarly(err) {
    this.failed = err;
    this.origin.inFlight--;
    this.error(err);
  }
}

function queueTimedOut(exchange) {
  exchange.queueTimer = null;
  const origin = exchange.origin;
  origin.queued--;
  origin.transport.noSocket(origin, 'queueTimeouts', now() - exchange.queuedAt);
  exchange.queuedAt = 0;
  exchange.failEarly(new QueueTimeoutError(exchange.transport.queueTimeout));
}

/** A wrapper for a handler of undici's first protocol (onConnect, onHeaders, onData, onComplete, onError). */
class LegacyExchange extends Exchange {
  onConnect(abort, context) {
    if (!this.starting()) {
      abort(this.failed);
      return;
    }
    return this.handler.onConnect?.(abort, context);
  }

  onResponseStarted() {
    return this.handler.onResponseStarted?.();
  }

  onBodySent(chunk) {
    return this.handler.onBodySent?.(chunk);
  }

  onRequestSent() {
    return this.handler.onRequestSent?.();
  }

  onHeaders(statusCode, rawHeaders, resume, statusText) {
    this.headers(rawHeaders, rawKeepAlive(rawHeaders));
    return this.handler.onHeaders(statusCode, rawHeaders, resume, statusText);
  }

  onData(chunk) {
    return this.handler.onData(chunk);
  }

  onComplete(trailers) {
    this.ended();
    return this.handler.onComplete(trailers);
  }

  onError(err) {
    if (this.failed !== null) return;
    if (this.failedWith(err)) return;
    this.handler.onError(err);
  }

  error(err) {
    this.handler.onError(err);
  }
}

/** A wrapper for a handler of undici's controller protocol (onRequestStart ... onResponseError). */
class ControllerExchange extends Exchange {
  onRequestStart(controller, context) {
    if (!this.starting()) {
      controller.abort(this.failed);
      return;
    }
    return this.handler.onRequestStart?.(controller, context);
  }

  onResponseStarted() {
    return this.handler.onResponseStarted?.();
  }

  onRequestSent() {
    return this.handler.onRequestSent?.();
  }

  onResponseStart(controller, statusCode, headers, statusText) {
    const keepAlive = headers['keep-alive'];
    this.headers(null, Array.isArray(keepAlive) ? keepAlive[0] : keepAlive);
    return this.handler.onResponseStart?.(controller, statusCode, headers, statusText);
  }

  onResponseData(controller, chunk) {
    return this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller, trailers) {
    this.ended();
    return this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller, err) {
    if (this.failed !== null) return;
    if (this.failedWith(err)) return;
    this.handler.onResponseError?.(controller, err);
  }

  error(err) {
    this.handler.onResponseError?.(null, err);
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
    this.dns = null;
    if (normalized.dns !== undefined) {
      const { DnsCache } = require('../dns/cache');
      this.dns = new DnsCache(normalized.dns, { agent: this, onChange: () => {} });
    }
    this.dispatcher = null;
    this.send = null; // undici's own dispatch, bound to the dispatcher
    this.closing = false;
    this.stopped = false;
    this.connect = this.connect.bind(this);
    subscribe();
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
        this.noSocket(origin, 'queueFull', null);
        exchange.error(new QueueFullError(this.maxQueue));
        return true;
      }
      origin.queued++;
      origin.stats.queued();
      exchange.queuedAt = now();
      if (this.queueTimeout > 0) exchange.queueTimer = setTimeout(queueTimedOut, this.queueTimeout, exchange);
    }
    origin.inFlight++;
    return this.send(opts, exchange);
  }

  /** undici's connect: a socket of ours, connected. */
  connect(params, callback) {
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
      socket = tls.connect(tlsOptions);
    } else {
      socket = net.connect(connectOptions);
    }
    const state = new SocketState(origin, socket, secure);
    states.set(socket, state);
    origin.sockets.add(state);
    origin.stats.socketsCreated++;
    if (this.dns !== null) this.dns.track(host);
    socket.setNoDelay(true);
    if (options.tcpKeepAlive) socket.setKeepAlive(true, options.keepAliveMsecs);
    socket.on('end', onSocketEnd);
    socket.on('error', onSocketError);
    socket.on('close', onSocketClose);
    this.connectTimeout?.watch(socket);
    const ready = () => {
      socket.removeListener('error', failed);
      state.connected = true;
      state.connectMs = now() - state.createdAt;
      state.freedAt = now();
      if (events.create.hasSubscribers) this.publish(events.create, {}, origin, socket);
      callback(null, socket);
    };
    const failed = (err) => {
      socket.removeListener(secure ? 'secureConnect' : 'connect', ready);
      callback(err, null);
    };
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
    // As if the socket that started the trial were still open, idle since it was freed.
    const refuted = this.limits.refute(origin.name, at - origin.trialFrom, at, true);
    if (refuted !== null) this.report(origin, refuted);
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
      for (const other of origin.sockets) {
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
    for (const other of state.origin.sockets) {
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
    origin.sockets.delete(state);
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
    this.stats.settle(stats);
  }

  /** A request left without a socket: its counter, and the no-socket event (outcome as the agent names it). */
  noSocket(origin, counter, waitedMs) {
    origin.stats.noSocket(counter, waitedMs);
    if (events.noSocket.hasSubscribers) this.publish(events.noSocket, { outcome: NO_SOCKET_OUTCOMES[counter], waitedMs: waitedMs ?? 0 }, origin);
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
      for (const state of origin.sockets) {
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
      for (const state of origin.sockets) {
        if (state.timer !== null) clearTimeout(state.timer);
        state.timer = null;
      }
    }
    if (this.dns !== null) this.dns.stop();
    unsubscribe();
  }
}

const classes = new WeakMap();

/**
 * The dispatcher class over `Agent` (an undici Agent class), made once per
 * class: an Agent whose sockets and requests go through a Transport.
 */
function transportClass(Agent, name = 'SteadyDispatcher', errors = {}) {
  const { ClientClosedError } = errors;
  let Class = classes.get(Agent);
  if (Class !== undefined) return Class;
  const holder = {
    [name]: class extends Agent {
      #transport;
      #done = null;
      #closedOnly = false; // close(), not destroy(): undici's close ends in a destroy of its own

      constructor(options, { resendBuffered = false } = {}) {
        const transport = new Transport(options, resendBuffered);
        try {
          super(transport.agentOptions());
        } catch (err) {
          transport.stop();
          throw err;
        }
        transport.dispatcher = this;
        transport.send = (opts, handler) => super.dispatch(opts, handler);
        this.#transport = transport;
      }

      dispatch(opts, handler) {
        if (handler === null || typeof handler !== 'object' || opts === null || typeof opts !== 'object' || this.closed || this.destroyed) {
          if (!this.#closedOnly || ClientClosedError === undefined || handler === null || typeof handler !== 'object') return super.dispatch(opts, handler);
          // A request after close() fails as undici's own Agent would before its destroy.
          const err = new ClientClosedError();
          if (typeof handler.onRequestStart === 'function') handler.onResponseError?.(null, err);
          else handler.onError(err);
          return true;
        }
        try {
          return this.#transport.dispatch(opts, handler);
        } catch (err) {
          if (typeof handler.onRequestStart === 'function') handler.onResponseError?.(null, err);
          else handler.onError(err);
          return true;
        }
      }

      /** Counters per origin, in the agent's getStats() shape. */
      getStats() {
        return this.#transport.getStats();
      }

      /** Graceful: requests in flight end, then every socket closes. Callback or promise, as undici's. */
      close(callback) {
        this.#closedOnly = this.#done === null;
        return this.#end(() => {
          this.#transport.closing = true;
          // undici's close() without a callback calls close(callback): ours.
          return new Promise((resolve, reject) => super.close((err) => (err ? reject(err) : resolve())));
        }, callback);
      }

      /** Ends every request and socket now. */
      destroy(err, callback) {
        if (typeof err === 'function') {
          callback = err;
          err = null;
        }
        // undici's close() ends by calling destroy(): that one is undici's.
        if (this.#done !== null) return super.destroy(err ?? null, callback);
        this.#closedOnly = false;
        return this.#end(() => {
          this.#transport.closing = true;
          return new Promise((resolve, reject) => super.destroy(err ?? null, (error) => (error ? reject(error) : resolve())));
        }, callback);
      }

      #end(end, callback) {
        this.#done ??= end().then(() => this.#transport.stop());
        if (typeof callback === 'function') {
          this.#done.then(() => callback(null, null), callback);
          return undefined;
        }
        return this.#done;
      }
    },
  };
  Class = holder[name];
  classes.set(Agent, Class);
  return Class;
}

module.exports = { transportClass, bufferedBody };
