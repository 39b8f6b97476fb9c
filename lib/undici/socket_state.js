'use strict';

// One socket of the transport: its state object (one per socket, every field
// set in its constructor), its idle deadline, and its listeners. What we
// know and what we do:
//
// - A socket's life: made in the transport's connect() (dns, connectTimeout,
//   TCP keep-alive); active from the moment undici writes a request on it
//   (the `undici:client:sendHeaders` channel: it names the socket); idle from
//   the request's end (the wrapper's onComplete / onResponseEnd); closed (its
//   'close', with the reason read from what we saw: the server's FIN or an
//   error, our own close, undici's idle timeout).
// - Idle limits: undici closes an idle socket itself after keepAliveTimeout
//   (our freeSocketTimeout) or the server's hint less
//   keepAliveTimeoutThreshold (our serverTimeoutMargin). A learned limit (the
//   learning engine the agent runs, fed the same facts: idle closes by the
//   server, collisions, faults, and reuses that got their response) closes
//   it sooner, by one lazy timer per socket,
//   armed only for origins with a learned limit. Destroying an idle socket
//   is safe for undici: it drops the client's connection and opens another
//   for the next request.
// - Trying a learned limit: undici cannot take an idle socket out of its
//   pool, so no socket can stay open past the limit where no request gets
//   it, as the agent's probe does. Instead the trial is one of time: the
//   first socket to reach the limit starts it (atDeadline's 'probe'), and
//   once probeBound has passed since that socket was freed with no server
//   close or collision confirming the limit, it lapses (the engine's
//   trialLapsed): forgotten, and tested by the next sockets, which idle
//   past it. A real limit closes them about there, which confirms it; a
//   one-off reset never does.
//
// The learning itself is the transport's: a state calls into its origin's
// transport, an instance, never a require back.
const debug = require('debug')('steady-agent');
const { stateOf } = require('./channel');
// Every module of the agent this file uses, in one place.
const { socketName } = require('../agent/socket_name');
const { now, roundMs } = require('../timers/clock');
const { CLOSE_REASONS } = require('../state/close_reasons');
const { channels: events } = require('../observe/channels');

class SocketState {
  constructor(origin, socket, secure, id) {
    this.id = id; // the transport's count of sockets, as the agent numbers its
    this.origin = origin;
    this.socket = socket;
    this.secure = secure;
    this.createdAt = now();
    this.connectMs = 0;
    this.connected = false;
    this.active = false;
    this.requestsFinished = 0;
    this.freedAt = this.createdAt;
    this.idleBeforeReuse = 0;
    this.requestStartedAt = 0;
    this.bytesReadWhenFreed = 0;
    this.hinted = undefined; // ms, the server's Keep-Alive timeout
    this.notKept = false; // its last response said Connection: close
    this.exchange = null; // the request it serves
    this.serverClosed = false; // FIN from the server
    this.errored = false;
    this.closeReason = null; // ours, when we closed it
    this.learnedFrom = false; // its close was weighed already
    this.deadline = Infinity; // when an idle socket goes, by a learned limit
    this.allowedMs = Infinity; // the idle time that deadline allows
    this.timer = null;
    this.ttlTimer = null; // socketActiveTTL's (./socket_limits.js)
  }

  /** undici wrote `exchange`'s request on the socket. */
  started(exchange) {
    const at = now();
    this.active = true;
    this.exchange = exchange;
    exchange.state = this;
    this.requestStartedAt = at;
    this.idleBeforeReuse = this.requestsFinished > 0 ? at - this.freedAt : 0;
    this.origin.transport.limitsOfSockets.started(this);
    if (exchange.waitedMs >= 0) {
      this.origin.transport.publish(events.dequeued, { request: exchange.opts, waitedMs: exchange.waitedMs }, this.origin, this.socket);
      exchange.waitedMs = -1;
    }
    if (this.requestsFinished > 0) {
      this.origin.stats.reusedRequests++;
      if (events.reuse.hasSubscribers) this.origin.transport.publish(events.reuse, { idleMs: this.idleBeforeReuse }, this.origin, this.socket);
      if (debug.enabled) debug('%s reused for request %d', this.name, this.requestsFinished + 1);
    }
  }

  /** agentkeepalive's socket name, `sock[<id>#<pool>]`, as the agent's debug lines name its sockets. */
  get name() {
    return socketName(this.id, this.origin.name);
  }

  /** How long it may stay idle now, in ms (Infinity: no limit), and which limit decided. */
  freeTimeout() {
    const transport = this.origin.transport;
    const allowed = transport.engine.freeTimeout(this.origin.name, transport.uncapped, this.hinted, transport.margin);
    return { timeout: allowed.timeout, limitedBy: LIMITED_BY[allowed.limitedBy] };
  }

