'use strict';

// steady-agent/retry without a server: where isReplayable finds the agent's
// mark, and what the helpers accept as settings.
const assert = require('node:assert/strict');
const {
  isReplayable, axiosRetryCondition, axiosRetryOptions, gotRetryOptions, wrapFetch, request,
} = require('steady-agent/retry');
const { judgeFailure } = require('../lib/policy/stale_judgement');
const { markError } = require('../lib/agent/stale_marks');

/** An error as the agent marks it: a GET that failed 2 ms after reuse, or `facts` instead. */
function marked(facts = {}, err = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })) {
  markError(err, judgeFailure({
    requestsBefore: 1, idleMs: 1000, sinceStartMs: 2, connectMs: 1, responseBytes: 0, method: 'GET', ...facts,
  }));
  return err;
}

/** An error wrapping `cause` as the clients do (AxiosError, got with our helper, FetchError through wrapFetch). */
const wrap = (cause, message = 'wrapped') => new Error(message, { cause });

describe('steady-agent/retry: isReplayable', () => {
  it('true for a replayable mark on the error itself', () => {
    assert.equal(isReplayable(marked()), true);
  });

  it('false for a mark that is not replayable: a POST without a key, a late failure', () => {
    assert.equal(isReplayable(marked({ method: 'POST' })), false);
    assert.equal(isReplayable(marked({ sinceStartMs: 5000 })), false);
  });

  it('true for a POST with an idempotency key', () => {
    assert.equal(isReplayable(marked({ method: 'POST', idempotencyKey: 'k-1' })), true);
  });

  it('finds the mark along the cause chain', () => {
    assert.equal(isReplayable(wrap(marked())), true);
    assert.equal(isReplayable(wrap(wrap(wrap(marked())))), true);
    assert.equal(isReplayable(wrap(wrap(marked({ method: 'PATCH' })))), false);
  });

  it('needs both staleSocket and replayable: a field of the same name elsewhere is not the mark', () => {
    assert.equal(isReplayable(Object.assign(new Error('x'), { replayable: true })), false);
    assert.equal(isReplayable({ replayable: true, staleSocket: true }), true, 'any object the agent marked');
  });

  it('never crashes: non-objects, cycles, long chains, getters that throw', () => {
    for (const value of [undefined, null, 0, 'ECONNRESET', Symbol('x'), () => {}, true, 10n]) {
      assert.equal(isReplayable(value), false);
    }
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    assert.equal(isReplayable(a), false);
    let deep = marked();
    for (let i = 0; i < 100; i++) deep = wrap(deep);
    assert.equal(isReplayable(deep), false, 'a mark beyond the bounded depth is not looked for');
    const hostile = new Proxy({}, { get() { throw new Error('no'); } });
    assert.equal(isReplayable(hostile), false);
    assert.equal(isReplayable(wrap(hostile)), false);
    const getter = Object.defineProperty(new Error('g'), 'cause', { get() { throw new Error('no'); } });
    assert.equal(isReplayable(getter), false);
  });
});

describe('steady-agent/retry: axiosRetryCondition', () => {
  const axiosError = (cause, data) => Object.assign(wrap(cause), { config: { method: 'get', data } });

  it('a replayable cause and a body axios can send again', () => {
    assert.equal(axiosRetryCondition(axiosError(marked())), true);
    assert.equal(axiosRetryCondition(axiosError(marked(), '{"a":1}')), true);
    assert.equal(axiosRetryCondition(axiosError(marked(), Buffer.from('x'))), true);
    assert.equal(axiosRetryCondition(axiosError(marked(), new URLSearchParams('a=1'))), true);
  });

  it('never a stream body, nor an error without the mark', () => {
    const { Readable } = require('node:stream');
    assert.equal(axiosRetryCondition(axiosError(marked(), Readable.from(['x']))), false);
    assert.equal(axiosRetryCondition(axiosError(new Error('socket hang up'))), false);
    assert.equal(axiosRetryCondition(undefined), false);
  });
});

describe('steady-agent/retry: settings', () => {
  it('defaults: one retry, at once, only what the condition accepts', () => {
    const options = axiosRetryOptions();
    assert.equal(options.retries, 1);
    assert.equal(options.retryDelay(1, new Error('x')), 0);
    assert.equal(options.retryCondition, axiosRetryCondition);
    assert.equal('onRetry' in options, false);
    assert.equal(gotRetryOptions().retry.limit, 1);
  });

  it('takes counts and durations as the agent\'s options do', () => {
    assert.equal(axiosRetryOptions({ retries: '3' }).retries, 3);
    assert.equal(axiosRetryOptions({ delay: '2s' }).retryDelay(), 2000);
    assert.equal(axiosRetryOptions({ retries: 0 }).retries, 0);
  });

  it('never writes to the caller\'s object', () => {
    const settings = Object.freeze({ retries: '2', delay: '5ms', onRetry: () => {} });
    assert.equal(axiosRetryOptions(settings).retries, 2);
    assert.equal(gotRetryOptions(settings).retry.limit, 2);
    assert.equal(typeof wrapFetch(async () => {}, settings), 'function');
  });

  it('refuses bad settings with the option and the value named', () => {
    assert.throws(() => axiosRetryOptions({ retries: -1 }), { code: 'ERR_OUT_OF_RANGE', message: /"retries".*-1/ });
    assert.throws(() => axiosRetryOptions({ retries: 1.5 }), { code: 'ERR_OUT_OF_RANGE', message: /"retries".*1\.5/ });
    assert.throws(() => gotRetryOptions({ delay: 'soon' }), { code: 'ERR_INVALID_ARG_TYPE', message: /"delay".*'soon'/ });
    assert.throws(() => gotRetryOptions({ onRetry: 'log' }), { code: 'ERR_INVALID_ARG_TYPE', message: /"onRetry" option must be a function.*'log'/ });
    assert.throws(() => axiosRetryOptions({ retry: 2 }), { code: 'ERR_INVALID_ARG_TYPE', message: /"retry" option must be left out: the settings are retries, delay and onRetry/ });
    assert.throws(() => axiosRetryOptions(3), { code: 'ERR_INVALID_ARG_TYPE', message: /"options" option must be an object/ });
    assert.throws(() => wrapFetch('fetch'), { code: 'ERR_INVALID_ARG_TYPE', message: /"fetch" option must be a function/ });
    assert.throws(() => request('http://127.0.0.1:1/', { retry: { retries: 'many' } }), { message: /"retry\.retries".*'many'/ });
    assert.throws(() => request('http://127.0.0.1:1/', { retry: { tries: 2 } }), { message: /"retry\.tries"/ });
    assert.throws(() => request('http://127.0.0.1:1/', { body: 42 }), { code: 'ERR_INVALID_ARG_TYPE', message: /"body".*42/ });
    assert.throws(() => request('http://127.0.0.1:1/', { retry: 2 }), { code: 'ERR_INVALID_ARG_TYPE', message: /"retry" option must be an object.*2/ });
    assert.throws(() => request('http://127.0.0.1:1/', 'GET'), { code: 'ERR_INVALID_ARG_TYPE', message: /"options" option must be an object/ });
  });

  it('onRetry reaches axios-retry and got in their own argument order', () => {
    const seen = [];
    const onRetry = (error, attempt) => seen.push([error.message, attempt]);
    axiosRetryOptions({ onRetry }).onRetry(1, new Error('axios'), {});
    gotRetryOptions({ onRetry }).hooks.beforeRetry[0](new Error('got'), 2);
    assert.deepEqual(seen, [['axios', 1], ['got', 2]]);
  });
});
