'use strict';

// Core's http getName builds the pool name, host:port:localAddress (and
// :family, :socketPath when set), as a new string on every request, and
// every new string used as a key of agent.sockets/freeSockets/requests is
// flattened, hashed and looked up in V8's string table again: together a
// good part of what a request costs an agent. The name of a request to a host and port with none of the other
// three set is the same every time, so the agent keeps it: a map lookup,
// and a key V8 has already seen.
//
// Core's getName reads host, port, localAddress, family and socketPath, and
// nothing else (the same in Node 18 to 26; test/pool-names.test.js compares
// with core's for each). A name is kept only where the last three add
// nothing to it, and is computed by core's own getName.

// Hosts kept at most; the map starts again when full. A client of many
// origins gains nothing from a bigger one, and keeps no name per idle socket.
const LIMIT = 128;

class PoolNames {
  // host -> { port, name }: one port per host, the last one named.
  #byHost = new Map();

  /**
   * The pool name of `options`, as `getName(options)` (core's http getName)
   * gives it.
   */
  nameOf(options, getName) {
    const host = options.host;
    const port = options.port;
    if (typeof host !== 'string' || host === '' || (typeof port !== 'number' && typeof port !== 'string' && port !== undefined)
      || options.localAddress || options.family === 4 || options.family === 6 || options.socketPath) {
      return getName(options);
    }
    let kept = this.#byHost.get(host);
    if (kept !== undefined && kept.port === port) return kept.name;
    const name = getName(options);
    if (kept === undefined) {
      if (this.#byHost.size >= LIMIT) this.#byHost.clear();
      kept = { port, name };
      this.#byHost.set(host, kept);
    } else {
      kept.port = port;
      kept.name = name;
    }
    return name;
  }
}

module.exports = { PoolNames, LIMIT };
