'use strict';

// Every way a request can end without a socket is counted once, per origin:
// getStats() has queueFull (maxQueue), queueTimeouts (queueTimeout),
// refusedAfterClose (close()) and leftQueue (aborted, or failed by
// agent.destroy() during close(), while it waited); steady-agent:request:no-socket publishes each; and
// OpenTelemetry's http.client.request.time_in_queue records each, with an
// error.type that tells it from a request that got a socket. queueWaitMs
// counts every wait that ended, whatever ended it.
const assert = require('node:assert/strict');
const { observeAgent } = require('steady-agent/otel');
const { PROTOCOLS } = require('./support/agents');
const { createHoldingServer } = require('./support/servers');
const { request, requestError, waitFor } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');
const { watchAgent } = require('./support/channels');
const { inMemoryMetrics } = require('./support/otel');

const COUNTERS = ['queueFull', 'queueTimeouts', 'refusedAfterClose', 'leftQueue'];

/** time_in_queue of `agent`, read back: { [error.type, or 'socket']: { count, sum } }. */
function timeInQueue(agent) {
  const otel = inMemoryMetrics();
  const stop = observeAgent(agent, { meterProvider: otel.meterProvider });
  return {
    async read() {
      const found = await otel.collect();
      const byOutcome = {};
      for (const point of found['http.client.request.time_in_queue']?.points ?? []) {
        byOutcome[point.attributes['error.type'] ?? 'socket'] = { count: point.value.count, sum: point.value.sum };
      }
      return byOutcome;
    },
    async stop() {
      stop();
      await otel.shutdown();
    },
  };
}

/** The one origin's counters of the four outcomes, its queueWaitMs count, and what is queued now. */
function outcomes(agent) {
  const [origin] = Object.values(agent.getStats().origins);
  const counts = Object.fromEntries(COUNTERS.map((name) => [name, origin[name]]));
  return { ...counts, waits: origin.queueWaitMs.count, queued: origin.queued };
}

const none = { queueFull: 0, queueTimeouts: 0, refusedAfterClose: 0, leftQueue: 0 };