  /** Its request ended: idle from now, until the next or a limit. */
  finished() {
    const at = now();
    this.active = false;
    this.exchange = null;
    this.requestsFinished++;
    this.freedAt = at;
    this.bytesReadWhenFreed = this.socket.bytesRead;
    const origin = this.origin;
    origin.stats.requests++;
    const transport = origin.transport;
    if (this.idleBeforeReuse > 0) transport.alive(this);
    transport.lapseDue(origin, at);
    // undici closes it now, as the response asked: our reason, and nothing
    // to learn from (the server's close says nothing of its idle limit).
    if (this.notKept) {
      this.closeReason ??= CLOSE_REASONS.NOT_KEPT;
      this.learnedFrom = true;
      return;
    }
    // Its address left the host's answer: it serves no other request.
    if (transport.dns !== null && transport.dns.retires(this, false)) return;
    // Its TTL, maxFreeSockets, or a connect waiting for a place (./socket_limits.js).
    if (transport.limitsOfSockets.freed(this)) return;
    if (events.free.hasSubscribers || debug.enabled) this.freed();
    this.arm();
  }

  /** The free event and debug line: what was chosen for its idle time. */
  freed() {
    const { timeout, limitedBy } = this.freeTimeout();
    const origin = this.origin;
    if (events.free.hasSubscribers) origin.transport.publish(events.free, { freeTimeoutMs: timeout, limitedBy }, origin, this.socket);
    if (debug.enabled) debug('%s free, closes after %d ms idle', this.name, roundMs(timeout));
  }

  /**
   * Sets the idle socket's deadline. undici closes the socket itself after
   * freeSocketTimeout, or, where the server hinted, after the hint less the
   * margin: a timer of ours only where a shorter limit applies (a learned
   * one, or freeSocketTimeout under a longer hint).
   */
  arm() {
    const origin = this.origin;
    const transport = origin.transport;
    const hinted = this.hinted;
    this.allowedMs = Infinity;
    const allowed = transport.engine.freeTimeout(origin.name, transport.uncapped, hinted, transport.margin);
    if (allowed.limitedBy === 'hint' || (allowed.limitedBy === null && hinted === undefined)) return;
    this.allowedMs = allowed.timeout;
    this.deadline = this.freedAt + allowed.timeout;
    if (this.timer === null) this.timer = setTimeout(idleCheck, Math.max(this.deadline - now(), 1), this);
  }

  /** Closes the socket now, for `reason` (the first reason given wins). */
  close(reason) {
    this.closeReason ??= reason;
    if (debug.enabled) debug('%s closing: %s', this.name, this.closeReason);
    this.socket.destroy();
  }
}

// The free event's `limitedBy`, by idleAllowance's answer (null: the free timeout).
const LIMITED_BY = Object.freeze({ hint: 'hint', learned: 'learned', null: 'freeSocketTimeout' });

// One lazy timer per socket: a socket busy again when it fires lets it go
// (finished() arms the next); one still idle before its deadline waits on.
// At the deadline, the limits as they are now decide (atDeadline): close
// it, wait longer (a limit lapsed or is on trial), or close it and start the
// origin's trial (see the header: the socket cannot be kept as a probe).
function idleCheck(state) {
  state.timer = null;
  if (state.active || state.socket.destroyed || state.allowedMs === Infinity) return;
  const at = now();
  const left = state.deadline - at;
  if (left > 0) {
    state.timer = setTimeout(idleCheck, Math.max(left, 1), state);
    return;
  }
  const origin = state.origin;
  const transport = origin.transport;
  transport.lapseDue(origin, at);
  const decision = transport.engine.atDeadline(origin.name, transport.uncapped, state.hinted, transport.margin, state.allowedMs);
  if (decision.action === 'wait') {
    state.arm();
    return;
  }
  if (decision.action === 'probe') {
    transport.engine.startProbe(origin.name, { from: state.freedAt, end: state.freedAt + decision.bound });
    if (debug.enabled) debug('%s reached the learned idle limit: closed, the limit on trial until %d ms after it was freed', state.name, roundMs(decision.bound));
  }
  state.close(CLOSE_REASONS.FREE_TIMEOUT);
}

// Socket listeners, named: `this` is the socket.
// An idle socket the server closed (a FIN, or a reset) is an observation,
// unless bytes came while it was idle: a server that misbehaved says nothing
// of when it closes idle sockets.
function idleClose(state) {
  if (!state.active && state.connected && state.requestsFinished > 0 && state.socket.bytesRead === state.bytesReadWhenFreed) {
    state.origin.transport.observe(state, now() - state.freedAt, false);
  }
}

function onSocketEnd() {
  const state = stateOf(this);
  if (!state.serverClosed && !state.errored) idleClose(state);
  state.serverClosed = true;
}

function onSocketError(err) {
  const state = stateOf(this);
  // undici destroying the socket itself (its pool closed): nothing the server did.
  if (err?.code === 'UND_ERR_DESTROYED') state.learnedFrom = true;
  // undici ends a socket the server closed with an error of its own: not one to report.
  if (debug.enabled && !state.serverClosed) debug('%s error: %s %s', state.name, err.code || err.name, err.message);
  if (!state.errored && !state.serverClosed) idleClose(state);
  state.errored = true;
}

function onSocketClose() {
  const state = stateOf(this);
  state.origin.transport.closed(state);
}

/** Listens to `socket` for what its state must know. */
function listen(socket) {
  socket.on('end', onSocketEnd);
  socket.on('error', onSocketError);
  socket.on('close', onSocketClose);
}

module.exports = { SocketState, listen };
