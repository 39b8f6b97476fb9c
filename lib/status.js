'use strict';

// The agent's counters and the status snapshot built from them.

/** `{ name: count }` from one of the agent's name -> array maps. */
function countEach(map) {
  const counts = {};
  for (const name in map) counts[name] = map[name].length;
  return counts;
}

class Counters {
  createSocketCount = 0;
  createSocketErrorCount = 0;
  closeSocketCount = 0;
  errorSocketCount = 0;
  timeoutSocketCount = 0;
  requestCount = 0;
  // Bumped on every change; statusChanged compares it with the last read.
  #version = 0;
  #readVersion = 0;

  socketCreated() { this.createSocketCount++; this.#version++; }
  socketCreateFailed() { this.createSocketErrorCount++; this.#version++; }
  socketClosed() { this.closeSocketCount++; this.#version++; }
  socketErrored() { this.errorSocketCount++; this.#version++; }
  socketTimedOut() { this.timeoutSocketCount++; this.#version++; }
  requestFinished() { this.requestCount++; this.#version++; }

  /** True when a counter changed since the last call; the call marks them read. */
  takeChanged() {
    const changed = this.#version !== this.#readVersion;
    this.#readVersion = this.#version;
    return changed;
  }

  /** The status object of getCurrentStatus(). */
  snapshot(agent, serverIdleTimeouts) {
    return {
      createSocketCount: this.createSocketCount,
      createSocketErrorCount: this.createSocketErrorCount,
      closeSocketCount: this.closeSocketCount,
      errorSocketCount: this.errorSocketCount,
      timeoutSocketCount: this.timeoutSocketCount,
      requestCount: this.requestCount,
      freeSockets: countEach(agent.freeSockets),
      sockets: countEach(agent.sockets),
      requests: countEach(agent.requests),
      serverIdleTimeouts,
    };
  }
}

module.exports = { Counters };
