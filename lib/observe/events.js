'use strict';

// What the agent tells the outside about its pools, and every count it
// keeps: agentkeepalive's counters on the agent (createSocketCount and the
// rest), the per-origin counters of getStats(), and the events on
// diagnostics_channel. The agent makes one call here at each step of a
// socket's life, and each call updates all three.
//
// Counting is an integer increment; a message is built, and a clock read,
// only when its channel has subscribers, so an agent nobody watches does no
// more than count. getStats() is kept here and not by subscribing to our own
// channels: that would make every channel look watched.
const { OriginTable } = require('./stats');
const { channels, publish } = require('./channels');
const { now } = require('../timers/clock');
const { stateOf } = require('../state/socket_state');


// How a request ended without a socket: its getStats() counter, and the
// `outcome` the no-socket channel and OpenTelemetry (error.type) name it by.
const QUEUE_FULL = Object.freeze({ counter: 'queueFull', name: 'queue-full' }); // maxQueue
const QUEUE_TIMEOUT = Object.freeze({ counter: 'queueTimeouts', name: 'queue-timeout' }); // queueTimeout
const AGENT_CLOSED = Object.freeze({ counter: 'refusedAfterClose', name: 'agent-closed' }); // after close()
const LEFT_QUEUE = Object.freeze({ counter: 'leftQueue', name: 'left-queue' }); // aborted, or destroy() during close()

// Our tag on a queued request (core's object): { events, entry, at }.
const kQueued = Symbol('steady-agent.queued');

/** Publishes `message` about `agent`'s origin `entry` (and `socket`) on `channel`. */
function publishAbout(channel, message, agent, entry, socket) {
  message.agent = agent;
  message.origin = entry.origin;
  message.host = entry.host;
  message.port = entry.port;
  if (socket !== undefined) message.socket = socket;
  publish(channel, message);
}

/**
 * Listener build-up: code that adds a listener to the socket on every
 * request and never removes it ends, on a pooled socket, in Node's
 * MaxListenersExceededWarning, which names the socket but not the agent, the
 * origin or the requests. One process 'warning' listener serves every
 * agent, added with the first; it runs only when a warning is emitted, and
 * does nothing more unless the channel has subscribers.
 */
let hearingWarnings = false;

function onWarning(warning) {
  if (warning.name !== 'MaxListenersExceededWarning' || !channels.listeners.hasSubscribers) return;
  const socket = warning.emitter;
  const state = socket != null ? stateOf(socket) : undefined;
  // Not one of an agent's sockets, or one an HTTP upgrade took from it.
  if (state === undefined || state.phase === 'upgraded') return;
  publishAbout(channels.listeners, {
    event: warning.type,
    count: warning.count,
    requests: state.requests,
  }, state.agent, state.entry, socket);
}

class PoolEvents {
  #agent;
  #origins = new OriginTable();

  constructor(agent) {
    this.#agent = agent;
    if (!hearingWarnings) {
      hearingWarnings = true;
      process.on('warning', onWarning);
    }
  }

