'use strict';

// The keep decision: a socket that finished a request either goes to the
// pool (keepSocketAlive: its free timeout, its deadline) or straight to a
// request queued behind maxSockets (the agent's 'free' event, before core
// hands it on), or is not kept: the server's Keep-Alive max or hint, the
// TTL, its address left its host's answer (dns), close(), or its place under
// maxTotalSockets wanted by another origin.
const debug = require('debug')('steady-agent');
const { retiredReason } = require('../policy/reusable');
const { responseHint, coreVetoedOnlyTheHint } = require('../policy/keep_alive_header');
const { othersWaiting } = require('../policy/total_limit');
const { atTotalLimit } = require('../core/agent_maps');
const { requestOf } = require('../core/private_fields');
const { stateOf } = require('../state/socket_state');
const { CLOSE_REASONS } = require('../state/close_reasons');
const clock = require('../timers/clock');
const { SOCKET_NAME } = require('../constants');

class Keep {
  #agent;
  #config;
  #events;
  #learning;
  #expiry;
  #shutdown;
  #reuse;
  #dns;

  /**
   * @param {object} agent
   * @param {object} config the agent's settings (socketActiveTTL changes
   *   with agent.options)
   * @param {{ events, learning, expiry, shutdown, reuse, dns }} peers the
   *   agent's PoolEvents, IdleLearning, Expiry, Shutdown, Reuse and AgentDns
   *   (null: no dns option)
   */
  constructor(agent, config, { events, learning, expiry, shutdown, reuse, dns }) {
    this.#agent = agent;
    this.#config = config;
    this.#events = events;
    this.#learning = learning;
    this.#expiry = expiry;
    this.#shutdown = shutdown;
    this.#reuse = reuse;
    this.#dns = dns;
  }

  /** The agent's 'free': core is about to pool `socket` or hand it to a queued request. */
  freed(socket) {
    const state = stateOf(socket);
    if (state === undefined) return; // put in agent.freeSockets by hand, and freed by core
    const req = requestOf(socket);
    if (state.handedTo !== null) state.freedAfterHandoff(req); // an aborted handoff given back
    // A 'free' without a finished request: a fresh socket core made for a
    // queued request, or a request aborted before it ran. Each request is
    // counted once, by number: holding on to the request object until the
    // socket's next one would keep it, its response and their buffers
    // alive through garbage collections.
    if (req != null && req.res != null && state.finishRequest()) this.#events.requestFinished(state);
    // Otherwise core puts the socket in the pool (keepSocketAlive) or
    // destroys it.
    const queue = this.#agent.requests[state.pool];
    if (queue === undefined || queue.length === 0 || !socket.writable) return;
    // Core hands the socket straight to the first queued request, without
    // reuseSocket: it would keep the free timeout and reusedSocket false.
    if (req != null) this.#readServerHint(state, req.res);
    const reason = this.#retiredReason(socket, state, this.#config.socketActiveTTL > 0 ? clock.now() : 0);
    if (reason !== null) {
      // Core then sees an unwritable socket and destroys it; the queued
      // request gets a new socket when this one closes.
      this.#expiry.close(socket, state, reason);
      return;
    }
    const next = queue[0];
    if (state.requestsFinished > 0) next.reusedSocket = true;
    if (state.requests === state.requestsFinished) {
      state.handTo(next, clock.now(), socket.bytesRead);
      this.#reuse.activate(socket, state);
    } else {
      state.freedUnused();
      this.#reuse.armActiveTimeout(socket);
    }
  }

  // Why a socket that just served a request must serve no other, or its
  // address left its host's answer (dns).
  #retiredReason(socket, state, now) {
    const ttl = this.#config.socketActiveTTL;
    const reason = retiredReason(state.requestsLeft, ttl > 0 ? now - state.createdAt : 0, ttl);
    if (reason !== null || state.dnsHost === null) return reason;
    return this.#dns.retiredReason(socket, state);
  }

  // The server's Keep-Alive header on the response the socket just served.
  #readServerHint(state, res) {
    state.hint(res != null ? responseHint(res) : null);
    this.#events.serverHint(state);
  }

  /** keepSocketAlive after core's (`kept`: core's answer): whether the socket goes to the pool. */
  keep(socket, kept) {
    const state = stateOf(socket);
    if (!kept && !coreVetoedOnlyTheHint(this.#agent, requestOf(socket)?.res)) {
      if (debug.enabled) debug('%s not kept: core refused it (the server\'s hint, or a per-request TLS identity check)', socket[SOCKET_NAME]);
      state.markClosing(CLOSE_REASONS.NOT_KEPT); // observability: core destroys it
      return false;
    }
    this.#readServerHint(state, requestOf(socket)?.res);
    // A reuse that got its response: the server's limit is above its idle time.
    const now = clock.now();
    if (state.idleBeforeReuse > 0) this.#learning.alive(state);
    const reason = this.#notKeptReason(socket, state, now);
    if (reason !== null) {
      // Core destroys a socket it may not keep.
      state.markClosing(reason);
      if (debug.enabled) debug('%s not kept: %s', socket[SOCKET_NAME], reason);
      return false;
    }
    const timeout = this.#expiry.freeTimeout(socket, state, now);
    if (timeout <= 0) {
      if (debug.enabled) debug('%s not kept: the server\'s idle limit is within the margin', socket[SOCKET_NAME]);
      state.markClosing(CLOSE_REASONS.NOT_KEPT); // observability: core destroys it
      return false;
    }
    // Core has put the socket on the agent timeout (or its own reading of
    // the server's hint) and would close it when that fires. Where that is
    // before our deadline, disarm it; reuse arms the active timeout again.
    const armed = socket.timeout;
    if (armed > 0 && armed < timeout) socket.setTimeout(0);
    state.free(now, now + timeout, socket.bytesRead);
    if (timeout !== Infinity) this.#expiry.watch(state, now + timeout);
    this.#events.socketFree(socket, state, timeout);
    if (debug.enabled) debug('%s free, closes after %d ms idle', socket[SOCKET_NAME], clock.roundMs(timeout));
    return true;
  }

  // Why a socket that just served a request may not go to the pool, or null.
  #notKeptReason(socket, state, now) {
    const agent = this.#agent;
    // After close(), every socket closes as soon as it is free.
    if (this.#shutdown.closing) return CLOSE_REASONS.AGENT_CLOSE;
    const reason = this.#retiredReason(socket, state, now);
    if (reason !== null) return reason;
    // Its place under maxTotalSockets serves a request of another origin
    // (core starts a socket for it when this one closes: policy/total_limit).
    if (atTotalLimit(agent) && othersWaiting(agent, state.pool)) return CLOSE_REASONS.TOTAL_LIMIT;
    return null;
  }
}

module.exports = { Keep };
