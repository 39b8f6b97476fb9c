'use strict';

// `steady-agent/otel`: OpenTelemetry's HTTP client connection metrics for one
// agent, built on the agent's diagnostics_channel events (observe/channels.js names them).
// Only this module loads @opentelemetry/api (an optional peer dependency):
// `require('steady-agent')` never does.
//
//   http.client.open_connections        UpDownCounter, {connection}, by http.connection.state
//   http.client.connection.duration     Histogram, seconds, from creation to close
//   http.client.request.time_in_queue   Histogram, seconds, waiting behind maxSockets
//
// Every measurement carries server.address, server.port (a number) and
// url.scheme, as the HTTP semantic conventions ask. time_in_queue has one
// measurement per request that waited for a socket or was refused one; a
// request that got no socket carries `error.type`, the semantic conventions'
// attribute for how an operation failed: 'queue-full' and 'agent-closed'
// (refused at once: 0 s), 'queue-timeout', 'left-queue' (aborted, or
// failed by destroy() during close()).
const dc = require('node:diagnostics_channel');
const { version, peerDependencies } = require('../package.json');
const { socketOrigin } = require('./observe/events');
const { CHANNEL_NAMES } = require('./observe/channels');
const { PeerDependencyMissingError } = require('./errors');

const API = '@opentelemetry/api';

// Without the optional peer, say which package to install rather than let
// Node's bare "Cannot find module" through. Any other failure is the
// package's own, and passes unchanged.
function loadApi() {
  try {
    return require(API);
  } catch (err) {
    if (err.code === 'MODULE_NOT_FOUND' && err.message.startsWith(`Cannot find module '${API}'`)) {
      throw new PeerDependencyMissingError('steady-agent/otel', API, peerDependencies[API], err);
    }
    throw err;
  }
}
const { metrics } = loadApi();

const ACTIVE = 'active';
const IDLE = 'idle';

/** The semantic-convention attributes of a message (or origin entry): both carry host and port. */
// A dispatcher's events name their scheme (one dispatcher serves both).
function attributesOf({ host, port, scheme: own }, scheme) {
  return { 'server.address': host, 'server.port': port, 'url.scheme': own ?? scheme };
}

function withState(attributes, state) {
  return { ...attributes, 'http.connection.state': state };
}

/**
 * Records OpenTelemetry HTTP client metrics for `agent` until the returned
 * function is called.
 * @param {import('http').Agent} agent a steady-agent HttpAgent or HttpsAgent
 * @param {{ meterProvider?: import('@opentelemetry/api').MeterProvider }} [options]
 *   the global meter provider by default
 * @returns {() => void} stops observing
 */
function observeAgent(agent, options = {}) {
  if (agent == null || typeof agent.getStats !== 'function') {
    throw new TypeError('observeAgent: agent must be a steady-agent HttpAgent or HttpsAgent');
  }
  const scheme = agent.protocol === 'https:' ? 'https' : 'http';
  const meterProvider = options.meterProvider ?? metrics.getMeterProvider();
  const meter = meterProvider.getMeter('steady-agent', version);
  const openConnections = meter.createUpDownCounter('http.client.open_connections', {
    description: 'Number of outbound HTTP connections that are currently active or idle on the client.',
    unit: '{connection}',
  });
  // Bucket boundaries as the semantic conventions advise (seconds; the SDK's
  // default buckets are made for milliseconds).
  const connectionDuration = meter.createHistogram('http.client.connection.duration', {
    description: 'The duration of the successfully established outbound HTTP connections.',
    unit: 's',
    advice: { explicitBucketBoundaries: [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300] },
  });
  const timeInQueue = meter.createHistogram('http.client.request.time_in_queue', {
    description: 'The amount of time requests spent on a queue waiting for an available connection.',
    unit: 's',
    advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] },
  });

  // What we counted each socket as: only sockets we counted are uncounted.
  const states = new WeakMap();
  const move = (socket, entry, state) => {
    const was = states.get(socket);
    if (was === state) return;
    const attributes = attributesOf(entry, scheme);
    if (was !== undefined) openConnections.add(-1, withState(attributes, was));
    openConnections.add(1, withState(attributes, state));
    states.set(socket, state);
  };

  // The sockets the agent holds already.
  for (const [map, state] of [[agent.sockets, ACTIVE], [agent.freeSockets, IDLE]]) {
    for (const pool in map) {
      for (const socket of map[pool]) {
        // A connection still being made (a Happy Eyeballs race, a proxy
        // tunnel) holds a place here without being a socket of the agent's yet.
        const entry = socketOrigin(socket);
        if (entry !== undefined) move(socket, entry, state);
      }
    }
  }

  const subscriptions = {
    [CHANNEL_NAMES.create](message) {
      move(message.socket, message, ACTIVE);
    },
    [CHANNEL_NAMES.reuse](message) {
      move(message.socket, message, ACTIVE);
    },
    [CHANNEL_NAMES.free](message) {
      move(message.socket, message, IDLE);
    },
    [CHANNEL_NAMES.close](message) {
      const { socket } = message;
      const was = states.get(socket);
      const attributes = attributesOf(message, scheme);
      connectionDuration.record(message.lifetimeMs / 1000, attributes);
      if (was === undefined) return;
      openConnections.add(-1, withState(attributes, was));
      states.delete(socket);
    },
    [CHANNEL_NAMES.dequeued](message) {
      timeInQueue.record(message.waitedMs / 1000, attributesOf(message, scheme));
    },
    [CHANNEL_NAMES.noSocket](message) {
      const attributes = attributesOf(message, scheme);
      attributes['error.type'] = message.outcome;
      timeInQueue.record(message.waitedMs / 1000, attributes);
    },
  };

  return subscribe(agent, subscriptions);
}

/** Subscribes each of `subscriptions` to its channel for `agent`'s messages; returns the function that stops them all. */
function subscribe(agent, subscriptions) {
  // The channels carry every agent's events: keep this one's.
  const handlers = Object.entries(subscriptions).map(([name, handle]) => {
    const onMessage = (message) => {
      if (message.agent === agent) handle(message);
    };
    dc.subscribe(name, onMessage);
    return [name, onMessage];
  });

  let stopped = false;
  return function stopObserving() {
    if (stopped) return;
    stopped = true;
    for (const [name, onMessage] of handlers) dc.unsubscribe(name, onMessage);
  };
}

module.exports = { observeAgent };
