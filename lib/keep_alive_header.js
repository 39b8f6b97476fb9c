'use strict';

// The server's `Keep-Alive: timeout=N, max=M` response header. Parameters may
// come in any order, with or without spaces or quotes, in any case; anything
// else is ignored. (Node's own parser is anchored at the start and so misses
// `max=100, timeout=5`.)
const PARAMETER = /(?:^|[\s,;])(timeout|max)\s*=\s*"?(\d+)"?/gi;

/**
 * @param {string | undefined} value the header value
 * @returns {{ timeout: number | undefined, max: number | undefined } | null}
 *   timeout in seconds, max in requests; null when neither is present
 */
function parseKeepAlive(value) {
  if (typeof value !== 'string' || value.length === 0) return null;
  // A server sends the same header on every response: parse it once.
  if (value === last.value) return last.result;
  last.value = value;
  last.result = parse(value);
  return last.result;
}

const last = { value: '', result: null };

function parse(value) {
  let timeout;
  let max;
  PARAMETER.lastIndex = 0;
  let match;
  while ((match = PARAMETER.exec(value)) !== null) {
    const number = Number(match[2]);
    if (match[1].length === 7) timeout ??= number; // 'timeout', any case
    else max ??= number;
  }
  if (timeout === undefined && max === undefined) return null;
  return Object.freeze({ timeout, max });
}

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

/** The Keep-Alive hint of a response, parsed (null: none). */
function responseHint(res) {
  return parseKeepAlive(keepAliveHeader(res));
}

module.exports = { parseKeepAlive, responseHint };
