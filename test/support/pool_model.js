'use strict';

// A model of a keep-alive pool on simulated time, for the property tests of
// the learning rules (test/learning-properties.test.js). It plays the client
// (requests in ticks, each tick `width` requests at once, gaps given), the
// network (`latency` ms each way), the server (an idle limit, announced or
// not; restarts that drop every connection, idle restarts that drop the idle
// ones, and requests it resets) and two agents:
//
// - 'node': Node's agent. A free socket stays until the server's FIN
//   arrives; where the server announces Keep-Alive: timeout, it closes the
//   socket 1000 ms before (agentKeepAliveTimeoutBuffer).
// - 'steady': steady-agent with its defaults (freeSocketTimeout 4000,
//   serverTimeoutMargin 1000, learning on). Every decision comes from the
//   learning engine the agent and the undici transport run
//   (lib/policy/learning_engine.js), fed the facts they feed it; the model
//   only plays the pool (lifo), the timers and the wire.
//
// A scenario returns, per agent, the connections opened and the requests
// that failed.
const { LearningEngine } = require('../../lib/policy/learning_engine');

const FREE_SOCKET_TIMEOUT = 4000;
const MARGIN = 1000;
const NODE_HINT_BUFFER = 1000;

class EventQueue {
  #events = [];
  #seq = 0;
  now = 0;