for (const protocol of PROTOCOLS) {
  describe(`queue outcomes counted over ${protocol.slice(0, -1)}`, () => {
    const { keep, agentFor } = closeAfterEach();
    let otel = null;
    let channels = null;
    afterEach(async () => {
      channels?.stop();
      await otel?.stop();
      otel = null;
      channels = null;
    });

    /** An agent with one socket, busy with a held request; observed by OpenTelemetry and the channels. */
    async function busyAgent(options) {
      const server = keep(await createHoldingServer(protocol));
      const agent = agentFor(protocol, { maxSockets: 1, ...options });
      otel = timeInQueue(agent);
      channels = watchAgent(agent, ['request:no-socket', 'request:dequeued']);
      const first = request(server.url('/hold'), { agent });
      await waitFor(() => server.held === 1);
      return { server, agent, first };
    }

    it('maxQueue: refused at once, never queued', async () => {
      const { server, agent, first } = await busyAgent({ maxQueue: 0 });
      const err = await requestError(request(server.url('/over'), { agent }));
      assert.equal(err.code, 'ERR_AGENT_QUEUE_FULL');
      assert.deepEqual(outcomes(agent), { ...none, queueFull: 1, waits: 0, queued: 0 });
      const [message] = channels.of('request:no-socket');
      assert.equal(channels.of('request:no-socket').length, 1);
      assert.deepEqual([message.outcome, message.waitedMs, message.request], ['queue-full', 0, err.req]);
      assert.deepEqual(await otel.read(), { 'queue-full': { count: 1, sum: 0 } });
      server.release();
      await first;
    });

    it('queueTimeout: its wait recorded, in queueWaitMs and in the metric', async () => {
      const { server, agent, first } = await busyAgent({ queueTimeout: 50 });
      const err = await requestError(request(server.url('/late'), { agent }));
      assert.equal(err.code, 'ERR_AGENT_QUEUE_TIMEOUT');
      assert.deepEqual(outcomes(agent), { ...none, queueTimeouts: 1, waits: 1, queued: 0 });
      const [origin] = Object.values(agent.getStats().origins);
      assert.ok(origin.queueWaitMs.max > 0);
      const [message] = channels.of('request:no-socket');
      assert.equal(message.outcome, 'queue-timeout');
      // getStats() shows the wait in whole milliseconds; the channel and the metric carry it unrounded.
      assert.ok(Math.abs(message.waitedMs - origin.queueWaitMs.sum) <= 0.5, `${message.waitedMs} ${origin.queueWaitMs.sum}`);
      const metric = await otel.read();
      assert.deepEqual(Object.keys(metric), ['queue-timeout']);
      assert.equal(metric['queue-timeout'].count, 1);
      assert.ok(Math.abs(metric['queue-timeout'].sum - message.waitedMs / 1000) < 1e-9);
      server.release();
      await first;
      assert.deepEqual(outcomes(agent), { ...none, queueTimeouts: 1, waits: 1, queued: 0 }, 'counted once');
    });

    it('close(): a request refused after it counts under its origin', async () => {
      const { server, agent, first } = await busyAgent({});
      const closing = agent.close();
      const err = await requestError(request(server.url('/after'), { agent }));
      assert.equal(err.code, 'ERR_AGENT_CLOSED');
      assert.equal(Object.keys(agent.getStats().origins).length, 1, 'the origin of the other requests');
      assert.deepEqual(outcomes(agent), { ...none, refusedAfterClose: 1, waits: 0, queued: 0 });
      assert.equal(channels.of('request:no-socket')[0].outcome, 'agent-closed');
      assert.deepEqual(await otel.read(), { 'agent-closed': { count: 1, sum: 0 } });
      server.release();
      await first;
      await closing;
    });

    it('left the queue: aborted by the caller, or failed by destroy() during close(), each counted once with its wait', async () => {
      const { server, agent, first } = await busyAgent({});
      const aborted = request(server.url('/aborted'), { agent });
      const served = request(server.url('/served'), { agent });
      assert.equal(outcomes(agent).queued, 2);
      const abortedError = requestError(aborted);
      (await waitForRequest(agent, '/aborted')).destroy();
      // It leaves when a socket comes for it: the first request's, freed.
      server.release();
      assert.equal((await first).body, 'ok /hold');
      assert.equal((await abortedError).code, 'ECONNRESET');
      await waitFor(() => server.held === 0 && outcomes(agent).queued === 0);
      assert.equal((await served).body, 'ok /served');
      assert.deepEqual(outcomes(agent), { ...none, leftQueue: 1, waits: 2, queued: 0 });

      // agent.destroy() during close() fails a queued request (without
      // close(), core opens it a new connection): it left the queue too.
      const held = request(server.url('/hold2'), { agent }).catch((err) => err);
      await waitFor(() => server.held === 1);
      const destroyed = requestError(request(server.url('/destroyed'), { agent }));
      const closing = agent.close();
      agent.destroy();
      assert.equal((await destroyed).code, 'ERR_AGENT_DESTROYED');
      assert.equal((await held).code, 'ECONNRESET');
      await closing;
      assert.deepEqual(outcomes(agent), { ...none, leftQueue: 2, waits: 3, queued: 0 });
      assert.deepEqual(channels.of('request:no-socket').map((message) => message.outcome), ['left-queue', 'left-queue']);
      assert.equal(channels.of('request:dequeued').length, 1, 'the one served');
      const metric = await otel.read();
      assert.deepEqual(Object.keys(metric).sort(), ['left-queue', 'socket']);
      assert.deepEqual([metric['left-queue'].count, metric.socket.count], [2, 1]);
    });
  });
}

/** The request queued in `agent` for `path`. */
async function waitForRequest(agent, path) {
  let found;
  await waitFor(() => {
    found = Object.values(agent.requests).flat().find((req) => req.path === path);
    return found !== undefined;
  });
  return found;
}
