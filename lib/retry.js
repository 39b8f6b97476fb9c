'use strict';

// `steady-agent/retry`: resending the requests the keep-alive race still
// takes. The agent marks the error of a request that failed on a reused
// socket before any byte of its response;
// `replayable` says the server closed the connection while it sat idle, so
// it never saw the request, and the request may be sent twice with the
// effect of once. This module finds that mark and resends, once and at once
// by default, nothing else:
//
//   isReplayable(err)        the mark, on the error or along its `cause` chain
//   axiosRetryOptions()      options for axios-retry (which does the retrying)
//   gotRetryOptions()        options for got (which does the retrying)
//   wrapFetch(fetch)         node-fetch v2 or v3, resending itself
//   request(url, options)    http.request / https.request as a promise
//
// Client libraries wrap the error (axios's AxiosError keeps it as `cause`);
// got 13's RequestError and node-fetch's FetchError keep nothing of it, so
// the helpers for those two catch the request's own error on its way and
// set it as the `cause` of the error the caller gets.
//
// A body that is a stream is read once: a request with one is never resent.
// Nothing here loads axios, axios-retry, got or node-fetch.
const http = require('node:http');
const https = require('node:https');
const { setTimeout: sleep } = require('node:timers/promises');
const { count, duration } = require('./options/grammar');
const { InvalidOptionTypeError } = require('./errors');

// Deep enough for any wrapper of a wrapper; a cycle ends here too.
const MAX_CAUSE_DEPTH = 16;

const SETTINGS = new Set(['retries', 'delay', 'onRetry']);

/**
 * True when the agent judged `err` (or an error along its `cause` chain) a
 * request lost to a connection the server had closed while idle, and the
 * request idempotent. Anything that is not such an error, a cycle of causes
 * included, is false.
 * @param {unknown} err
 * @returns {boolean}
 */
function isReplayable(err) {
  let current = err;
  try {
    for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) {
      if (current === null || typeof current !== 'object') return false;
      if (current.replayable === true && current.staleSocket === true) return true;
      current = current.cause;
    }
  } catch {
    // A getter that throws (a Proxy, a hostile object): no mark to be found.
  }
  return false;
}

/**
 * The helpers' settings, validated into a new object: `retries` (1) and
 * `delay` in ms (0), as counts and durations are everywhere in the agent's
 * options, and an optional `onRetry(error, attempt)`. `prefix` names where
 * they were given (request()'s `retry.`).
 */
function retrySettings(options, prefix = '') {
  if (options === undefined || options === null) return { retries: 1, delay: 0, onRetry: undefined };
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidOptionTypeError(prefix === '' ? 'options' : prefix.slice(0, -1), 'an object', options);
  }
  for (const key of Object.keys(options)) {
    if (!SETTINGS.has(key)) throw new InvalidOptionTypeError(`${prefix}${key}`, 'left out: the settings are retries, delay and onRetry', options[key]);
  }
  const { onRetry } = options;
  if (onRetry !== undefined && onRetry !== null && typeof onRetry !== 'function') {
    throw new InvalidOptionTypeError(`${prefix}onRetry`, 'a function', onRetry);
  }
  return {
    retries: count(`${prefix}retries`, options.retries, 0) ?? 1,
    delay: duration(`${prefix}delay`, options.delay) ?? 0,
    onRetry: onRetry ?? undefined,
  };
}

/**
 * True when a request body can be sent again as it was: none, a string, bytes,
 * URLSearchParams, a Blob, a FormData (each client encodes it anew), or any
 * other value a client serialises. A stream, an iterator or an async
 * iterable is read once.
 */
function resendable(body) {
  if (body === undefined || body === null || typeof body !== 'object') return true;
  if (ArrayBuffer.isView(body) || body instanceof ArrayBuffer) return true;
  if (typeof body.pipe === 'function' || typeof body.getReader === 'function') return false;
  if (typeof body[Symbol.asyncIterator] === 'function') return false;
  return !(typeof body[Symbol.iterator] === 'function' && typeof body.next === 'function');
}

/** Sets `original` as the `cause` of `err`, where `err` has none (as `new Error(m, { cause })` would). */
function keepCause(err, original) {
  if (original === null || original === err || err === null || typeof err !== 'object') return;
  if (err.cause !== undefined || !Object.isExtensible(err)) return;
  Object.defineProperty(err, 'cause', { value: original, writable: true, configurable: true, enumerable: false });
}

