'use strict';

// The layout of lib/ (issue 32), held mechanically so that it cannot drift:
// folders by role, small files, no circular require, and Node's internals
// reached from lib/core/ only (eslint.config.js enforces the names; this
// counts). Function length is eslint's max-lines-per-function.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const lib = path.join(__dirname, '..', 'lib');

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : entry.name.endsWith('.js') ? [full] : [];
  });
}

const files = walk(lib);
const source = new Map(files.map((file) => [file, fs.readFileSync(file, 'utf8')]));
const lines = (file) => source.get(file).split('\n').length - 1;

/** Our modules `file` requires, resolved to files in lib/. */
function ourRequires(file) {
  const found = [];
  for (const [, spec] of source.get(file).matchAll(/require\('(\.{1,2}\/[^']+)'\)/g)) {
    const target = path.resolve(path.dirname(file), spec);
    const resolved = [target, `${target}.js`, path.join(target, 'index.js')].find((c) => source.has(c));
    if (resolved !== undefined) found.push(resolved);
  }
  return found;
}

describe('layout of lib/', () => {
  it('has at least 5 folders and at most 8 files at its top', () => {
    const top = fs.readdirSync(lib, { withFileTypes: true });
    assert.ok(top.filter((e) => e.isDirectory()).length >= 5);
    assert.ok(top.filter((e) => e.isFile()).length <= 8, top.filter((e) => e.isFile()).map((e) => e.name).join(' '));
  });

  it('has no file over 400 lines', () => {
    const long = files.filter((file) => lines(file) > 400).map((file) => `${path.relative(lib, file)}: ${lines(file)}`);
    assert.deepEqual(long, []);
  });

  it('keeps the agent class to core\'s hooks: at most 350 lines and 12 of our requires', () => {
    const agentClass = path.join(lib, 'agent', 'keep_alive.js');
    assert.ok(lines(agentClass) <= 350, `agent/keep_alive.js: ${lines(agentClass)} lines`);
    assert.ok(ourRequires(agentClass).length <= 12, `agent/keep_alive.js: ${ourRequires(agentClass).length} requires`);
  });

  it('has no circular require', () => {
    const cycles = [];
    const done = new Set();
    const visit = (file, stack) => {
      if (stack.includes(file)) {
        cycles.push(stack.slice(stack.indexOf(file)).concat(file).map((f) => path.relative(lib, f)).join(' -> '));
        return;
      }
      if (done.has(file)) return;
      for (const next of ourRequires(file)) visit(next, [...stack, file]);
      done.add(file);
    };
    for (const file of files) visit(file, []);
    assert.deepEqual(cycles, []);
  });

  it('touches Node\'s private fields in lib/core/ only', () => {
    const outside = files.filter((file) => !file.startsWith(path.join(lib, 'core') + path.sep)
      && /\._(agentKey|httpMessage|events|header)\b|\.outputData\b|totalSocketCount\s*(\+\+|--|[-+]?=)/.test(source.get(file)));
    assert.deepEqual(outside.map((file) => path.relative(lib, file)), []);
  });
});
