'use strict';

// The check before reuse: why a socket in the pool must not be handed to a
// request, or null when it may. Core's addRequest takes a free socket from
// the pool without asking the agent; the agent runs this check on the
// socket core is about to take, between naming the pool and picking from it
// (lib/keep_alive.js, getName).
const debug = require('debug')('steady-agent');
const { CLOSE_REASONS } = require('./close_reasons');
const { SOCKET_NAME } = require('../constants');
const { stateOf } = require('../agent/socket_state');

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

/**
 * Core is about to take a socket from `freeSockets[pool]`: the last (lifo)
 * or the first (fifo). Each one it would take that must not be reused leaves
 * the pool and goes to `drop(socket, state, reason)`, until one may be
 * reused (marked picked) or none is left (the pool's list is deleted, as core
 * would; it may not get the chance).
 */
function dropUnusable(freeSockets, pool, fifo, now, ttl, drop) {
  const free = freeSockets[pool];
  while (free.length > 0) {
    const socket = fifo ? free[0] : free[free.length - 1];
    const state = stateOf(socket);
    const reason = whyNotReusable(socket, state, now, ttl);
    if (reason === null) {
      state?.picked(now); // one put in the pool by hand is taken on in reuseSocket
      return;
    }
    if (fifo) free.shift();
    else free.pop();
    drop(socket, state, reason);
  }
  delete freeSockets[pool];
}

/** Takes `socket` out of `freeSockets[pool]`, if there; an empty list goes, as core's would. */
function takeOutOfPool(freeSockets, pool, socket) {
  const free = freeSockets[pool];
  if (free === undefined) return;
  const index = free.indexOf(socket);
  if (index === -1) return;
  free.splice(index, 1);
  if (free.length === 0) delete freeSockets[pool];
}

module.exports = { whyNotReusable, whyRetired, dropUnusable, takeOutOfPool };
