'use strict';

// The `dns` option: the agent resolves host names itself and keeps its pools
// true to DNS. Loaded only when the option is set; an agent without it never
// requires this file.
//
// Per host, one cached answer: the A and AAAA records of the resolver with
// their TTLs (clamped to minTtl..maxTtl), or, for a name the resolver cannot
// answer (single-label names and search domains, /etc/hosts, localhost),
// dns.lookup's answer with lookupTtl, and the host remembered as one that
// needs it (localhost never asks the resolver). One query per host at a time, shared by every lookup waiting for
// it. While the agent holds sockets to a host (track/untrack), one unref'd
// timer resolves it again as its answer expires, so that a change is seen
// under constant load, when no new socket would ever ask. An address that
// left a successful answer is reported to the agent (onChange), which
// retires the sockets connected to it; a failed query (SERVFAIL, timeout,
// refused, an empty answer) never changes anything: the last good answer is
// served for up to staleTtl past its expiry.
const dns = require('node:dns');
const net = require('node:net');
const debug = require('debug')('steady-agent');
const clock = require('../timers/clock');
const { DnsNotFoundError } = require('../errors');
const { SOCKET_NAME } = require('../constants');
const { channels, publish } = require('../observe/channels');
const { dnsSettings, DEFAULTS } = require('../options/dns_settings');
const { ask, systemLookup, configuredFamilies, unmapped, isLoopback } = require('./resolver');
const { HostEntry, familyOption, copy, ordered, rotated } = require('./answers');

// A failed query is tried again after the last answer's TTL, but no later
// than this: an outage of a long-TTL name would otherwise outlast staleTtl
// before the second try.
const RETRY_MAX = 30 * 1000;

// Answers kept for hosts the agent holds no socket to; the oldest go first.
const IDLE_HOSTS_KEPT = 1000;

// What a resolver says when the name has no record of the type asked for.
const NO_RECORDS = new Set([dns.NODATA, dns.NOTFOUND]);

class DnsCache {
  #settings;
  #resolver;
  #ownResolver;
  #agent;
  #onChange;
  #entries = new Map(); // key -> HostEntry, least recently answered first
  #stopped = false;

  /**
   * @param {object} settings from dnsSettings()
   * @param {{ agent: object, onChange: (host: string, removed: string[], addresses: object[]) => void }} hooks
   *   onChange is called when addresses left a host's answer: the agent
   *   retires the sockets connected to them.
   */
  constructor(settings, { agent, onChange }) {
    this.#settings = settings;
    this.#ownResolver = settings.resolver === undefined;
    this.#resolver = settings.resolver ?? new dns.promises.Resolver();
    this.#agent = agent;
    this.#onChange = onChange;
  }

