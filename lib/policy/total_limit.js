'use strict';

// Room for a new origin under maxTotalSockets. Core opens a socket for a
// request only while its socket count is below maxTotalSockets, and counts a
// socket out only when it closes; otherwise it queues the request. When
// idle sockets of other origins hold every place, a request to a new origin
// waits until one of them reaches its free timeout (4 s by default; with
// Node's agent, which has none, forever). An idle socket is the cheapest
// thing to give up: the agent closes the one used least recently, and the
// request gets its place at once.
//
// Two moments, both decided here and acted on by the agent:
// - a request about to be queued for want of a place (placeFor): an idle
//   socket of another origin is closed, and its place given to the request
//   before core decides;
// - a socket going free while a request of another origin waits for a place
//   (othersWaiting): it is not kept, and core's removeSocket, on its 'close',
//   starts a socket for that request.
//
// A probe (the socket learning a server's idle limit, out of the pool:
// the agent's idle learning) holds a place as any socket does, and serves no
// request: it is given up first like an idle socket, whatever its origin.

/**
 * The idle socket to close so that a request of `pool` can open one: of the
 * other origins' free sockets and every probe, the one that entered the pool
 * first. null when there is none. `idleSince(socket)` is when a socket
 * entered the pool, or undefined for one that holds no place in the agent's
 * count (put in the pool by hand, or another agent's).
 */
function socketToGiveUp(freeSockets, probes, pool, idleSince) {
  let oldest = null;
  let oldestSince = Infinity;
  const consider = (socket) => {
    const since = idleSince(socket);
    if (since !== undefined && since < oldestSince) {
      oldest = socket;
      oldestSince = since;
    }
  };
  for (const name in freeSockets) {
    if (name !== pool) for (const socket of freeSockets[name]) consider(socket);
  }
  for (const probe of probes) consider(probe);
  return oldest;
}

/**
 * Every place is taken, and core is about to queue a request of `pool` (the
 * pool has no free socket). Reads the agent's maps and limits (`agent`) and,
 * through `idleSince`, when each idle socket was freed (socketToGiveUp).
 * Returns the idle socket to give up for it, or
 * null: the pool is at maxSockets (core queues the request anyway), or
 * nothing is idle.
 */
function placeFor(agent, pool, probes, idleSince) {
  if ((agent.sockets[pool]?.length ?? 0) >= agent.maxSockets) return null;
  return socketToGiveUp(agent.freeSockets, probes, pool, idleSince);
}

/**
 * A socket of `pool` is going free with every place taken: true when the
 * place it holds would serve a request waiting for one. Core's removeSocket,
 * when a socket of a pool without a queue closes, starts one for the first
 * queued origin, if that origin has no socket in use (then it waits for its
 * own, as in core).
 */
function othersWaiting(agent, pool) {
  for (const name in agent.requests) return name !== pool && !(agent.sockets[name]?.length > 0);
  return false;
}

module.exports = { placeFor, othersWaiting };
