'use strict';

// Shutdown: agent.close(), a graceful close (no new request, the ones in
// flight and in the queue served, every socket closed as soon as it is free,
// and a promise that resolves when the agent holds no socket), and
// agent.destroy(). This module keeps the count of the sockets the agent
// holds and the promise, closes the idle sockets and probes, stops the
// timers, and walks the agent's maps; admission refuses requests after
// close() and the keep decision closes each socket as it is freed.
const { AgentDestroyedError } = require('../errors');
const { CLOSE_REASONS } = require('../state/close_reasons');
const { stateOf } = require('../state/socket_state');
const { SOCKET_NAME } = require('../constants');
const { takeAllFree, takeAllQueued } = require('../core/agent_maps');

class Shutdown {
  #agent;
  // Sockets the agent opened and has not seen close (an upgraded socket
  // leaves the count when it leaves the agent).
  #open = 0;
  // Sockets core is still making: a proxy tunnel being opened, an
  // asynchronous createConnection.
  #creating = 0;
  #promise = null;
  #resolve = null;

  constructor(agent) {
    this.#agent = agent;
  }

  /**
   * Core starts making a socket. Returns the function to call when it is
   * made or has failed; calls after the first change nothing.
   */
  creatingOne() {
    this.#creating++;
    let pending = true;
    return () => {
      if (!pending) return;
      pending = false;
      this.#creating--;
      this.#settle();
    };
  }

  /** The agent has a new socket of its own. */
  opened() {
    this.#open++;
  }

  /** A socket is no longer the agent's (closed, or upgraded): close() may be done. */
  left() {
    this.#open--;
    this.#settle();
  }

  /** True from the first close() on. */
  get closing() { return this.#promise !== null; }

  /**
   * agent.close(): the one promise of every call. The first takes the free
   * sockets out of agent.freeSockets and closes them (core takes a socket
   * out of its pool only on its 'close', a tick or more after destroy():
   * until then it could be handed out), closes the probes and stops the
   * timers (`expiry`, `learning`, `dns`: the agent's peers, dns null when off).
   */
  close({ expiry, learning, dns }) {
    if (this.#promise !== null) return this.#promise;
    const promise = new Promise((resolve) => { this.#resolve = resolve; });
    this.#promise = promise;
    this.#settle();
    for (const socket of takeAllFree(this.#agent)) expiry.close(socket, stateOf(socket), CLOSE_REASONS.AGENT_CLOSE);
    Shutdown.#endIdle(CLOSE_REASONS.AGENT_CLOSE, expiry, learning, dns);
    return promise;
  }

  // The probes close, and no timer stays.
  static #endIdle(reason, expiry, learning, dns) {
    for (const probe of learning.takeProbes()) expiry.close(probe, stateOf(probe), reason);
    expiry.stop();
    if (dns !== null) dns.stop();
  }

  /**
   * destroy() is about to end every socket (core's destroy() does). Each
   * socket of the agent's is marked closed by it. Requests queued behind
   * maxSockets are left to core, which opens a new connection for them as
   * each destroyed socket closes (as core's agent and agentkeepalive do),
   * except during close(), which opens none: they fail. A connection still
   * opening a proxy tunnel holds its place in agent.sockets without being a
   * socket of the agent's yet: it ends now, and its request, never sent,
   * fails with ERR_AGENT_DESTROYED. The probes close, and no timer stays.
   */
  destroying({ expiry, learning, dns }) {
    const agent = this.#agent;
    if (this.closing) {
      for (const req of takeAllQueued(agent)) req.onSocket(null, new AgentDestroyedError());
    }
    for (const map of [agent.sockets, agent.freeSockets]) {
      for (const pool of Object.keys(map)) {
        for (const socket of map[pool]) stateOf(socket)?.markClosing(CLOSE_REASONS.DESTROY);
      }
    }
    for (const pool of Object.keys(agent.sockets)) {
      for (const socket of agent.sockets[pool]) {
        if (socket[SOCKET_NAME] === undefined) socket.destroy(new AgentDestroyedError());
      }
    }
    Shutdown.#endIdle(CLOSE_REASONS.DESTROY, expiry, learning, dns);
  }

  /** Resolves the close() promise once no socket is open or being made. */
  #settle() {
    if (this.#resolve !== null && this.#open === 0 && this.#creating === 0) {
      const resolve = this.#resolve;
      this.#resolve = null;
      resolve();
    }
  }
}

module.exports = { Shutdown };
