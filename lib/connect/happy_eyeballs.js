'use strict';

// Happy Eyeballs (RFC 8305) for a new connection to a host name: every
// address of the host's answer is tried, the families interleaved, each
// attempt starting a Connection Attempt Delay after the one before it, or at
// once when one fails; the first to connect wins and the others are closed.
//
// Node's own autoSelectFamily (net.connect) tries one address at a time and
// gives each up after autoSelectFamilyAttemptTimeout, so a server farther
// away than that timeout is never reached through an address tried before
// the last; here no attempt is given up for being slow: only connectTimeout
// (./connect_timeout.js) ends the race, and it ends the whole race.
//
// The race connects plain TCP sockets to IP addresses (so net does no lookup
// and no autoSelectFamily of its own). The caller gets the winner, and for
// https starts TLS on it, so that the handshake runs on the winner only.
// A race is for one connection; what it costs beyond a plain net.connect is
// the lookup it makes itself (`all: true`) and, when the host has more than
// one address, one timer at a time.
const net = require('node:net');
const dns = require('node:dns');
const debug = require('debug')('steady-agent');
const clock = require('../timers/clock');
const { interleave, next, attemptDelay } = require('./attempt_order');
const { ConnectAttemptsError, ConnectTimeoutError, DnsNotFoundError, AgentDestroyedError } = require('../errors');
const { channels } = require('../observe/channels');

// Node's default, read at each connection as net reads it: Node 20 and later
// race by default; Node 18 does not (net.getDefaultAutoSelectFamily came in
// 18.18 and says false there; older 18.x have none).
const defaultAutoSelect = () => net.getDefaultAutoSelectFamily?.() ?? false;
const defaultDelay = () => attemptDelay(net.getDefaultAutoSelectFamilyAttemptTimeout?.());

/**
 * Whether a connection with these options (core's per-socket copy for the
 * agent, the transport's own for undici) is raced: a host name (not an IP
 * literal, not a Unix socket), and autoSelectFamily on (the options', else
 * Node's default).
 */
function races(options) {
  if (options.socketPath || options.path) return false;
  const host = options.host || 'localhost';
  if (typeof host !== 'string' || net.isIP(host) !== 0) return false;
  const on = options.autoSelectFamily;
  return typeof on === 'boolean' ? on : defaultAutoSelect();
}

// A loser's error may be on its way (net emits a failed connect's error a
// tick after destroying the socket): it is nobody's.
function ignore() {}

// One attempt: a TCP connection to one address.
class Attempt {
  constructor(race, entry, index, why) {
    this.race = race;
    this.address = entry.address;
    this.family = entry.family;
    this.index = index;
    this.why = why; // what started it: 'first', 'delay' or 'failure'
    this.error = null;
    this.socket = null;
    this.onConnect = () => race.connected(this);
    this.onError = (err) => race.failed(this, err);
  }

  start(options) {
    const socket = net.connect({
      host: this.address,
      port: options.port,
      family: this.family,
      localAddress: options.localAddress,
      localPort: options.localPort,
      keepAlive: options.keepAlive,
      keepAliveInitialDelay: options.keepAliveInitialDelay,
      noDelay: true,
    });
    this.socket = socket;
    socket.once('connect', this.onConnect);
    socket.once('error', this.onError);
  }

  /** Its listeners gone; a socket still connecting is closed. */
  end(close) {
    const socket = this.socket;
    socket.removeListener('connect', this.onConnect);
    socket.removeListener('error', this.onError);
    if (close) {
      socket.on('error', ignore);
      socket.destroy();
    }
  }
}

/**
 * One connection's race. `options`: host, port, lookup, family, hints,
 * localAddress, localPort, keepAlive, keepAliveInitialDelay,
 * autoSelectFamilyAttemptTimeout (the Connection Attempt Delay).
 * `report`: { entry, publish(message), settle() } of the origin (its
 * getStats() counters and its channel messages). `done(err, socket)` is
 * called once: with the winner, connected, or the error that ended the race.
 * destroy(err) ends it (agent.destroy(), connectTimeout).
 */
class Race {
  // 'lookup' -> 'racing' -> 'won' | 'failed' | 'destroyed'
  state = 'lookup';
  #options;
  #host;
  #report;
  #done;
  #delay;
  #addresses = null; // interleaved, once the lookup answered
  #attempts = [];
  #pending = 0; // attempts begun and still under way
  #timer = null;
  #startedAt;

