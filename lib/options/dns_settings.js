'use strict';

// The `dns` option's settings, validated and filled in once, at construction.
const dns = require('node:dns');
const { duration, boolean } = require('./grammar');
const { InvalidOptionTypeError, InvalidOptionValueError } = require('../errors');

const SETTINGS = Object.freeze(['resolver', 'minTtl', 'maxTtl', 'lookupTtl', 'staleTtl', 'spread']);

const DEFAULTS = Object.freeze({
  minTtl: 1000,
  maxTtl: 5 * 60 * 1000,
  lookupTtl: 10 * 1000,
  staleTtl: 5 * 60 * 1000,
  spread: false,
});

/**
 * The `dns` option's settings: a boolean (or 'true', 1...: options/grammar.js),
 * or an object with any of resolver, minTtl, maxTtl, lookupTtl, staleTtl and
 * spread. Returns a new frozen object with every default filled in
 * (resolver: undefined, the agent makes its own), or null for off; the
 * caller's object is only read.
 */
function dnsSettings(value) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    let on;
    try {
      on = Array.isArray(value) ? undefined : boolean('dns', value);
    } catch {
      // The message below says what else it may be.
    }
    if (on === undefined) {
      throw new InvalidOptionTypeError('dns', `true, false, or an object of settings (${SETTINGS.join(', ')})`, value);
    }
    return on ? Object.freeze({ resolver: undefined, ...DEFAULTS }) : null;
  }
  for (const key of Object.keys(value)) {
    if (!SETTINGS.includes(key)) {
      throw new InvalidOptionValueError('dns', `an object of the settings ${SETTINGS.join(', ')}; "${key}" is none of them`, value);
    }
  }
  const minTtl = duration('dns.minTtl', value.minTtl) ?? DEFAULTS.minTtl;
  if (minTtl < 1) {
    throw new InvalidOptionValueError('dns.minTtl', 'a duration of at least 1 ms (a TTL of 0 would be queried again at once, without end)', value.minTtl);
  }
  const maxTtl = duration('dns.maxTtl', value.maxTtl) ?? Math.max(DEFAULTS.maxTtl, minTtl);
  if (maxTtl < minTtl) {
    throw new InvalidOptionValueError('dns.maxTtl', `a duration no shorter than dns.minTtl (${minTtl} ms)`, value.maxTtl);
  }
  return Object.freeze({
    resolver: resolverSetting(value.resolver),
    minTtl,
    maxTtl,
    lookupTtl: duration('dns.lookupTtl', value.lookupTtl) ?? DEFAULTS.lookupTtl,
    staleTtl: duration('dns.staleTtl', value.staleTtl) ?? DEFAULTS.staleTtl,
    spread: boolean('dns.spread', value.spread) ?? DEFAULTS.spread,
  });
}

function resolverSetting(resolver) {
  if (resolver === undefined || resolver === null) return undefined;
  if (resolver instanceof dns.Resolver || resolver instanceof dns.promises.Resolver) return resolver;
  // Anything shaped like dns.promises.Resolver (a wrapper of the caller's).
  if (typeof resolver === 'object' && typeof resolver.resolve4 === 'function' && typeof resolver.resolve6 === 'function') {
    return resolver;
  }
  throw new InvalidOptionTypeError('dns.resolver', 'a dns.Resolver or dns.promises.Resolver', resolver);
}


module.exports = { dnsSettings, DEFAULTS };
