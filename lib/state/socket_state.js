'use strict';

// Everything the agent knows about one of its sockets, in one object.
//
// Sockets are core's objects, and core's own code (_http_client, _http_agent,
// net) reads them on every request. The agent adds one property to each, once,
// when it takes the socket on: this object, behind one module-local Symbol.
// Every field is set in the constructor, so every state has one shape and the
// socket's own shape changes once, not at every step of its life.
//
// A socket's life is its phase:
//
//   active ──free()──> free ──startProbe()──> probe
//     ^                 │
//     └───activate()────┘
//   any phase ──markClosing(reason)──> closing
//   active ──upgrade()──> upgraded (an HTTP upgrade took it from the agent)
//
// Transitions are methods, and every write is one: other modules read the
// fields and call the methods. This module does no I/O, reads no clock and
// requires nothing of ours but the close reasons beside it: the agent
// destroys sockets, edits core's maps and passes the time in
// (test/socket-state.test.js tests it without sockets).
const { CLOSE_REASONS } = require('./close_reasons');
const { defineFields } = require('./packed_fields');

const kState = Symbol('steady-agent.socketState');

const PHASES = Object.freeze({
  ACTIVE: 'active',
  FREE: 'free',
  PROBE: 'probe',
  CLOSING: 'closing',
  UPGRADED: 'upgraded',
});

class SocketState {
  /**
   * @param {object} socket the socket (the sweeper finds states, not sockets)
   * @param {{ agent: object }} owner what the socket's listeners call, in
   *   one hop (as ws's socket[kWebSocket]): the agent's handler of socket
   *   events, whose `agent` owns the socket
   * @param {object} createOptions the options core created the socket with:
   *   its removeSocket needs them
   * @param {object} entry its origin's counters; entry.origin
   *   is its pool's name
   * @param {number} now clock.now()
   * @param {number} id the agent's number for the socket
   * @param {number} wallNow Date.now()
   */
  constructor(socket, owner, createOptions, entry, now, id, wallNow) {
    this.socket = socket;
    this.owner = owner;
    this.createOptions = createOptions;
    this.entry = entry;
    // Its yes/no facts, one bit each, and its phase, the limit that set its
    // free deadline and why it closed, a few bits each (see FLAGS and PACKED
    // below).
    this.flags = 0;
    // Its times and other fractional numbers (see NUMBERS below), in one
    // array of unboxed doubles: as fields, each would be a number object of
    // its own on every socket, idle ones included.
    this.numbers = [now, 0, now, now, Infinity, 0, Infinity, wallNow];
    // agentkeepalive's public socket facts, the socket's properties read
    // them: its number in the agent, the requests
    // assigned to it and those it finished.
    this.id = id;
    this.requests = 1;
    this.requestsFinished = 0;
    // socket.bytesRead when it entered the pool, or was handed straight to a
    // queued request: more later means bytes came while it sat idle (or,
    // after a reuse, that the response had begun).
    this.bytesReadWhenFreed = 0;
    // The server's Keep-Alive timeout in ms (undefined: not announced).
    this.serverTimeout = undefined;
    // Its place in the agent's heap of deadlines,
    // -1 when out of it.
    this.heapIndex = -1;
  }

  /** The agent that owns it. */
  get agent() {
    return this.owner.agent;
  }

  /** Its pool's name. */
  get pool() {
    return this.entry.origin;
  }

  /** Idle: in the pool or a probe, or was when the agent decided to close it. */
  get idle() {
    const phase = this.phase;
    if (phase === PHASES.CLOSING) return this.closedIdle;
    return phase === PHASES.FREE || phase === PHASES.PROBE;
  }

  /** Takes a request: from the pool (idle since freedAt) or straight from the previous one. */
  activate() {
    this.phase = PHASES.ACTIVE;
    this.requests++;
    this.requestsLeft--;
  }

  /** Connected at `now`. */
  connect(now) {
    this.connected = true;
    this.connectMs = now - this.createdAt;
  }

  /** Connected before the agent took it on: no connect time to measure. */
  connectedBefore() {
    this.connected = true;
  }

  /** Core's own listeners were taken off it (`taken`), or stayed. */
  standInForCore(taken) {
    this.coreListens = taken;
  }

  /** Core's listeners would have been removed now ('agentRemove'): the agent stands in no more. */
  coreLeft() {
    this.coreListens = false;
  }

