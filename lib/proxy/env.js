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
//     (no proxy), as in core, with a warning; one that starts so but does
//     not parse, or holds a line break, throws
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
  if (proxy !== undefined && !isProxyUrl(proxy.value)) {
    warnIgnored(proxy, protocol);
    return { proxy: undefined, noProxy };
  }
  return { proxy, noProxy };
}

const warned = new Set();

// An ignored value is said once per variable and scheme per process: a
// socks5:// proxy the caller expected to be used would otherwise be bypassed
// without a word. The value itself is never repeated (credentials); only its
// scheme, when it has one.
function warnIgnored({ name, value }, protocol) {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value)?.[1].toLowerCase();
  const key = `${name} ${scheme}`;
  if (warned.has(key)) return;
  warned.add(key);
  const what = scheme === undefined ? 'has no http:// or https:// scheme' : `is a ${scheme}: URL`;
  process.emitWarning(`proxyEnv.${name} ${what}, and only http: and https: proxies are supported: `
    + `it is ignored, and ${protocol.slice(0, -1)} requests go without a proxy.`, { code: 'STEADY_AGENT_PROXY_ENV_IGNORED' });
}

function isProxyUrl(value) {
  // Core ignores other schemes rather than throwing: they may be meant for
  // other software reading the same environment. A non-string (not from a
  // real environment) is left for the URL check to reject.
  return typeof value !== 'string' || value.startsWith('http://') || value.startsWith('https://');
}

module.exports = { readProxyEnv };
