'use strict';

// The proxy options, `proxy`, `noProxy` and `proxyEnv`: validated once, at
// construction, into objects that hold the proxy's credentials only where
// nothing prints them (a private field read through a getter).
const { isIP } = require('node:net');
const { InvalidOptionTypeError, InvalidProxyOptionError } = require('../errors');
const { parseNoProxy } = require('./no_proxy');
const { readProxyEnv } = require('./env');

// The keys of a proxyEnv object this library reads; copying just these keeps
// a snapshot of process.env small.
const ENV_KEYS = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];

/** A parsed proxy URL. `origin` (scheme, host, port) is safe to print. */
class ProxyServer {
  #authorization;

  constructor(option, value) {
    let text;
    if (value instanceof URL) text = value.href;
    else if (typeof value === 'string') text = value;
    else throw new InvalidProxyOptionError(option, `it is a ${typeof value}, not a string or a URL`);
    if (/[\r\n]/.test(text)) throw new InvalidProxyOptionError(option, 'it contains a line break');
    let url;
    try {
      url = new URL(text);
    } catch {
      throw new InvalidProxyOptionError(option, 'it does not parse as a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new InvalidProxyOptionError(option, `its scheme is ${JSON.stringify(url.protocol)}`);
    }
    this.protocol = url.protocol;
    // net.connect takes an IPv6 address without the URL's brackets.
    this.host = url.hostname[0] === '[' ? url.hostname.slice(1, -1) : url.hostname;
    this.port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    this.origin = `${url.protocol}//${url.hostname}:${this.port}`;
    // The name to verify an https: proxy's certificate against (none for an IP).
    this.servername = isIP(this.host) === 0 ? this.host : undefined;
    if (url.username !== '' || url.password !== '') {
      let credentials;
      try {
        credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
      } catch {
        throw new InvalidProxyOptionError(option, 'its credentials are not valid percent-encoding');
      }
      this.#authorization = `Basic ${Buffer.from(credentials).toString('base64')}`;
    }
    Object.freeze(this);
  }

  /** The Proxy-Authorization header value, or undefined without credentials. */
  get authorization() { return this.#authorization; }
}

function noProxyList(option, value) {
  if (typeof value === 'string') return parseNoProxy(value);
  if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return parseNoProxy(value);
  throw new InvalidOptionTypeError(option, 'a string of comma-separated hosts or an array of host strings', value);
}

/**
 * Validates `proxy`, `noProxy` and `proxyEnv` from the caller's options.
 * Returns undefined when none is given (the agent then has no proxy code on
 * its request path), else a frozen { proxy, noProxy, env }: the parsed proxy,
 * the NO_PROXY entries and a copy of the proxy variables of `proxyEnv`.
 */
function normalizeProxyOptions(input) {
  const { proxy, noProxy, proxyEnv } = input;
  const none = (value) => value === undefined || value === null;
  if (none(proxy) && none(noProxy) && none(proxyEnv)) return undefined;
  let env;
  if (!none(proxyEnv)) {
    if (typeof proxyEnv !== 'object' || Array.isArray(proxyEnv)) {
      throw new InvalidOptionTypeError('proxyEnv', 'an object such as process.env', proxyEnv);
    }
    env = { __proto__: null };
    for (const key of ENV_KEYS) {
      const value = proxyEnv[key];
      if (value === undefined || value === null) continue;
      if (typeof value !== 'string') throw new InvalidOptionTypeError(`proxyEnv.${key}`, 'a string', typeof value);
      env[key] = value;
    }
    Object.freeze(env);
  }
  return Object.freeze({
    proxy: none(proxy) ? undefined : new ProxyServer('proxy', proxy),
    noProxy: none(noProxy) ? undefined : Object.freeze(noProxyList('noProxy', noProxy)),
    env,
  });
}

/**
 * The proxy and NO_PROXY list an agent of `protocol` ('http:' or 'https:')
 * uses, or null for none. Each setting given as an option wins over the
 * environment's.
 */
function resolveProxy(settings, protocol) {
  if (settings === undefined) return null;
  const fromEnv = settings.env === undefined ? { proxy: undefined, noProxy: undefined } : readProxyEnv(settings.env, protocol);
  let proxy = settings.proxy;
  if (proxy === undefined && fromEnv.proxy !== undefined) {
    proxy = new ProxyServer(`proxyEnv.${fromEnv.proxy.name}`, fromEnv.proxy.value);
  }
  if (proxy === undefined) return null;
  let noProxy = settings.noProxy;
  if (noProxy === undefined && fromEnv.noProxy !== undefined) noProxy = parseNoProxy(fromEnv.noProxy.value);
  return { proxy, noProxy: noProxy ?? [] };
}

module.exports = { normalizeProxyOptions, resolveProxy };
