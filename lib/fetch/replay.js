'use strict';

// Whether a fetch call may be sent again after it failed: the request's body
// can be made again from what the caller passed, and no signal of the
// caller's has fired. The judgement of the failure itself (a reused
// connection, before any response byte, idempotent or keyed) is the agent's
// mark, read by isReplayable.

/**
 * True when fetch, given the same `init.body` again, sends the same bytes:
 * none, a string, bytes, URLSearchParams, a Blob or a FormData (each
 * extracted anew on every call). Never a ReadableStream, an async iterable
 * or anything else fetch would read once.
 */
function bodyReplayable(body) {
  if (body === undefined || body === null || typeof body === 'string') return true;
  if (typeof body !== 'object') return false;
  if (ArrayBuffer.isView(body) || body instanceof ArrayBuffer) return true;
  if (body instanceof URLSearchParams) return true;
  if (typeof Blob === 'function' && body instanceof Blob) return true;
  return typeof FormData === 'function' && body instanceof FormData;
}

/** A Request object (or one like it), as opposed to a string or URL. */
function isRequestLike(input) {
  return input !== null && typeof input === 'object' && !(input instanceof URL) && 'method' in input && 'body' in input;
}

/**
 * The body a fetch call sends can be sent again: `init.body` decides when
 * given; otherwise a Request given as `input` may have none (its body is a
 * stream, read once).
 */
function callReplayable(input, init) {
  if (init != null && init.body !== undefined) return bodyReplayable(init.body);
  return !isRequestLike(input) || input.body === null;
}

/** The caller's signal (init's, else the Request's) has fired. */
function signalAborted(input, init) {
  const signal = init?.signal ?? (isRequestLike(input) ? input.signal : undefined);
  return signal != null && signal.aborted === true;
}

module.exports = { bodyReplayable, callReplayable, signalAborted };
