'use strict';

// connectTimeout: how long a new socket may take to be ready for its request.
// Without it, a connection that never completes (a blackholed address, SYNs
// dropped by a firewall, a TLS server that never finishes the handshake, a
// proxy that never answers CONNECT) is ended only by the active `timeout`,
// with an error client libraries do not take for a failed connection.
//
// One timer per new socket, from its creation until it is ready: TCP
// connected, then for TLS the handshake done ('secureConnect'), and for a
// CONNECT tunnel the proxy's answer and then the handshake with the target
// inside it. Nothing runs per request. On expiry the socket is destroyed with
// a ConnectTimeoutError (code ETIMEDOUT) naming the phase it was in; the
// request gets that error, and the agent counts a socket creation error, as
// for any socket that fails before it is ready.
//
// An agent without connectTimeout has no ConnectTimeout (null): nothing here
// runs for it.
const { ConnectTimeoutError } = require('../errors');
const { timerDelay } = require('../timers/clock');

class ConnectTimeout {
  #timeout;

  /** null when `timeout` is 0 (off). */
  static create(timeout) {
    return timeout > 0 ? new ConnectTimeout(timeout) : null;
  }

  constructor(timeout) {
    this.#timeout = timeout;
  }

  /**
   * Starts the clock on a socket just made for a request (net.connect or
   * tls.connect, still connecting). A socket that is not connecting was
   * connected by someone else: nothing to wait for.
   */
  watch(socket) {
    if (!socket.connecting) return;
    new ConnectWatch(socket, this.#timeout, false);
  }

  /**
   * Starts the clock on a connection to a proxy that will carry a CONNECT
   * tunnel. The watch goes on through the proxy's answer; the tunnel then
   * hands it the TLS socket inside (follow()), ready once its handshake is
   * done.
   */
  watchTunnel(proxySocket) {
    return new ConnectWatch(proxySocket, this.#timeout, true);
  }

  /**
   * Starts the clock on a Happy Eyeballs race (./happy_eyeballs.js), lookup
   * included: expiry ends the race. The caller then hands the watch the
   * socket it delivers (follow(): a TLS socket over the winner, ready at its
   * handshake's end) or ends it (done(): plain TCP, or the race failed), so
   * that one timer covers the whole of a connection's set-up.
   */
  watchRace(race) {
    return new ConnectWatch(null, this.#timeout, false, race);
  }
}

// One connection on its way to ready. Its listeners are closures over it:
// the socket may be a connection to a proxy, not one of the agent's sockets,
// and a watch lives only until the socket is ready.
class ConnectWatch {
  #socket;
  #timeout;
  #tunnel; // #socket is the connection to a proxy, before the tunnel's TLS socket
  #phase;
  #timer;
  #race; // a Happy Eyeballs race, while #socket is null
  // autoSelectFamily: an attempt that ended otherwise than by a timeout.
  #attemptFailed = false;

  #onConnect = () => {
    if (this.#socket.encrypted) this.#phase = 'tls';
    else if (this.#tunnel) this.#phase = 'proxy';
    else this.#stop();
  };

  #onSecureConnect = () => {
    if (this.#tunnel) this.#phase = 'proxy';
    else this.#stop();
  };

  #onClose = () => this.#stop();

  /**
   * autoSelectFamily (Node 20+): the system gave up on an address. Each
   * address but the last has Node's own attempt timeout (250 ms), far
   * shorter than the system's, so an attempt the system timed out is the
   * last one; when every attempt before it timed out too, Node is about to
   * destroy the socket with an AggregateError of timeouts: the same failure
   * as ours, reported as ours (code ETIMEDOUT either way).
   */
  #onAttemptFailed = (address, port, family, err) => {
    if (err?.code !== 'ETIMEDOUT') {
      this.#attemptFailed = true;
      return;
    }
    if (!this.#attemptFailed) this.#expire();
  };

  #onTimeout = () => {
    this.#timer = null;
    this.#expire();
  };

  constructor(socket, timeout, tunnel, race = null) {
    this.#socket = socket;
    this.#timeout = timeout;
    this.#tunnel = tunnel;
    this.#race = race;
    this.#phase = socket === null || socket.connecting ? 'connect' : 'tls';
    this.#timer = setTimeout(this.#onTimeout, timerDelay(timeout));
    if (socket !== null) this.#attach(socket);
  }

  /**
   * The tunnel is open, or the race won: the TLS socket over it is the one
   * to wait for now.
   */
  follow(tlsSocket) {
    if (this.#timer === null) return;
    if (this.#socket !== null) this.#detach(this.#socket);
    this.#race = null;
    this.#socket = tlsSocket;
    this.#tunnel = false;
    this.#phase = 'tls';
    this.#attach(tlsSocket);
  }

  #attach(socket) {
    if (socket.connecting) {
      socket.once('connect', this.#onConnect);
      socket.on('connectionAttemptFailed', this.#onAttemptFailed);
    }
    if (socket.encrypted) socket.once('secureConnect', this.#onSecureConnect);
    socket.once('close', this.#onClose);
  }

  #detach(socket) {
    socket.removeListener('connect', this.#onConnect);
    socket.removeListener('connectionAttemptFailed', this.#onAttemptFailed);
    socket.removeListener('secureConnect', this.#onSecureConnect);
    socket.removeListener('close', this.#onClose);
  }

  /** The race delivered a connected TCP socket, or failed: nothing more to wait for. */
  done() {
    this.#stop();
  }

  // Ready, or closed: the timer is no longer needed.
  #stop() {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    if (this.#socket !== null) this.#detach(this.#socket);
    this.#race = null;
  }

  #expire() {
    const socket = this.#socket;
    const phase = this.#phase;
    const race = this.#race;
    this.#stop();
    if (socket === null) {
      race.destroy(new ConnectTimeoutError(phase, this.#timeout));
      return;
    }
    // Destroyed already (its 'close' is on the way): its own error stands.
    if (!socket.destroyed) socket.destroy(new ConnectTimeoutError(phase, this.#timeout));
  }
}

module.exports = { ConnectTimeout };
