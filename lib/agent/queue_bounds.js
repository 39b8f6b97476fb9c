'use strict';

// Bounds on the wait behind maxSockets: `maxQueue` (how many requests of one
// origin may wait) and `queueTimeout` (how long one may wait). Core keeps the
// queue, `agent.requests[pool]`, and hands its requests sockets; this module
// only takes a request out of it, and fails it the way core fails a request
// that gets no socket: `req.onSocket(null, err)`, which emits the error (and
// 'close') on the request on the next tick.
//
// An agent with neither option has no QueueBounds (null): nothing here runs
// for it, and no timer is ever armed. Each request it fails is counted by
// the agent's PoolEvents (getStats(), the no-socket channel).
const { QueueFullError, QueueTimeoutError } = require('../errors');
const { timerDelay } = require('../timers/clock');
const { unqueueLast, unqueue } = require('../core/agent_maps');

// The queue timer of a waiting request, cleared when it leaves the queue.
const kQueueTimer = Symbol('steady-agent.queueTimer');

class QueueBounds {
  #maxQueue;
  #timeout;
  #events;

  /** null when neither bound is set; `events` is the agent's PoolEvents. */
  static create({ maxQueue, queueTimeout }, events) {
    return maxQueue === Infinity && queueTimeout === 0 ? null : new QueueBounds(maxQueue, queueTimeout, events);
  }

  constructor(maxQueue, timeout, events) {
    this.#maxQueue = maxQueue;
    this.#timeout = timeout;
    this.#events = events;
  }

  /**
   * Core has just queued `req`, last in `agent.requests[pool]` (`options`:
   * the request's, as core merged them). Turns it away when the queue
   * already held maxQueue requests; otherwise starts its queue timer.
   * Returns whether it stays in the queue; the caller then records it as
   * queued (PoolEvents.requestQueued), before its timer can fire.
   */
  admit(agent, req, pool, options) {
    const queue = agent.requests[pool];
    if (queue.length > this.#maxQueue) {
      unqueueLast(agent, pool);
      this.#events.queueFull(req, pool, options);
      req.onSocket(null, new QueueFullError(this.#maxQueue));
      return false;
    }
    if (this.#timeout > 0) {
      req[kQueueTimer] = setTimeout(QueueBounds.#timedOut, timerDelay(this.#timeout), this, agent, req, pool);
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

  static #timedOut(bounds, agent, req, pool) {
    QueueBounds.#leftQueue.call(req);
    // Not in the queue: taken out by someone else (agent.destroy() fails
    // every queued request), its error already on the way.
    if (!unqueue(agent, pool, req)) return;
    // A request the caller destroyed while it waited settles as core would
    // settle it once a socket came (its own error, or 'socket hang up'),
    // now rather than after holding a place in the queue: it counts as one
    // that left the queue, when its 'close' comes.
    if (req.destroyed) {
      req.onSocket(null);
      return;
    }
    bounds.#events.queueTimedOut(req);
    req.onSocket(null, new QueueTimeoutError(bounds.#timeout));
  }
}

module.exports = { QueueBounds };