/**
 * Runs `attempt()` until it succeeds, or fails with an error that
 * `mayRetry(err)` refuses, or retries are spent. `attempt(failure)` gets a
 * record whose `error` it fills with the request's own error, for wrappers
 * that lose it.
 */
async function withRetries(settings, attempt, mayRetry) {
  for (let retry = 1; ; retry++) {
    const failure = { error: null };
    try {
      return await attempt(failure);
    } catch (err) {
      keepCause(err, failure.error);
      if (retry > settings.retries || !isReplayable(err) || !mayRetry(err)) throw err;
      if (settings.onRetry !== undefined) await settings.onRetry(err, retry);
      if (settings.delay > 0) await sleep(settings.delay);
    }
  }
}

// ---- axios, through axios-retry ------------------------------------------------

/**
 * axios-retry's `retryCondition`: the request failed on a stale socket, is
 * idempotent or keyed, and its body can be sent again. axios keeps the
 * agent's error as the AxiosError's `cause`.
 * @param {unknown} error an AxiosError
 * @returns {boolean}
 */
function axiosRetryCondition(error) {
  return isReplayable(error) && resendable(error?.config?.data);
}

/**
 * Options for `axiosRetry(client, axiosRetryOptions())`: retry only what
 * axiosRetryCondition accepts, `retries` times (1), after `delay` ms (0).
 * Unlike axios-retry's own default, never a POST or PATCH without a key.
 */
function axiosRetryOptions(options) {
  const settings = retrySettings(options);
  const { onRetry } = settings;
  return {
    retries: settings.retries,
    retryCondition: axiosRetryCondition,
    retryDelay: () => settings.delay,
    ...(onRetry === undefined ? {} : { onRetry: (retryCount, error) => onRetry(error, retryCount) }),
  };
}

// ---- got ---------------------------------------------------------------------------

/**
 * Options for `got.extend(gotRetryOptions())`: retry only replayable errors
 * whose body got can send again (never a stream), `retries` times (1),
 * after `delay` ms. got waits on a timer before any retry and takes 0 for
 * "do not retry": with no delay it waits 1 ms, where its own default waits
 * about a second. Every other error, every status, is got's to report, as
 * with `retry: { limit: 0 }`.
 *
 * got 13's RequestError keeps none of the original error, so the requests
 * are made through a function of ours that sees it first (got's `request`
 * option, set where the caller set none and `http2` is off); the error the
 * caller gets has the original as its `cause`.
 */
function gotRetryOptions(options) {
  const settings = retrySettings(options);
  // A connection fails with one error: the request's, which got wraps.
  const failures = new WeakMap();
  const capturing = (url, requestOptions, callback) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, requestOptions, callback);
    req.prependListener('error', (err) => {
      if (req.socket != null && !failures.has(req.socket)) failures.set(req.socket, err);
    });
    return req;
  };
  const withCause = (error) => {
    const original = error?.request?.socket == null ? undefined : failures.get(error.request.socket);
    if (original !== undefined) keepCause(error, original);
    return error;
  };
  const hooks = {
    beforeRequest: [(gotOptions) => {
      if (gotOptions.request === undefined && !gotOptions.http2) gotOptions.request = capturing;
    }],
    beforeError: [withCause],
  };
  if (settings.onRetry !== undefined) hooks.beforeRetry = [(error, retryCount) => settings.onRetry(error, retryCount)];
  return {
    retry: {
      limit: settings.retries,
      calculateDelay: ({ attemptCount, error, computedValue }) => {
        // A retry the caller asked for (afterResponse's retryWithMergedOptions).
        if (error?.name === 'RetryError') return computedValue;
        withCause(error);
        if (attemptCount > settings.retries || !isReplayable(error) || !resendable(error.options?.body)) return 0;
        return settings.delay > 0 ? settings.delay : 1;
      },
    },
    hooks,
  };
}

// ---- node-fetch --------------------------------------------------------------------

/**
 * The agent, for one fetch: the same agent (every property read goes to
 * it), whose requests report their error to `failure` first. FetchError
 * keeps only the message and code of the request's error.
 */
