'use strict';

// A host's cached answer and what a lookup gets from it: pure, no I/O and
// no clock (the caller passes the time).
const dns = require('node:dns');

function familyOption(family) {
  if (family === undefined || family === null || family === 0) return 0;
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return -1;
}

class HostEntry {
  constructor(key) {
    // localhost is the system's (RFC 6761: never sent to a DNS server).
    const local = key === 'localhost';
    this.key = key;
    // The last successful answer, [{ address, family }], IPv4 first for the
    // resolver's, as the system gave it for dns.lookup's; null before one.
    this.addresses = null;
    this.current = null; // its addresses, a Set, to ask whether a socket's is still there
    this.source = local ? 'lookup' : 'dns'; // where the answer came from: the resolver, or dns.lookup
    this.system = local; // the resolver cannot answer this name: dns.lookup only
    this.ttl = 0; // ms the answer was given for, clamped
    this.expiresAt = 0; // clock.now() time a lookup stops taking it without a query
    this.staleUntil = 0; // after which it is not served at all
    this.stale = false; // the answer is served past its TTL: queries fail
    this.error = null; // why the last query failed, when there is nothing to serve
    this.pending = null; // the query under way, a Promise
    this.users = 0; // sockets of the agent connected through this answer
    this.timer = null; // the refresh timer, while users > 0
    this.turn = 0; // round robin (spread)
  }

  servable(now) { return this.addresses !== null && now < this.staleUntil; }
}


const copy = ({ address, family }) => ({ address, family });

/** By `order` (or the legacy `verbatim`), else dns's default result order. */
function ordered(list, options) {
  let order = options.order;
  if (order === undefined) {
    if (options.verbatim === true) order = 'verbatim';
    else if (options.verbatim === false) order = 'ipv4first';
    else order = dns.getDefaultResultOrder?.() ?? 'verbatim';
  }
  if (order === 'verbatim') return list;
  const first = order === 'ipv6first' ? 6 : 4;
  return [...list.filter((a) => a.family === first), ...list.filter((a) => a.family !== first)];
}

/** Each family's addresses turned by `turn`, in place of the family's own. */
function rotated(list, turn) {
  const result = list.slice();
  for (const family of [4, 6]) {
    const slots = [];
    for (let i = 0; i < list.length; i++) if (list[i].family === family) slots.push(i);
    for (let j = 0; j < slots.length; j++) result[slots[j]] = list[slots[(j + turn) % slots.length]];
  }
  return result;
}

module.exports = { HostEntry, familyOption, copy, ordered, rotated };
