'use strict';

// Bounds on the wait behind maxSockets: `maxQueue` (how many requests of one
// origin may wait) and `queueTimeout` (how long one may wait). Core keeps the
// queue, `agent.requests[pool]`, and hands its requests sockets; this module
// only takes a request out of it, and fails it the way core fails a request
// that gets no socket: `req.onSocket(null, err)`, which emits the error (and
// 'close') on the request on the next tick.
//
// An agent with neither option has no QueueBounds (null): nothing here runs
// for it, and no timer is ever armed.
const { QueueFullError, QueueTimeoutError } = require('./errors');
const { timerDelay } = require('./clock');

// The queue timer of a waiting request, cleared when it leaves the queue.
const kQueueTimer = Symbol('steady-agent.queueTimer');

class QueueBounds {
  #maxQueue;
  #timeout;

  /** null when neither bound is set. */
  static create({ maxQueue, queueTimeout }) {
    return maxQueue === Infinity && queueTimeout === 0 ? null : new QueueBounds(maxQueue, queueTimeout);
  }

  constructor(maxQueue, timeout) {
    this.#maxQueue = maxQueue;
    this.#timeout = timeout;
  }

  /**
   * Core has just queued `req`, last in `agent.requests[pool]`. Turns it
   * away when the queue already held maxQueue requests; otherwise starts its
   * queue timer. Returns whether it stays in the queue.
   */
  admit(agent, req, pool) {
    const queue = agent.requests[pool];
    if (queue.length > this.#maxQueue) {
      queue.pop();
      if (queue.length === 0) delete agent.requests[pool];
      req.onSocket(null, new QueueFullError(this.#maxQueue));
      return false;
    }
    if (this.#timeout > 0) {
      req[kQueueTimer] = setTimeout(QueueBounds.#timedOut, timerDelay(this.#timeout), agent, req, pool, this.#timeout);
      // It leaves the queue with a socket, or closed: aborted, or failed by
      // destroy().
      req.once('socket', QueueBounds.#leftQueue);
      req.once('close', QueueBounds.#leftQueue);
    }
    return true;
  }

  // `this` is the request.
  static #leftQueue() {
    clearTimeout(this[kQueueTimer]);
    this[kQueueTimer] = undefined;
    this.removeListener('socket', QueueBounds.#leftQueue);
    this.removeListener('close', QueueBounds.#leftQueue);
  }

  static #timedOut(agent, req, pool, timeout) {
    QueueBounds.#leftQueue.call(req);
    const queue = agent.requests[pool];
    const index = queue === undefined ? -1 : queue.indexOf(req);
    // Not in the queue: taken out by someone else (agent.destroy() fails
    // every queued request), its error already on the way.
    if (index === -1) return;
    queue.splice(index, 1);
    if (queue.length === 0) delete agent.requests[pool];
    // A request the caller destroyed while it waited settles as core would
    // settle it once a socket came (its own error, or 'socket hang up'),
    // now rather than after holding a place in the queue.
    req.onSocket(null, req.destroyed ? undefined : new QueueTimeoutError(timeout));
  }
}

module.exports = { QueueBounds };
