'use strict';

const js = require('@eslint/js');
const globals = require('globals');

module.exports = [
  { ignores: ['node_modules/**', 'coverage/**', '.nyc_output/**', 'benchmark/results.*', 'test/types/.readme-*/**'] },
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'commonjs',
      globals: { ...globals.node },
    },
    rules: {
      'no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_' }],
      strict: ['error', 'global'],
      'prefer-const': 'error',
      'no-var': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-console': 'error',
    },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module' },
  },
  {
    files: ['test/**/*.js', 'test/**/*.mjs'],
    languageOptions: { globals: { ...globals.mocha } },
  },
  {
    files: ['benchmark/**', 'example/**', '.ci/**'],
    rules: { 'no-console': 'off' },
  },
];
