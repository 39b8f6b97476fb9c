'use strict';

// agent.close(), a graceful close: no new request, the ones in flight and in
// the queue served, every socket closed as soon as it is free, and a promise
// that resolves when the agent holds no socket. The agent's hooks do the
// closing (lib/keep_alive.js); this module keeps the count of the sockets
// the agent holds and the promise.
class Shutdown {
  // Sockets the agent opened and has not seen close (an upgraded socket
  // leaves the count when it leaves the agent).
  #open = 0;
  // Sockets core is still making: a proxy tunnel being opened, an
  // asynchronous createConnection.
  #creating = 0;
  #promise = null;
  #resolve = null;

  /**
   * Core starts making a socket. Returns the function to call when it is
   * made or has failed; calls after the first change nothing.
   */
  creatingOne() {
    this.#creating++;
    let pending = true;
    return () => {
      if (!pending) return;
      pending = false;
      this.#creating--;
      this.#settle();
    };
  }

  /** The agent has a new socket of its own. */
  opened() {
    this.#open++;
  }

  /** A socket is no longer the agent's (closed, or upgraded): close() may be done. */
  left() {
    this.#open--;
    this.#settle();
  }

  /** True from the first close() on. */
  get closing() { return this.#promise !== null; }

  /** The one promise of every close() call. */
  close() {
    if (this.#promise === null) {
      this.#promise = new Promise((resolve) => { this.#resolve = resolve; });
      this.#settle();
    }
    return this.#promise;
  }

  /** Resolves the close() promise once no socket is open or being made. */
  #settle() {
    if (this.#resolve !== null && this.#open === 0 && this.#creating === 0) {
      const resolve = this.#resolve;
      this.#resolve = null;
      resolve();
    }
  }
}

module.exports = { Shutdown };
