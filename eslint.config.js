'use strict';

const js = require('@eslint/js');
const globals = require('globals');

// Node's internals are reached from lib/core/ only (CONTRIBUTING.md, The code):
// private fields of core's objects, core's listeners found in `_events`, and
// writes to the agent's maps and socket count, which Node documents as
// read-only.
const PRIVATE_FIELDS = ['_agentKey', '_httpMessage', '_events', '_header', '_headerSent', 'outputData', '_eventsCount'];
const AGENT_MAPS = '/^(freeSockets|sockets|requests)$/';
const coreOnly = (what) => `${what}: Node's internals are reached through lib/core/ only`;
const seam = {
  'no-restricted-properties': ['error',
    ...PRIVATE_FIELDS.map((property) => ({ property, message: coreOnly(property) })),
    { property: 'rawListeners', message: coreOnly('core\'s listeners') },
  ],
  'no-restricted-syntax': ['error',
    { selector: `Property > Identifier.key[name=/^(${PRIVATE_FIELDS.join('|')})$/]`, message: coreOnly('a private field') },
    { selector: ':matches(AssignmentExpression, UpdateExpression) > MemberExpression[property.name="totalSocketCount"]', message: coreOnly('a write to totalSocketCount') },
    { selector: 'AssignmentExpression > MemberExpression.left[property.name=/^(freeSockets|sockets)$/]', message: coreOnly('a write to an agent map') },
    { selector: `AssignmentExpression > MemberExpression.left[computed=true] > MemberExpression.object[property.name=${AGENT_MAPS}]`, message: coreOnly('a write to an agent map') },
    { selector: `UnaryExpression[operator="delete"] > MemberExpression > MemberExpression.object[property.name=${AGENT_MAPS}]`, message: coreOnly('a write to an agent map') },
  ],
};

module.exports = [
  { ignores: ['node_modules/**', 'coverage/**', 'benchmark/results.*', 'test/types/.readme-*/**'] },
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
    files: ['lib/**/*.js'],
    ignores: ['lib/core/**'],
    rules: seam,
  },
  {
    files: ['lib/**/*.js'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80 }],
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
