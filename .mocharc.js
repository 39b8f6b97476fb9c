'use strict';

module.exports = {
  spec: ['test/**/*.test.js', 'test/**/*.test.mjs'],
  require: ['test/support/coverage_flush.js'],
  timeout: 20000,
  'node-option': ['throw-deprecation'],
  reporter: 'spec',
  exit: false,
};
