'use strict';

// Connection creation: the agent's createSocket and createConnection hooks
// call here. Each new connection gets TCP keep-alive and the connect timeout
// (connect/), goes through a proxy when one routes it (proxy/), and looks its
// host up in the agent's cache with the dns option (dns/, loaded only then).
// Taking the socket on (its state and listeners) is agent/socket_events.js's.
const { connectionOptions } = require('../options/normalize');
const { agentKeyOf } = require('../core/private_fields');
const { forgetEmptyPool } = require('../core/agent_maps');
const { ConnectionSetup, keepProbesOff } = require('../connect/connection_setup');
const { createProxyRoutes } = require('../proxy');
const { races } = require('../connect/happy_eyeballs');
const { raceConnection, coreConnectReplaced } = require('../connect/agent_race');
const { INIT_SOCKET } = require('../constants');

class Connections {
  #agent;
  #shutdown;
  #events;
  // TCP keep-alive and connectTimeout for each new connection, or null.
  #setup;

  /**
   * @param {object} agent
   * @param {object} config normalizeOptions(the caller's options)
   * @param {import('./shutdown').Shutdown} shutdown waits for the sockets being made
   * @param {import('../observe/events').PoolEvents} events reports each Happy Eyeballs race
   * @param {(socket: object, state: object, reason: string) => void} retireFree
   *   closes a free socket (the dns option retires those whose address left
   *   their host's answer)
   */
  constructor(agent, config, shutdown, events, retireFree) {
    this.#agent = agent;
    this.#shutdown = shutdown;
    this.#events = events;
    this.#setup = ConnectionSetup.create(config, agent.keepAliveMsecs);
    if (!config.tcpKeepAlive) keepProbesOff(agent);
    /** Proxy routing (proxy/), or null: without a proxy, one null check per hook. */
    this.proxy = createProxyRoutes(config.proxy, agent.protocol, this.#setup);
    /** The dns option's side of the agent, or null: off. */
    this.dns = null;
    if (config.dns !== undefined) {
      const { AgentDns } = require('../dns/agent_dns');
      this.dns = new AgentDns(config.dns, agent, retireFree);
    }
  }

  /** Core's createSocket begins for `req`: what its callback and createConnection share. */
  creating(options, req) {
    return { options, made: this.#shutdown.creatingOne(), raced: false, req }; // close() waits for it
  }

  /**
   * The agent's createConnection, with `connect` calling core's. `creation`
   * is core's createSocket under way, or null: a direct call.
   */
  connect(args, creation, connect) {
    const proxy = this.proxy;
    // dns: core's own copy of the options gets the cache's lookup.
    if (creation !== null && this.dns !== null) this.dns.connecting(args[0], proxy);
    // Happy Eyeballs: a host name's addresses raced (connect/); the socket
    // comes through core's callback.
    if (creation !== null && typeof args[1] === 'function' && races(args[0]) && !proxy?.proxies(args[0])
      && !coreConnectReplaced(this.#agent.protocol)) {
      creation.options = args[0];
      creation.raced = true; // counted as a socket from now on
      return raceConnection(this.#agent, args[0], args[1], creation.req, {
        connectTls: this.#agent.protocol === 'https:' ? connect : null,
        setup: this.#setup,
        report: this.#events.raceReport(agentKeyOf(args[0]), args[0]),
      });
    }
    let socket;
    try {
      // Proxy: for core's createSocket, connect to the proxy instead; a
      // CONNECT tunnel answers through core's callback.
      socket = creation !== null && proxy !== null && proxy.proxies(args[0])
        ? proxy.createConnection(this.#agent, args[0], args[1], connect)
        : connect(...args);
    } catch (err) {
      // TLS options that make no secure context (a wrong pfx passphrase)
      // throw here, to the caller of http.request, as with core's agent.
      // Core has made the pool's entry in `sockets` already and never
      // removes it after a throw.
      if (args[0] != null) forgetEmptyPool(this.#agent, agentKeyOf(args[0]));
      throw err;
    }
    // TCP keep-alive and the connect timeout, from the start (a CONNECT
    // tunnel returns no socket: proxy/ sets up its connection).
    if (this.#setup !== null && socket) this.#setup.opened(socket);
    // Called by core's createSocket (the merged options name the pool), or
    // directly by the caller: then the socket is initialised here, as
    // agentkeepalive does.
    if (creation !== null) creation.options = args[0];
    else if (socket) this.#agent[INIT_SOCKET](socket, connectionOptions(args));
    return socket;
  }
}

module.exports = { Connections };
