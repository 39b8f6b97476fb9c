'use strict';

// Per-origin counters for getStats(), kept by the agent itself. An entry
// lives while its origin has open sockets, queued requests or a learned idle
// limit; after that it is "settled" and kept for a while (so that a poller
// still sees how the last sockets closed) until IDLE_CAPACITY more origins
// have settled after it. An agent that talks to 100,000 origins over its life
// thus holds the live ones plus at most IDLE_CAPACITY others.

const { roundMs } = require('../timers/clock');

const IDLE_CAPACITY = 1000;

// Every wait behind maxSockets that ended, whatever ended it (a socket,
// queueTimeout, the caller or destroy()), and how each request without a
// socket ended.
class QueueStats {
  waiting = 0; // requests queued behind maxSockets now
  count = 0;
  sum = 0;
  max = 0;
  queueFull = 0;
  queueTimeouts = 0;
  refusedAfterClose = 0;
  leftQueue = 0;
}

const NO_QUEUE = Object.freeze(new QueueStats());

// What most origins of a client of many never see while their sockets idle:
// errors, timeouts, closes, a Keep-Alive hint, a learned limit, a queue. Made
// at the first of these, so that an entry (one per idle socket, for such a
// client) holds one field for all six.
class RareStats {
  errors = 0;
  timeouts = 0;
  // reason -> count, made at the first close.
  closeReasons = null;
  announced = null; // ms, the server's last Keep-Alive: timeout
  learned = null; // ms, the idle limit the agent learned
  confidence = null; // 'tentative' or 'confirmed' while a limit is learned
  // The queue's counts (QueueStats), made at the origin's first request
  // without a socket at once: most origins never queue one.
  queue = null;
  // Happy Eyeballs attempts begun and won, by family (AttemptStats), made
  // at the first race: connections to IP literals never race.
  attempts = null;
}

// Connection attempts of the origin's Happy Eyeballs races (lib/connect).
class AttemptStats {
  ipv4 = 0;
  ipv6 = 0;
  wonIpv4 = 0;
  wonIpv6 = 0;
}

const NO_ATTEMPTS = Object.freeze(new AttemptStats());

const NO_RARE = Object.freeze(new RareStats());

/**
 * The entry's own RareStats, made at the first need. (A function, not a
 * private method: a class with one gives each instance a field for it.)
 */
function ownRare(entry) {
  if (entry.rare === NO_RARE) entry.rare = new RareStats();
  return entry.rare;
}

class OriginStats {
  // Counters, as getStats() reports them.
  socketsCreated = 0;
  socketsClosed = 0;
  requests = 0;
  reusedRequests = 0;
  // errors, timeouts, closeReasons, announced, learned and the queue's
  // counts (RareStats), each also a property of the entry's own.
  rare = NO_RARE;

  /**
   * @param {string} origin the pool name
   * @param {string} host the server's host, as the request named it
   * @param {number} port
   */
  constructor(origin, host, port) {
    this.origin = origin;
    this.host = host;
    this.port = port;
  }

  /**
   * Live, what keeps the entry from being dropped: sockets created and not
   * yet closed, the requests queued (queue.waiting) or a learned limit.
   */
  get live() {
    return this.open > 0 || this.learned !== null || (this.queue !== null && this.queue.waiting > 0);
  }

  /** A request was queued behind maxSockets. */
  queued() {
    (ownRare(this).queue ??= new QueueStats()).waiting++;
  }

  get queue() { return this.rare.queue; }

  /** Sockets created and not yet closed. */
  get open() {
    return this.socketsCreated - this.socketsClosed;
  }

  get errors() { return this.rare.errors; }
  set errors(count) { ownRare(this).errors = count; }
  get timeouts() { return this.rare.timeouts; }
  set timeouts(count) { ownRare(this).timeouts = count; }
  get closeReasons() { return this.rare.closeReasons; }
  get announced() { return this.rare.announced; }
  set announced(ms) { if (ms !== this.rare.announced) ownRare(this).announced = ms; }
  get learned() { return this.rare.learned; }
  set learned(ms) { if (ms !== this.rare.learned) ownRare(this).learned = ms; }
  get confidence() { return this.rare.confidence; }
  set confidence(value) { if (value !== this.rare.confidence) ownRare(this).confidence = value; }

