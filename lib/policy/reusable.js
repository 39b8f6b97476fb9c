'use strict';

// Whether a socket may serve another request, from facts: before reuse (a
// socket in the pool about to be handed to a request) and after a request
// (one that just served one). Each answers with the close reason, or null
// when it may. Core's addRequest takes a free socket from the pool without
// asking the agent; the agent runs the first check on the socket core is
// about to take, between naming the pool and picking from it (the agent's
// getName).
const { CLOSE_REASONS } = require('../state/close_reasons');

/**
 * Facts about a socket in the free pool, gathered by the caller:
 * @param {boolean} destroyed socket.destroyed
 * @param {boolean} writable socket.writable
 * @param {number} bytesWaiting bytes the server sent that no one read yet
 *   (socket.readableLength)
 * @param {boolean} readWhileIdle bytes came while it sat idle (socket.bytesRead
 *   differs from the count when it was freed)
 * @param {number} freeDeadline its free deadline (Infinity: none of ours)
 * @param {number} age how long it has been open, in ms (0: unknown)
 * @param {number} now clock.now()
 * @param {number} ttl socketActiveTTL in ms (0: none)
 * @returns {string|null} one of CLOSE_REASONS, or null
 */
function unusableReason(destroyed, writable, bytesWaiting, readWhileIdle, freeDeadline, age, now, ttl) {
  if (destroyed || !writable) return CLOSE_REASONS.UNUSABLE; // closed
  // EOF: the server's FIN ends our side too, so the socket is no longer
  // writable (above); an EOF still queued behind unread bytes shows as
  // bytes waiting.
  if (bytesWaiting > 0) return CLOSE_REASONS.UNUSABLE; // unread data from the server
  // Bytes that came while the socket sat idle were read by no one. Node 22+
  // closes such a socket itself; on older versions the bytes would be lost,
  // or taken for the next response.
  if (readWhileIdle) return CLOSE_REASONS.UNUSABLE;
  if (freeDeadline <= now) return CLOSE_REASONS.FREE_TIMEOUT;
  if (ttl > 0 && age >= ttl) return CLOSE_REASONS.TTL;
  return null;
}

/**
 * Why a socket that just finished a request must serve no further one, or
 * null: the server's Keep-Alive max reached (`requestsLeft`, the requests
 * the server still takes), or its socketActiveTTL (`age`, how long it has
 * been open, in ms; `ttl` 0: none).
 */
function retiredReason(requestsLeft, age, ttl) {
  if (requestsLeft <= 0) return CLOSE_REASONS.KEEP_ALIVE_MAX;
  if (ttl > 0 && age >= ttl) return CLOSE_REASONS.TTL;
  return null;
}

module.exports = { unusableReason, retiredReason };
