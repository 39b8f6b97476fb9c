'use strict';

// One timer per agent closes free sockets at their deadlines (or a little
// before: see sweepFree). A socket's own timer (socket.setTimeout) would cost
// a new Timeout object, a bound function and a timer-list insert on every
// request twice over: once when the socket enters the pool with its free
// timeout, once when it leaves with the active timeout. A free socket instead
// records its deadline, and this timer fires at the earliest deadline in the
// pool.
//
// The deadlines wait in a binary min-heap, so that finding the sockets due
// costs O(log n) per socket due, whatever the size of the pool: scanning
// every free socket of every pool each time the timer fired cost, with
// thousands of origins and deadlines spread over seconds, over a million
// socket visits to close a few thousand sockets.
//
// A socket enters the heap when it is freed and is not in it already. A
// socket freed again while still in the heap (it was reused, and freed
// again) keeps its place: its key is its first deadline, no later than the
// new one. When the timer pops it, the agent looks at the socket as it is
// then: free and due, it expires; free and not yet due, it goes back in with
// its current deadline; busy or closing, it simply leaves (and enters again
// when it is next freed). So a reuse costs a comparison, not a heap update:
// only a deadline earlier than the key (a server that announced a shorter
// Keep-Alive timeout since) moves the socket up.
//
// Deadlines are on the monotonic clock (clock.js). A deadline further away
// than a timer can wait (2^31-1 ms, about 24.8 days: a long freeSocketTimeout
// or socketActiveTTL, a server announcing Keep-Alive: timeout=3000000) gets a
// timer for the longest wait; when it fires early, the sweep finds nothing
// due and the timer is set again for what is left. Node would otherwise fire
// an overlong timer after 1 ms, and the agent would wake a thousand times a
// second.
const clock = require('./clock');
const { PHASES } = require('../state/socket_state');

/**
 * A binary min-heap of items keyed by a time. Each item carries its own
 * position in `heapIndex` (-1: not in the heap), so that it can be found and
 * taken out in O(log n) without a search. The keys live beside the items, in
 * an array of numbers, not on the items: one number per slot, where a field
 * holding a fractional time would cost every item a boxed number.
 */
class DeadlineHeap {
  #items = [];
  #keys = [];

  get size() { return this.#items.length; }

  /** The earliest key, or Infinity when empty. */
  get nextKey() { return this.#items.length === 0 ? Infinity : this.#keys[0]; }

  /**
   * Adds `item` with `key`, or, if it is in the heap already, moves it to
   * `key` when that is earlier than its own. Returns true when the heap
   * changed.
   */
  offer(item, key) {
    const index = item.heapIndex;
    if (index === -1) {
      this.#items.push(item);
      this.#keys.push(key);
      this.#up(this.#items.length - 1);
      return true;
    }
    // An index into another heap (a socket moved by hand from another
    // agent's pool) is not this heap's to change.
    if (this.#items[index] !== item || this.#keys[index] <= key) return false;
    this.#keys[index] = key;
    this.#up(index);
    return true;
  }

  /** Takes out and returns the item with the earliest key, if that key is at most `limit`; otherwise null. */
  popDue(limit) {
    if (this.#items.length === 0 || this.#keys[0] > limit) return null;
    const item = this.#items[0];
    this.#removeAt(0);
    return item;
  }

  /** Takes `item` out, if it is in the heap. */
  remove(item) {
    const index = item.heapIndex;
    if (index === -1 || this.#items[index] !== item) return;
    this.#removeAt(index);
  }

  #removeAt(index) {
    const items = this.#items;
    const keys = this.#keys;
    items[index].heapIndex = -1;
    const last = items.length - 1;
    const moved = items.pop();
    const key = keys.pop();
    if (index === last) return;
    this.#place(index, moved, key);
    // The last item, moved into the hole, may belong above it or below it.
    if (index > 0 && key < keys[(index - 1) >> 1]) this.#up(index);
    else this.#down(index);
  }

  #up(index) {
    const keys = this.#keys;
    const item = this.#items[index];
    const key = keys[index];
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (keys[parent] <= key) break;
      this.#place(index, this.#items[parent], keys[parent]);
      index = parent;
    }
    this.#place(index, item, key);
  }

  #down(index) {
    const keys = this.#keys;
    const length = keys.length;
    const item = this.#items[index];
    const key = keys[index];
    for (;;) {
      let child = 2 * index + 1;
      if (child >= length) break;
      if (child + 1 < length && keys[child + 1] < keys[child]) child++;
      if (key <= keys[child]) break;
      this.#place(index, this.#items[child], keys[child]);
      index = child;
    }
    this.#place(index, item, key);
  }

  #place(index, item, key) {
    this.#items[index] = item;
    this.#keys[index] = key;
    item.heapIndex = index;
  }
}

