'use strict';

// What the agent does on each of its sockets' events: it takes a socket on
// (its state and listeners), and hears it err, time out while active, be
// upgraded away or close. One per agent. Each listener reaches it in one
// hop, through the socket's state (`state.owner`, as ws's
// `socket[kWebSocket]`); core's part of each event is core/socket_listeners.js's,
// which answers, and the agent acts here.
const debug = require('debug')('steady-agent');
const { agentKeyOf, requestOf } = require('../core/private_fields');
const { SocketState, stateOf, attachState } = require('../state/socket_state');
const clock = require('../timers/clock');
const { exposeSocketProperties } = require('./socket_name');
const {
  listen, unlisten, upgradeCall, leaveErrorsToCore, coreClose, coreTimeout, coreRemove, erroredWhileFree,
} = require('../core/socket_listeners');
const { SocketTimeoutError, AgentDestroyedError, SocketHangUpError } = require('../errors');
const { CLOSE_REASONS, closeReason } = require('../state/close_reasons');
const { countIn } = require('../core/agent_maps');
const { markFailure } = require('./stale_marks');
const { CREATE_ID, INIT_SOCKET, SOCKET_NAME } = require('../constants');

// The listeners on every socket; `this` is the socket.
const LISTENERS = Object.freeze({
  connect() { stateOf(this).connect(clock.now()); },
  // Added only where core's own listeners were taken off: core's 'free'
  // listener emits 'free' on the agent, to the agent's own 'free' listener,
  // which pools the socket or hands it on (Node's contract between its
  // socket and its agent: lib/_http_agent.js, installListeners, onFree, and
  // the Agent constructor's `this.on('free', ...)`).
  free() {
    const state = stateOf(this);
    state.agent.emit('free', this, state.createOptions);
    leaveErrorsToCore(this, state, LISTENERS);
  },
  end() { stateOf(this).owner.requestFailed(this, null); },
  timeout() { stateOf(this).owner.timedOut(this); },
  error(err) { stateOf(this).owner.errored(this, err); },
  close() { stateOf(this).owner.closed(this); },
  agentRemove() { stateOf(this).owner.agentRemoved(this); },
});

class SocketEvents {
  #events;
  #learning;
  #expiry;
  #shutdown;
  #dns;
  // The socket core's createSocket set up, while INIT_SOCKET takes it on.
  #fromCore = null;
  // That socket won a Happy Eyeballs race, counted when the race began.
  #raced = false;

  constructor(agent, events, learning, expiry, shutdown, dns) {
    // The agent whose sockets these are (read by SocketState#agent).
    this.agent = agent;
    this.#events = events;
    this.#learning = learning;
    this.#expiry = expiry;
    this.#shutdown = shutdown;
    this.#dns = dns;
  }

  /** Core's createSocket called back: `socket` is the one that serves the request. */
  created(err, socket, creation) {
    // A failure before there was a socket of ours (a proxy tunnel, a
    // Happy Eyeballs race); destroy() ending one under way is not one, nor
    // is the end of one whose request was aborted (SocketHangUpError).
    if (err) {
      if (!(err instanceof AgentDestroyedError) && !(err instanceof SocketHangUpError)) this.#events.socketCreateFailed();
    } else {
      this.#fromCore = socket; // if INIT_SOCKET throws, never the next socket
      this.#raced = creation.raced === true;
      this.agent[INIT_SOCKET](socket, creation.options);
      this.#fromCore = null;
    }
    creation.made();
  }

