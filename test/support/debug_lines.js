'use strict';

// DEBUG=steady-agent inside the test process: the `debug` package's lines
// collected instead of printed. Call from inside a `describe`: it enables
// the namespace before each test and restores debug's state after it.
const { format } = require('node:util');
const createDebug = require('debug');

/** @returns {{ lines: string[], logged: (pattern: RegExp) => boolean }} `lines` is refilled for each test. */
function captureDebug() {
  const capture = {
    lines: [],
    logged: (pattern) => capture.lines.some((line) => pattern.test(line)),
  };
  let originalLog;
  beforeEach(() => {
    capture.lines = [];
    originalLog = createDebug.log;
    createDebug.log = (...args) => capture.lines.push(format(...args));
    createDebug.enable('steady-agent');
  });
  afterEach(() => {
    createDebug.disable();
    createDebug.log = originalLog;
  });
  return capture;
}

module.exports = { captureDebug };