  #use(pool, options) {
    // Core's request options always name the host and port.
    return this.#origins.use(pool, options.host, Number(options.port));
  }

  #publish(channel, message, entry, socket) {
    publishAbout(channel, message, this.#agent, entry, socket);
  }

  // ---- sockets ----------------------------------------------------------------

  /** The per-origin counters of `pool`, for a new socket's state. */
  origin(pool, options) {
    return this.#use(pool, options);
  }

  /**
   * The agent took on a new socket (its state is attached). `counted`: it
   * was counted in createSocketCount as its race began (raceReport).
   */
  socketCreated(socket, state, counted = false) {
    if (!counted) this.#agent.createSocketCount++;
    const entry = state.entry;
    entry.socketsCreated++;
    if (channels.create.hasSubscribers) this.#publish(channels.create, {}, entry, socket);
  }

  /**
   * The origin's side of a Happy Eyeballs race (lib/connect): its getStats()
   * counters, its channel messages, and its settling once the race failed.
   */
  raceReport(pool, options) {
    const entry = this.#use(pool, options);
    return {
      entry,
      publish: (channel, message) => this.#publish(channel, message, entry),
      settle: () => this.#origins.settle(entry),
      // agentkeepalive's counts of sockets made and closed: core's path
      // counts a socket as createConnection returns it, before it connects
      // (code written for agentkeepalive reads createSocketCount right
      // after http.request()), even one whose lookup then fails; a race
      // counts as that socket from its start, and as closed if it fails.
      began: () => { this.#agent.createSocketCount++; },
      failed: () => { this.#agent.closeSocketCount++; },
    };
  }

  /** Making a socket failed before there was one of ours (a proxy tunnel). */
  socketCreateFailed() {
    this.#agent.createSocketErrorCount++;
  }

  /** The socket finished a request. */
  requestFinished(state) {
    this.#agent.requestCount++;
    state.entry.requests++;
  }

  /** The socket, having served a request, got another one: from the pool or straight from the queue. */
  socketReused(socket, state) {
    const entry = state.entry;
    entry.reusedRequests++;
    const freed = state.takeFreedObserved();
    if (channels.reuse.hasSubscribers) {
      let idleMs = null; // it entered the pool before anyone subscribed
      if (freed === 'handed') idleMs = 0;
      else if (freed === 'observed') idleMs = now() - state.freedAt;
      this.#publish(channels.reuse, { idleMs }, entry, socket);
    }
  }

  /**
   * The socket entered the pool for `freeTimeoutMs` (Infinity: no limit);
   * its state's `limitedBy` names the limit that set it.
   */
  socketFree(socket, state, freeTimeoutMs) {
    state.freedSeen(channels.reuse.hasSubscribers);
    if (channels.free.hasSubscribers) {
      this.#publish(channels.free, { freeTimeoutMs, limitedBy: state.limitedBy }, state.entry, socket);
    }
  }

  /** The server's Keep-Alive timeout on the response the socket just served (its state's serverTimeout). */
  serverHint(state) {
    const entry = state.entry;
    const ms = state.serverTimeout ?? null;
    if (entry.announced === ms) return;
    entry.announced = ms;
    if (channels.serverIdleLimit.hasSubscribers) {
      this.#publish(channels.serverIdleLimit, { ms, source: 'announced' }, entry);
    }
  }

  socketTimedOut(state) {
    this.#agent.timeoutSocketCount++;
    state.entry.timeouts++;
  }

  /** The socket emitted 'error': before it connected, a creation error. */
  socketErrored(state) {
    if (state.connected) this.#agent.errorSocketCount++;
    else this.#agent.createSocketErrorCount++;
    state.entry.errors++;
  }

  /** The socket closed, for `reason` (one of CLOSE_REASONS). */
  socketClosed(socket, state, reason) {
    this.#agent.closeSocketCount++;
    const entry = state.entry;
    entry.closed(reason);
    if (channels.close.hasSubscribers) {
      this.#publish(channels.close, {
        reason,
        requests: state.requestsFinished,
        lifetimeMs: now() - state.createdAt,
      }, entry, socket);
    }
    this.#origins.settle(entry);
  }

  // ---- what the agent learned ---------------------------------------------------

  /**
   * The learning engine weighed what a server of `pool` did: `verdict` says
   * what it holds now (`ms`, `confidence`), what the fact did (`outcome`)
   * and why, in words (policy/learning_engine.js).
   */
  serverIdleLimitChanged(pool, verdict) {
    const entry = this.#origins.get(pool);
    if (entry === undefined) return;
    entry.learned = verdict.ms === null ? null : Math.round(verdict.ms);
    entry.confidence = verdict.confidence;
    if (channels.serverIdleLimit.hasSubscribers) {
      this.#publish(channels.serverIdleLimit, {
        ms: entry.learned, source: 'learned', confidence: entry.confidence, outcome: verdict.outcome, why: verdict.why,
      }, entry);
    }
    if (entry.learned === null) this.#origins.settle(entry);
  }

  // ---- the queue behind maxSockets ------------------------------------------------

  /** Core queued `req` in `pool` (it found no socket and may open no more). */
  requestQueued(req, pool, options) {
    const entry = this.#use(pool, options);
    entry.queued();
    req[kQueued] = { events: this, entry, at: now() };
    req.once('socket', PoolEvents.#onDequeued);
    req.once('close', PoolEvents.#onClosedWhileQueued);
    if (channels.queued.hasSubscribers) this.#publish(channels.queued, { request: req }, entry);
  }

  // `this` is the request.
  static #onDequeued(socket) {
    const queued = PoolEvents.#leave(this);
    queued.events.#dequeued(this, socket, queued);
  }

  // Failed (agent.destroy()) or aborted while waiting: it leaves the queue without a socket.
  static #onClosedWhileQueued() {
    const queued = PoolEvents.#leave(this);
    queued.events.#endedWithoutSocket(this, queued.entry, LEFT_QUEUE, now() - queued.at);
  }

  /** The request's queue record, its listeners gone: it has left the queue. */
  static #leave(req) {
    req.removeListener('socket', PoolEvents.#onDequeued);
    req.removeListener('close', PoolEvents.#onClosedWhileQueued);
    const queued = req[kQueued];
    req[kQueued] = undefined;
    return queued;
  }

  #dequeued(req, socket, { entry, at }) {
    const waitedMs = now() - at;
    entry.waited(waitedMs);
    if (channels.dequeued.hasSubscribers) {
      this.#publish(channels.dequeued, { request: req, waitedMs }, entry, socket);
    }
    this.#origins.settle(entry);
  }

  /** queueTimeout took `req` out of the queue; its error is on the way. */
  queueTimedOut(req) {
    const queued = PoolEvents.#leave(req);
    this.#endedWithoutSocket(req, queued.entry, QUEUE_TIMEOUT, now() - queued.at);
  }

  /** maxQueue turned `req` away: it never waited. */
  queueFull(req, pool, options) {
    this.#endedWithoutSocket(req, this.#use(pool, options), QUEUE_FULL, null);
  }

  /**
   * close() was called: `req` gets no socket. Its arguments are addRequest's;
   * its pool is named as core's addRequest would (the agent's options over
   * the request's), so that it counts under the origin it was for.
   */
  refusedAfterClose(req, options, port, localAddress) {
    if (typeof options === 'string') options = { host: options, port, localAddress };
    const merged = { __proto__: null, ...options, ...this.#agent.options };
    merged.host ||= 'localhost'; // core's default, in getName
    const pool = this.#agent.getName(merged);
    this.#endedWithoutSocket(req, this.#use(pool, merged), AGENT_CLOSED, null);
  }

  /** `req` got no socket, by `outcome` (QUEUE_FULL...), after waiting `waitedMs` in the queue (null: it never joined it). */
  #endedWithoutSocket(req, entry, outcome, waitedMs) {
    entry.noSocket(outcome.counter, waitedMs);
    if (channels.noSocket.hasSubscribers) {
      this.#publish(channels.noSocket, { request: req, outcome: outcome.name, waitedMs: waitedMs ?? 0 }, entry);
    }
    this.#origins.settle(entry);
  }

  // ---- getStats() -------------------------------------------------------------------

  /** @param {(pool: string) => object[]} evidenceOf the counts behind each learned limit */
  stats(evidenceOf) {
    const origins = {};
    for (const entry of this.#origins.values()) origins[entry.origin] = entry.toJSON(this.#agent, evidenceOf(entry.origin));
    return { origins };
  }
}

/** The origin entry of a socket the agent created (for steady-agent/otel), or undefined. */
function socketOrigin(socket) {
  return stateOf(socket)?.entry;
}

module.exports = { PoolEvents, socketOrigin };
