'use strict';

// The agent's side of Happy Eyeballs (./happy_eyeballs.js): a raced
// connection is made through core's createSocket callback, the way a proxy
// tunnel is (lib/proxy), since the socket that will serve the request is
// known only once the race is won.
const http = require('node:http');
const https = require('node:https');
const { Race } = require('./happy_eyeballs');
const { agentKeyOf } = require('../core/private_fields');
const { holdPlace, releasePlace, unqueueDestroyed } = require('../core/agent_maps');
const { AgentDestroyedError, SocketHangUpError } = require('../errors');

// Node's own createConnection of each agent class, as this module found it
// (net.createConnection itself up to Node 24; a function of _http_agent's on
// Node 26).
const CORE_CONNECT = Object.freeze({ 'http:': http.Agent.prototype.createConnection, 'https:': https.Agent.prototype.createConnection });

/**
 * Whether Node's agent class has another createConnection than its own (an
 * instrumentation's wrapper, a test's mock): it then sees every connection,
 * as before, and none is raced.
 */
function coreConnectReplaced(protocol) {
  const Base = protocol === 'https:' ? https.Agent : http.Agent;
  return Base.prototype.createConnection !== CORE_CONNECT[protocol];
}

/**
 * createConnection for a raced connection. `options`: core's per-socket copy
 * of the options; `req`: the request core's createSocket began it for;
 * `oncreate`: core's createSocket callback, called once with
 * the winner (http), the TLS socket over it (https: `connectTls`, core's
 * https createConnection, for its session cache), or the error that ended
 * the race. `setup`: the agent's ConnectionSetup; `report`: the origin's
 * (PoolEvents.raceReport). Returns undefined, as core expects of an
 * asynchronous createConnection.
 */
function raceConnection(agent, options, oncreate, req, { connectTls, setup, report }) {
  const pool = agentKeyOf(options);
  let watch = null;
  const fail = (race, err) => {
    watch?.done();
    report.failed();
    oncreate(err);
    process.nextTick(serveQueue, agent, race, options);
  };
  const race = new Race(options, report, (err, socket) => {
    releasePlace(agent, pool, race);
    if (err) {
      // agent.destroy() ended the race: the request hears what it hears
      // when destroy() ends a connecting socket on core's path.
      fail(race, err instanceof AgentDestroyedError ? new SocketHangUpError('destroyed') : err);
      return;
    }
    // The request was aborted during the race: its connection ends, and
    // the request hears 'socket hang up', as when it is aborted on core's
    // path while its socket connects; a request queued behind it gets a
    // connection of its own.
    if (req?.destroyed) {
      socket.destroy();
      fail(race, new SocketHangUpError('aborted'));
      return;
    }
    setup.probe(socket);
    let delivered = socket;
    if (connectTls !== null) {
      try {
        delivered = connectTls({ ...options, socket });
      } catch (tlsError) {
        socket.destroy();
        fail(race, tlsError);
        return;
      }
      if (watch !== null) watch.follow(delivered);
    } else if (watch !== null) {
      watch.done();
    }
    // What net.connect and tls.connect do with the option, which a socket
    // made elsewhere did not get.
    if (options.timeout) delivered.setTimeout(options.timeout);
    oncreate(null, delivered);
  });
  // Core's maps, touched directly: core counts a socket against maxSockets
  // and maxTotalSockets only once createConnection delivers it, so every
  // request arriving during the race would start a race of its own. The
  // race holds the place of the socket to come (agent.destroy() ends it
  // there, with destroy()).
  holdPlace(agent, pool, race);
  report.began();
  watch = setup.watchRace(race);
  race.start();
  return undefined;
}

/**
 * After a race failed: core never saw a socket for it, so nothing would
 * start one for the requests queued behind it (maxSockets). Runs after the
 * failed request has settled, so that it is marked destroyed.
 */
function serveQueue(agent, race, options) {
  // Core leaves a queued request in the queue when the socket it started for
  // it fails, and one that failed that way would be picked again, forever.
  const pool = agentKeyOf(options);
  unqueueDestroyed(agent, pool);
  // Core's own "a socket of this pool went away": it starts a socket for the
  // first queued request.
  agent.removeSocket(race, options);
}

module.exports = { raceConnection, coreConnectReplaced };