  /** A Happy Eyeballs attempt to an address of `family` (4 or 6) began. */
  attemptStarted(family) {
    const attempts = (ownRare(this).attempts ??= new AttemptStats());
    if (family === 6) attempts.ipv6++;
    else attempts.ipv4++;
  }

  /** A Happy Eyeballs attempt to an address of `family` won its race. */
  attemptWon(family) {
    const attempts = (ownRare(this).attempts ??= new AttemptStats());
    if (family === 6) attempts.wonIpv6++;
    else attempts.wonIpv4++;
  }

  closed(reason) {
    this.socketsClosed++;
    const rare = ownRare(this);
    if (rare.closeReasons === null) rare.closeReasons = new Map();
    rare.closeReasons.set(reason, (rare.closeReasons.get(reason) ?? 0) + 1);
  }

  /** A queued request left the queue after `ms`. */
  waited(ms) {
    const queue = this.queue;
    queue.waiting--;
    queue.count++;
    queue.sum += ms;
    if (ms > queue.max) queue.max = ms;
  }

  /**
   * A request got no socket. `counter` names how (queueFull, queueTimeouts,
   * refusedAfterClose, leftQueue); `waitedMs` is its wait in the queue, or
   * null for a request that never joined it.
   */
  noSocket(counter, waitedMs) {
    (ownRare(this).queue ??= new QueueStats())[counter]++;
    if (waitedMs !== null) this.waited(waitedMs);
  }

  /**
   * The public view: counts of the agent's pools plus our counters, all
   * copies. `evidence`: the counts behind the learned limit
   * (LearningEngine#evidenceOf).
   */
  toJSON(agent, evidence = []) {
    const origin = this.origin;
    const queue = this.queue ?? NO_QUEUE;
    const attempts = this.rare.attempts ?? NO_ATTEMPTS;
    return {
      active: agent.sockets[origin]?.length ?? 0,
      free: agent.freeSockets[origin]?.length ?? 0,
      queued: agent.requests[origin]?.length ?? 0,
      socketsCreated: this.socketsCreated,
      socketsClosed: this.socketsClosed,
      requests: this.requests,
      reusedRequests: this.reusedRequests,
      errors: this.errors,
      timeouts: this.timeouts,
      closeReasons: this.closeReasons === null ? {} : Object.fromEntries(this.closeReasons),
      serverIdleTimeout: {
        announced: roundMs(this.announced), learned: roundMs(this.learned), confidence: this.confidence, evidence,
      },
      // Summed unrounded, rounded as shown.
      queueWaitMs: { count: queue.count, sum: roundMs(queue.sum), max: roundMs(queue.max) },
      queueFull: queue.queueFull,
      queueTimeouts: queue.queueTimeouts,
      refusedAfterClose: queue.refusedAfterClose,
      leftQueue: queue.leftQueue,
      connectAttempts: { ipv4: attempts.ipv4, ipv6: attempts.ipv6 },
      connectWins: { ipv4: attempts.wonIpv4, ipv6: attempts.wonIpv6 },
    };
  }
}

class OriginTable {
  #entries = new Map();
  // Settled entries, oldest first: the ones dropped when there are too many.
  #settled = new Map();
  #capacity;

  constructor(capacity = IDLE_CAPACITY) {
    this.#capacity = capacity;
  }

  get size() { return this.#entries.size; }

  get(origin) { return this.#entries.get(origin); }

  /** The entry for `origin`, made if needed, and no longer settled: the caller is about to make it live. */
  use(origin, host, port) {
    let entry = this.#entries.get(origin);
    if (entry === undefined) {
      entry = new OriginStats(origin, host, port);
      this.#entries.set(origin, entry);
    } else if (this.#settled.size > 0) {
      this.#settled.delete(origin);
    }
    return entry;
  }

  /** Called when an entry may have stopped being live: queue it for dropping. */
  settle(entry) {
    if (entry.live) return;
    const origin = entry.origin;
    this.#settled.delete(origin);
    this.#settled.set(origin, entry);
    if (this.#settled.size > this.#capacity) {
      // An entry only turns live again through use(), which unsettles it.
      const oldest = this.#settled.keys().next().value;
      this.#settled.delete(oldest);
      this.#entries.delete(oldest);
    }
  }

  values() { return this.#entries.values(); }
}

module.exports = { OriginStats, OriginTable, IDLE_CAPACITY };
