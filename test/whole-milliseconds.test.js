'use strict';

// Durations people read are whole milliseconds, or tenths below 10 ms: the
// debug lines (not "closes after 751.9639245000001 ms idle") and every
// duration getStats() returns (not "queueWaitMs.sum: 302.01468"). The clock
// inside keeps its doubles; only what is shown is rounded.
const assert = require('node:assert/strict');
const { HttpAgent, HttpsAgent } = require('..');
const { roundMs } = require('../lib/clock');
const { createHoldingServer, createHttpsServer, createRawServer, onRequests, rawResponse, fixtures } = require('./support/servers');
const { startProxy } = require('./support/proxy');
const { request, waitFor } = require('./support/request');
const { closeAfterEach } = require('./support/cleanup');
const { captureDebug } = require('./support/debug_lines');

/** A duration as shown: whole, or with one decimal when under 10 ms. */
function assertReadable(ms, where) {
  assert.equal(typeof ms, 'number', where);
  const text = String(ms);
  assert.ok(/^\d+$/.test(text) || (ms < 10 && /^\d\.\d$/.test(text)), `${where}: ${text}`);
}

/** Every "N ms" in the captured debug lines is readable; returns how many there were. */
function assertReadableLines(lines) {
  let count = 0;
  for (const line of lines) {
    for (const [, number] of line.matchAll(/(-?[\d.e+-]+) ms\b/g)) {
      assertReadable(Number(number), line);
      assert.equal(String(Number(number)), number, line);
      count++;
    }
  }
  return count;
}

describe('roundMs()', () => {
  it('gives whole milliseconds, tenths under 10 ms, and leaves Infinity and null alone', () => {
    assert.equal(roundMs(751.9639245000001), 752);
    assert.equal(roundMs(302.01468), 302);
    assert.equal(roundMs(10.4), 10);
    assert.equal(roundMs(9.94), 9.9);
    assert.equal(roundMs(5.3456), 5.3);
    assert.equal(roundMs(0.04), 0);
    assert.equal(roundMs(0), 0);
    assert.equal(roundMs(Infinity), Infinity);
    assert.equal(roundMs(null), null);
  });
});

describe('whole milliseconds', () => {
  const { keep, agentOf } = closeAfterEach();
  const debug = captureDebug();

  it('in the free timeout of a socket near its socketActiveTTL, and in the active timeout', async () => {
    const server = keep(await createHoldingServer('http:'));
    // The free timeout is what is left of the TTL: a fraction on the clock.
    const agent = agentOf(HttpAgent, { socketActiveTTL: 3000, freeSocketTimeout: 4000, timeout: 100 });
    await request(server.url('/'), { agent });
    const free = debug.lines.find((line) => / free, closes after /.test(line));
    assert.match(free, / free, closes after \d+ ms idle$/);
    // The active timeout fires on a held request.
    const held = request(server.url('/hold'), { agent }).catch((err) => err);
    assert.equal((await held).code, 'ERR_SOCKET_TIMEOUT');
    assert.ok(debug.logged(/timed out after 100 ms while active/), debug.lines.join('\n'));
    assert.ok(assertReadableLines(debug.lines) >= 2);
  });

  it('in the idle time a server closed a socket after, and in the learned limit', async () => {
    // A server that announces no limit and closes each connection 50 ms after answering.
    const server = keep(await createRawServer((socket) => {
      onRequests(socket, () => {
        socket.write(rawResponse('ok'));
        setTimeout(() => socket.end(), 50);
      });
    }));
    const agent = agentOf(HttpAgent);
    await request(`http://127.0.0.1:${server.port}/`, { agent });
    await waitFor(() => debug.logged(/closed by the server after/));
    assert.match(debug.lines.find((line) => /closed by the server after/.test(line)), /after \d+ ms idle/);
    assertReadableLines(debug.lines);
    const { serverIdleTimeout } = Object.values(agent.getStats().origins)[0];
    if (serverIdleTimeout.learned !== null) assertReadable(serverIdleTimeout.learned, 'learned');
  });

  it('in the time a CONNECT tunnel took', async () => {
    const proxy = keep(await startProxy());
    const target = keep(await createHttpsServer());
    const agent = agentOf(HttpsAgent, { proxy: proxy.url(), ca: fixtures.ca });
    assert.equal((await request(target.url('/'), { agent })).status, 200);
    assert.match(debug.lines.find((line) => /^steady-agent tunnel to|tunnel to /.test(line)), / in \d+(\.\d)? ms$/);
    assertReadableLines(debug.lines);
  });

  it('in getStats(): queueWaitMs.sum and .max', async () => {
    const server = keep(await createHoldingServer('http:'));
    const agent = agentOf(HttpAgent, { maxSockets: 1 });
    const first = request(server.url('/hold'), { agent });
    await waitFor(() => server.held === 1);
    const queued = [request(server.url('/'), { agent }), request(server.url('/'), { agent })];
    await new Promise((resolve) => setTimeout(resolve, 15));
    server.release();
    await Promise.all([first, ...queued]);
    const { queueWaitMs } = Object.values(agent.getStats().origins)[0];
    assert.equal(queueWaitMs.count, 2);
    assertReadable(queueWaitMs.sum, 'queueWaitMs.sum');
    assertReadable(queueWaitMs.max, 'queueWaitMs.max');
    assert.ok(queueWaitMs.max > 0 && queueWaitMs.sum >= queueWaitMs.max, JSON.stringify(queueWaitMs));
  });
});