function reportingAgent(agent, failure) {
  if (agent === null || typeof agent !== 'object' || typeof agent.addRequest !== 'function') return agent;
  const reporting = Object.create(agent);
  reporting.addRequest = (req, ...rest) => {
    req.prependListener('error', (err) => {
      if (failure.error === null) failure.error = err;
    });
    return agent.addRequest(req, ...rest);
  };
  return reporting;
}

/**
 * The body a fetch sends: `init.body`, or the body of a Request given as
 * `input`, which is read once.
 */
function fetchBodyResendable(input, init) {
  if (init != null && init.body !== undefined) return resendable(init.body);
  return input === null || typeof input !== 'object' || input instanceof URL || input.body == null;
}

/**
 * node-fetch (v2 or v3) that sends a request again when it failed on a
 * stale socket and is replayable: `retries` times (1), after `delay` ms
 * (0). The agent comes from `init.agent` (an agent, or a function of the
 * URL, as node-fetch takes it); without one nothing is marked and nothing
 * resent. The FetchError of a failure has the request's own error as its
 * `cause`.
 * @param {Function} fetch node-fetch's default export
 * @returns {(input: unknown, init?: object) => Promise<unknown>}
 */
function wrapFetch(fetch, options) {
  if (typeof fetch !== 'function') throw new InvalidOptionTypeError('fetch', 'a function (node-fetch v2 or v3)', fetch);
  // Node's fetch takes no agent: wrapped, it would resend nothing, silently.
  if (fetch === globalThis.fetch) {
    throw new InvalidOptionTypeError('fetch', 'node-fetch v2 or v3, not the global fetch, which takes no agent: use steady-agent/fetch, which resends by itself', fetch);
  }
  const settings = retrySettings(options);
  return function fetchWithRetry(input, init) {
    const agent = init?.agent ?? (input !== null && typeof input === 'object' ? input.agent : undefined);
    return withRetries(settings, (failure) => {
      if (agent == null) return fetch(input, init);
      const reporting = typeof agent === 'function'
        ? (url) => reportingAgent(agent(url), failure)
        : reportingAgent(agent, failure);
      return fetch(input, { ...init, agent: reporting });
    }, () => fetchBodyResendable(input, init));
  };
}

// ---- http.request / https.request -----------------------------------------------------

/**
 * One request; resolves with the response once its headers came.
 */
function requestOnce(send, url, options, body) {
  return new Promise((resolve, reject) => {
    const req = url === undefined ? send(options) : send(url, options);
    req.once('response', resolve);
    // Once the response came, an error is the response's (core emits it
    // there too); this listener keeps a late one from going uncaught.
    req.on('error', reject);
    if (body !== null && typeof body === 'object' && typeof body.pipe === 'function') body.pipe(req);
    else req.end(body);
  });
}

function isBody(body) {
  return body === undefined || typeof body === 'string' || ArrayBuffer.isView(body)
    || (body !== null && typeof body === 'object' && typeof body.pipe === 'function');
}

/**
 * `http.request` / `https.request` (by the URL's protocol, or
 * `options.protocol`) as a promise of the response, resent when it failed
 * on a stale socket and is replayable. Takes `(url[, options])` or
 * `(options)`, with two options of its own: `body` (a string, a Buffer or
 * typed array, or a readable stream, which is sent once and never resent)
 * and `retry` ({ retries, delay, onRetry }).
 * @returns {Promise<import('http').IncomingMessage>} resolves when the
 *   response's headers came; its body is the caller's to read
 */
function request(url, options) {
  if (options === undefined && url !== null && typeof url === 'object' && !(url instanceof URL)) {
    options = url;
    url = undefined;
  }
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new InvalidOptionTypeError('options', 'an object', options);
  }
  const { body, retry, ...requestOptions } = options ?? {};
  if (!isBody(body)) throw new InvalidOptionTypeError('body', 'a string, a Buffer or typed array, or a readable stream', body);
  const settings = retrySettings(retry, 'retry.');
  const protocol = url === undefined ? requestOptions.protocol : new URL(url).protocol;
  const send = protocol === 'https:' ? https.request : http.request;
  return withRetries(settings, () => requestOnce(send, url, requestOptions, body), () => resendable(body));
}

module.exports = {
  isReplayable,
  axiosRetryCondition,
  axiosRetryOptions,
  gotRetryOptions,
  wrapFetch,
  request,
};
