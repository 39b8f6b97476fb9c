'use strict';

// Timers, counted from outside: what a feature arms, and whether it clears it.
const asyncHooks = require('node:async_hooks');

/**
 * Timers the process holds that keep it alive (setTimeout not unref'd), by
 * Node's own count. Sockets' idle timeouts are unref'd and not counted.
 */
function activeTimers() {
  return process.getActiveResourcesInfo().filter((type) => type === 'Timeout').length;
}

/**
 * Runs `fn` (synchronous) and returns the async ids of the timers it
 * created, and a set that collects the ids of destroyed (cleared or fired)
 * timers from then on, until stop().
 */
function timersCreatedBy(fn) {
  const created = [];
  const destroyed = new Set();
  let capturing = true;
  const hook = asyncHooks.createHook({
    init(id, type) { if (capturing && type === 'Timeout') created.push(id); },
    destroy(id) { destroyed.add(id); },
  }).enable();
  let result;
  try {
    result = fn();
  } finally {
    capturing = false;
  }
  return { result, created, destroyed, stop: () => hook.disable() };
}

module.exports = { activeTimers, timersCreatedBy };