  /** agent[INIT_SOCKET]: tags and listens to a new socket, once. */
  initSocket(socket, options) {
    if (stateOf(socket) !== undefined || socket[SOCKET_NAME] !== undefined) return;
    const agent = this.agent;
    const pool = agentKeyOf(options) ?? agent.getName(options);
    const entry = this.#events.origin(pool, options);
    const state = attachState(socket, new SocketState(socket, this, options, entry, clock.now(), agent[CREATE_ID](), Date.now()));
    exposeSocketProperties(socket); // agentkeepalive's socket properties, read from `state`
    // Nagle off on every socket: core's https client did not set it before
    // Node 24.15, and a request written in two pieces then waits for the
    // server's delayed ACK.
    socket.setNoDelay(true);
    this.#shutdown.opened();
    if (this.#dns !== null) this.#dns.socketCreated(state, options); // follows its host's answer
    this.#events.socketCreated(socket, state, this.#raced && this.#fromCore === socket);
    listen(socket, state, LISTENERS, this.#fromCore === socket);
    if (debug.enabled) debug('%s created', socket[SOCKET_NAME]);
  }

  // An HTTP upgrade took the socket: the new owner handles it from now on.
  #handOver(socket, state) {
    state.upgrade(CLOSE_REASONS.UPGRADE); // observability
    this.#shutdown.left();
    unlisten(socket, LISTENERS);
  }

  /** Core's removeSocket ran for `socket`: an upgrade hands it over. */
  removed(socket, state) {
    if (upgradeCall(socket, state)) this.#handOver(socket, state);
  }

  // 'agentRemove': core's part (the agent's removeSocket then sees an
  // upgrade), or on a socket core did not set up. Core also emits it when it
  // destroys a free socket after an error: that one is closing in the
  // agent's hands, not leaving them.
  agentRemoved(socket) {
    const state = stateOf(socket);
    const errored = erroredWhileFree(socket, state);
    if (coreRemove(socket, state, LISTENERS)) {
      this.agent.removeSocket(socket, state.createOptions);
      if (errored) this.#freeErrored(socket, state, socket.errored ?? null);
      return;
    }
    socket.removeListener('agentRemove', LISTENERS.agentRemove); // once
    if (!state.idle) this.#handOver(socket, state);
  }

  // The socket's own 'timeout' (socket.setTimeout: the active timeout).
  timedOut(socket) {
    const state = stateOf(socket);
    coreTimeout(socket, state);
    this.#expiry.timeoutHeard();
    // The 'timeout' an expired free socket emits once we closed it.
    if (state.closedBy === 'agent' || state.learnedFrom) return;
    this.#events.socketTimedOut(state);
    // A free socket on a timer of its own (a subclass's keepSocketAlive
    // armed one): its 'timeout' is being emitted already.
    if (state.idle) {
      this.#expiry.retire(socket, state, CLOSE_REASONS.FREE_TIMEOUT);
      return;
    }
    // The caller listening for 'timeout' on its request decides itself. The
    // request's listeners are all the caller's: core adds its own to the
    // socket, never to the request.
    const req = requestOf(socket);
    if (req != null && req.listenerCount('timeout') > 0) {
      if (debug.enabled) debug('%s timed out; the request handles it', socket[SOCKET_NAME]);
      return;
    }
    const timeout = socket.timeout;
    if (debug.enabled) debug('%s timed out after %d ms while active: destroyed', socket[SOCKET_NAME], clock.roundMs(timeout));
    state.markClosing(CLOSE_REASONS.ACTIVE_TIMEOUT);
    // Out of agent.sockets before the request hears of it, and a request
    // queued behind it gets its new socket now, as in agentkeepalive.
    this.agent.removeSocket(socket, state.createOptions);
    state.markRemoved();
    socket.destroy(new SocketTimeoutError(timeout, socket[SOCKET_NAME]));
  }

  errored(socket, err) {
    const state = stateOf(socket);
    if (state.idle) {
      this.#freeErrored(socket, state, err);
      return;
    }
    state.markErrored();
    this.#events.socketErrored(state);
    if (debug.enabled) debug('%s error: %s %s', socket[SOCKET_NAME], err.code || err.name, err.message);
    this.requestFailed(socket, err);
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE') this.#learning.collision(socket, state, clock.now());
    // Anywhere else, counting must hide nothing: the error is the caller's,
    // as it would be without the agent. Our listener is the only one when
    // no request is attached, or the caller took its own off; then, as
    // agentkeepalive does (it re-emits when it is the socket's only
    // 'error' listener), it is emitted again without ours, so it reaches
    // the caller's process as an unhandled 'error' would, instead of being
    // swallowed by our counting.
    if (socket.listenerCount('error') === 1) {
      socket.removeListener('error', LISTENERS.error);
      socket.emit('error', err);
    }
  }

  // An error on a free socket (or a probe) is counted and ends it; it never
  // reaches the process. Core's listener destroys the socket (`err`: null
  // if it kept none); take it out of the pool now.
  #freeErrored(socket, state, err) {
    state.markErrored();
    this.#events.socketErrored(state);
    if (debug.enabled) {
      if (err === null) debug('%s error while free (not kept by the socket)', socket[SOCKET_NAME]);
      else debug('%s error: %s %s', socket[SOCKET_NAME], err.code || err.name, err.message);
    }
    this.#expiry.removeFromPool(socket, state);
  }

  // A request on `socket` failed: with `err`, or with the 'socket hang up'
  // that core's 'end' listener, after ours, is about to create (err null).
  // Its error is marked; after a stale collision the free sockets idle as
  // long close, so a retry gets a younger socket.
  requestFailed(socket, err) {
    const state = stateOf(socket);
    if (state.idle || state.closedBy === 'agent') return;
    const knownLimit = state.serverTimeout ?? this.#learning.limitOf(state.pool);
    const stale = markFailure(socket, state, err, clock.now(), knownLimit, this.agent.freeSockets[state.pool]);
    for (const older of stale) this.#expiry.retire(older, stateOf(older), CLOSE_REASONS.STALE_PEER);
  }

  closed(socket) {
    const state = stateOf(socket);
    // Core's 'close' listener, taken off: the agent stands in for it.
    if (coreClose(state)) this.agent.removeSocket(socket, state.createOptions);
    const wasFree = state.idle;
    this.#learning.socketClosed(socket, state, clock.now()); // the server's close, learned from
    this.#expiry.unwatch(state);
    if (state.dnsHost !== null) this.#dns.socketClosed(state);
    // Core's 'close' listener, which runs before ours, has just counted out
    // a place given to another socket already (admission's room under
    // maxTotalSockets).
    if (state.placeGivenUp) countIn(this.agent);
    const req = requestOf(socket);
    const complete = req != null && req.res != null && req.res.complete;
    this.#events.socketClosed(socket, state, closeReason(state.closeReason, state.errored, wasFree, complete, socket.readableEnded));
    if (debug.enabled) debug('%s closed after %d requests', socket[SOCKET_NAME], state.requestsFinished);
    if (state.phase !== 'upgraded') this.#shutdown.left();
  }
}

module.exports = { SocketEvents, LISTENERS };
