'use strict';

// The undici transport's side of Happy Eyeballs (./happy_eyeballs.js): its
// connect() hands a raced connection here, and gets back the winner (or the
// TLS socket over it) to adopt, or the error that ended the race.
const tls = require('node:tls');
const { races, Race } = require('./happy_eyeballs');

/** Whether the transport's connection to `connectOptions.host` is raced. */
function raceWanted(options, connectOptions) {
  return races({ host: connectOptions.host, autoSelectFamily: options.autoSelectFamily });
}

/**
 * Races `origin`'s addresses for `transport` (lib/undici/transport.js):
 * `connectOptions` as net.connect would take them, `tlsOptions` as
 * tls.connect would (null for http). `callback` is undici's connect
 * callback, called once, by transport.adopt() or with the race's error.
 */
function raceFor(transport, origin, connectOptions, tlsOptions, callback) {
  const options = transport.options;
  const spec = {
    ...connectOptions,
    lookup: connectOptions.lookup ?? options.lookup,
    family: options.family,
    hints: options.hints,
    autoSelectFamilyAttemptTimeout: options.autoSelectFamilyAttemptTimeout,
  };
  const report = {
    entry: origin.stats,
    publish: (channel, message) => transport.publish(channel, message, origin),
    settle: () => transport.stats.settle(origin.stats),
  };
  let watch = null;
  const race = new Race(spec, report, (err, socket) => {
    if (err) {
      watch?.done();
      callback(err, null);
      return;
    }
    let delivered = socket;
    if (tlsOptions !== null) {
      try {
        delivered = tls.connect({ ...tlsOptions, socket });
      } catch (tlsError) {
        socket.destroy();
        watch?.done();
        callback(tlsError, null);
        return;
      }
      watch?.follow(delivered);
    } else {
      watch?.done();
    }
    transport.adopt(origin, delivered, tlsOptions !== null, connectOptions.host, callback);
  });
  watch = transport.connectTimeout?.watchRace(race) ?? null;
  race.start();
  return undefined;
}

module.exports = { raceWanted, raceFor };
