'use strict';

// lib/free_socket_sweeper.js without sockets: the heap of deadlines the
// agent's one sweep timer works from, and the timer itself. The agent's use
// of it (free sockets closed at their deadline, probes, overlong timers) is
// tested with real sockets in free-timeout.test.js, server-idle-learning.test.js
// and timer-limits.test.js.
const assert = require('node:assert/strict');
const { DeadlineHeap, FreeSocketSweeper, sweepFree, EARLY_MAX_MS } = require('../lib/timers/free_socket_sweeper');
const { SocketState, PHASES } = require('../lib/agent/socket_state');
const clock = require('../lib/timers/clock');

const item = (name) => ({ name, heapIndex: -1 });

// A deterministic shuffle (a linear congruential generator): the same order
// in every run.
function shuffled(list, seed = 12345) {
  const out = list.slice();
  let x = seed;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function drain(heap) {
  const out = [];
  let next;
  while ((next = heap.popDue(Infinity)) !== null) out.push(next);
  return out;
}

describe('DeadlineHeap', () => {
  it('gives the items back earliest key first, whatever the order they came in', () => {
    const heap = new DeadlineHeap();
    const items = Array.from({ length: 200 }, (_, i) => ({ ...item(i), key: 1000 + i * 7.25 }));
    for (const it of shuffled(items)) heap.offer(it, it.key);
    assert.equal(heap.size, 200);
    assert.equal(heap.nextKey, 1000);
    assert.deepEqual(drain(heap).map((it) => it.name), items.map((it) => it.name));
    assert.equal(heap.size, 0);
    assert.equal(heap.nextKey, Infinity);
  });

  it('keeps equal keys and gives them all back', () => {
    const heap = new DeadlineHeap();
    const items = Array.from({ length: 20 }, (_, i) => item(i));
    for (const it of items) heap.offer(it, 5);
    assert.deepEqual(drain(heap).map((it) => it.name).sort((a, b) => a - b), items.map((it) => it.name));
  });

  it('records each item\'s place, and -1 once it is out', () => {
    const heap = new DeadlineHeap();
    const a = item('a');
    const b = item('b');
    heap.offer(a, 20);
    heap.offer(b, 10);
    assert.notEqual(a.heapIndex, -1);
    assert.equal(b.heapIndex, 0);
    assert.equal(heap.popDue(Infinity), b);
    assert.equal(b.heapIndex, -1);
    assert.equal(a.heapIndex, 0);
    heap.remove(a);
    assert.equal(a.heapIndex, -1);
    assert.equal(heap.size, 0);
  });

  it('popDue takes only an item whose key is at most the limit', () => {
    const heap = new DeadlineHeap();
    const a = item('a');
    heap.offer(a, 100);
    assert.equal(heap.popDue(99.9), null);
    assert.equal(heap.size, 1);
    assert.equal(heap.popDue(100), a);
    assert.equal(heap.popDue(100), null);
  });

  it('offer moves an item already in the heap only to an earlier key', () => {
    const heap = new DeadlineHeap();
    const a = item('a');
    const b = item('b');
    heap.offer(a, 50);
    heap.offer(b, 40);
    assert.equal(heap.offer(a, 60), false, 'a later key leaves the item where it is');
    assert.equal(heap.offer(a, 50), false);
    assert.equal(heap.nextKey, 40);
    assert.equal(heap.offer(a, 30), true);
    assert.equal(heap.nextKey, 30);
    assert.equal(heap.size, 2);
    assert.deepEqual(drain(heap), [a, b]);
  });

  it('remove takes any item out and keeps the order of the rest', () => {
    const heap = new DeadlineHeap();
    const items = Array.from({ length: 101 }, (_, i) => item(i));
    for (const it of shuffled(items, 7)) heap.offer(it, it.name);
    const removed = new Set(shuffled(items, 99).slice(0, 40));
    for (const it of removed) heap.remove(it);
    for (const it of removed) assert.equal(it.heapIndex, -1);
    heap.remove(items[0]); // twice for items[0] when it was removed already: nothing happens
    const left = items.filter((it) => !removed.has(it) && it !== items[0]);
    assert.deepEqual(drain(heap), left);
  });

  it('leaves alone an item whose place is in another heap', () => {
    const mine = new DeadlineHeap();
    const other = new DeadlineHeap();
    const a = item('a');
    const b = item('b');
    mine.offer(a, 10);
    other.offer(b, 20);
    // b's index (0) is a's place in `mine`.
    assert.equal(mine.offer(b, 5), false);
    mine.remove(b);
    assert.equal(mine.size, 1);
    assert.equal(mine.popDue(Infinity), a);
    assert.equal(b.heapIndex, 0);
    assert.equal(other.popDue(Infinity), b);
  });

  it('taking the earliest item out touches O(log n) items, whatever n', () => {
    // Every write of an item's place is counted: the work of a pop is the
    // items it moves.
    for (const n of [1024, 16384]) {
      const heap = new DeadlineHeap();
      let writes = 0;
      const counted = (name) => {
        let index = -1;
        return {
          name,
          get heapIndex() { return index; },
          set heapIndex(value) { writes++; index = value; },
        };
      };
      const items = Array.from({ length: n }, (_, i) => counted(i));
      for (const it of shuffled(items, n)) heap.offer(it, it.name);
      writes = 0;
      assert.equal(heap.popDue(0), items[0]);
      const bound = 2 * Math.log2(n) + 4;
      assert.ok(writes <= bound, `${writes} writes to pop one of ${n} (bound ${bound})`);
      writes = 0;
      heap.remove(items[n >> 1]);
      assert.ok(writes <= bound, `${writes} writes to remove one of ${n} (bound ${bound})`);
    }
  });
});

describe('FreeSocketSweeper', () => {
  const sweepers = [];
  afterEach(() => {
    for (const sweeper of sweepers.splice(0)) sweeper.stop();
  });

  /**
   * A sweeper whose sweep takes every due state; `fired(n)` resolves once n
   * sweeps have taken something. (A timer may fire a little before its
   * delay, by the event loop's cached time: that sweep takes nothing and
   * sets the timer again.)
   */
  function sweeperTaking() {
    const firings = [];
    let onFire = () => {};
    const sweeper = new FreeSocketSweeper((now) => {
      const taken = [];
      let state;
      while ((state = sweeper.nextDue(now + 1)) !== null) taken.push(state);
      if (taken.length === 0) return;
      firings.push({ now, taken });
      onFire();
    });
    sweepers.push(sweeper);
    const fired = (count) => new Promise((resolve) => {
      onFire = () => { if (firings.length >= count) resolve(firings); };
      onFire();
    });
    return { sweeper, fired };
  }

  it('fires once for the states due together and hands over each once', async () => {
    const { sweeper, fired } = sweeperTaking();
    const now = clock.now();
    const states = [item('a'), item('b'), item('c')];
    for (const state of states) sweeper.watch(state, now + 20);
    const firings = await fired(1);
    assert.equal(firings.length, 1);
    assert.deepEqual(firings[0].taken.map((s) => s.name).sort(), ['a', 'b', 'c']);
    assert.ok(firings[0].now + 1 >= now + 20, 'not before the deadline');
    assert.equal(sweeper.size, 0);
  });

  it('fires again for what is left after a sweep, and for a state watched earlier', async () => {
    // On a busy machine the first timer can come after both deadlines and
    // take both at once, which shows nothing of firing again: then once
    // more, the deadlines further apart.
    for (const gap of [50, 500, 5000]) {
      const { sweeper, fired } = sweeperTaking();
      const now = clock.now();
      const late = item('late');
      const early = item('early');
      sweeper.watch(late, now + 10 + gap);
      sweeper.watch(early, now + 10);
      const [first] = await fired(1);
      if (first.taken.length === 2) continue;
      const firings = await fired(2);
      assert.deepEqual(firings.map((f) => f.taken.map((s) => s.name)), [['early'], ['late']]);
      return;
    }
    assert.fail('each first sweep came after both deadlines');
  });

  it('a state watched again with a later deadline keeps its earlier key', async () => {
    const { sweeper, fired } = sweeperTaking();
    const now = clock.now();
    const state = item('s');
    sweeper.watch(state, now + 10);
    sweeper.watch(state, now + 100000);
    const [firing] = await fired(1);
    assert.deepEqual(firing.taken, [state]);
  });

  it('an unwatched state is never handed over', async () => {
    const { sweeper, fired } = sweeperTaking();
    const now = clock.now();
    const gone = item('gone');
    const kept = item('kept');
    sweeper.watch(gone, now + 5);
    sweeper.watch(kept, now + 15);
    sweeper.unwatch(gone);
    assert.equal(gone.heapIndex, -1);
    const [firing] = await fired(1);
    assert.deepEqual(firing.taken, [kept]);
  });

  it('a state watched again during a sweep is handed over again, at its new key', async () => {
    const now = clock.now();
    const state = item('again');
    const sweeps = [];
    let resolveSecond;
    const second = new Promise((resolve) => { resolveSecond = resolve; });
    const sweeper = new FreeSocketSweeper((at) => {
      const taken = sweeper.nextDue(at + 1);
      if (taken === null) return; // fired early (see sweeperTaking)
      sweeps.push(at);
      assert.equal(taken, state);
      // As the agent does for a socket freed again since it was watched.
      if (sweeps.length === 1) sweeper.watch(state, at + 30);
      else resolveSecond();
    });
    sweepers.push(sweeper);
    sweeper.watch(state, now + 5);
    await second;
    assert.equal(sweeps.length, 2);
    assert.ok(sweeps[1] + 1 >= sweeps[0] + 30, 'not before its new key');
    assert.equal(sweeper.size, 0);
  });

  it('stop() clears the timer; watching again sets it for the earliest key', async () => {
    // As above: a first timer late past both keys takes both; then once
    // more, the keys further apart.
    for (const gap of [30, 500, 5000]) {
      const { sweeper, fired } = sweeperTaking();
      const now = clock.now();
      const a = item('a');
      const b = item('b');
      sweeper.watch(a, now + 10);
      sweeper.stop();
      sweeper.watch(b, now + 10 + gap);
      const [firing] = await fired(1);
      if (firing.taken.length === 2 && firing.now + 1 >= now + 10 + gap) continue;
      assert.deepEqual(firing.taken, [a], 'the earliest key decides the timer, not the last watched');
      const [, again] = await fired(2);
      assert.deepEqual(again.taken, [b]);
      return;
    }
    assert.fail('each first sweep came after both keys');
  });
});

describe('sweepFree', () => {
  // Sweepers whose sweep is called by hand: their timers (armed when a
  // state is watched) are stopped after each test.
  const sweepers = [];
  afterEach(() => {
    for (const sweeper of sweepers.splice(0)) sweeper.stop();
  });

  function handSweeper() {
    const sweeper = new FreeSocketSweeper(() => {});
    sweepers.push(sweeper);
    return sweeper;
  }

  // Socket states as the agent keeps them, without sockets: `idle` ms of
  // idle limit, freed so that the deadline is `at`.
  function freeState(name, at, idle) {
    const state = new SocketState({ name }, null, null, null, 0, 0, 0);
    state.free(at - idle, at, 0);
    return state;
  }

  /** One sweep at `now` over `states` (all watched): the names handed to `due`, in order. */
  function sweepAt(now, states) {
    const sweeper = handSweeper();
    for (const state of states) sweeper.watch(state, state.freeDeadline);
    const due = [];
    sweepFree(sweeper, now, (state) => due.push(state.socket.name));
    return { due, left: sweeper };
  }

  it('closes in one sweep the free sockets due within its reach, and leaves the rest watched at their deadlines', () => {
    const now = 100000;
    const states = [
      freeState('now', now, 5000),
      freeState('soon', now + EARLY_MAX_MS - 1, 5000),
      freeState('later', now + EARLY_MAX_MS + 5, 5000),
    ];
    const { due, left } = sweepAt(now, states);
    assert.deepEqual(due, ['now', 'soon']);
    assert.equal(left.size, 1);
    assert.equal(left.nextDue(Infinity), states[2]);
  });

  it('a short idle limit is honoured almost to the millisecond: at most a sixty-fourth of it early', () => {
    const now = 100000;
    // Idle limit 128 ms: 2 ms early at most (plus the millisecond of the clock).
    const close = freeState('close', now + 3, 128);
    const far = freeState('far', now + 4, 128);
    const { due, left } = sweepAt(now, [close, far]);
    assert.deepEqual(due, ['close']);
    assert.equal(left.nextDue(Infinity), far);
    assert.equal(far.heapIndex, -1);
  });

  it('past the due ones, the first socket that stays ends the sweep: those after it wait for the next', () => {
    const now = 100000;
    const short = freeState('short', now + 5, 128);
    const long = freeState('long', now + 10, 5000);
    const { due, left } = sweepAt(now, [short, long]);
    assert.deepEqual(due, []);
    assert.equal(left.size, 2);
    assert.equal(left.nextDue(Infinity), short);
    assert.equal(left.nextDue(Infinity), long);
  });

  it('a probe is judged at its own deadline, not early, and after the free sockets', () => {
    const now = 100000;
    const probe = freeState('probe', now, 5000);
    probe.phase = PHASES.PROBE;
    const early = freeState('early probe', now + 6, 5000);
    early.phase = PHASES.PROBE;
    const free = freeState('free', now + 4, 5000);
    const { due, left } = sweepAt(now, [probe, early, free]);
    assert.deepEqual(due, ['free', 'probe']);
    assert.equal(left.size, 1);
    assert.equal(left.nextDue(Infinity), early);
  });

  it('a socket busy or closing since it was watched leaves the heap, and one freed again goes back at its new deadline', () => {
    const now = 100000;
    const busy = freeState('busy', now, 5000);
    busy.activate();
    const closing = freeState('closing', now, 5000);
    closing.markClosing('free-timeout');
    const again = freeState('again', now, 5000);
    const left = handSweeper();
    for (const state of [busy, closing, again]) left.watch(state, now);
    again.free(now, now + 4000, 0);
    const due = [];
    sweepFree(left, now, (state) => due.push(state.socket.name));
    assert.deepEqual(due, []);
    assert.equal(left.size, 1);
    assert.equal(left.nextDue(Infinity), again);
    assert.equal(again.freeDeadline, now + 4000);
  });
});
