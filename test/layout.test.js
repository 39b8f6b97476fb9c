'use strict';

// The layout of lib/ (issues 32 and 40), held mechanically so that it cannot
// drift: folders by role, small files, no circular require between files or
// folders, lib/agent/ on top and the socket's state a leaf, and Node's
// internals reached from lib/core/ only (eslint.config.js enforces the names;
// this counts). Function length is eslint's max-lines-per-function.
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

/** The folder of lib/ that holds `file`, or the file's own name at the top. */
const folderOf = (file) => path.relative(lib, file).split(path.sep)[0];

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

  it('keeps every file of lib/agent/ small: at most 250 lines and 10 of our requires', () => {
    const agent = files.filter((file) => path.dirname(file) === path.join(lib, 'agent'));
    const large = agent.filter((file) => lines(file) > 250 || ourRequires(file).length > 10)
      .map((file) => `${path.relative(lib, file)}: ${lines(file)} lines, ${ourRequires(file).length} requires`);
    assert.deepEqual(large, []);
  });

  it('keeps lib/agent/ on top: no lower folder requires a file of it', () => {
    const lower = ['core', 'policy', 'timers', 'connect', 'options', 'observe', 'dns', 'proxy', 'state'];
    const up = files.filter((file) => lower.includes(folderOf(file)))
      .flatMap((file) => ourRequires(file).filter((target) => folderOf(target) === 'agent')
        .map((target) => `${path.relative(lib, file)} -> ${path.relative(lib, target)}`));
    assert.deepEqual(up, []);
  });

  it('keeps the socket\'s state a leaf: lib/state/ requires nothing of ours outside it', () => {
    const out = files.filter((file) => folderOf(file) === 'state')
      .flatMap((file) => ourRequires(file).filter((target) => folderOf(target) !== 'state')
        .map((target) => `${path.relative(lib, file)} -> ${path.relative(lib, target)}`));
    assert.deepEqual(out, []);
  });

  it('resolves every relative require to a file of lib/ (a moved file leaves none dangling)', () => {
    const dangling = files.flatMap((file) => [...source.get(file).matchAll(/require\('(\.{1,2}\/[^']+)'\)/g)]
      .map(([, spec]) => spec)
      .filter((spec) => {
        const target = path.resolve(path.dirname(file), spec);
        // Outside lib/ (the package's index.js and package.json): not ours to list.
        if (!target.startsWith(lib + path.sep)) return false;
        return ![target, `${target}.js`, path.join(target, 'index.js')].some((c) => source.has(c));
      })
      .map((spec) => `${path.relative(lib, file)}: ${spec}`));
    assert.deepEqual(dangling, []);
  });

  it('has no require loop between folders', () => {
    // Folder -> the folders its files require (a file at the top of lib/ is a folder of its own).
    const graph = new Map();
    for (const file of files) {
      const from = folderOf(file);
      if (!graph.has(from)) graph.set(from, new Set());
      for (const target of ourRequires(file)) if (folderOf(target) !== from) graph.get(from).add(folderOf(target));
    }
    const loops = [];
    const done = new Set();
    const visit = (folder, stack) => {
      if (stack.includes(folder)) {
        loops.push([...stack.slice(stack.indexOf(folder)), folder].join(' -> '));
        return;
      }
      if (done.has(folder)) return;
      for (const next of graph.get(folder) ?? []) visit(next, [...stack, folder]);
      done.add(folder);
    };
    for (const folder of graph.keys()) visit(folder, []);
    assert.deepEqual(loops, []);
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
