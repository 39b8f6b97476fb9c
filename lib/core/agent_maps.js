'use strict';

// Writes to the agent's maps (agent.freeSockets, agent.sockets,
// agent.requests) and to core's socket count (agent.totalSocketCount). Node
// documents the maps as read-only; core's own code
// writes them in addRequest, createSocket, removeSocket and its 'free'
// listener, and counts a socket out only on its 'close'. The agent has to
// act between those moments: each function below says which of core's it
// stands in for. Checked on Node 18, 20, 22, 24 and 26
// (test/core-seam.test.js runs on each).

/**
 * The socket core's addRequest will take from `freeSockets[pool]`: the last
 * (lifo) or the first (fifo) (lib/_http_agent.js, Agent.prototype.addRequest);
 * undefined when the pool has none.
 */
function nextFree(freeSockets, pool, fifo) {
  const free = freeSockets[pool];
  if (free === undefined) return undefined;
  return fifo ? free[0] : free[free.length - 1];
}

/**
 * Takes the socket nextFree named out of its pool, before core's addRequest
 * takes it; an empty list goes, as core's addRequest would delete it (it may
 * not get the chance).
 */
function dropNextFree(freeSockets, pool, fifo) {
  const free = freeSockets[pool];
  if (fifo) free.shift();
  else free.pop();
  if (free.length === 0) delete freeSockets[pool];
}

/**
 * Takes `socket` out of `freeSockets[pool]`, if there; an empty list goes,
 * as in core's removeSocket. Core does it only on 'close', a tick or more
 * after destroy(); until then its addRequest could hand the socket out.
 */
function takeOutOfPool(freeSockets, pool, socket) {
  const free = freeSockets[pool];
  if (free === undefined) return;
  const index = free.indexOf(socket);
  if (index === -1) return;
  free.splice(index, 1);
  if (free.length === 0) delete freeSockets[pool];
}

/** Every free socket, out of agent.freeSockets (close()). */
function takeAllFree(agent) {
  return takeAll(agent.freeSockets);
}

// Every entry of every pool of one of the agent's maps, the map left empty.
function takeAll(map) {
  const taken = [];
  for (const pool of Object.keys(map)) {
    taken.push(...map[pool]);
    delete map[pool];
  }
  return taken;
}

/**
 * Core's createSocket adds the pool's entry in agent.sockets before it calls
 * createConnection, and never removes it when that throws.
 */
function forgetEmptyPool(agent, pool) {
  if (pool !== undefined && agent.sockets[pool]?.length === 0) delete agent.sockets[pool];
}

/** Every queued request, out of agent.requests (destroy() during close()). */
function takeAllQueued(agent) {
  return takeAll(agent.requests);
}

/** Takes the request core's addRequest just queued (the last) back out of `agent.requests[pool]`. */
function unqueueLast(agent, pool) {
  const queue = agent.requests[pool];
  queue.pop();
  if (queue.length === 0) delete agent.requests[pool];
}

/** Takes `req` out of `agent.requests[pool]`; false if it was not there. */
function unqueue(agent, pool, req) {
  const queue = agent.requests[pool];
  const index = queue === undefined ? -1 : queue.indexOf(req);
  if (index === -1) return false;
  queue.splice(index, 1);
  if (queue.length === 0) delete agent.requests[pool];
  return true;
}

/**
 * Takes the destroyed requests out of `agent.requests[pool]`: core leaves a
 * queued request in the queue when the socket it started for it fails
 * (removeSocket picks it again, forever).
 */
function unqueueDestroyed(agent, pool) {
  const queue = agent.requests[pool];
  if (queue === undefined) return;
  for (let i = queue.length - 1; i >= 0; i--) if (queue[i].destroyed) queue.splice(i, 1);
  if (queue.length === 0) delete agent.requests[pool];
}

/**
 * A connection to a proxy holds the place of the tunnelled socket to come:
 * core counts a socket against maxSockets and maxTotalSockets only once
 * createConnection delivers it (createSocket's oncreate).
 */
function holdPlace(agent, pool, socket) {
  (agent.sockets[pool] ??= []).push(socket);
  agent.totalSocketCount++;
}

/** Gives up the place holdPlace held, for the socket core adds in its stead. */
function releasePlace(agent, pool, socket) {
  const list = agent.sockets[pool];
  const index = list === undefined ? -1 : list.indexOf(socket);
  if (index === -1) return;
  list.splice(index, 1);
  if (list.length === 0) delete agent.sockets[pool];
  agent.totalSocketCount--;
}

/**
 * Core's count, one socket out now: what its 'close' listener (onClose) or
 * its 'agentRemove' listener (onRemove) does, or, for a socket giving its
 * place up under maxTotalSockets, what its 'close' will do a tick later.
 */
function countOut(agent) {
  agent.totalSocketCount--;
}

/** Core's count, one socket back in: its 'close' is about to count out one given up already (countOut). */
function countIn(agent) {
  agent.totalSocketCount++;
}

/**
 * Every place under maxTotalSockets taken: core's own test in addRequest
 * and in its 'free' listener (_http_agent.js), on the count it keeps.
 */
function atTotalLimit(agent) {
  return agent.totalSocketCount >= agent.maxTotalSockets;
}

module.exports = {
  nextFree, dropNextFree, takeOutOfPool, takeAllFree, forgetEmptyPool, takeAllQueued, unqueueLast, unqueue,
  unqueueDestroyed, holdPlace, releasePlace, countOut, countIn, atTotalLimit,
};
