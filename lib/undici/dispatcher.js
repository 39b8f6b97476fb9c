'use strict';

// The dispatcher class of both front doors: a subclass of an undici `Agent`
// class (the caller's npm undici for steady-agent/undici, the bundled one
// Node's fetch uses for steady-agent/fetch), made once per class, whose
// sockets and requests go through a Transport. Here: what undici's Agent
// API asks of it (dispatch, close, destroy, and the failures a closed one
// gives), apart from the transport's state.
const { Transport } = require('./transport');
const { withRaces } = require('../connect/undici_race');

// Agent class -> Map of name -> our class: steady-agent/fetch and
// createDispatcher may both subclass npm's Agent, with names and errors of their own.
const classes = new WeakMap();

/** Fails `handler` with `err`, in the handler's own protocol. */
function failHandler(handler, err) {
  if (typeof handler.onRequestStart === 'function') handler.onResponseError?.(null, err);
  else handler.onError(err);
}

/**
 * The dispatcher class over `Agent` (an undici Agent class), made once per
 * class and name: an Agent whose sockets and requests go through a Transport.
 */
function transportClass(Agent, name = 'SteadyDispatcher', errors = {}) {
  const { ClientClosedError } = errors;
  let byName = classes.get(Agent);
  if (byName === undefined) classes.set(Agent, (byName = new Map()));
  let Class = byName.get(name);
  if (Class === undefined) {
    Class = dispatcherClass(Agent, name, ClientClosedError);
    byName.set(name, Class);
  }
  return Class;
}

/** The class itself, named `name` (the holder's computed key names it). */
function dispatcherClass(Agent, name, ClientClosedError) {
  const holder = {
    [name]: class extends Agent {
      #transport;
      #done = null;
      #closedOnly = false; // close(), not destroy(): undici's close ends in a destroy of its own

      constructor(options, { resendBuffered = false, entry = 'createDispatcher' } = {}) {
        const transport = new Transport(options, resendBuffered, entry);
        try {
          super(withRaces(transport, transport.agentOptions()));
        } catch (err) {
          transport.stop();
          throw err;
        }
        transport.attach(this, (opts, handler) => super.dispatch(opts, handler));
        this.#transport = transport;
      }

      dispatch(opts, handler) {
        if (handler === null || typeof handler !== 'object' || opts === null || typeof opts !== 'object' || this.closed || this.destroyed) {
          if (this.#done !== null && opts !== null && typeof opts === 'object') this.#transport.refused(opts);
          if (!this.#closedOnly || ClientClosedError === undefined || handler === null || typeof handler !== 'object') return super.dispatch(opts, handler);
          // A request after close() fails as undici's own Agent would before its destroy.
          failHandler(handler, new ClientClosedError());
          return true;
        }
        try {
          return this.#transport.dispatch(opts, handler);
        } catch (err) {
          failHandler(handler, err);
          return true;
        }
      }

      /** Counters per origin, in the agent's getStats() shape. */
      getStats() {
        return this.#transport.getStats();
      }

      /** Graceful: requests in flight end, then every socket closes. Callback or promise, as undici's. */
      close(callback) {
        this.#closedOnly = this.#done === null;
        return this.#end(() => {
          this.#transport.closing = true;
          // undici's close() without a callback calls close(callback): ours.
          return new Promise((resolve, reject) => super.close((err) => (err ? reject(err) : resolve())));
        }, callback);
      }

      /** Ends every request and socket now. */
      destroy(err, callback) {
        if (typeof err === 'function') {
          callback = err;
          err = null;
        }
        // undici's close() ends by calling destroy(): that one is undici's.
        if (this.#done !== null) return super.destroy(err ?? null, callback);
        this.#closedOnly = false;
        return this.#end(() => {
          this.#transport.closing = true;
          return new Promise((resolve, reject) => super.destroy(err ?? null, (error) => (error ? reject(error) : resolve())));
        }, callback);
      }

      #end(end, callback) {
        this.#done ??= end().then(() => this.#transport.stop());
        if (typeof callback === 'function') {
          this.#done.then(() => callback(null, null), callback);
          return undefined;
        }
        return this.#done;
      }
    },
  };
  return holder[name];
}

module.exports = { transportClass };