class FreeSocketSweeper {
  #heap = new DeadlineHeap();
  #timer = null;
  // When the timer fires; -Infinity while the sweep runs (it sets the timer
  // itself when it is done).
  #at = Infinity;
  #sweep;

  /**
   * @param {(now: number, sweeper: FreeSocketSweeper) => void} sweep takes
   *   the due sockets' states with nextDue() and deals with each
   */
  constructor(sweep) {
    this.#sweep = sweep;
  }

  /**
   * An agent's sweeper: sweepFree hands each free socket and probe due to
   * `due(state, now)`.
   */
  static forDue(due) {
    return new FreeSocketSweeper((now, sweeper) => sweepFree(sweeper, now, due));
  }

  /** Sockets waiting in the heap (for tests and stats). */
  get size() { return this.#heap.size; }

  /**
   * `state` must be looked at no later than `deadline`
   * (a clock.now() time). Nothing to do when it is in the heap already with
   * an earlier key: the sweep then finds its current deadline.
   */
  watch(state, deadline) {
    if (this.#heap.offer(state, deadline) && deadline < this.#at) this.#arm(this.#heap.nextKey);
  }

  /** `state` leaves the heap (its socket closed, or left the pool for good). */
  unwatch(state) {
    this.#heap.remove(state);
  }

  /** The next state whose key is at most `limit`, taken out of the heap, or null. */
  nextDue(limit) {
    return this.#heap.popDue(limit);
  }

  /** The earliest key in the heap (Infinity: empty). */
  get nextKey() {
    return this.#heap.nextKey;
  }

  stop() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#at = Infinity;
  }

  #arm(deadline) {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#at = deadline;
    this.#timer = setTimeout(this.#fire, clock.timerDelay(deadline - clock.now()));
    this.#timer.unref();
  }

  #fire = () => {
    this.#timer = null;
    this.#at = -Infinity;
    try {
      this.#sweep(clock.now(), this);
    } finally {
      this.#at = Infinity;
      const next = this.#heap.nextKey;
      if (next !== Infinity) this.#arm(next);
    }
  };
}

// A free socket is closed when its deadline has come, or when it comes
// within a short reach of the sweep: a sixty-fourth of how long the socket
// may stay idle, and at most EARLY_MAX_MS. Without that reach, a pool whose
// deadlines are spread (a client of many origins, each used now and then)
// wakes the process once per socket, and the wake-up costs more than the
// close; with it, the sockets due within a few milliseconds of one another
// close in one sweep. Closing a free socket a little early is safe (the
// server cannot have closed it first; a request in those milliseconds opens
// a connection) and closing it late is not (a server's idle limit is the
// deadline's reason): the timer still fires at the earliest deadline, never
// after it. Probes are judged at their own deadline:
// how long the server kept one open is what the agent learns from.
const EARLY_SHARE = 1 / 64;
const EARLY_MAX_MS = 16;

/**
 * An agent's sweep (its FreeSocketSweeper's timer fired at `now`): calls
 * `due(state, now)` for each free socket and probe whose deadline has come (for a
 * free socket, is within reach: above), each looked at as it is now. A
 * probe is judged once every free socket due has been dealt with: a probe
 * outliving its bound forgets the limit those sockets' deadlines came from.
 */
function sweepFree(sweeper, now, due) {
  // Timers run on a millisecond clock: a deadline within 1 ms is due.
  const limit = now + 1;
  const reach = limit + EARLY_MAX_MS;
  let later = null;
  let key;
  while ((key = sweeper.nextKey) <= reach) {
    const state = sweeper.nextDue(key);
    const phase = state.phase;
    // Busy, closing or upgraded: back in the heap when next freed.
    if (phase !== PHASES.FREE && phase !== PHASES.PROBE) continue;
    const deadline = state.freeDeadline;
    if (phase === PHASES.FREE && deadline - limit <= Math.min(EARLY_MAX_MS, (deadline - state.freedAt) * EARLY_SHARE)) {
      due(state, now);
      continue;
    }
    // A probe, after the free sockets; or a deadline beyond reach (freed
    // again since it entered the heap, or a short idle limit): back in the
    // heap once the loop is done (in it now, it would be popped again).
    if (deadline !== Infinity) (later ??= []).push(state);
    // Past the due ones, the first that stays ends the sweep: a pool of
    // short idle limits pops one socket early per sweep, not a reach's worth.
    if (key > limit) break;
  }
  if (later === null) return;
  for (const other of later) {
    const phase = other.phase;
    const deadline = other.freeDeadline;
    if (phase === PHASES.PROBE && deadline <= limit) due(other, now);
    else if (phase === PHASES.FREE || phase === PHASES.PROBE) sweeper.watch(other, deadline);
  }
}

module.exports = { FreeSocketSweeper, DeadlineHeap, sweepFree, EARLY_MAX_MS };
