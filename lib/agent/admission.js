'use strict';

// Admission: whether and where a request may wait for a socket. After
// close() a request fails; behind a proxy its options are rewritten; queued
// behind maxSockets, maxQueue may turn it away and queueTimeout bounds its
// wait (agent/queue_bounds.js); and with every place under maxTotalSockets
// taken, an idle socket of another origin gives its place up.
const { AgentClosedError } = require('../errors');
const { QueueBounds } = require('./queue_bounds');
const { placeFor } = require('../policy/total_limit');
const { countOut, atTotalLimit } = require('../core/agent_maps');
const { stateOf } = require('../state/socket_state');
const { CLOSE_REASONS } = require('../state/close_reasons');

class Admission {
  #agent;
  #events;
  #learning;
  #expiry;
  #shutdown;
  // maxQueue and queueTimeout, or null: neither set.
  #queueBounds;
  // Proxy routing, or null.
  #proxy;
  // The freedAt of an idle socket of this agent's, or undefined (one put
  // in the pool by hand frees no place in core's count).
  #idleSince = (socket) => {
    const state = stateOf(socket);
    return state !== undefined && state.agent === this.#agent ? state.freedAt : undefined;
  };

  /**
   * @param {object} agent
   * @param {object} config normalizeOptions(the caller's options)
   * @param {{ events, learning, expiry, shutdown, proxy }} peers the agent's
   *   PoolEvents, IdleLearning, Expiry, Shutdown and proxy routes (or null)
   */
  constructor(agent, config, { events, learning, expiry, shutdown, proxy }) {
    this.#agent = agent;
    this.#events = events;
    this.#learning = learning;
    this.#expiry = expiry;
    this.#shutdown = shutdown;
    this.#proxy = proxy;
    this.#queueBounds = QueueBounds.create(config, events);
  }

  /**
   * A request reaches addRequest: the options core should see, or undefined
   * after close() (the request then fails on the next tick, as core fails a
   * request that gets no socket).
   */
  admit(req, options, port, localAddress) {
    if (this.#shutdown.closing) {
      this.#events.refusedAfterClose(req, options, port, localAddress); // observability
      req.onSocket(null, new AgentClosedError());
      return undefined;
    }
    // Proxy: absolute-form rewrite of http requests.
    return this.#proxy === null ? options : this.#proxy.route(req, options, port, localAddress);
  }

  /** Core queued `req` behind maxSockets: maxQueue may turn it away; queueTimeout starts its timer. */
  queued(req, pool, options) {
    if (this.#queueBounds !== null && !this.#queueBounds.admit(this.#agent, req, pool, options)) return;
    this.#events.requestQueued(req, pool, options); // observability
  }

  /**
   * Core's addRequest named `pool`, which has no free socket: with every
   * place under maxTotalSockets taken, core would queue the request until
   * some socket closes. An idle socket of another origin, or a probe, gives
   * its place up.
   */
  makeRoom(pool) {
    const agent = this.#agent;
    if (!atTotalLimit(agent)) return;
    const socket = placeFor(agent, pool, this.#learning.probes(), this.#idleSince);
    if (socket === null) return;
    const state = stateOf(socket);
    this.#learning.closed(socket, state); // a probe no longer
    countOut(agent); // core counts it out on its 'close', and decides on this request now
    state.givePlaceUp();
    this.#expiry.retire(socket, state, CLOSE_REASONS.TOTAL_LIMIT);
  }
}

module.exports = { Admission };
