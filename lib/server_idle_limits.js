'use strict';

// What the agent has learned about servers that close idle connections
// without announcing it: per origin, the shortest idle time after which the
// server closed one of our pooled sockets. Bounded: the least recently used
// origin is dropped once `capacity` origins are known.
class ServerIdleLimits {
  #limits = new Map();
  #capacity;

  constructor(capacity = 256) {
    this.#capacity = capacity;
  }

  get size() {
    return this.#limits.size;
  }

  /** The learned idle limit in ms for `origin`, or undefined. Marks the origin used. */
  get(origin) {
    const limit = this.#limits.get(origin);
    if (limit !== undefined) {
      this.#limits.delete(origin);
      this.#limits.set(origin, limit);
    }
    return limit;
  }

  /**
   * Records that the server of `origin` closed a socket idle for `idleMs`.
   * Returns the origin forgotten to make room, if any (for the events).
   */
  record(origin, idleMs) {
    const known = this.#limits.get(origin);
    this.#limits.delete(origin);
    this.#limits.set(origin, known === undefined ? idleMs : Math.min(known, idleMs));
    if (this.#limits.size > this.#capacity) {
      const forgotten = this.#limits.keys().next().value;
      this.#limits.delete(forgotten);
      return forgotten;
    }
    return undefined;
  }

  toJSON() {
    return Object.fromEntries(this.#limits);
  }
}

module.exports = { ServerIdleLimits };
