'use strict';

// The 'timeout' the agent emits on a free socket that expired: as
// agentkeepalive's, once the socket has left its pool and can no longer be
// written, so a listener sees what agentkeepalive shows it.
//
// Core's own 'timeout' listener, the first on every socket its createSocket
// made, destroys the socket if it finds it in agent.freeSockets, searching
// pool after pool (Object.keys, then includes on each). An expired socket
// has left its pool already, so the search would visit every pool in vain,
// once per expired socket: with thousands of origins, most of what expiring
// them cost. Core's listener gets an empty map to search instead; the agent's
// own listener, next in line, puts the agent's back (restore), so the
// caller's listeners see agent.freeSockets as it is.

const NO_POOLS = Object.freeze({ __proto__: null });

class ExpiredTimeout {
  // agent.freeSockets while an expired socket's 'timeout' is emitted, or null.
  #hidden = null;

  emit(agent, socket) {
    this.#hidden = agent.freeSockets;
    agent.freeSockets = NO_POOLS;
    try {
      socket.emit('timeout');
    } finally {
      this.restore(agent);
    }
  }

  /** Puts agent.freeSockets back, if emit() hid it. */
  restore(agent) {
    if (this.#hidden === null) return;
    agent.freeSockets = this.#hidden;
    this.#hidden = null;
  }
}

module.exports = { ExpiredTimeout };
