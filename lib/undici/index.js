'use strict';

// `steady-agent/undici`: createDispatcher(undici, options), a Dispatcher of
// the caller's own undici (a subclass of its `Dispatcher`, so its request,
// stream, pipeline, fetch, compose and setGlobalDispatcher take it) whose
// requests go through the agent (lib/fetch/adapter.js). Requests whose body
// is absent, a string or bytes are sent once more, at once, after a failure
// the agent marked replayable; undici's fetch hands bodies over as async
// iterables, so a fetch with a body is not.
//
// The caller passes undici in: this file never loads it, so the caller's
// major is the one spoken, and importing steady-agent installs no global
// dispatcher.
const fs = require('node:fs');
const path = require('node:path');
const { AgentDispatch } = require('../fetch/adapter');
// Every module of the agent this file uses, in one place.
const { UnsupportedUndiciError } = require('../errors');

const SUPPORTED = new Set([6, 7, 8]);

/** The version in the package.json above a loaded module's file, or null. */
function versionOfLoaded(exports) {
  for (const loaded of Object.values(require.cache)) {
    if (loaded?.exports !== exports) continue;
    let dir = path.dirname(loaded.filename);
    for (let depth = 0; depth < 4; depth++, dir = path.dirname(dir)) {
      try {
        const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
        if (manifest.name === 'undici' && typeof manifest.version === 'string') return manifest.version;
      } catch {
        // no package.json here: look one folder up
      }
    }
    return null;
  }
  return null;
}

/**
 * undici's major, from its package.json when the module was loaded from a
 * file, otherwise from what each major exports first: Dispatcher1Wrapper
 * (8), cacheStores (7), interceptors (6).
 */
function undiciMajor(undici) {
  const version = versionOfLoaded(undici);
  if (version !== null) return Number(version.split('.')[0]);
  if (typeof undici.Dispatcher1Wrapper === 'function') return 8;
  if (undici.cacheStores != null) return 7;
  if (undici.interceptors != null) return 6;
  return 5;
}

/** The undici module itself, from `require('undici')` or an ES module namespace of it. */
function undiciModule(undici) {
  const isUndici = (m) => m !== null && typeof m === 'object' && typeof m.Dispatcher === 'function'
    && typeof m.request === 'function' && typeof m.setGlobalDispatcher === 'function';
  if (isUndici(undici?.default)) return undici.default;
  if (isUndici(undici)) return undici;
  const found = undici === null || typeof undici !== 'object' ? String(undici) : 'an object that is not the undici module';
  throw new UnsupportedUndiciError(found);
}

const classes = new WeakMap();

/** The dispatcher class over `undici.Dispatcher`, made once per undici module. */
function dispatcherClass(undici) {
  let Class = classes.get(undici);
  if (Class !== undefined) return Class;
  const { ClientClosedError, ClientDestroyedError } = undici.errors ?? {};

  Class = class SteadyDispatcher extends undici.Dispatcher {
    #transport;
    #closed = false;
    #destroyed = false;
    #closing = null;

    constructor(options) {
      super();
      this.#transport = new AgentDispatch(options, { resendBuffered: true });
    }

    /** The HttpAgent and HttpsAgent the requests go through. */
    get agents() {
      return { http: this.#transport.http, https: this.#transport.https };
    }

    get closed() { return this.#closed; }
    get destroyed() { return this.#destroyed; }

    dispatch(opts, handler) {
      if (handler === null || typeof handler !== 'object') throw new TypeError('handler must be an object');
      if (this.#closed || this.#destroyed) {
        const err = this.#destroyed ? new ClientDestroyedError() : new ClientClosedError();
        if (typeof handler.onRequestStart === 'function') handler.onResponseError?.(null, err);
        else handler.onError(err);
        return true;
      }
      return this.#transport.dispatch(opts, handler);
    }

    /** The agents' counters, merged (each agent's getStats() shape). */
    getStats() {
      return this.#transport.getStats();
    }

    /** Graceful: requests in flight complete, then every socket closes. Callback or promise, as undici's. */
    close(callback) {
      this.#closed = true;
      this.#closing ??= this.#transport.close();
      if (typeof callback === 'function') {
        this.#closing.then(() => callback(null, null));
        return undefined;
      }
      return this.#closing;
    }

    /** Ends every request and socket now. */
    destroy(err, callback) {
      if (typeof err === 'function') callback = err;
      this.#closed = true;
      this.#destroyed = true;
      this.#transport.destroy();
      const done = this.#transport.close();
      if (typeof callback === 'function') {
        done.then(() => callback(null, null));
        return undefined;
      }
      return done;
    }
  };
  classes.set(undici, Class);
  return Class;
}

/**
 * A Dispatcher of `undici` (the module, major 6, 7 or 8) whose requests go
 * through steady-agent's agents, made from `options` (the agent's options).
 */
function createDispatcher(undici, options) {
  const mod = undiciModule(undici);
  const major = undiciMajor(mod);
  if (!SUPPORTED.has(major)) throw new UnsupportedUndiciError(`undici ${major}`);
  const Class = dispatcherClass(mod);
  return new Class(options);
}

module.exports = { createDispatcher };