  /** Freed into the pool, the agent's 'error' listener off (core's counts for it). */
  errorsToCore() {
    this.errorsOff = true;
  }

  /** Reused: the agent's 'error' listener back. */
  errorsBack() {
    this.errorsOff = false;
  }

  /** It emitted an error (the close reasons decide from it). */
  markErrored() {
    this.errored = true;
  }

  /** Taken out of core's maps already: core's removeSocket on its 'close' has nothing left to do. */
  markRemoved() {
    this.removed = true;
  }

  /**
   * Closed to make room under maxTotalSockets: out of core's maps, and its
   * place in core's count given at once to a new socket.
   */
  givePlaceUp() {
    this.placeGivenUp = true;
    this.removed = true;
  }

  /** With the `dns` option: it follows `host`'s answer. */
  followHost(host) {
    this.dnsHost = host;
  }

  /** The server's close of it has been learned from. */
  markLearnedFrom() {
    this.learnedFrom = true;
  }

  /** Its free deadline moves to `deadline`. */
  setFreeDeadline(deadline) {
    this.freeDeadline = deadline;
  }

  /** `limit` (one of limitedBy's values) sets its free deadline. */
  limitBy(limit) {
    this.limitedBy = limit;
  }

  /** agentkeepalive's request counts, as a caller writes them. */
  setRequests(count) {
    this.requests = count;
  }

  setRequestsFinished(count) {
    this.requestsFinished = count;
  }

  /**
   * Handed to `req`, a queued request, without entering the pool, at `now`;
   * `bytesRead` is the socket's count then.
   */
  handTo(req, now, bytesRead) {
    this.handedTo = req;
    this.idleBeforeReuse = 0;
    this.requestStartedAt = now;
    this.bytesReadWhenFreed = bytesRead;
  }

  /** A fresh socket core made for a queued request, freed before serving it: it sat idle for none. */
  freedUnused() {
    this.idleBeforeReuse = 0;
  }

  /**
   * The request it was handed to was aborted before taking it: that request
   * spent no slot of the socket's or the server's counts.
   */
  handBack() {
    this.requests--;
    this.requestsLeft++;
  }

  /**
   * Freed again after handTo, with `req` attached. When the request it was
   * handed to was aborted before taking it, core frees the socket with the
   * previous request still attached (Node 18-22) or the aborted one, which
   * has no response (Node 24+ attaches it when handing the socket over).
   */
  freedAfterHandoff(req) {
    const handedTo = this.handedTo;
    this.handedTo = null;
    if (handedTo !== req || req.res == null) this.handBack();
  }

  /** True when it finished a request not yet counted (counted now). */
  finishRequest() {
    if (this.requestsFinished >= this.requests) return false;
    this.requestsFinished++;
    return true;
  }

  /** The server's Keep-Alive hint on the response it just served (null: none). */
  hint(parsed) {
    this.serverTimeout = parsed === null || parsed.timeout === undefined ? undefined : parsed.timeout * 1000;
    if (parsed !== null && parsed.max !== undefined) this.requestsLeft = parsed.max;
  }

  /** Enters the pool at `now` until `deadline`; `bytesRead` is the socket's count now. */
  free(now, deadline, bytesRead) {
    this.phase = PHASES.FREE;
    this.freedAt = now;
    this.freeDeadline = deadline;
    this.bytesReadWhenFreed = bytesRead;
  }

  /**
   * Entered the pool while someone subscribed to reuse events (`observed`),
   * or not: what the reuse event may say of its idle time.
   */
  freedSeen(observed) {
    this.freedObserved = observed ? 'observed' : 'unobserved';
  }

  /** Reused: how it was last freed (freedObserved), now 'handed' until it is freed again. */
  takeFreedObserved() {
    const was = this.freedObserved;
    this.freedObserved = 'handed';
    return was;
  }

  /** Picked from the pool at `now` for a request. */
  picked(now) {
    this.idleBeforeReuse = now - this.freedAt;
    this.requestStartedAt = now;
  }

  /**
   * Out of the pool, watched until the server closes it or it has been idle
   * `bound` ms. Returns the new deadline.
   */
  startProbe(bound) {
    this.phase = PHASES.PROBE;
    this.freeDeadline = this.freedAt + bound;
    return this.freeDeadline;
  }

