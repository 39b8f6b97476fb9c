'use strict';

// `steady-agent/undici`: createDispatcher(undici, options), an `Agent` of
// the caller's own undici (a subclass, so its request, stream, pipeline,
// fetch, compose and setGlobalDispatcher take it) whose sockets and requests
// go through steady-agent's transport (./dispatcher.js). Requests whose body
// is absent, a string or bytes are sent once more, at once, after a failure
// marked replayable; undici's fetch hands bodies over as async iterables, so
// a fetch with a body is not.
//
// The caller passes undici in: this file never loads it, so the caller's
// major is the one spoken, and importing steady-agent installs no global
// dispatcher.
const fs = require('node:fs');
const path = require('node:path');
// Every module of the agent this file uses, in one place.
const { UnsupportedUndiciError } = require('../errors');
const { transportClass } = require('./dispatcher');

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

/**
 * A Dispatcher of `undici` (the module, major 6, 7 or 8) whose requests go
 * through steady-agent's agents, made from `options` (the agent's options).
 */
function createDispatcher(undici, options) {
  const mod = undiciModule(undici);
  const major = undiciMajor(mod);
  if (!SUPPORTED.has(major)) throw new UnsupportedUndiciError(`undici ${major}`);
  const Class = transportClass(mod.Agent, 'SteadyDispatcher', mod.errors);
  return new Class(options, { resendBuffered: true });
}

module.exports = { createDispatcher };
