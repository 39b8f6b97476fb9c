'use strict';

// The rule of lib/stale_judgement.js, without sockets: from the facts of a
// failed request on a pooled socket, the marks its error gets.
const assert = require('node:assert/strict');
const {
  judgeFailure, staleWindow, isIdempotent,
  RTT_FACTOR, MIN_WINDOW_MS, MAX_WINDOW_MS, SUPPORT_SHARE,
} = require('../lib/policy/stale_judgement');
const { markError } = require('../lib/agent/stale_marks');

/** A GET that failed 2 ms after it got a socket that served 3 requests and sat idle 1500 ms (connect: 1 ms). */
function facts(overrides = {}) {
  return {
    requestsBefore: 3,
    idleMs: 1500,
    sinceStartMs: 2,
    connectMs: 1,
    responseBytes: 0,
    knownLimitMs: undefined,
    method: 'GET',
    ...overrides,
  };
}

describe('stale judgement (lib/stale_judgement.js)', () => {
  it('a failure right after the write on a reused socket: every mark, stale and replayable', () => {
    assert.deepEqual(judgeFailure(facts()), {
      reusedSocket: true,
      socketIdleMs: 1500,
      socketRequests: 3,
      staleSocket: true,
      replayable: true,
    });
  });

  it('a fresh socket, or a response begun, gets no mark at all', () => {
    assert.equal(judgeFailure(facts({ requestsBefore: 0 })), null);
    assert.equal(judgeFailure(facts({ responseBytes: 1 })), null);
    assert.equal(judgeFailure(facts({ responseBytes: 512, sinceStartMs: 5000 })), null);
  });

  const far = 200; // a connect time for which RTT_FACTOR of them exceed the floor
  const window = RTT_FACTOR * far;

  it('the window: RTT_FACTOR connect times, at least MIN_WINDOW_MS, always under MAX_WINDOW_MS', () => {
    assert.ok(MIN_WINDOW_MS < window && window < MAX_WINDOW_MS && MAX_WINDOW_MS < 1000);
    assert.equal(staleWindow(1, false), MIN_WINDOW_MS);
    assert.equal(staleWindow(0, false), MIN_WINDOW_MS);
    assert.equal(staleWindow(NaN, false), MIN_WINDOW_MS);
    assert.equal(staleWindow(undefined, false), MIN_WINDOW_MS);
    assert.equal(staleWindow(far, false), window);
    assert.equal(staleWindow(10000, false), MAX_WINDOW_MS);
    for (const connectMs of [0, far, 10000]) assert.equal(staleWindow(connectMs, true), MAX_WINDOW_MS);
  });

  it('stale within the window, not stale from its end on; the marks stay', () => {
    assert.equal(judgeFailure(facts({ connectMs: far, sinceStartMs: window - 1 })).staleSocket, true);
    const late = judgeFailure(facts({ connectMs: far, sinceStartMs: window }));
    assert.deepEqual(late, { reusedSocket: true, socketIdleMs: 1500, socketRequests: 3, staleSocket: false, replayable: false });
  });

  it('a second or more after the write is never stale, whatever the connect time or the idle time', () => {
    for (const sinceStartMs of [MAX_WINDOW_MS, 1000, 30000]) {
      const marks = judgeFailure(facts({ sinceStartMs, connectMs: 5000, idleMs: 1990, knownLimitMs: 2000 }));
      assert.equal(marks.staleSocket, false, `${sinceStartMs} ms`);
      assert.equal(marks.replayable, false);
    }
  });

  it('an idle time near the known limit widens the window to its ceiling, and never decides alone', () => {
    const limit = 2000;
    const near = SUPPORT_SHARE * limit;
    const beyond = MIN_WINDOW_MS + 1; // past the plain window, within the supported one
    assert.equal(judgeFailure(facts({ idleMs: near - 1, knownLimitMs: limit, sinceStartMs: beyond })).staleSocket, false);
    assert.equal(judgeFailure(facts({ idleMs: near, knownLimitMs: limit, sinceStartMs: beyond })).staleSocket, true);
    assert.equal(judgeFailure(facts({ idleMs: near, knownLimitMs: limit, sinceStartMs: MAX_WINDOW_MS - 1 })).staleSocket, true);
    assert.equal(judgeFailure(facts({ idleMs: near, sinceStartMs: beyond })).staleSocket, false, 'no known limit');
    // Alone: late, or after response bytes.
    assert.equal(judgeFailure(facts({ idleMs: limit, knownLimitMs: limit, sinceStartMs: MAX_WINDOW_MS })).staleSocket, false);
    assert.equal(judgeFailure(facts({ idleMs: limit, knownLimitMs: limit, responseBytes: 10 })), null);
  });

  it('a socket handed straight to a queued request (idle 0) is judged by time alone', () => {
    const marks = judgeFailure(facts({ idleMs: 0, knownLimitMs: 2000 }));
    assert.equal(marks.socketIdleMs, 0);
    assert.equal(marks.staleSocket, true);
  });

  it('socketIdleMs is whole milliseconds', () => {
    assert.equal(judgeFailure(facts({ idleMs: 1499.6 })).socketIdleMs, 1500);
  });

  describe('replayable: stale and idempotent (RFC 9110) or keyed', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE', 'get', 'Delete']) {
      it(`${method}: replayable`, () => {
        assert.equal(isIdempotent(method), true);
        assert.equal(judgeFailure(facts({ method })).replayable, true);
      });
    }

    for (const method of ['POST', 'PATCH', 'CONNECT', 'PROPFIND', 'post', '', undefined]) {
      it(`${method === '' ? 'an empty method' : method}: not replayable without a key, even when stale`, () => {
        const marks = judgeFailure(facts({ method }));
        assert.equal(marks.staleSocket, true);
        assert.equal(marks.replayable, false);
      });
    }

    it('a POST or PATCH with Idempotency-Key or X-Idempotency-Key: replayable', () => {
      assert.equal(judgeFailure(facts({ method: 'POST', idempotencyKey: 'a1b2' })).replayable, true);
      assert.equal(judgeFailure(facts({ method: 'PATCH', xIdempotencyKey: 'a1b2' })).replayable, true);
      assert.equal(judgeFailure(facts({ method: 'POST', idempotencyKey: ['', 'k'] })).replayable, true);
      assert.equal(judgeFailure(facts({ method: 'POST', idempotencyKey: 42 })).replayable, true);
    });

    it('an empty key names nothing: not replayable', () => {
      for (const key of ['', '  ', [], [''], null, {}]) {
        assert.equal(judgeFailure(facts({ method: 'POST', idempotencyKey: key, xIdempotencyKey: key })).replayable, false);
      }
    });

    it('a keyed POST that was not stale: not replayable', () => {
      assert.equal(judgeFailure(facts({ method: 'POST', idempotencyKey: 'k', sinceStartMs: 5000 })).replayable, false);
    });
  });

  describe('markError', () => {
    it('adds the marks and changes neither code nor message', () => {
      const err = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      assert.equal(markError(err, judgeFailure(facts())), true);
      assert.equal(err.code, 'ECONNRESET');
      assert.equal(err.message, 'socket hang up');
      assert.deepEqual(
        [err.reusedSocket, err.socketIdleMs, err.socketRequests, err.staleSocket, err.replayable],
        [true, 1500, 3, true, true],
      );
    });

    it('leaves alone what it cannot mark: a string, null, a frozen error', () => {
      const marks = judgeFailure(facts());
      assert.equal(markError('boom', marks), false);
      assert.equal(markError(null, marks), false);
      const frozen = Object.freeze(new Error('x'));
      assert.equal(markError(frozen, marks), false);
      assert.equal(frozen.reusedSocket, undefined);
    });
  });
});
