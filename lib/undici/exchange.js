'use strict';

// One request of the transport: the wrapper undici gets in place of the
// caller's handler (one per request, for either handler protocol), its queue
// timeout, and the helpers that read its body and headers. What we know and
// what we do:
//
// - The request a socket serves: undici calls the wrapper's onConnect /
//   onRequestStart, and the wrapper names itself as the request undici
//   writes next (./channel.js hands it to the socket's state).
// - A failure: undici hands the same error to the wrapper before any handler
//   of the caller's sees it: the wrapper judges it (through the transport:
//   the agent's rule), marks it as the agent marks its errors, learns from a
//   collision, closes the origin's peers that idled as long, and, where the
//   dispatcher resends, sends a replayable request with a buffered body once
//   more before the caller hears of the failure.
//
// The transport and the origin are instances the wrapper is given, never a
// require back.
const { willStart } = require('./channel');
// Every module of the agent this file uses, in one place.
const { parseKeepAlive } = require('../policy/keep_alive_header');
const { now } = require('../timers/clock');
const { isReplayable } = require('../retry');
const { isIdempotent } = require('../policy/stale_judgement');
const { channels: events } = require('../observe/channels');
const { QueueTimeoutError } = require('../errors');

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

/**
 * Whether a request could be sent again after meeting a closed connection:
 * idempotent or keyed (the agent's rule), with a body undici can write again.
 */
function canResend(opts) {
  const method = opts.method;
  // Nearly every request: a GET without a body.
  if (method === 'GET' && opts.body == null) return true;
  return bufferedBody(opts.body)
    && isIdempotent(method, headerValue(opts.headers, 'idempotency-key'), headerValue(opts.headers, 'x-idempotency-key'));
}

/**
 * `keep-alive` from undici's raw response headers (Buffers or strings), or
 * undefined; `exchange.closing` is set when `connection` says close. One
 * pass: both names have ten characters.
 */
function readRaw(exchange, raw) {
  let keepAlive;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    if (name.length !== 10) continue;
    const lower = name.toString().toLowerCase();
    if (lower === 'keep-alive') keepAlive = raw[i + 1].toString();
    else if (lower === 'connection') exchange.closing = saysClose(raw[i + 1].toString());
  }
  return keepAlive;
}

/** A `Connection` header's value (or values) that asks for the connection to close after the response. */
function saysClose(value) {
  if (Array.isArray(value)) return value.some(saysClose);
  return typeof value === 'string' && /(?:^|,)\s*close\s*(?:,|$)/i.test(value);
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
    this.closing = false; // the response says Connection: close: undici will not keep the socket
    this.waitedMs = -1; // its wait behind maxSockets, until the dequeued event names the socket
    this.failed = null; // an error we gave the handler before undici started the request
  }

  /** undici is about to write the request; false when we already failed it. */
  starting() {
    if (this.queuedAt !== 0) this.dequeued();
    if (this.failed !== null) return false;
    willStart(this);
    return true;
  }

  dequeued() {
    const origin = this.origin;
    const waitedMs = now() - this.queuedAt;
    origin.queued--;
    origin.stats.waited(waitedMs);
    // Published once the socket is known (SocketState#started).
    if (events.dequeued.hasSubscribers) this.waitedMs = waitedMs;
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
    state.notKept = this.closing;
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
      this.transport.noSocket(this.origin, 'leftQueue', now() - this.queuedAt, this.opts);
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
      if (events.resend.hasSubscribers) {
        this.transport.publish(events.resend, { method: this.opts.method, path: this.opts.path, error: err }, this.origin, state.socket);
      }
      queueMicrotask(() => this.send(err));
      return true;
    }
    this.origin.inFlight--;
    return false;
  }

  /**
   * Hands the request to undici, later than its dispatch (a resend, or once
   * the sockets it was kept off have closed); a dispatcher stopped meanwhile
   * fails it with `err` (its first failure), or with undici's own error.
   */
  send(err) {
    try {
      if (this.transport.stopped && err !== null) throw err;
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
  origin.transport.noSocket(origin, 'queueTimeouts', now() - exchange.queuedAt, exchange.opts);
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
    this.headers(rawHeaders, readRaw(this, rawHeaders));
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
    if (headers.connection !== undefined) this.closing = saysClose(headers.connection);
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

module.exports = { LegacyExchange, ControllerExchange, queueTimedOut, bufferedBody, headerValue, canResend };