  #onDelay = () => {
    this.#timer = null;
    this.#advance('delay');
  };

  constructor(options, report, done) {
    this.#options = options;
    this.#host = options.host || 'localhost';
    this.#report = report;
    this.#done = done;
    this.#delay = typeof options.autoSelectFamilyAttemptTimeout === 'number'
      ? attemptDelay(options.autoSelectFamilyAttemptTimeout, defaultDelay())
      : defaultDelay();
    this.#startedAt = clock.now();
  }

  /** Looks the host up (`all: true`) and starts the first attempt. */
  start() {
    const options = this.#options;
    const lookup = typeof options.lookup === 'function' ? options.lookup : dns.lookup;
    const family = options.family === 4 || options.family === 6 ? options.family : 0;
    // A lookup of the caller's may answer at once: the race goes on a tick
    // later, as from dns.lookup, so that the caller's start() returns first.
    let sync = true;
    const answered = (err, addresses, addressFamily) => {
      if (sync) {
        process.nextTick(answered, err, addresses, addressFamily);
        return;
      }
      if (this.state !== 'lookup') return; // destroyed while looking up
      if (err) this.#finish('failed', err, null);
      else this.#begin(typeof addresses === 'string' ? [{ address: addresses, family: addressFamily }] : addresses);
    };
    try {
      lookup(this.#host, { all: true, family, hints: options.hints ?? 0 }, answered);
    } catch (err) {
      // A lookup of the caller's that throws: the connection fails, as net's would.
      answered(err);
    }
    sync = false;
  }

  get destroyed() {
    return this.state === 'destroyed';
  }

  /** Ends the race with `err` (the agent destroyed, connectTimeout); a no-op once it ended. */
  destroy(err) {
    if (this.state !== 'lookup' && this.state !== 'racing') return;
    this.state = 'destroyed';
    this.#clearTimer();
    const why = err instanceof ConnectTimeoutError ? 'connect-timeout' : 'destroyed';
    for (const attempt of this.#attempts) {
      if (attempt.error !== null) continue;
      attempt.end(true);
      this.#publish(attempt, 'lost', why, null);
    }
    if (err instanceof ConnectTimeoutError) this.#report.settle();
    process.nextTick(this.#done, err ?? new AgentDestroyedError(), null);
  }

  #begin(addresses) {
    // The family from the address itself: a lookup of the caller's may say 'IPv4'.
    const usable = [];
    if (Array.isArray(addresses)) {
      for (const entry of addresses) {
        const family = net.isIP(entry?.address ?? '');
        if (family !== 0) usable.push({ address: entry.address, family });
      }
    }
    const list = interleave(usable);
    if (list.length === 0) {
      this.#finish('failed', new DnsNotFoundError(this.#host), null);
      return;
    }
    this.state = 'racing';
    this.#addresses = list;
    this.#advance('begin');
  }

  #advance(event) {
    const started = this.#attempts.length;
    const total = this.#addresses.length;
    const action = next(event, started, total, this.#pending);
    if (action === 'fail') {
      const attempts = this.#attempts.map(({ address, family, error }) => ({ address, family, error }));
      this.#finish('failed', new ConnectAttemptsError(this.#host, this.#options.port, attempts), null);
      return;
    }
    if (action !== 'start') return;
    this.#clearTimer();
    const why = event === 'begin' ? 'first' : event;
    const attempt = new Attempt(this, this.#addresses[started], started, why);
    this.#attempts.push(attempt);
    this.#pending++;
    this.#report.entry.attemptStarted(attempt.family);
    attempt.start(this.#options);
    this.#publish(attempt, 'started', why, null);
    if (started + 1 < total) this.#timer = setTimeout(this.#onDelay, this.#delay);
  }

  /** `attempt` connected: it wins, every other is closed. */
  connected(attempt) {
    this.#pending--;
    this.#clearTimer();
    attempt.end(false);
    this.#report.entry.attemptWon(attempt.family);
    this.#publish(attempt, 'won', 'connected', null);
    for (const other of this.#attempts) {
      if (other === attempt || other.error !== null) continue;
      other.end(true);
      this.#publish(other, 'lost', 'another-won', null);
    }
    if (debug.enabled) {
      debug('connect %s:%d: %s won in %d ms (attempt %d of %d)', this.#host, this.#options.port,
        attempt.address, clock.roundMs(clock.now() - this.#startedAt), attempt.index + 1, this.#addresses.length);
    }
    this.#finish('won', null, attempt.socket);
  }

  /** `attempt` failed (refused, unreachable...): the next address is tried at once. */
  failed(attempt, err) {
    attempt.error = err;
    attempt.end(false);
    this.#pending--;
    this.#publish(attempt, 'failed', err.code ?? err.message, err);
    this.#advance('failure');
  }

  #finish(state, err, socket) {
    this.state = state;
    this.#clearTimer();
    if (err !== null) {
      if (debug.enabled) debug('connect %s:%d: failed after %d ms: %s', this.#host, this.#options.port, clock.roundMs(clock.now() - this.#startedAt), err.message);
      this.#report.settle();
    }
    this.#done(err, socket);
  }

  #clearTimer() {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
  }

  #publish(attempt, outcome, why, error) {
    if (!channels.connectAttempt.hasSubscribers) return;
    const message = {
      address: attempt.address,
      family: attempt.family,
      attempt: attempt.index + 1,
      outcome,
      why,
      elapsedMs: clock.roundMs(clock.now() - this.#startedAt),
      socket: attempt.socket,
    };
    if (error !== null) message.error = error;
    this.#report.publish(channels.connectAttempt, message);
  }
}

module.exports = { races, Race };
