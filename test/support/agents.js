'use strict';

// Agents for the http/https test matrix. An https agent trusts the fixture CA.
const Agent = require('../..');
const { fixtures } = require('./servers');

const PROTOCOLS = Object.freeze(['http:', 'https:']);

/** A steady-agent for `protocol`, with the fixture CA added for https. */
function createAgent(protocol, options = {}) {
  return protocol === 'https:'
    ? new Agent.HttpsAgent({ ca: fixtures.ca, ...options })
    : new Agent.HttpAgent(options);
}

/** Sum of the counts in a `{ name: count }` status map. */
function total(map) {
  return Object.values(map).reduce((sum, n) => sum + n, 0);
}

module.exports = { PROTOCOLS, createAgent, total };
