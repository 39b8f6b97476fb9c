'use strict';

// The class over core's agent, written once as a mixin over a base agent
// class: HttpAgent = keepAlive(http.Agent), HttpsAgent = keepAlive(https.Agent).
// It keeps core's hooks only: each calls super and the peer that owns its
// step (agent/assemble.js makes them), so core's own checks (idle-socket data
// guard, TLS identity checks, proxy support) keep working on every Node
// version.
const { normalizeOptions, agentOptions, activeTimeout } = require('../options/normalize');
const { initCounters, statusSnapshot, takeStatusChanged } = require('../observe/status');
const { agentKeyOf } = require('../core/private_fields');
const { stateOf } = require('../state/socket_state');
const { PoolNames } = require('./pool_names');
const { assemble } = require('./assemble');
const { warnDeprecated } = require('../options/deprecate');
const { CURRENT_ID, CREATE_ID, INIT_SOCKET } = require('../constants');

/**
 * Builds a keep-alive agent class over `Base` (http.Agent or https.Agent).
 * @param {typeof import('http').Agent} Base
 * @param {{ name: string, getName?: (agent: object, options: object) => string }} spec
 *   `getName` replaces core's pool naming (https: no secrets in names).
 */
// eslint-disable-next-line max-lines-per-function -- a mixin factory: it only wraps the class
function keepAlive(Base, { name, getName: naming }) {
  class KeepAliveAgent extends Base {
    // Our own settings; freeSocketTimeout and socketActiveTTL change when
    // the caller writes them to agent.options.
    #settings;
    // The peers (agent/assemble.js): those of every request in fields of
    // their own, the others in #peers.
    #peers;
    #admission;
    #connections;
    #socketEvents;
    #reuse;
    #keep;
    // Proxy routing, or null: one null check per hook.
    #proxy;
    // Set while core's addRequest runs, until it names the pool (see getName).
    #picking = false;
    // The pool core's addRequest named, to see a request it queued.
    #pickedPool;
    // Set while core's createSocket runs, until its createConnection call
    // (see createSocket).
    #creating = null;
    // Core's http pool names, kept; https pools are named by `naming`.
    #poolNames = naming === undefined ? new PoolNames() : null;
    #coreName = (options) => super.getName(options);
    #coreConnect = (...args) => super.createConnection(...args);

    constructor(options) {
      const config = normalizeOptions(options);
      super(config);
      initCounters(this); // agentkeepalive's counters
      this.#settings = { ...config };
      this.options = agentOptions(this.options, this.#settings, this);
      const peers = this.#peers = assemble(this, config, this.#settings);
      ({ admission: this.#admission, connections: this.#connections, socketEvents: this.#socketEvents } = peers);
      ({ reuse: this.#reuse, keep: this.#keep, proxy: this.#proxy } = peers);
      this[CURRENT_ID] = 0;
    }

    // Core frees a socket by emitting 'free' on the agent, to its own
    // listener (added by the base constructor), which pools the socket or
    // hands it to a queued request. The agent sees the pool and the queue
    // first, as core is about to change them. Here rather than as a
    // listener: with two listeners, every emit copies the list of them, and
    // 'free' comes once a request.
    emit(event, socket) {
      if (event === 'free') this.#keep.freed(socket);
      return super.emit.apply(this, arguments);
    }

    // ---- naming and picking a free socket ----------------------------------

    addRequest(req, options, port, localAddress) {
      // After close() (the request fails), or a proxy's rewrite.
      options = this.#admission.admit(req, options, port, localAddress);
      if (options === undefined) return;
      // Inside super.addRequest, core calls getName (naming the pool), then
      // takes the last (lifo) or first (fifo) socket of freeSockets[pool] and
      // calls reuseSocket on it, or queues the request, or calls createSocket.
      // The check before reuse must run after the naming and before the
      // taking, and getName is the only hook between the two: #picking tells
      // it that this call is the one.
      this.#picking = true;
      try {
        super.addRequest(req, options, port, localAddress);
        // Core queued the request behind maxSockets (it is last in the queue).
        if (this.requests[this.#pickedPool]?.at(-1) === req) this.#admission.queued(req, this.#pickedPool, options);
      } finally {
        this.#picking = false;
      }
    }

    getName(options = {}) {
      // Core names a socket's pool again on its every 'free' and close (the
      // 'free' handler and removeSocket), from the options its createSocket
      // made the socket with, where it recorded the name this method gave
      // then: the same name, twice a request, without building it again.
      if (!this.#picking) {
        const known = agentKeyOf(options);
        if (known !== undefined) return known;
      }
      let pool = naming === undefined ? this.#poolNames.nameOf(options, this.#coreName) : naming(this, options);
      // Proxy: pools named after the proxy.
      if (this.#proxy !== null) pool = this.#proxy.poolName(pool, options);
      // Core's addRequest names the pool and then takes a free socket from it
      // without asking us. This is the one moment between the two: the
      // socket it will take must be alive, or, with none free, every place
      // under maxTotalSockets taken, one may be made.
      if (this.#picking) {
        this.#picking = false;
        this.#pickedPool = pool;
        if (this.freeSockets[pool] !== undefined) this.#reuse.check(pool);
        else this.#admission.makeRoom(pool);
      }
      return pool;
    }

    // ---- created -------------------------------------------------------------

    // Core's createSocket is where a connection becomes one of the pool's
    // sockets: it calls createConnection, then hands core's listeners and the
    // request the socket that will serve it (for a proxy tunnel, the tunnelled
    // socket, through the callback, not the one returned). That socket, and
    // only that one, is initialised and counted.
    createSocket(req, options, callback) {
      const creation = this.#connections.creating(options, req);
      this.#creating = creation;
      try {
        super.createSocket(req, options, (err, socket) => {
          this.#socketEvents.created(err, socket, creation);
          callback(err, socket);
        });
      } catch (err) {
        creation.made(); // createConnection threw: no socket, and no callback
        throw err;
      } finally {
        this.#creating = null;
      }
    }

    // Every argument form core's accepts, `(options[, callback])` and https's
    // `(port[, host][, options][, callback])`, goes through unchanged to
    // super's (#coreConnect), or to a proxy.
    createConnection(...args) {
      const creation = this.#creating;
      this.#creating = null;
      return this.#connections.connect(args, creation, this.#coreConnect);
    }

    [CREATE_ID]() {
      const id = this[CURRENT_ID]++;
      if (this[CURRENT_ID] >= Number.MAX_SAFE_INTEGER) this[CURRENT_ID] = 0;
      return id;
    }

    [INIT_SOCKET](socket, options) {
      this.#socketEvents.initSocket(socket, options);
    }

    // ---- active -> free, and free -> active --------------------------------

    keepSocketAlive(socket) {
      return this.#keep.keep(socket, super.keepSocketAlive(socket));
    }

    reuseSocket(socket, req) {
      super.reuseSocket(socket, req);
      this.#reuse.reused(socket, this.#pickedPool);
    }

    // Core calls this on every 'close', when it pools a socket, and from its
    // 'agentRemove' listener. Once more for a socket already removed would
    // start a second socket for the same queue, beyond maxSockets.
    removeSocket(socket, options) {
      const state = stateOf(socket);
      if (state?.removed === true) return;
      super.removeSocket(socket, options);
      this.#socketEvents.removed(socket, state);
    }

    // ---- shutdown --------------------------------------------------------------

    /**
     * Closes every socket, as core's agent does; requests queued behind
     * maxSockets are served on new connections, as core's agent serves them
     * (during close(), they fail: agent/shutdown.js).
     */
    destroy() {
      this.#peers.shutdown.destroying(this.#peers);
      super.destroy();
    }

    /**
     * Closes the agent gracefully: new requests fail with ERR_AGENT_CLOSED,
     * idle sockets close now, requests in flight and queued ones are served,
     * and each socket closes as soon as it is free. The promise (the same one
     * on every call) resolves when the agent holds no socket; destroy()
     * ends what is left at once.
     */
    close() {
      return this.#peers.shutdown.close(this.#peers);
    }

    [Symbol.asyncDispose ?? Symbol.for('nodejs.asyncDispose')]() {
      return this.close();
    }

    // ---- status ------------------------------------------------------------------

    /** True when a counter changed since the last read of statusChanged. */
    get statusChanged() { return takeStatusChanged(this); }

    /** agentkeepalive's status object, with its keys exactly. */
    getCurrentStatus() { return statusSnapshot(this); }

    /** The learned idle limits, `{ origin: ms }`: a new object on each read. */
    get serverIdleTimeouts() { return this.#peers.learning.toJSON(); }

    /**
     * Per-origin counters and pool sizes, and with the dns
     * option each host's cached answer: a new plain object on every call.
     */
    getStats() {
      const { events, dns, learning } = this.#peers;
      const stats = events.stats((pool) => learning.engine.evidenceOf(pool));
      if (dns !== null) stats.dns = dns.snapshot();
      return stats;
    }

    // ---- deprecated (agentkeepalive 4.x) -------------------------------------------

    get freeSocketKeepAliveTimeout() { warnDeprecated('getFreeSocketKeepAliveTimeout'); return this.#settings.freeSocketTimeout; }

    get timeout() { warnDeprecated('getTimeout'); return activeTimeout(this.options, this.#settings.timeout); }

    get socketActiveTTL() { warnDeprecated('getSocketActiveTTL'); return this.#settings.socketActiveTTL; }
  }

  Object.defineProperty(KeepAliveAgent, 'name', { value: name });
  return KeepAliveAgent;
}

module.exports = { keepAlive };
