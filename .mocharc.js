'use strict';

module.exports = {
  spec: ['test/**/*.test.js', 'test/**/*.test.mjs'],
  timeout: 20000,
  'node-option': ['throw-deprecation'],
  reporter: 'spec',
  exit: false,
};
