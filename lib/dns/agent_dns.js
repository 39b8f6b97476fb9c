'use strict';

// The agent's side of the dns option (loaded only when it is set).
const { DnsCache } = require('./cache');
const { stateOf } = require('../state/socket_state');
const { CLOSE_REASONS } = require('../state/close_reasons');
const net = require('node:net');

// The host a connection's options were given our lookup for: set on core's
// per-socket copy of the options (never the caller's), read when the agent
// takes the socket on.
const kDnsHost = Symbol('steady-agent.dnsHost');

// The address a socket connected to (null until it has): what it is judged
// by. Read from the socket, which keeps it once read, while it is open.
const addressOf = (socket) => socket.remoteAddress ?? null;

/**
 * The agent's side of the option: which connections get the cache's lookup,
 * which sockets follow which host, and which of them are retired when an
 * address leaves a host's answer. The agent makes one call here from
 * each hook, only when the option is on.
 */
class AgentDns {
  #agent;
  #cache;
  #retireFree;

  /**
   * @param {object} settings from dnsSettings()
   * @param {object} agent
   * @param {(socket: object, state: object, reason: string) => void} retireFree
   *   takes a free socket out of the pool and closes it for `reason`
   */
  constructor(settings, agent, retireFree) {
    this.#agent = agent;
    this.#retireFree = retireFree;
    this.#cache = new DnsCache(settings, { agent, onChange: (host) => this.#changed(host) });
  }

  /**
   * Core is about to connect with `options` (its own copy for this socket):
   * give it the cache's lookup, unless the caller gave one, it is a Unix
   * socket, or the host is an IP literal. A proxied request connects to the
   * proxy (`proxy`: lib/proxy's routes, or null): the proxy's name is looked
   * up, the target's is the proxy's business.
   */
  connecting(options, proxy) {
    if (options.lookup != null || options.socketPath) return;
    const host = proxy !== null && proxy.proxies(options) ? proxy.host : (options.host || 'localhost');
    if (net.isIP(host) !== 0) return;
    options.lookup = this.#cache.lookup;
    options[kDnsHost] = host.toLowerCase();
  }

  /** The agent took on `socket`, created with `options`: it follows its host's answer. */
  socketCreated(state, options) {
    const host = options[kDnsHost];
    if (host === undefined) return;
    state.followHost(host);
    this.#cache.track(host);
  }

  /**
   * Why a socket that just finished a request must serve no other (its
   * address left its host's answer), or null. A reason means it is being
   * retired (published and logged here).
   */
  retiredReason(socket, state) {
    if (state.dnsHost === null || !this.#cache.left(state.dnsHost, addressOf(socket))) return null;
    this.#cache.retiring(socket, state.dnsHost, addressOf(socket), false);
    return CLOSE_REASONS.DNS;
  }

  /** A socket that followed a host closed. */
  socketClosed(state) {
    this.#cache.untrack(state.dnsHost);
  }

  /** Addresses left `host`'s answer: its free sockets to them close now. */
  #changed(host) {
    const agent = this.#agent;
    const retired = [];
    // Core's map, read directly: the free sockets of every pool of the host
    // (one per port, TLS identity or proxy route).
    for (const pool in agent.freeSockets) {
      for (const socket of agent.freeSockets[pool]) {
        const state = stateOf(socket);
        if (state !== undefined && state.dnsHost === host && this.#cache.left(host, addressOf(socket))) retired.push([socket, state]);
      }
    }
    for (const [socket, state] of retired) {
      this.#cache.retiring(socket, host, addressOf(socket), true);
      this.#retireFree(socket, state, CLOSE_REASONS.DNS);
    }
  }

  /** agent.destroy() or close(): no more refreshes. */
  stop() {
    this.#cache.stop();
  }

  /** getStats().dns */
  snapshot() {
    return this.#cache.snapshot();
  }
}


module.exports = { AgentDns };
