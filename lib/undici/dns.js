'use strict';

// The transport's side of the dns option (loaded only when it is set), as
// the agent's (lib/dns/agent_dns.js): every connection looks its host up in
// the cache, each socket follows its host's answer while it is open, and
// when an address leaves the answer the sockets to it are retired: the idle
// ones at once, the busy ones when their response ends, so that under
// constant load the requests move without waiting for the old address to go.
const { DnsCache } = require('../dns/cache');
const { CLOSE_REASONS } = require('../policy/close_reasons');

class TransportDns {
  #cache;
  #origins;

  /**
   * @param {object} settings from dnsSettings()
   * @param {object} dispatcher what the dns events name as their agent
   * @param {Map} origins the transport's origins by pool name, read at each change
   */
  constructor(settings, dispatcher, origins) {
    this.#origins = origins;
    this.#cache = new DnsCache(settings, { agent: dispatcher, onChange: (host) => this.#changed(host) });
    this.lookup = this.#cache.lookup;
  }

  /** A socket to `host` was made: its answer is kept fresh while sockets follow it. */
  track(host) {
    this.#cache.track(host);
  }

  untrack(host) {
    this.#cache.untrack(host);
  }

  /** Closes `state`'s socket if its address left its host's answer (`free`: it was idle), and says whether it did. */
  retires(state, free) {
    const socket = state.socket;
    const host = state.origin.host;
    const address = socket.remoteAddress;
    if (!this.#cache.left(host, address)) return false;
    this.#cache.retiring(socket, host.toLowerCase(), address, free);
    state.close(CLOSE_REASONS.DNS);
    return true;
  }

  /** Addresses left `host`'s answer: the idle sockets to them close now; the busy ones at their response's end. */
  #changed(host) {
    for (const origin of this.#origins.values()) {
      if (origin.host.toLowerCase() !== host) continue;
      for (const state of origin.connections) {
        if (!state.active && state.connected) this.retires(state, true);
      }
    }
  }

  snapshot() {
    return this.#cache.snapshot();
  }

  stop() {
    this.#cache.stop();
  }
}

module.exports = { TransportDns };