  at(time, fn) {
    const event = { time, seq: this.#seq++, fn };
    const list = this.#events;
    let i = list.length;
    while (i > 0 && (list[i - 1].time > time || (list[i - 1].time === time && list[i - 1].seq > event.seq))) i--;
    list.splice(i, 0, event);
    return event;
  }

  cancel(event) {
    const i = this.#events.indexOf(event);
    if (i !== -1) this.#events.splice(i, 1);
  }

  run() {
    while (this.#events.length > 0) {
      const event = this.#events.shift();
      this.now = event.time;
      event.fn();
    }
  }
}

/**
 * One run of a scenario with one agent.
 * @param {object} s the scenario
 * @param {number} s.limit the server's idle limit, ms
 * @param {boolean} s.hinted the server announces it (Keep-Alive: timeout)
 * @param {number} s.latency ms each way
 * @param {boolean} [s.tls] a handshake of two round trips, not one
 * @param {number[]} s.gaps ms between ticks (the first tick at 0)
 * @param {number} s.width requests per tick
 * @param {number[]} [s.restarts] the server closes every connection then
 * @param {number[]} [s.idleRestarts] the server closes its idle connections then
 * @param {number[]} [s.resets] the server resets these requests (0-based)
 * @param {number|null} [s.restartAt] one restart (the older shape)
 * @param {number|null} [s.resetRequest] one reset (the older shape)
 * @param {'node'|'steady'} kind
 */
function run(s, kind) {
  const q = new EventQueue();
  const d = s.latency;
  const hint = s.hinted ? s.limit : undefined;
  const steady = kind === 'steady';
  const engine = new LearningEngine(true);
  const O = 'o';
  const pool = []; // free sockets, lifo
  const result = { connections: 0, failures: 0, learned: [], line: '' };
  const resets = new Set(s.resets ?? []);
  if (s.resetRequest != null) resets.add(s.resetRequest);
  let requestIndex = 0;
  const connections = []; // every connection opened, for a restart
  const outcomes = [];

  function connect() {
    result.connections++;
    const conn = {
      serverClosedAt: Infinity, // when the server closed it
      serverTimer: null,
      serverBusy: false, // the server is answering a request on it
      phase: 'connecting', // connecting, active, free, probe, closed
      freedAt: 0,
      deadline: Infinity,
      deadlineEvent: null,
      requests: 0,
      index: -1, // the request it carries
      idleBeforeReuse: 0,
      hint: undefined,
      finSeen: false,
    };
    connections.push(conn);
    return conn;
  }

  function serverIdleFrom(conn, time) {
    if (conn.serverTimer !== null) q.cancel(conn.serverTimer);
    conn.serverTimer = q.at(time + s.limit, () => serverClose(conn));
  }

  // The server closes the connection now: a FIN reaches the client later.
  function serverClose(conn) {
    if (conn.serverClosedAt !== Infinity) return;
    conn.serverClosedAt = q.now;
    if (conn.serverTimer !== null) q.cancel(conn.serverTimer);
    conn.serverTimer = null;
    q.at(q.now + d, () => finArrives(conn));
  }

  function finArrives(conn) {
    conn.finSeen = true;
    if (conn.phase === 'free' || conn.phase === 'probe') {
      const idle = q.now - conn.freedAt;
      closeClient(conn);
      if (steady) {
        report(engine.closedIdle(O, idle, q.now, conn.hint, conn));
      }
    }
  }

  function report(verdict) {
    if (verdict === null) return;
    result.learned.push(`${Math.round(q.now)}: ${verdict.outcome} (${verdict.why})`);
    if (verdict.tighten) tighten();
  }

  function closeClient(conn) {
    if (conn.deadlineEvent !== null) q.cancel(conn.deadlineEvent);
    conn.deadlineEvent = null;
    const i = pool.indexOf(conn);
    if (i !== -1) pool.splice(i, 1);
    conn.phase = 'closed';
  }

  // ---- the client ---------------------------------------------------------------

  function send() {
    const index = requestIndex++;
    let conn = pool.pop();
    if (conn !== undefined) {
      if (conn.deadlineEvent !== null) q.cancel(conn.deadlineEvent);
      conn.deadlineEvent = null;
      conn.idleBeforeReuse = q.now - conn.freedAt;
      conn.phase = 'active';
      conn.requests++;
      conn.index = index;
      deliver(conn, index, q.now + d);
      return;
    }
    conn = connect();
    conn.phase = 'active';
    conn.requests = 1;
    conn.index = index;
    conn.idleBeforeReuse = 0;
    // The handshake takes a round trip (two with TLS); a connection that a
    // restart meets before it is up does not exist yet for the server.
    deliver(conn, index, q.now + (s.tls ? 5 : 3) * d);
  }

  // The request reaches the server at `arrival`.
  function deliver(conn, index, arrival) {
    q.at(arrival, () => {
      if (conn.serverClosedAt <= q.now) {
        // The server had closed it: the request fails as the FIN (or a
        // reset for its bytes) reaches the client.
        q.at(Math.max(q.now + d, conn.serverClosedAt + d), () => failed(conn));
        return;
      }
      if (conn.serverTimer !== null) q.cancel(conn.serverTimer);
      conn.serverTimer = null;
      if (resets.has(index)) {
        conn.serverClosedAt = q.now;
        q.at(q.now + d, () => failed(conn));
        return;
      }
      conn.serverBusy = true;
      q.at(q.now + d / 2, () => {
        conn.serverBusy = false;
        // A restart while it was answering: the response never left.
        if (conn.serverClosedAt <= q.now) return;
        serverIdleFrom(conn, q.now);
        q.at(q.now + d / 2, () => responded(conn));
      });
    });
  }

  // The request failed before any byte of its response.
  function failed(conn) {
    if (conn.phase === 'closed') return;
    result.failures++;
    outcomes[conn.index] = 'E';
    const reused = conn.idleBeforeReuse > 0;
    closeClient(conn);
    if (!steady) return;
    if (reused) report(engine.collided(O, conn.idleBeforeReuse, q.now, conn.hint));
    else report(engine.failedInFlight(O, q.now));
  }

  function responded(conn) {
    outcomes[conn.index] = conn.requests > 1 ? 'R' : 'N';
    conn.hint = hint;
    if (conn.finSeen) {
      closeClient(conn);
      return;
    }
    let timeout;
    if (steady) {
      if (conn.idleBeforeReuse > 0) report(engine.reused(O, conn.idleBeforeReuse));
      timeout = engine.freeTimeout(O, FREE_SOCKET_TIMEOUT, conn.hint, MARGIN).timeout;
    } else {
      timeout = conn.hint !== undefined ? conn.hint - NODE_HINT_BUFFER : Infinity;
    }
    if (timeout <= 0) {
      closeClient(conn);
      return;
    }
    free(conn, q.now + timeout);
    // A FIN already on its way (a restart while the response travelled)
    // arrives later and finds the socket free.
  }

  function free(conn, deadline) {
    conn.phase = 'free';
    conn.freedAt = q.now;
    setDeadline(conn, deadline);
    pool.push(conn);
  }

  function setDeadline(conn, deadline) {
    if (conn.deadlineEvent !== null) q.cancel(conn.deadlineEvent);
    conn.deadline = deadline;
    conn.deadlineEvent = deadline === Infinity ? null : q.at(deadline, () => due(conn));
  }

  // A free socket's deadline, or a probe's bound.
  function due(conn) {
    conn.deadlineEvent = null;
    const allowedMs = conn.deadline - conn.freedAt;
    if (!steady) {
      closeClient(conn);
      return;
    }
    if (conn.phase === 'probe') {
      // Still open at its bound: the limit is forgotten, and the probe closes.
      report(engine.probeOutlived(O, conn, q.now - conn.freedAt).verdict);
      closeClient(conn);
      return;
    }
    const next = engine.atDeadline(O, FREE_SOCKET_TIMEOUT, conn.hint, MARGIN, allowedMs);
    if (next.action === 'wait') {
      setDeadline(conn, conn.freedAt + next.timeout);
    } else if (next.action === 'probe') {
      pool.splice(pool.indexOf(conn), 1);
      conn.phase = 'probe';
      engine.startProbe(O, conn);
      setDeadline(conn, conn.freedAt + next.bound);
    } else {
      closeClient(conn);
    }
  }

  // A limit became confirmed: free sockets freed without it are capped now.
  function tighten() {
    for (const conn of pool) {
      const deadline = conn.freedAt + engine.freeTimeout(O, FREE_SOCKET_TIMEOUT, conn.hint, MARGIN).timeout;
      if (deadline < conn.deadline) setDeadline(conn, Math.max(deadline, q.now));
    }
  }

  // ---- the scenario ------------------------------------------------------------------

  let t = 0;
  s.gaps.forEach((gap, i) => {
    if (i > 0) t += gap;
    q.at(t, () => {
      for (let k = 0; k < s.width; k++) send();
    });
  });
  const restarts = [...(s.restarts ?? [])];
  if (s.restartAt != null) restarts.push(s.restartAt);
  for (const at of restarts) {
    q.at(at, () => {
      for (const conn of connections) {
        // One answering a request: the request fails as the FIN arrives.
        if (conn.serverBusy && conn.serverClosedAt === Infinity) q.at(q.now + d, () => failed(conn));
        serverClose(conn);
      }
    });
  }
  for (const at of s.idleRestarts ?? []) {
    q.at(at, () => {
      for (const conn of connections) if (!conn.serverBusy) serverClose(conn);
    });
  }
  q.run();
  result.line = outcomes.map((o) => o ?? '?').join('');
  return result;
}

module.exports = { run, FREE_SOCKET_TIMEOUT, MARGIN };
