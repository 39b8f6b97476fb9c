'use strict';

// The one adapter between undici's dispatcher protocol and the agent: an
// object with `dispatch(opts, handler)` that sends the request with
// http.request / https.request through an HttpAgent / HttpsAgent of its own,
// and drives the handler undici gave it. Node's bundled fetch (undici 5.28
// to 8) and npm's undici (6 to 8) call `dispatch` this way; because the
// request then goes through the agent, every guarantee of the agent
// (learned limits, the hint, the free timeout, stale marks, dns,
// connectTimeout, maxSockets, the queue, stats, events, close) holds as it
// does for http.request, on its own connections only.
//
// Two handler protocols exist, and a handler implements one of them:
//   legacy (undici 5 to 7):  onConnect(abort), onHeaders(status, rawHeaders,
//     resume, statusText) -> false pauses, onData(chunk) -> false pauses,
//     onComplete(rawTrailers), onError(err);
//   controller (undici 7 and 8): onRequestStart(controller, context),
//     onResponseStart(controller, status, headers, statusText),
//     onResponseData(controller, chunk), onResponseEnd(controller, trailers),
//     onResponseError(controller, err); controller.pause/resume/abort.
// A handler with onRequestStart speaks the second (undici 7's own
// UnwrapHandler decides the same way). Raw headers are Buffers, as undici's
// parser gives them: its fetch lower-cases names from Buffer bytes.
//
// No resend here: steady-agent/fetch, its one user, resends at its own level
// (fetch hands every body over as an async iterable, read once).
const http = require('node:http');
const https = require('node:https');
const { pipeline } = require('node:stream');
// Every module of the agent this transport uses, in one place.
const { HttpAgent, HttpsAgent } = require('../../index');
const { UnsupportedRequestError } = require('../errors');

/** Node's raw header strings as the Buffers undici's handlers expect. */
function rawBuffers(raw) {
  const out = new Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = Buffer.from(raw[i], 'latin1');
  return out;
}

/** `{ name: value }`, names lower-cased, a repeated name's values in an array (undici's parseHeaders). */
function headerObject(raw) {
  const out = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    const value = raw[i + 1];
    // Own values only: out.__proto__ would read the prototype.
    const known = Object.hasOwn(out, name) ? out[name] : undefined;
    if (known === undefined) {
      if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, configurable: true, writable: true });
      else out[name] = value;
    } else if (Array.isArray(known)) known.push(value);
    else out[name] = [known, value];
  }
  return out;
}

/**
 * undici's request headers (an object of strings or string arrays, a flat
 * [name, value, ...] array, or an iterable of [name, value] pairs) as an
 * object for http.request: the agent reads Idempotency-Key through
 * req.getHeader, which a raw array would hide.
 */
function requestHeaders(headers) {
  if (headers == null) return {};
  const out = {};
  const add = (name, value) => {
    if (value === undefined || value === null) return;
    const key = String(name).toLowerCase();
    const known = out[key];
    if (known === undefined) out[key] = Array.isArray(value) ? value.map(String) : String(value);
    else out[key] = [].concat(known, value);
  };
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) for (const [name, value] of headers) add(name, value);
    else for (let i = 0; i < headers.length; i += 2) add(headers[i], headers[i + 1]);
  } else if (typeof headers[Symbol.iterator] === 'function') {
    for (const [name, value] of headers) add(name, value);
  } else {
    for (const name of Object.keys(headers)) add(name, headers[name]);
  }
  return out;
}

/** A body http.request can write again as it was: none, a string or bytes. */
function bufferedBody(body) {
  return body === undefined || body === null || typeof body === 'string' || ArrayBuffer.isView(body);
}

/** Writes an async iterable's chunks to `req`, waiting for 'drain'; stops if the request ends first. */
async function writeIterable(req, body) {
  for await (const chunk of body) {
    if (req.destroyed) return;
    if (!req.write(chunk)) {
      await new Promise((resolve) => {
        const done = () => {
          req.removeListener('drain', done);
          req.removeListener('close', done);
          resolve();
        };
        req.on('drain', done);
        req.on('close', done);
      });
    }
  }
  if (!req.destroyed) req.end();
}

/** Sends `body` on `req`; a body that fails destroys the request with its error. */
function sendBody(req, body) {
  if (bufferedBody(body)) {
    req.end(body ?? undefined);
  } else if (typeof body.pipe === 'function' && typeof body.on === 'function') {
    pipeline(body, req, () => {});
  } else if (typeof body[Symbol.asyncIterator] === 'function' || typeof body[Symbol.iterator] === 'function') {
    writeIterable(req, body).catch((err) => req.destroy(err));
  } else if (typeof body.stream === 'function' && typeof body.arrayBuffer === 'function') {
    writeIterable(req, body.stream()).catch((err) => req.destroy(err)); // a Blob
  } else {
    req.destroy(new UnsupportedRequestError(`a body of type ${Object.prototype.toString.call(body)}`));
  }
}

/** The controller handed to a handler of the controller protocol. */
class Controller {
  #exchange;
  paused = false;
  aborted = false;
  reason = null;
  rawHeaders = null;
  rawTrailers = null;

  constructor(exchange) {
    this.#exchange = exchange;
  }

  pause() {
    this.paused = true;
    this.#exchange.pause();
  }

  resume() {
    if (!this.paused) return;
    this.paused = false;
    this.#exchange.resume();
  }

  abort(reason) {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.#exchange.abort(reason);
  }
}

/** One request and its handler, from dispatch to the handler's last call. */
class Exchange {
  #dispatcher;
  #opts;
  #handler;
  #modern;
  #controller = null;
  #req = null;
  #res = null;
  #settled = false;

