'use strict';

// The check before reuse: why a socket in the pool must not be handed to a
// request, or null when it may. Core's addRequest takes a free socket from
// the pool without asking the agent; the agent runs this check on the
// socket core is about to take, between naming the pool and picking from it
// (the agent's getName). The pool itself is changed in lib/core/agent_maps.js.
const debug = require('debug')('steady-agent');
const { CLOSE_REASONS } = require('./close_reasons');
const { SOCKET_NAME } = require('../constants');

/**
 * @param {import('net').Socket} socket a socket in the agent's free pool
 * @param {import('../agent/socket_state').SocketState|undefined} state its state
 *   (undefined: a socket someone put in agent.freeSockets by hand)
 * @param {number} now clock.now()
 * @param {number} ttl socketActiveTTL in ms (0: none)
 * @returns {string|null} one of CLOSE_REASONS, or null
 */
function whyNotReusable(socket, state, now, ttl) {
  if (socket.destroyed || !socket.writable) return CLOSE_REASONS.UNUSABLE; // closed
  // EOF: the server's FIN ends our side too, so the socket is no longer
  // writable (above); an EOF still queued behind unread bytes shows as
  // readableLength.
  if (socket.readableLength > 0) return CLOSE_REASONS.UNUSABLE; // unread data from the server
  // Bytes that came while the socket sat idle were read by no one. Node 22+
  // closes such a socket itself; on older versions the bytes would be lost,
  // or taken for the next response.
  // A socket put in agent.freeSockets by hand has no state: the agent never
  // freed it, so it has no count to compare, and only one that reports no
  // count either (a handle that keeps none, as Node's own tests build) passes.
  if (socket.bytesRead !== (state === undefined ? undefined : state.bytesReadWhenFreed)) {
    // One that never connected has no connection to reuse either. Asked only
    // here, off the path of a reuse that goes ahead.
    if (debug.enabled && socket.pending) debug('%s never connected: not reused', socket[SOCKET_NAME] ?? 'a socket put in the pool by hand');
    return CLOSE_REASONS.UNUSABLE;
  }
  if (state === undefined) return null; // no deadline of ours
  if (state.freeDeadline <= now) return CLOSE_REASONS.FREE_TIMEOUT;
  if (ttl > 0 && now - state.createdAt >= ttl) return CLOSE_REASONS.TTL;
  return null;
}

/**
 * Why a socket that just finished a request must serve no further one, or
 * null: the server's Keep-Alive max reached, or its socketActiveTTL.
 */
function whyRetired(state, now, ttl) {
  if (state.requestsLeft <= 0) return CLOSE_REASONS.KEEP_ALIVE_MAX;
  if (ttl > 0 && now - state.createdAt >= ttl) return CLOSE_REASONS.TTL;
  return null;
}

module.exports = { whyNotReusable, whyRetired };
