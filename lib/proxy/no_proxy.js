'use strict';

// NO_PROXY, read the way Node 24's built-in proxy support reads it
// (lib/internal/http.js, ProxyConfig#shouldUseProxy), so that `noProxy` and
// `proxyEnv.NO_PROXY` mean the same here on Node 18 as in core on Node 24:
//
//   - entries are separated by commas only; each is trimmed and lower-cased
//   - `*` bypasses the proxy for every host
//   - `host` matches that host exactly (any port); `host:port` that host on
//     that port only. No implicit subdomains: `example.com` does not match
//     `api.example.com`
//   - `.example.com` matches example.com and every subdomain of it
//   - `*.example.com` matches every subdomain of example.com, not example.com
//   - `a.b.c.d-e.f.g.h` matches the IPv4 addresses in that range, inclusive
//   - IP addresses otherwise match as written (an IPv6 address without
//     brackets); there is no CIDR notation and no DNS lookup
const { isIPv4 } = require('node:net');

/** The entries of a NO_PROXY string or array, as the matcher compares them. */
function parseNoProxy(value) {
  const entries = Array.isArray(value) ? value : value.split(',');
  const list = [];
  for (const entry of entries) {
    const normalized = String(entry).trim().toLowerCase();
    if (normalized !== '') list.push(normalized);
  }
  return list;
}

function ipv4ToInt(ip) {
  const parts = ip.split('.');
  let result = 0;
  for (const part of parts) result = result * 256 + Number(part);
  return result;
}

function inRange(entry, host) {
  const dash = entry.indexOf('-');
  const start = entry.slice(0, dash).trim();
  const end = entry.slice(dash + 1).trim();
  if (!isIPv4(start) || !isIPv4(end)) return false;
  const value = ipv4ToInt(host);
  return value >= ipv4ToInt(start) && value <= ipv4ToInt(end);
}

/** True when a request to `hostname`:`port` must not go through the proxy. */
function bypasses(list, hostname, port) {
  if (list.length === 0) return false;
  const host = hostname.toLowerCase();
  const hostWithPort = port ? `${host}:${port}` : host;
  for (const entry of list) {
    if (entry === '*' || entry === host || entry === hostWithPort) return true;
    if (entry[0] === '.') {
      const suffix = entry.slice(1);
      if (host === suffix || (host.endsWith(entry) && suffix !== '')) return true;
    }
    if (entry.startsWith('*.') && host.endsWith(entry.slice(1))) return true;
    if (entry.includes('-') && isIPv4(host) && inRange(entry, host)) return true;
  }
  return false;
}

module.exports = { parseNoProxy, bypasses };