  constructor(dispatcher, opts, handler) {
    this.#dispatcher = dispatcher;
    this.#opts = opts;
    this.#handler = handler;
    this.#modern = typeof handler.onRequestStart === 'function';
  }

  start() {
    const opts = this.#opts;
    let target;
    try {
      if (opts.upgrade || opts.method === 'CONNECT') {
        throw new UnsupportedRequestError(opts.method === 'CONNECT' ? 'a CONNECT request' : 'an upgrade');
      }
      target = this.#target();
    } catch (err) {
      this.#fail(err);
      return;
    }
    if (this.#modern) {
      this.#controller = new Controller(this);
      this.#call(() => this.#handler.onRequestStart(this.#controller, {}));
    } else if (typeof this.#handler.onConnect === 'function') {
      this.#call(() => this.#handler.onConnect((reason) => this.abort(reason), {}));
    }
    if (this.#settled) return;
    this.#send(target);
  }

  #target() {
    const opts = this.#opts;
    const origin = new URL(opts.origin);
    let path = opts.path ?? '/';
    if (opts.query != null) {
      const query = new URLSearchParams(opts.query).toString();
      if (query !== '') path += (path.includes('?') ? '&' : '?') + query;
    }
    const hostname = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
    const secure = origin.protocol === 'https:';
    if (!secure && origin.protocol !== 'http:') throw new UnsupportedRequestError(`the protocol ${origin.protocol}`);
    const options = {
      protocol: origin.protocol,
      hostname,
      port: origin.port || (secure ? 443 : 80),
      path,
      method: opts.method ?? 'GET',
      headers: requestHeaders(opts.headers),
      agent: secure ? this.#dispatcher.https : this.#dispatcher.http,
    };
    return { send: secure ? https.request : http.request, options };
  }

  #send(target) {
    let req;
    try {
      req = target.send(target.options);
    } catch (err) {
      this.#fail(err);
      return;
    }
    this.#req = req;
    req.on('response', (res) => this.#response(res));
    req.on('error', (err) => this.#fail(err));
    sendBody(req, this.#opts.body);
  }

  #response(res) {
    if (this.#settled) {
      res.destroy();
      return;
    }
    this.#res = res;
    res.on('error', (err) => this.#fail(err));
    res.on('close', () => {
      if (!this.#settled) this.#fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    });
    const handler = this.#handler;
    const raw = rawBuffers(res.rawHeaders);
    const proceed = this.#call(() => {
      if (typeof handler.onResponseStarted === 'function') handler.onResponseStarted();
      if (this.#modern) {
        this.#controller.rawHeaders = raw;
        handler.onResponseStart?.(this.#controller, res.statusCode, headerObject(res.rawHeaders), res.statusMessage);
        return !this.#controller.paused;
      }
      return handler.onHeaders(res.statusCode, raw, () => this.resume(), res.statusMessage);
    });
    if (this.#settled) return;
    if (proceed === false) res.pause();
    res.on('data', (chunk) => {
      if (this.#settled) return;
      const more = this.#call(() => {
        if (!this.#modern) return handler.onData(chunk);
        handler.onResponseData?.(this.#controller, chunk);
        return !this.#controller.paused;
      });
      if (more === false && !this.#settled) res.pause();
    });
    res.on('end', () => {
      if (this.#settled) return;
      this.#settled = true;
      const trailers = res.rawTrailers;
      this.#call(() => {
        if (!this.#modern) return handler.onComplete(rawBuffers(trailers));
        this.#controller.rawTrailers = rawBuffers(trailers);
        return handler.onResponseEnd?.(this.#controller, headerObject(trailers));
      }, true);
    });
  }

  pause() {
    this.#res?.pause();
  }

  resume() {
    if (!this.#settled) this.#res?.resume();
  }

  abort(reason) {
    if (this.#settled) return;
    const err = reason ?? Object.assign(new Error('Request aborted'), { name: 'AbortError', code: 'UND_ERR_ABORTED' });
    this.#fail(err);
    if (this.#res !== null) this.#res.destroy();
    else this.#req?.destroy();
  }

  /** Runs a handler callback; one that throws fails the request with its error, as undici does. */
  #call(fn, afterEnd = false) {
    try {
      return fn();
    } catch (err) {
      if (afterEnd) throw err;
      this.abort(err);
      return false;
    }
  }

  #fail(err) {
    if (this.#settled) return;
    this.#settled = true;
    const handler = this.#handler;
    if (this.#modern) handler.onResponseError?.(this.#controller, err);
    else handler.onError(err);
    if (this.#res !== null && !this.#res.destroyed) this.#res.destroy();
  }
}

/**
 * The transport both front doors share: an HttpAgent and an HttpsAgent made
 * from `options` (validated by the agent, as for `new HttpAgent(options)`),
 * and undici's `dispatch`.
 */
class AgentDispatch {
  constructor(options) {
    this.http = new HttpAgent(options);
    this.https = new HttpsAgent(options);
  }

  dispatch(opts, handler) {
    new Exchange(this, opts, handler).start();
    return true;
  }

  /** The agents' getStats(), merged: `{ origins }`, and `dns` with the dns option. */
  getStats() {
    const plain = this.http.getStats();
    const secure = this.https.getStats();
    const stats = { origins: { ...plain.origins, ...secure.origins } };
    if (plain.dns !== undefined || secure.dns !== undefined) stats.dns = { ...plain.dns, ...secure.dns };
    return stats;
  }

  close() {
    return Promise.all([this.http.close(), this.https.close()]).then(() => undefined);
  }

  destroy() {
    this.http.destroy();
    this.https.destroy();
  }
}

module.exports = { AgentDispatch, bufferedBody, requestHeaders, headerObject };
