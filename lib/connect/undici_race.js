'use strict';

// The undici transport's side of Happy Eyeballs (./happy_eyeballs.js):
// undici's `connect` option races a host name's addresses first, where a
// race is wanted, and hands the winner to the transport's connect(), which
// adopts it (and for https starts TLS on it, through its session cache).
const { races, Race } = require('./happy_eyeballs');

/**
 * `agentOptions` (the transport's options for undici's Agent) with its
 * `connect` racing first where a race is wanted. Returns the same object.
 */
function withRaces(transport, agentOptions) {
  const connect = agentOptions.connect; // the transport's, bound
  agentOptions.connect = (params, callback) => {
    const host = params.hostname.startsWith('[') ? params.hostname.slice(1, -1) : params.hostname;
    const options = transport.options;
    // A proxied origin's sockets go to its proxy (./connector.js).
    if (!races({ host, autoSelectFamily: options.autoSelectFamily }) || transport.originOf(params).proxy !== null) return connect(params, callback);
    raceFor(transport, params, host, connect, callback);
    return undefined;
  };
  return agentOptions;
}

// One race for undici's connect(params, callback): `callback` is called
// once, by the transport's connect() or with the race's error.
function raceFor(transport, params, host, connect, callback) {
  const options = transport.options;
  const secure = params.protocol === 'https:';
  const port = Number(params.port || (secure ? 443 : 80));
  // The origin as the transport's connect() finds it: its counters and events.
  const origin = transport.originOf(params);
  const spec = {
    host,
    port,
    localAddress: params.localAddress ?? options.localAddress,
    lookup: transport.dns?.lookup ?? options.lookup,
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
    let delivered;
    try {
      delivered = connect(params, callback, socket);
    } catch (connectError) {
      // TLS options that make no secure context.
      socket.destroy();
      watch?.done();
      callback(connectError, null);
      return;
    }
    if (secure) watch?.follow(delivered);
    else watch?.done();
  });
  watch = transport.connectTimeout?.watchRace(race) ?? null;
  race.start();
}

module.exports = { withRaces };
