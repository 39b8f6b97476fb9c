'use strict';

// A model of a keep-alive pool on simulated time, for the property tests of
// the learning rules (test/learning-properties.test.js). It plays the client
// (requests in ticks, each tick `width` requests at once, gaps given), the
// network (`latency` ms each way), the server (an idle limit, announced or
// not; a restart at a given time; the reset of one request) and two agents:
//
// - 'node': Node's agent. A free socket stays until the server's FIN
//   arrives; where the server announces Keep-Alive: timeout, it closes the
//   socket 1000 ms before (agentKeepAliveTimeoutBuffer).
// - 'steady': steady-agent with its defaults (freeSocketTimeout 4000,
//   serverTimeoutMargin 1000, learning on). Its decisions come from the very
//   functions the agent runs (lib/server_limits.js); the mechanics around
//   them (the pool, probes, what is observed when) mirror the agent's.
//
// Both pools are lifo. A scenario returns, per agent, the connections
// opened and the requests that failed.
const { ServerLimits } = require('../../lib/policy/server_limits');
const { idleAllowance, atDeadline, capOf } = require('../../lib/policy/free_timeout');

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
 * @param {number[]} s.gaps ms between ticks (the first tick at 0)
 * @param {number} s.width requests per tick
 * @param {number|null} s.restartAt the server closes every connection then
 * @param {number|null} s.resetRequest the server resets this request (0-based)
 * @param {'node'|'steady'} kind
 */
function run(s, kind) {
  const q = new EventQueue();
  const d = s.latency;
  const hint = s.hinted ? s.limit : undefined;
  const steady = kind === 'steady';
  const limits = new ServerLimits();
  let aliveMs = 0;
  let probe = null;
  const pool = []; // free sockets, lifo
  const result = { connections: 0, failures: 0, learned: [] };
  let requestIndex = 0;
  const connections = []; // every connection opened, for a restart

  // A connection: the server's side (when it closes) and the client's.
  function connect() {
    result.connections++;
    const conn = {
      serverClosedAt: Infinity, // when the server closed it
      serverTimer: null,
      // client
      phase: 'connecting', // connecting, active, free, probe, closed
      freedAt: 0,
      deadline: Infinity,
      deadlineEvent: null,
      requests: 0,
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
      const wasProbe = conn.phase === 'probe';
      closeClient(conn);
      if (wasProbe) probe = null;
      if (steady) observe({ idleMs: idle, now: q.now, collision: false, hinted: conn.hint });
    }
  }

  function observe(fact) {
    const learned = limits.observe('o', { ...fact, aliveMs });
    if (learned.resetAlive) aliveMs = 0;
    if (learned.outcome !== 'ignored') result.learned.push(`${Math.round(q.now)}: ${learned.outcome} (${learned.why})`);
    if (learned.outcome === 'confirmed' || learned.outcome === 'lowered') tighten();
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
      deliver(conn, index, q.now + d);
      return;
    }
    conn = connect();
    conn.phase = 'active';
    conn.requests = 1;
    conn.idleBeforeReuse = 0;
    // The handshake takes a round trip; a connection that a restart meets
    // before it is up does not exist yet for the server.
    deliver(conn, index, q.now + 3 * d);
  }

  // The request reaches the server at `arrival`.
  function deliver(conn, index, arrival) {
    q.at(arrival, () => {
      if (conn.serverClosedAt <= q.now) {
        // The server had closed it: the request fails as the FIN (or a
        // reset for its bytes) reaches the client.
        q.at(Math.max(q.now + d, conn.serverClosedAt + d), () => failed(conn, true));
        return;
      }
      if (s.resetRequest === index) {
        conn.serverClosedAt = q.now;
        if (conn.serverTimer !== null) q.cancel(conn.serverTimer);
        conn.serverTimer = null;
        q.at(q.now + d, () => failed(conn, true));
        return;
      }
      serverIdleFrom(conn, q.now);
      q.at(q.now + d, () => responded(conn));
    });
  }

  function failed(conn, noResponse) {
    result.failures++;
    const reused = conn.idleBeforeReuse > 0;
    closeClient(conn);
    if (!steady) return;
    if (reused && noResponse) observe({ idleMs: conn.idleBeforeReuse, now: q.now, collision: true, hinted: conn.hint });
    else {
      const learned = limits.fault('o', q.now);
      result.learned.push(`${Math.round(q.now)}: ${learned.outcome}`);
    }
  }

  function responded(conn) {
    conn.hint = hint;
    if (conn.finSeen) {
      closeClient(conn);
      return;
    }
    if (steady) {
      if (conn.idleBeforeReuse > 0) {
        if (conn.idleBeforeReuse > aliveMs) aliveMs = conn.idleBeforeReuse;
        const refuted = limits.refute('o', conn.idleBeforeReuse, q.now);
        if (refuted !== null) result.learned.push(`${Math.round(q.now)}: ${refuted.outcome} (${refuted.why})`);
      }
      const allowed = idleAllowance(FREE_SOCKET_TIMEOUT, conn.hint, capOf(limits.get('o'), probe !== null), MARGIN);
      if (allowed.timeout <= 0) {
        closeClient(conn);
        return;
      }
      free(conn, q.now + allowed.timeout);
    } else {
      const timeout = conn.hint !== undefined ? conn.hint - NODE_HINT_BUFFER : Infinity;
      if (timeout <= 0) {
        closeClient(conn);
        return;
      }
      free(conn, q.now + timeout);
    }
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
      probe = null;
      const idle = q.now - conn.freedAt;
      if (idle > aliveMs) aliveMs = idle;
      const refuted = limits.refute('o', idle, q.now, true);
      if (refuted !== null) result.learned.push(`${Math.round(q.now)}: ${refuted.outcome} (${refuted.why})`);
      const next = atDeadline(FREE_SOCKET_TIMEOUT, conn.hint, limits.peek('o'), false, MARGIN, allowedMs);
      if (next.action !== 'wait') {
        closeClient(conn);
        return;
      }
      conn.phase = 'free';
      setDeadline(conn, conn.freedAt + next.timeout);
      pool.unshift(conn); // where a request takes it last (lifo)
      return;
    }
    const next = atDeadline(FREE_SOCKET_TIMEOUT, conn.hint, limits.peek('o'), probe !== null, MARGIN, allowedMs);
    if (next.action === 'wait') {
      setDeadline(conn, conn.freedAt + next.timeout);
    } else if (next.action === 'probe') {
      pool.splice(pool.indexOf(conn), 1);
      conn.phase = 'probe';
      probe = conn;
      setDeadline(conn, conn.freedAt + next.bound);
    } else {
      closeClient(conn);
    }
  }

  // A limit became confirmed: free sockets freed without it are capped now.
  function tighten() {
    for (const conn of pool) {
      const allowed = idleAllowance(FREE_SOCKET_TIMEOUT, conn.hint, capOf(limits.peek('o'), probe !== null), MARGIN);
      const deadline = conn.freedAt + allowed.timeout;
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
  if (s.restartAt !== null) {
    q.at(s.restartAt, () => {
      for (const conn of connections) serverClose(conn);
    });
  }
  q.run();
  return result;
}

module.exports = { run, FREE_SOCKET_TIMEOUT, MARGIN };
