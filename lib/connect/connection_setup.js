'use strict';

// What every connection the agent opens gets at creation, before its first
// request: TCP keep-alive probes (tcpKeepAlive, on by default) and the
// connect timeout (connectTimeout). The agent calls
// in from createConnection; the proxy module (lib/proxy) for the connection
// to the proxy that carries a CONNECT tunnel.
//
// TCP keep-alive probes on every socket from the moment it connects.
//
// Node's agent turns probes on when a socket enters the pool
// (keepSocketAlive: setKeepAlive(true, keepAliveMsecs)), and asks for them
// at creation by passing keepAlive/keepAliveInitialDelay to createConnection:
// net.connect honours them; tls.connect drops them on Node 18 to 22 and early
// 24.x (nodejs/node#47137, fixed by #62004 in Node 26 and late 24.x); and an
// agent with keepAlive: false asks for none. So an https socket sends no
// probe while it serves its first request, however long that takes, and a
// NAT gateway or firewall that drops idle flows (AWS NAT: 350 s) ends a long
// request without a word to either side.
//
// setKeepAlive before the socket has connected is kept by net and applied on
// connect, for TLS sockets too (the TLS socket passes it to the TCP socket
// under it), so one call at creation covers the socket's whole life; on an
// http socket it repeats what net.connect was given and costs nothing.
//
// The delay is keepAliveMsecs, as core's (agent.keepAliveMsecs: 1000 when
// the option is 0). The interval between unanswered probes and their count
// stay the runtime's. Node 24.x and 26 let setKeepAlive set them
// (`setKeepAlive(enable, initialDelay, interval, count)`; Node 18 to 22 take
// the first two only), but core's keepSocketAlive calls
// setKeepAlive(true, keepAliveMsecs) each time a socket enters the pool, and
// that sets them back to 1 s and 10, the values libuv has set on every Node
// version since 13.12. Values of ours would hold only until the first free,
// and cost system calls there to undo them; so the agent keeps those, and a
// dead peer is noticed keepAliveMsecs + 10 s after the last byte, on every
// version.

// tcpKeepAlive: false turns probes off for the socket's whole life. Core
// asks for them at creation (net.connect's keepAlive option: the agent's
// options carry keepAlive: true) and again each time a socket enters the
// pool (keepSocketAlive: setKeepAlive(true, keepAliveMsecs)), on Node 18 to
// 26. The first is undone here, at creation, before the socket connects; the
// second by a keepSocketAlive of the agent's own, set on those agents only
// (keepProbesOff), so that no other agent pays for a check on each free.

const { ConnectTimeout } = require('./connect_timeout');

class ConnectionSetup {
  #probeDelay; // ms of silence before the first probe; null: tcpKeepAlive off
  #connectTimeout; // a ConnectTimeout, or null

  /** `keepAliveMsecs`: core's agent.keepAliveMsecs. */
  static create({ tcpKeepAlive, connectTimeout }, keepAliveMsecs) {
    return new ConnectionSetup(tcpKeepAlive ? keepAliveMsecs : null, ConnectTimeout.create(connectTimeout));
  }

  constructor(probeDelay, connectTimeout) {
    this.#probeDelay = probeDelay;
    this.#connectTimeout = connectTimeout;
  }

  /** A socket just made for a request (connecting, or connected by whoever made it). */
  opened(socket) {
    this.probe(socket);
    if (this.#connectTimeout !== null) this.#connectTimeout.watch(socket);
  }

  /** TCP keep-alive probes on a socket (the winner of a Happy Eyeballs race, connected). */
  probe(socket) {
    if (this.#probeDelay !== null) socket.setKeepAlive(true, this.#probeDelay);
    else socket.setKeepAlive(false);
  }

  /** A Happy Eyeballs race under way: the connect timeout's watch over it, or null. */
  watchRace(race) {
    return this.#connectTimeout === null ? null : this.#connectTimeout.watchRace(race);
  }

  /**
   * A connection to a proxy that will carry a CONNECT tunnel. Returns the
   * connect timeout's watch, to be handed the TLS socket inside the tunnel
   * (follow()), or null. Probes go on this connection, the TCP one: a TLS
   * socket inside a TLS connection to the proxy has no TCP socket of its own.
   */
  openedTunnel(proxySocket) {
    if (this.#probeDelay !== null) proxySocket.setKeepAlive(true, this.#probeDelay);
    else proxySocket.setKeepAlive(false);
    return this.#connectTimeout === null ? null : this.#connectTimeout.watchTunnel(proxySocket);
  }
}

/**
 * For an agent with tcpKeepAlive: false: its keepSocketAlive (a subclass's
 * too, which this wraps) turns off the probes core's has just turned on.
 */
function keepProbesOff(agent) {
  const keepSocketAlive = agent.keepSocketAlive;
  agent.keepSocketAlive = function keepSocketAliveWithoutProbes(socket) {
    const kept = keepSocketAlive.call(this, socket);
    if (kept) socket.setKeepAlive(false);
    return kept;
  };
}

module.exports = { ConnectionSetup, keepProbesOff };
