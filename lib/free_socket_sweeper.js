'use strict';

// One timer per agent closes free sockets at their deadlines. A socket's own
// timer (socket.setTimeout) would cost a new Timeout object, a bound function
// and a timer-list insert on every request twice over: once when the socket
// enters the pool with its free timeout, once when it leaves with the active
// timeout. A free socket instead records its deadline, and this timer fires
// at the earliest deadline in the pool.
//
// Deadlines are on the monotonic clock (clock.js). A deadline further away
// than a timer can wait (2^31-1 ms, about 24.8 days: a long freeSocketTimeout
// or socketActiveTTL, a server announcing Keep-Alive: timeout=3000000) gets a
// timer for the longest wait; when it fires early, the sweep finds nothing
// due and the timer is set again for what is left. Node would otherwise fire
// an overlong timer after 1 ms, and the agent would wake a thousand times a
// second.
const clock = require('./clock');

class FreeSocketSweeper {
  #timer = null;
  #at = Infinity;
  #sweep;

  /**
   * @param {(now: number) => number} sweep closes the free sockets whose
   *   deadline has come and returns the earliest deadline left (or Infinity)
   */
  constructor(sweep) {
    this.#sweep = sweep;
  }

  /** Makes sure the timer fires no later than `deadline` (a clock.now() time). */
  schedule(deadline) {
    if (deadline >= this.#at) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#at = deadline;
    this.#timer = setTimeout(this.#fire, clock.timerDelay(deadline - clock.now()));
    this.#timer.unref();
  }

  stop() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#at = Infinity;
  }

  #fire = () => {
    this.#timer = null;
    this.#at = Infinity;
    const next = this.#sweep(clock.now());
    if (next !== Infinity) this.schedule(next);
  };
}

module.exports = { FreeSocketSweeper };
