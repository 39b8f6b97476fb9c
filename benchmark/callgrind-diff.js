'use strict';

// Where two agents' instructions per request differ, function by function:
// reads the callgrind profiles that instructions.js keeps with
// BENCH_IC_PROFILE_DIR (two runs per agent, N = A and N = B), takes each
// function's (count at B − count at A) / (B − A), as instructions.js does
// with the totals, and prints the two agents side by side, by category and
// by function. Needs callgrind_annotate (it comes with valgrind).
//
//   BENCH_IC_PROFILE_DIR=/tmp/cg BENCH_IC_INFLIGHT=50 BENCH_PROTOCOLS=http \
//     BENCH_AGENTS=steady-agent,node-keepalive node benchmark/instructions.js
//   node benchmark/callgrind-diff.js /tmp/cg steady-agent node-keepalive http 50 [top]
//
// Callgrind sees V8's builtins (inline caches, property lookups), V8's and
// Node's C++ and libc by name, but code V8 compiled from JavaScript only as
// addresses, which differ from run to run: those are summed as one line.
// `node --cpu-prof` names the JavaScript functions instead.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const JIT = 'JavaScript compiled by V8 (addresses only)';

/** Self instructions per function of one profile. */
function selfCounts(file) {
  const out = execFileSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const counts = new Map();
  for (const line of out.split('\n')) {
    const match = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.+)$/.exec(line);
    if (!match || /^(PROGRAM TOTALS|file:function)/.test(match[2])) continue;
    let name = match[2].trim().replace(/\s*\[[^\]]*\]$/, '').replace(/^\?\?\?:/, '');
    if (/^0x[0-9a-f]+/.test(name)) name = JIT;
    counts.set(name, (counts.get(name) ?? 0) + Number(match[1].replace(/,/g, '')));
  }
  return counts;
}

/** Per request, per function, for one agent: from its two profiles. */
function perRequest(dir, agent, protocol, mode) {
  const prefix = `callgrind.${agent}.${protocol}.${mode.replace('/', '-')}.`;
  const runs = fs.readdirSync(dir)
    .filter((name) => name.startsWith(prefix) && name.endsWith('.out'))
    .map((name) => ({ file: path.join(dir, name), n: Number(name.slice(prefix.length, -'.out'.length)) }))
    .sort((x, y) => x.n - y.n);
  if (runs.length !== 2) throw new Error(`${dir}: expected two profiles ${prefix}<N>.out, found ${runs.length}`);
  const [a, b] = runs.map((run) => ({ ...run, counts: selfCounts(run.file) }));
  const result = new Map();
  for (const name of new Set([...a.counts.keys(), ...b.counts.keys()])) {
    result.set(name, ((b.counts.get(name) ?? 0) - (a.counts.get(name) ?? 0)) / (b.n - a.n));
  }
  return result;
}

// V8's garbage collector, by the names of its C++ (the scavenger, marker,
// sweeper and evacuator, the heap's own collection and allocation paths).
// How much of it falls in a run depends on where the collections fall
// against the batches, not only on what the agent allocates.
const GC = /v8::internal::(Scaveng|MarkCompact|Marking|MainMarking|ConcurrentMarking|IncrementalMarking|MinorMarkCompact|Sweeper|Evacuat|Pretenuring|RecordMigrated|LiveObjectRange|FreeList|SemiSpace|PagedSpace|Heap::|BodyDescriptor|MemoryAllocator|WeakObjects)|heap::base::/;

function category(name) {
  if (name === JIT) return name;
  if (GC.test(name)) return 'V8 garbage collector (C++)';
  const builtin = /^Builtins_(\w+)/.exec(name);
  if (builtin) return /IC/.test(builtin[1]) ? 'V8 builtins: inline caches (property loads and stores)' : 'V8 builtins: other';
  if (name.includes('v8::')) return 'V8 runtime (C++)';
  if (/node::|llhttp/.test(name)) return 'Node C++ and llhttp';
  if (/\buv_/.test(name)) return 'libuv';
  return 'libc and the rest';
}

const fmt = (value) => Math.round(value).toLocaleString('en-US').padStart(9);
const signed = (value) => `${value >= 0 ? '+' : ''}${Math.round(value).toLocaleString('en-US')}`.padStart(8);

function main([dir, first, second, protocol = 'http', mode = '50', top = '25']) {
  if (!dir || !first || !second) throw new Error('usage: node benchmark/callgrind-diff.js <dir> <agent> <other agent> [protocol] [mode] [top]');
  const x = perRequest(dir, first, protocol, mode);
  const y = perRequest(dir, second, protocol, mode);
  const names = [...new Set([...x.keys(), ...y.keys()])];
  const rows = names.map((name) => ({ name, x: x.get(name) ?? 0, y: y.get(name) ?? 0 }));
  const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
  console.log(`Instructions per request, ${protocol}, ${mode} in flight: ${first} ${fmt(sum('x'))}, ${second} ${fmt(sum('y'))} (${signed(sum('x') - sum('y'))})\n`);
  const byCategory = new Map();
  for (const row of rows) {
    const entry = byCategory.get(category(row.name)) ?? { x: 0, y: 0 };
    entry.x += row.x;
    entry.y += row.y;
    byCategory.set(category(row.name), entry);
  }
  console.log(`${first.padStart(9)} ${second.padStart(9)}  difference, category`);
  for (const [name, entry] of [...byCategory].sort((p, q) => q[1].x - p[1].x)) console.log(`${fmt(entry.x)} ${fmt(entry.y)} ${signed(entry.x - entry.y)}  ${name}`);
  const named = rows.filter((row) => row.name !== JIT).sort((p, q) => (q.x - q.y) - (p.x - p.y));
  const show = (list) => list.forEach((row) => console.log(`${fmt(row.x)} ${fmt(row.y)} ${signed(row.x - row.y)}  ${row.name.slice(0, 140)}`));
  console.log(`\nMore in ${first}:`);
  show(named.slice(0, Number(top)));
  console.log(`\nLess in ${first}:`);
  show(named.slice(-Number(top)).reverse());
}

main(process.argv.slice(2));
