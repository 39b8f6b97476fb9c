'use strict';

// The transport's TLS sessions, as Node's https.Agent keeps them: the last
// session a server gave, per origin and server name, offered on the next
// connection to it, so that a second connection resumes instead of paying a
// full handshake. Bounded as the agent's cache is (`maxCachedSessions`,
// default 100; 0 keeps none), the oldest name dropped first; a handshake
// that failed drops its name's session, since a server that refused it may
// refuse it again.
const tls = require('node:tls');
const { count } = require('../options/grammar');

const DEFAULT_MAX = 100;

class TlsSessions {
  #max;
  #sessions = new Map(); // name -> session (Buffer), oldest first

  /** `max`: the caller's `maxCachedSessions`, validated here (a count, 0 for none). */
  constructor(max) {
    this.#max = count('maxCachedSessions', max, 0) ?? DEFAULT_MAX;
  }

  /** tls.connect(options), offering the session kept for its origin, and keeping the ones the server gives. */
  connect(options) {
    // A session the caller gave (the `session` option) is theirs to offer.
    if (this.#max === 0 || options.session !== undefined) return tls.connect(options);
    const name = `${options.host}:${options.port}:${options.servername ?? ''}`;
    const session = this.#sessions.get(name);
    const socket = tls.connect(session === undefined ? options : { ...options, session });
    socket.on('session', (given) => this.#keep(name, given));
    // A handshake that failed; not a connection ended with an error after it
    // (undici ends a connection it will not reuse with an error of its own).
    const failed = () => this.#sessions.delete(name);
    socket.once('error', failed);
    socket.once('secureConnect', () => socket.removeListener('error', failed));
    return socket;
  }

  #keep(name, session) {
    this.#sessions.delete(name);
    this.#sessions.set(name, session);
    if (this.#sessions.size > this.#max) this.#sessions.delete(this.#sessions.keys().next().value);
  }
}

module.exports = { TlsSessions };
