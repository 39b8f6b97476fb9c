'use strict';

// The child side of benchmark/lib/processes.js: reads the options the parent
// passed, answers its calls over IPC, and exits as soon as the parent goes
// away so that no server outlives its benchmark.

/** Options given by the parent as JSON in argv[2]. */
function readOptions() {
  return JSON.parse(process.argv[2] || '{}');
}

/**
 * Answers { type: 'call', method, args } messages with handlers[method](...args)
 * (which may return a promise).
 */
function answerCalls(handlers) {
  process.on('message', async (message) => {
    if (!message || message.type !== 'call') return;
    const reply = { type: 'reply', id: message.id };
    try {
      const handler = handlers[message.method];
      if (typeof handler !== 'function') throw new Error(`unknown method ${message.method}`);
      reply.value = await handler(...(message.args || []));
    } catch (err) {
      reply.error = err && err.message ? err.message : String(err);
    }
    if (process.connected) process.send(reply);
  });
}

/** Tells the parent which port the server listens on. */
function reportListening(port) {
  process.send({ type: 'listening', port });
}

process.on('disconnect', () => process.exit(0));

module.exports = { readOptions, answerCalls, reportListening };