  /** net's `lookup` option: dns.lookup's contract, answered from the cache. */
  lookup = (hostname, options, callback) => {
    if (typeof options === 'function') {
      callback = options;
      options = {};
    } else if (typeof options === 'number') {
      options = { family: options };
    } else if (options === undefined || options === null) {
      options = {};
    }
    const family = familyOption(options.family);
    // What dns.lookup itself answers without a query (an IP literal, an
    // empty name) or refuses (a bad argument), it answers.
    if (typeof hostname !== 'string' || hostname === '' || net.isIP(hostname) !== 0 || family === -1 ||
        typeof callback !== 'function') {
      return dns.lookup(hostname, options, callback);
    }
    const entry = this.#entry(hostname.toLowerCase());
    // Always asynchronous, as dns.lookup; and outside the promise chain, so
    // that an exception in the callback is uncaught, as with dns.lookup,
    // rather than a rejection.
    const now = clock.now();
    // An answer past its TTL, with its refresh under way (a slow or failing
    // server), is served as it is rather than make the connection wait.
    if (entry.addresses !== null && (now < entry.expiresAt || (entry.pending !== null && entry.servable(now)))) {
      process.nextTick(() => this.#answer(entry, hostname, family, options, callback, false));
    } else {
      // The answer this lookup waited for is its answer, however short its
      // TTL and however long the event loop took to get back to it.
      this.#resolve(entry).then((answered) => process.nextTick(() => this.#answer(entry, hostname, family, options, callback, answered)));
    }
  };

  /** The agent opened a socket to `host` through lookup(): keep its answer fresh. */
  track(host) {
    const entry = this.#entry(host.toLowerCase());
    entry.users++;
    this.#stopped = false;
    // Without an answer yet, the socket's own lookup is about to ask, and
    // the end of that query schedules the refresh.
    if (entry.timer === null && entry.pending === null && entry.addresses !== null) this.#schedule(entry);
  }

  /** A socket tracked for `host` closed. */
  untrack(host) {
    const entry = this.#entries.get(host.toLowerCase());
    if (entry === undefined || entry.users === 0) return;
    entry.users--;
    if (entry.users === 0 && entry.timer !== null) {
      clearTimeout(entry.timer);
      entry.timer = null;
    }
  }

  /**
   * Whether `address` (a socket's remoteAddress) has left the last
   * successful answer for `host`: such a socket serves no further request.
   */
  left(host, address) {
    const entry = this.#entries.get(host.toLowerCase());
    if (entry === undefined || entry.current === null || typeof address !== 'string') return false;
    return !entry.current.has(unmapped(address));
  }

  /** The agent retires `socket` (to `address`, which left `host`'s answer): published and logged. */
  retiring(socket, host, address, wasFree) {
    if (debug.enabled) debug('dns: %s: %s to %s, which left the answer, is retired', host, socket[SOCKET_NAME] ?? 'a socket', address);
    if (channels.dnsRetire.hasSubscribers) {
      publish(channels.dnsRetire, { agent: this.#agent, host, address, socket, free: wasFree });
    }
  }

  /** Clears every timer (agent.destroy(), close()); a later track() starts again. */
  stop() {
    this.#stopped = true;
    for (const entry of this.#entries.values()) {
      if (entry.timer !== null) clearTimeout(entry.timer);
      entry.timer = null;
    }
    // Queries of a resolver the caller shares are the caller's.
    if (this.#ownResolver) this.#resolver.cancel();
  }

  /** The cached answers, `{ host: { addresses, source, ttlMs, expiresInMs, stale, sockets } }`. */
  snapshot() {
    const now = clock.now();
    const hosts = {};
    for (const entry of this.#entries.values()) {
      if (entry.addresses === null) continue;
      hosts[entry.key] = {
        addresses: entry.addresses.map(copy),
        source: entry.source,
        ttlMs: clock.roundMs(entry.ttl),
        expiresInMs: Math.max(0, clock.roundMs(entry.expiresAt - now)),
        stale: entry.stale,
        sockets: entry.users,
      };
    }
    return hosts;
  }

  // ---- answering a lookup ------------------------------------------------------

  // `answered`: the lookup waited for a query that has just answered.
  #answer(entry, hostname, family, options, callback, answered) {
    const now = clock.now();
    if (!(answered && entry.addresses !== null) && !entry.servable(now)) {
      callback(entry.error ?? new DnsNotFoundError(hostname));
      return;
    }
    const all = options.all === true;
    const hints = typeof options.hints === 'number' ? options.hints : 0;
    let list = this.#addressesFor(entry, family, hints, now);
    if (list.length === 0) {
      callback(new DnsNotFoundError(hostname));
      return;
    }
    list = ordered(list, options);
    if (this.#settings.spread) list = rotated(list, entry.turn++);
    if (all) callback(null, list);
    else callback(null, list[0].address, list[0].family);
  }

  #addressesFor(entry, family, hints, now) {
    const answer = entry.addresses;
    if (family === 4) return answer.filter((a) => a.family === 4).map(copy);
    if (family === 6) {
      const v6 = answer.filter((a) => a.family === 6).map(copy);
      if ((hints & dns.V4MAPPED) === 0 || (v6.length > 0 && (hints & dns.ALL) === 0)) return v6;
      for (const a of answer) if (a.family === 4) v6.push({ address: `::ffff:${a.address}`, family: 6 });
      return v6;
    }
    if ((hints & dns.ADDRCONFIG) === 0) return answer.map(copy);
    // As getaddrinfo: a family no interface has is left out. Loopback
    // interfaces do not count, but loopback answers are kept, so a name
    // for 127.0.0.2 works on a machine with nothing else.
    const configured = configuredFamilies(now);
    return answer.filter((a) => configured[a.family] || isLoopback(a.address)).map(copy);
  }

  // ---- resolving -------------------------------------------------------------------

  #entry(key) {
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = new HostEntry(key);
      this.#entries.set(key, entry);
      if (this.#entries.size > IDLE_HOSTS_KEPT) this.#evictIdle();
    }
    return entry;
  }

  #evictIdle() {
    for (const [key, entry] of this.#entries) {
      if (entry.users === 0 && entry.pending === null) {
        this.#entries.delete(key);
        return;
      }
    }
  }

  /** The query under way for `entry`, or a new one; never rejects. */
  #resolve(entry) {
    if (entry.pending === null) {
      entry.pending = this.#query(entry).finally(() => {
        entry.pending = null;
        if (entry.users > 0) this.#schedule(entry);
      });
    }
    return entry.pending;
  }

  /** Asks for `entry`'s answer; true when it came (false: the query failed). */
  async #query(entry) {
    const host = entry.key;
    const started = clock.now();
    let outcome = entry.system ? null : await this.#askResolver(host);
    // The resolver cannot answer and there is nothing to serve instead: the
    // system's lookup (search domains, /etc/hosts, localhost, mDNS...).
    if (outcome === null || (outcome.error !== undefined && !entry.servable(clock.now()))) {
      const system = await systemLookup(host);
      if (system.error === undefined) {
        if (outcome?.noRecords === true) entry.system = true;
        outcome = { addresses: system.addresses, ttl: this.#settings.lookupTtl, source: 'lookup' };
      } else {
        outcome = { error: system.error, source: 'lookup' };
      }
    }
    const now = clock.now();
    if (outcome.error === undefined) this.#accept(entry, outcome, now);
    else this.#failed(entry, outcome.error, now);
    if (channels.dnsLookup.hasSubscribers) {
      publish(channels.dnsLookup, {
        agent: this.#agent,
        host,
        source: outcome.source,
        addresses: outcome.error === undefined ? entry.addresses.map(copy) : null,
        ttlMs: outcome.error === undefined ? entry.ttl : null,
        error: outcome.error ?? null,
        durationMs: now - started,
      });
    }
    return outcome.error === undefined;
  }

  /**
   * A and AAAA from the resolver: { addresses, ttl, source }, or { error,
   * noRecords } where noRecords says the name has neither.
   */
  async #askResolver(host) {
    const answers = await Promise.all([
      ask(this.#resolver, 'resolve4', host),
      ask(this.#resolver, 'resolve6', host),
    ]);
    const addresses = [];
    let ttl = Infinity;
    let error;
    for (let i = 0; i < 2; i++) {
      const answer = answers[i];
      if (answer.error !== undefined) {
        // One family failing fails the whole answer: half an answer would
        // look like the other family's addresses had left.
        if (!NO_RECORDS.has(answer.error.code)) return { error: answer.error, noRecords: false, source: 'dns' };
        error ??= answer.error;
        continue;
      }
      for (const record of answer.records) {
        addresses.push({ address: record.address, family: i === 0 ? 4 : 6 });
        if (record.ttl * 1000 < ttl) ttl = record.ttl * 1000;
      }
    }
    if (addresses.length === 0) {
      return { error: error ?? Object.assign(new Error(`queryA ENODATA ${host}`), { code: dns.NODATA, hostname: host }), noRecords: true, source: 'dns' };
    }
    return { addresses, ttl, source: 'dns' };
  }

  #accept(entry, { addresses, ttl, source }, now) {
    const { minTtl, maxTtl, staleTtl } = this.#settings;
    ttl = Math.min(Math.max(ttl, minTtl), maxTtl);
    const previous = entry.current;
    const wasStale = entry.stale;
    entry.addresses = addresses;
    entry.current = new Set(addresses.map((a) => a.address));
    entry.source = source;
    entry.ttl = ttl;
    entry.expiresAt = now + ttl;
    entry.staleUntil = now + ttl + staleTtl;
    entry.stale = false;
    entry.error = null;
    // Most recently answered last: the idle ones evicted first are the oldest.
    this.#entries.delete(entry.key);
    this.#entries.set(entry.key, entry);
    if (debug.enabled) {
      debug('dns: %s is %s (%s, %d ms)%s', entry.key, addresses.map((a) => a.address).join(' '), source, clock.roundMs(ttl), wasStale ? ', answered again' : '');
    }
    if (previous === null) return;
    const removed = [...previous].filter((address) => !entry.current.has(address));
    const added = [...entry.current].filter((address) => !previous.has(address));
    if (removed.length === 0 && added.length === 0) return;
    if (debug.enabled) debug('dns: %s changed: %s left, %s came', entry.key, removed.join(' ') || 'none', added.join(' ') || 'none');
    if (channels.dnsChange.hasSubscribers) {
      publish(channels.dnsChange, { agent: this.#agent, host: entry.key, removed, added, addresses: addresses.map(copy) });
    }
    if (removed.length > 0) this.#onChange(entry.key, removed, addresses);
  }

  #failed(entry, error, now) {
    if (!entry.servable(now)) {
      entry.error = error;
      if (entry.addresses !== null && debug.enabled) debug('dns: %s: no answer (%s) and the last one is past staleTtl', entry.key, error.code ?? error.message);
      entry.expiresAt = 0;
      return;
    }
    // Never retire on a failure: the last answer is served a while longer,
    // and asked for again after a pause rather than by every new socket.
    const retry = this.#retryDelay(entry);
    const staleMs = now - (entry.staleUntil - this.#settings.staleTtl);
    entry.stale = true;
    entry.expiresAt = Math.min(now + retry, entry.staleUntil);
    if (debug.enabled) {
      debug('dns: %s: query failed (%s): the last answer is served for up to %d ms more', entry.key, error.code ?? error.message, clock.roundMs(entry.staleUntil - now));
    }
    if (channels.dnsStale.hasSubscribers) {
      publish(channels.dnsStale, {
        agent: this.#agent,
        host: entry.key,
        addresses: entry.addresses.map(copy),
        error,
        staleMs: Math.max(0, Math.round(staleMs)),
        remainingMs: Math.round(entry.staleUntil - now),
      });
    }
  }

  // ---- refreshing hosts in use ---------------------------------------------------

  #retryDelay(entry) {
    const { minTtl } = this.#settings;
    return Math.max(minTtl, Math.min(entry.ttl || minTtl, RETRY_MAX));
  }

  /** (Re)arms the one refresh timer of a host in use, after a query or when first tracked. */
  #schedule(entry) {
    if (entry.timer !== null) clearTimeout(entry.timer);
    entry.timer = null;
    if (this.#stopped) return;
    const now = clock.now();
    const { minTtl } = this.#settings;
    let delay;
    if (entry.servable(now)) {
      // Up to a tenth early, so that the hosts of one agent do not all ask
      // at once and a lookup seldom finds the answer expired; never sooner
      // than minTtl after the last query.
      const left = entry.expiresAt - now;
      delay = Math.max(left - Math.random() * Math.min(left / 10, 1000), minTtl);
    } else {
      delay = this.#retryDelay(entry);
    }
    entry.timer = setTimeout(DnsCache.#refresh, clock.timerDelay(delay), this, entry);
    entry.timer.unref();
  }

  static #refresh(cache, entry) {
    entry.timer = null;
    if (entry.users > 0) cache.#resolve(entry);
  }
}


module.exports = { DnsCache, dnsSettings, DEFAULTS };
