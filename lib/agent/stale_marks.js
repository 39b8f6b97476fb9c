'use strict';

// The agent's side of the stale judgement: the facts
// of a request that failed on one of its sockets, read from the socket, its
// state and its request, and the marks written on the error the caller gets.
//
// The agent's socket listeners were added when the socket was created, before
// core's (added each time a request takes the socket), so the agent sees a
// failure first. An OS error (ECONNRESET, EPIPE) is emitted on the socket and
// then, the same object, on the request: it is marked in the agent's 'error'
// listener. Node's own 'socket hang up' is created by core's 'end' listener
// (the server's FIN before a response) and emitted on the request only: the
// agent's 'end' listener puts a one-shot 'error' listener in front of the
// request's, which marks it before the caller's listeners see it. Nothing
// runs on the path of a request that does not fail.
//
// After a stale collision the origin's free sockets that sat idle at least
// as long are probably closed by the server too (after a restart, all of
// them are): the agent closes them ('stale-peer'), so that a retry gets a
// younger socket or a new connection, whatever the scheduling.
const { judgeFailure } = require('../policy/stale_judgement');
const { stateOf } = require('../state/socket_state');
const { requestOf } = require('../core/private_fields');

/**
 * The marks for the failure, now, of the request `socket` serves, or null:
 * no request, a response already begun, a fresh socket. `knownLimitMs`: the
 * origin's idle limit, announced or learned (undefined if none).
 */
function failureMarks(socket, state, now, knownLimitMs) {
  const req = requestOf(socket);
  if (req == null || req.res != null) return null;
  return judgeFailure({
    requestsBefore: state.requestsFinished,
    idleMs: state.idleBeforeReuse,
    sinceStartMs: now - state.requestStartedAt,
    connectMs: state.connectMs,
    responseBytes: socket.bytesRead - state.bytesReadWhenFreed,
    knownLimitMs,
    method: req.method,
    idempotencyKey: req.getHeader('idempotency-key'),
    xIdempotencyKey: req.getHeader('x-idempotency-key'),
  });
}

/**
 * Writes the marks on the error the caller will receive. Only new fields:
 * `code`, `message` and the rest stay as they are. An error that is not an
 * extensible object (a string, a frozen error) is left alone.
 */
function markError(err, marks) {
  if (err === null || typeof err !== 'object' || !Object.isExtensible(err)) return false;
  err.reusedSocket = marks.reusedSocket;
  err.socketIdleMs = marks.socketIdleMs;
  err.socketRequests = marks.socketRequests;
  err.staleSocket = marks.staleSocket;
  err.replayable = marks.replayable;
  return true;
}

/**
 * The request `socket` serves failed at `now`: marks `err`, or, where `err`
 * is null, the next error the request emits (core's 'socket hang up'),
 * before any listener of the caller's sees it. Returns the sockets of `free`
 * (its pool's free list, or undefined) to close: after a stale failure, those
 * that have sat idle at least as long, probably closed by the server too.
 */
function markFailure(socket, state, err, now, knownLimitMs, free) {
  const marks = failureMarks(socket, state, now, knownLimitMs);
  if (marks === null) return [];
  if (err !== null) markError(err, marks);
  else requestOf(socket).prependOnceListener('error', (error) => markError(error, marks));
  if (!marks.staleSocket || free === undefined) return [];
  const idleMs = marks.socketIdleMs;
  return free.filter((other) => {
    const otherState = stateOf(other);
    return otherState !== undefined && now - otherState.freedAt >= idleMs;
  });
}

module.exports = { failureMarks, markError, markFailure };
