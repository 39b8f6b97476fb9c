'use strict';

// Why a socket closed: every answer the `steady-agent:socket:close` event and
// getStats().closeReasons give, decided here and nowhere else.
//
// Two kinds of reason. The agent's own decisions are recorded in the
// socket's state at the moment it decides (SocketState#markClosed), because by the
// time 'close' comes the cause is gone. Everything else (the server, a socket error, the
// caller) is read from the socket when it closes, and closeReason decides
// from those facts. The first
// recorded reason wins: a socket the agent closes for its TTL and that then
// errors on the way out closed for its TTL.

const CLOSE_REASONS = Object.freeze({
  /** It sat idle in the pool until its free timeout (freeSocketTimeout, the server's hint or learned limit). */
  FREE_TIMEOUT: 'free-timeout',
  /** It reached socketActiveTTL (when freed, or when picked from the pool). */
  TTL: 'ttl',
  /** It served the last request the server's `Keep-Alive: max=N` allowed. */
  KEEP_ALIVE_MAX: 'keep-alive-max',
  /** The server closed it (FIN) without an error, while idle or before a response ended. */
  SERVER_CLOSE: 'server-close',
  /** It emitted an error: refused, reset, TLS failure, a parse error, an error from the caller. */
  ERROR: 'error',
  /** It served a request that went quiet longer than `timeout`, and no 'timeout' listener on the request took over. */
  ACTIVE_TIMEOUT: 'active-timeout',
  /**
   * It finished a request and was not kept for another: `Connection: close`,
   * the pool full (maxFreeSockets), core's refusal, or a server idle limit
   * within serverTimeoutMargin.
   */
  NOT_KEPT: 'not-kept',
  /** Picked from the pool and found unusable: closed under us, unread bytes, bytes while idle, never connected (put in the pool by hand). */
  UNUSABLE: 'unusable',
  /** It sat idle while every place under maxTotalSockets was taken and a request of another origin needed one. */
  TOTAL_LIMIT: 'total-limit',
  /** `agent.destroy()` closed it. */
  DESTROY: 'destroy',
  /** `agent.close()` closed it: idle when close() was called, or as soon as it was free after. */
  AGENT_CLOSE: 'agent-close',
  /** It left the agent for an HTTP upgrade (101) or CONNECT, and its new owner closed it. */
  UPGRADE: 'upgrade',
  /**
   * Idle in the pool at least as long as a socket of its origin on which a
   * request had just met a connection the server closed while idle (a stale
   * socket): probably closed too, as after a server restart, so a retry gets
   * a younger socket or a new connection.
   */
  STALE_PEER: 'stale-peer',
  /** The caller destroyed the request or socket before its response ended, without an error. */
  ABORTED: 'aborted',
  /** Its address left its host's DNS answer (the `dns` option): closed when free, or when its response ended. */
  DNS: 'dns',
});

/**
 * Why a socket closed, asked on its 'close', from facts: `recorded`, the
 * reason the agent recorded when it decided (null: none); `errored`, it
 * emitted an error; `wasFree`, it sat idle in the pool, so nobody but the
 * server (or Node, on bytes from the server) could close it;
 * `responseComplete`, the request it kept got its whole response;
 * `readableEnded`, the server's FIN was read.
 */
function closeReason(recorded, errored, wasFree, responseComplete, readableEnded) {
  if (recorded !== null) return recorded;
  if (errored) return CLOSE_REASONS.ERROR;
  if (wasFree) return CLOSE_REASONS.SERVER_CLOSE;
  // Core keeps the finished request on a socket it does not pool
  // (`Connection: close`, maxFreeSockets reached, keepSocketAlive refused)
  // and destroys the socket: it was not kept, whoever sent the first FIN.
  if (responseComplete) return CLOSE_REASONS.NOT_KEPT;
  if (readableEnded) return CLOSE_REASONS.SERVER_CLOSE;
  return CLOSE_REASONS.ABORTED;
}

/**
 * Why a socket of the undici transport closed, from facts: `recorded`, the
 * reason it recorded when it closed the socket itself (null: none);
 * `closing`, the dispatcher is closing; `errored`, it emitted an error;
 * `serverClosed`, the server's FIN was read; `idleAfterUse`, it sat idle
 * after serving a request, where only undici's own idle timeout (our
 * freeSocketTimeout, or the server's hint less the margin) closes it
 * without an error or a FIN.
 */
function transportCloseReason(recorded, closing, errored, serverClosed, idleAfterUse) {
  if (recorded !== null) return recorded;
  if (closing) return CLOSE_REASONS.AGENT_CLOSE;
  if (errored) return CLOSE_REASONS.ERROR;
  if (serverClosed) return CLOSE_REASONS.SERVER_CLOSE;
  if (idleAfterUse) return CLOSE_REASONS.FREE_TIMEOUT;
  return CLOSE_REASONS.ERROR;
}

module.exports = { CLOSE_REASONS, closeReason, transportCloseReason };