  /** The agent decided to close it (it does so next), for `reason` (the first reason stands). */
  markClosing(reason) {
    if (this.phase !== PHASES.CLOSING) {
      this.closedIdle = this.idle;
      this.phase = PHASES.CLOSING;
    }
    this.closedBy = 'agent';
    if (this.closeReason === null) this.closeReason = reason;
  }

  /** Its close is the server's (the agent did not close it). */
  closedByServer() {
    if (this.closedBy === null) this.closedBy = 'server';
  }

  /** Left the agent for an HTTP upgrade; its new owner will close it. */
  upgrade(reason) {
    this.phase = PHASES.UPGRADED;
    if (this.closeReason === null) this.closeReason = reason;
  }
}

// A state is kept for every socket the agent holds, idle ones included, so
// its yes/no facts are bits of one field (`flags`), not a field each; each reads and writes as a boolean property.
const FLAGS = [
  // It connected (or was connected when the agent took it on).
  'connected',
  // The server's close of it has been learned from (once per socket).
  'learnedFrom',
  // It emitted an error.
  'errored',
  // Taken out of core's maps already (an active timeout): core's own
  // removeSocket on 'close' has nothing left to do.
  'removed',
  // Closed to make room under maxTotalSockets, its place in core's
  // socket count given at once to a new socket: core's 'close' must not
  // count it out a second time.
  'placeGivenUp',
  // It was idle (free or a probe) when the agent decided to close it.
  'closedIdle',
  // Core's own listeners were taken off it, and the agent's do their work
  // until its 'agentRemove'.
  'coreListens',
  // In the pool, the agent's 'error' listener off: core's counts for it
  // (core/socket_listeners.js, leaveErrorsToCore).
  'errorsOff',
];
// Facts of a few values each, kept as a few bits of `flags` above the yes/no
// facts: each reads and writes as a property holding one of its values.
const PACKED = {
  // Where it is in its life (PHASES).
  phase: Object.values(PHASES),
  // Which limit set freeDeadline.
  limitedBy: ['freeSocketTimeout', 'ttl', 'hint', 'learned'],
  // Why it closed, when the agent decided; null until
  // then; the first decision stands.
  closeReason: [null, ...Object.values(CLOSE_REASONS)],
  // For the reuse event: since its last request began, it
  // was handed on without entering the pool, or entered it (at freedAt)
  // while someone subscribed to reuse events, or while no one did.
  freedObserved: ['handed', 'observed', 'unobserved'],
  // Who closed it: 'agent' or 'server' once either did; null while open.
  closedBy: [null, 'agent', 'server'],
};
// Facts few sockets have, kept beside the state rather than as fields of
// every one (an idle socket's state holds no slot for them): each reads and
// writes as a property, its default when not set, and a bit of `flags` tells
// whether it is set, so that reading the default costs no lookup.
const RARE = {
  // The queued request it was handed to on 'free' (null: none); it may be
  // aborted before it takes the socket, and then the socket served nothing
  // new.
  handedTo: null,
  // With the `dns` option: the host whose cached answer the socket
  // connected through, or null.
  dnsHost: null,
};
// The numbers kept in `numbers`, in its order, each read and written as a
// property of its own. Times are clock.now() (monotonic) ms.
const NUMBERS = [
  // For the TTL and the lifetime (createdWall is wall-clock).
  'createdAt',
  // From creation to connected (TLS and proxy tunnel included): the round
  // trip estimate of the stale judgement; 0 until
  // connected, or if it connected before the agent took it on.
  'connectMs',
  // When its current request got it (picked from the pool, or handed on):
  // how long after that a failure came is the stale judgement's other fact.
  'requestStartedAt',
  // When it last entered the pool; meaningful while free or a probe.
  'freedAt',
  // When a free socket (or a probe) is closed (limitedBy says why).
  'freeDeadline',
  // ms it sat idle before its current request (0: fresh, or handed
  // straight from one request to the next).
  'idleBeforeReuse',
  // Requests the server still takes (Keep-Alive: max).
  'requestsLeft',
  // Date.now() when it was created: agentkeepalive's SOCKET_CREATED_TIME.
  'createdWall',
];
defineFields(SocketState, FLAGS, PACKED, RARE, NUMBERS);

/** The state of a socket the agent took on, or undefined. */
function stateOf(socket) {
  return socket[kState];
}

/** Takes `socket` on: its one added property. */
function attachState(socket, state) {
  socket[kState] = state;
  return state;
}

module.exports = { SocketState, PHASES, stateOf, attachState };
