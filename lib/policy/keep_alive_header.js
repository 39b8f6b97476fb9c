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
    if (name.length === 10 && (name === 'Keep-Alive' || isKeepAlive(name))) {
      // A header sent on several lines is one list, as res.headers joins it.
      value = value === undefined ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
    }
  }
  return value;
}

const KEEP_ALIVE = 'keep-alive';

/**
 * `name` (10 characters) is Keep-Alive in any case: what toLowerCase()
 * would say of a header name (Node's parser takes only ASCII ones), without
 * making a string of Connection, the other common 10-character header, on
 * every response.
 */
function isKeepAlive(name) {
  if (name.charCodeAt(4) !== 0x2d) return false; // '-'
  for (let i = 0; i < 10; i++) {
    // A letter and its upper case differ in the 0x20 bit only (and no other
    // character, at the letters' places, becomes a letter with it set).
    if (i !== 4 && (name.charCodeAt(i) | 0x20) !== KEEP_ALIVE.charCodeAt(i)) return false;
  }
  return true;
}

/** The Keep-Alive hint of a response, parsed (null: none). */
function responseHint(res) {
  return parseKeepAlive(keepAliveHeader(res));
}

/**
 * Node 20 (and 22 before `agentKeepAliveTimeoutBuffer`) refuse a socket
 * whose `Keep-Alive: timeout=N` is within their fixed 1 s buffer, after doing
 * the rest of their work (keep-alive probes, unref, timer). True when that was
 * the only reason core's keepSocketAlive refused the socket that got `res`: then the agent's
 * `serverTimeoutMargin` decides instead. Newer Node takes our margin as its
 * buffer, and then agrees with us.
 */
function coreVetoedOnlyTheHint(agent, res) {
  if (agent.agentKeepAliveTimeoutBuffer !== undefined) return false;
  if (res == null) return false;
  // Core vetoes a timeout of N s where N * 1000 - 1000 <= 0. Its parser reads
  // only a leading `timeout=N`, ours any; core got here only by a veto, and a
  // veto for the hint means the leading timeout, which is also the first one
  // ours finds.
  const hint = responseHint(res);
  return hint !== null && hint.timeout !== undefined && hint.timeout <= 1;
}

module.exports = { parseKeepAlive, responseHint, coreVetoedOnlyTheHint };
