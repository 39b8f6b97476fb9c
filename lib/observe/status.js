'use strict';

// The agent's status: agentkeepalive's counters and the snapshot built from
// them. The counters are plain writable numbers on the agent, as in
// agentkeepalive: a monitoring loop may reset them (`agent.requestCount = 0`),
// and statusChanged compares each with its `<name>LastCheck` twin, so a
// change made after the reset is still reported.

const COUNTERS = Object.freeze([
  'createSocketCount',
  'createSocketErrorCount',
  'closeSocketCount',
  'errorSocketCount',
  'timeoutSocketCount',
  'requestCount',
]);

/**
 * Gives the agent its counters, each at 0, with its `<name>LastCheck` twin:
 * own data properties, written by observe/events.js, as agentkeepalive's are.
 */
function initCounters(agent) {
  for (const name of COUNTERS) agent[name] = 0;
  for (const name of COUNTERS) agent[`${name}LastCheck`] = 0;
}

/** `{ name: count }` from one of the agent's name -> array maps. */
function countEach(map) {
  const counts = {};
  for (const name in map) counts[name] = map[name].length;
  return counts;
}

/** True when a counter changed since the last call; the call marks them read. */
function takeStatusChanged(agent) {
  let changed = false;
  for (const name of COUNTERS) {
    const last = `${name}LastCheck`;
    if (agent[name] !== agent[last]) {
      changed = true;
      agent[last] = agent[name];
    }
  }
  return changed;
}

/** The object getCurrentStatus() returns: agentkeepalive's keys, exactly. */
function statusSnapshot(agent) {
  return {
    createSocketCount: agent.createSocketCount,
    createSocketErrorCount: agent.createSocketErrorCount,
    closeSocketCount: agent.closeSocketCount,
    errorSocketCount: agent.errorSocketCount,
    timeoutSocketCount: agent.timeoutSocketCount,
    requestCount: agent.requestCount,
    freeSockets: countEach(agent.freeSockets),
    sockets: countEach(agent.sockets),
    requests: countEach(agent.requests),
  };
}

module.exports = { initCounters, takeStatusChanged, statusSnapshot };
