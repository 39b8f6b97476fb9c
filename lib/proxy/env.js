'use strict';

// The `proxyEnv` option: HTTP_PROXY / HTTPS_PROXY / NO_PROXY from an object
// the caller gives (usually process.env), read exactly as Node 24's
// http.Agent reads its option of the same name (lib/internal/http.js,
// parseProxyConfigFromEnv):
//
//   - an http agent uses http_proxy, else HTTP_PROXY; an https agent
//     https_proxy, else HTTPS_PROXY (the lower-case name wins; an empty value
//     counts as unset). There is no ALL_PROXY.
//   - a value that does not start with `http://` or `https://` is ignored
//     (no proxy), as in core; one that starts so but does not parse, or holds
//     a line break, throws
//   - no_proxy, else NO_PROXY, in the syntax of ./no_proxy.js
//
// proxy-from-env (axios's choice) reads only process.env, adds ALL_PROXY,
// splits NO_PROXY on spaces too and reads `.example.com` differently, so it
// cannot give Node 24's answers for a `proxyEnv` object.

const NAMES = {
  'http:': ['http_proxy', 'HTTP_PROXY'],
  'https:': ['https_proxy', 'HTTPS_PROXY'],
};

function pick(env, [lower, upper]) {
  const value = env[lower] || env[upper];
  if (!value) return undefined;
  return { name: env[lower] ? lower : upper, value };
}

/**
 * What `proxyEnv` says for an agent of `protocol`: { proxy: { name, value } | undefined,
 * noProxy: { name, value } | undefined }. Values are checked to be strings.
 */
function readProxyEnv(env, protocol) {
  const proxy = pick(env, NAMES[protocol]);
  const noProxy = pick(env, ['no_proxy', 'NO_PROXY']);
  return {
    proxy: proxy !== undefined && isProxyUrl(proxy.value) ? proxy : undefined,
    noProxy,
  };
}

function isProxyUrl(value) {
  // Core ignores other schemes rather than throwing: they may be meant for
  // other software reading the same environment. A non-string (not from a
  // real environment) is left for the URL check to reject.
  return typeof value !== 'string' || value.startsWith('http://') || value.startsWith('https://');
}

module.exports = { readProxyEnv };
