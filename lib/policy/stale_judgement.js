'use strict';

// Whether a request that failed on a reused socket met a connection the
// server had already closed while it sat idle (a stale socket: the server
// never saw the request), or one the server was working on. Pure: it is given
// the socket's facts and answers; it reads no clock and holds no socket
// (test/stale-judgement.test.js tests it without sockets). agent/stale_marks.js
// gathers the facts and writes the answer on the error.
//
// The rule, for a request that failed before any byte of its response:
//
// - Only a reused socket is judged: a failure on a fresh connection (refused,
//   reset during the first request) says nothing about an idle close, and its
//   error gets no mark.
// - Once a byte of the response came, the server was answering: no mark.
// - staleSocket: the failure came within the stale window of the moment the
//   request got the socket (its bytes leave in the same turn). A server that
//   closed the connection before the request reached it answers at once: its
//   FIN was already on the way, or its stack resets the request on arrival,
//   one round trip after the write. The window is RTT_FACTOR round trips as
//   the connect time measured one (a TLS connect is two or more: the window
//   errs long), never MAX_WINDOW_MS or more (a server that answered nothing
//   for a second was processing the request), and at least MIN_WINDOW_MS:
//   the client notices a failure only when its event loop, and the operating
//   system, let it run, which on a loaded machine is hundreds of ms late,
//   and the connect time of a socket to a nearby proxy understates the path
//   beyond it.
// - An idle time of at least SUPPORT_SHARE of the limit known for the origin
//   (the server's Keep-Alive hint, or the learned limit) supports the
//   judgement: the window is then MAX_WINDOW_MS. It never makes the judgement
//   alone.
// - replayable: staleSocket, and the request is idempotent (RFC 9110 9.2.2:
//   GET, HEAD, OPTIONS, TRACE, PUT, DELETE) or carries a non-empty
//   Idempotency-Key or X-Idempotency-Key header.

const RTT_FACTOR = 4;
const MIN_WINDOW_MS = 500;
const MAX_WINDOW_MS = 999;
const SUPPORT_SHARE = 0.75;

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/** A duration fact, or 0 where it is unknown (NaN, undefined, negative). */
const known = (ms) => (ms > 0 ? ms : 0);

/**
 * How long after the request got the socket a failure still counts as
 * stale, in ms. `connectMs`: the socket's connect time (0 if unknown);
 * `supported`: the idle time was near the origin's known limit.
 */
function staleWindow(connectMs, supported) {
  if (supported) return MAX_WINDOW_MS;
  return Math.min(Math.max(RTT_FACTOR * known(connectMs), MIN_WINDOW_MS), MAX_WINDOW_MS);
}

/** A header value that names a key: a non-empty string (or number), or an array holding one. */
function hasKey(value) {
  if (Array.isArray(value)) return value.some(hasKey);
  if (typeof value === 'number') return true;
  return typeof value === 'string' && value.trim() !== '';
}

/**
 * True when the request may be sent twice with the effect of once: an
 * idempotent method, or an idempotency key (either header's value).
 */
function isIdempotent(method, idempotencyKey, xIdempotencyKey) {
  if (typeof method === 'string' && IDEMPOTENT_METHODS.has(method.toUpperCase())) return true;
  return hasKey(idempotencyKey) || hasKey(xIdempotencyKey);
}

/**
 * The marks for a failed request's error, or null when it gets none.
 * @param {object} facts
 * @param {number} facts.requestsBefore requests the socket served before this one
 * @param {number} facts.idleMs ms it sat idle before this one (0: handed straight on)
 * @param {number} facts.sinceStartMs ms from the request getting the socket to the failure
 * @param {number} facts.connectMs the socket's connect time (0 if unknown)
 * @param {number} facts.responseBytes bytes read since the request got the socket
 * @param {number} [facts.knownLimitMs] the origin's idle limit, announced or learned
 * @param {string} facts.method
 * @param {unknown} [facts.idempotencyKey] the Idempotency-Key header's value
 * @param {unknown} [facts.xIdempotencyKey] the X-Idempotency-Key header's value
 */
function judgeFailure(facts) {
  if (!(facts.requestsBefore > 0) || facts.responseBytes !== 0) return null;
  const idleMs = known(facts.idleMs);
  const supported = facts.knownLimitMs > 0 && idleMs >= SUPPORT_SHARE * facts.knownLimitMs;
  const staleSocket = known(facts.sinceStartMs) < staleWindow(facts.connectMs, supported);
  return {
    reusedSocket: true,
    socketIdleMs: Math.round(idleMs),
    socketRequests: facts.requestsBefore,
    staleSocket,
    replayable: staleSocket && isIdempotent(facts.method, facts.idempotencyKey, facts.xIdempotencyKey),
  };
}

module.exports = {
  judgeFailure,
  staleWindow,
  isIdempotent,
  RTT_FACTOR,
  MIN_WINDOW_MS,
  MAX_WINDOW_MS,
  SUPPORT_SHARE,
};
