'use strict';

// Drives a client's get(cb) at a fixed concurrency for a fixed number of
// requests. The loop is bounded by the count, and a watchdog fails the run if
// no request completes for STALL_MS, so a wedged agent cannot hang a benchmark.
const STALL_MS = 30000;

/**
 * Rejects through `reject` when `completed()` has not moved for `stallMs`;
 * returns the interval, for clearInterval once the run is done.
 */
function watchStalls(what, completed, total, stallMs, reject) {
  let last = -1;
  const watchdog = setInterval(() => {
    const now = completed();
    if (now === last) {
      clearInterval(watchdog);
      reject(new Error(`${what} stalled: ${now}/${total} completed, none in ${stallMs} ms`));
    }
    last = now;
  }, stallMs);
  return watchdog;
}

/**
 * Sends `total` requests, `concurrency` in flight. Resolves with
 * { completed, errors, firstError } once every request has finished.
 */
function runLoad(get, total, concurrency) {
  return new Promise((resolve, reject) => {
    let started = 0;
    let completed = 0;
    let errors = 0;
    let firstError = null;

    const watchdog = watchStalls('load', () => completed, total, STALL_MS, reject);

    function onDone(err, status) {
      if (err || status !== 200) {
        errors++;
        if (!firstError) firstError = err || new Error(`status ${status}`);
      }
      completed++;
      if (started < total) {
        started++;
        get(onDone);
      } else if (completed === total) {
        clearInterval(watchdog);
        resolve({ completed, errors, firstError });
      }
    }

    const initial = Math.min(concurrency, total);
    if (initial === 0) {
      clearInterval(watchdog);
      resolve({ completed: 0, errors: 0, firstError: null });
      return;
    }
    for (let i = 0; i < initial; i++) {
      started++;
      get(onDone);
    }
  });
}

module.exports = { runLoad, watchStalls };
