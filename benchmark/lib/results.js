'use strict';

// benchmark/results.json keeps one entry per scenario; a scenario run with
// --save replaces only its own entry. benchmark/results.md is rebuilt from the
// JSON every time, so it always shows every scenario's latest tables, each
// with the machine, Node version, date and command that measured it.
//
// Without --save a scenario only prints: results.json and results.md are
// tracked files, and a trial run must not rewrite them.
// BENCH_RESULTS_DIR points the files elsewhere (the tests use a temporary
// directory).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { formatMarkdown } = require('./table');

const DIR = process.env.BENCH_RESULTS_DIR ? path.resolve(process.env.BENCH_RESULTS_DIR) : path.join(__dirname, '..');
const JSON_FILE = path.join(DIR, 'results.json');
const MD_FILE = path.join(DIR, 'results.md');
const SAVE_FLAG = '--save';

// The order scenarios appear in results.md.
const ORDER = ['proxy', 'client-cost', 'https-cost', 'instructions', 'many-origins', 'nagle', 'race', 'axios-latency', 'proxy-tunnel', 'dns-flip'];

function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus.length ? cpus[0].model.trim() : 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
  };
}

/** The command that produced this run, as a reader would type it. */
function command() {
  if (process.env.BENCH_COMMAND) return process.env.BENCH_COMMAND;
  return commandLine(['node', ...process.execArgv, path.relative(process.cwd(), process.argv[1]), ...process.argv.slice(2)]);
}

/** `words` prefixed with the BENCH_* variables set in the environment. */
function commandLine(words) {
  const knobs = Object.keys(process.env)
    .filter((name) => name.startsWith('BENCH_') && name !== 'BENCH_COMMAND' && name !== 'BENCH_RESULTS_DIR')
    .sort()
    .map((name) => `${name}=${process.env[name]}`);
  return [...knobs, ...words].join(' ');
}

function load() {
  try {
    const parsed = JSON.parse(fs.readFileSync(JSON_FILE, 'utf8'));
    if (parsed && typeof parsed.scenarios === 'object') return parsed;
  } catch {
    // missing or unreadable: start afresh
  }
  return { scenarios: {} };
}

/**
 * Records one scenario's result:
 * { id, title, summary, params, tables: [{ title, columns, rows }], notes: [] }
 */
function saveScenario(entry) {
  if (!process.argv.includes(SAVE_FLAG)) {
    console.log(`Not recorded: run with ${SAVE_FLAG} (or npm run bench) to write ${path.relative(process.cwd(), JSON_FILE)} and results.md.`);
    return null;
  }
  const results = load();
  results.scenarios[entry.id] = {
    ...entry,
    machine: machine(),
    date: new Date().toISOString(),
    command: command(),
  };
  results.updated = new Date().toISOString();
  fs.mkdirSync(DIR, { recursive: true });
  fs.writeFileSync(JSON_FILE, `${JSON.stringify(results, null, 2)}\n`);
  fs.writeFileSync(MD_FILE, renderMarkdown(results));
  return results;
}

function orderedEntries(results) {
  const ids = Object.keys(results.scenarios);
  ids.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return ids.map((id) => results.scenarios[id]);
}

function rank(id) {
  const i = ORDER.indexOf(id);
  return i === -1 ? ORDER.length : i;
}

function renderMarkdown(results) {
  const entries = orderedEntries(results);
  // No machine line for the whole file: scenarios are saved one at a time,
  // possibly on different machines and Node versions, so each says its own.
  const out = [
    '# steady-agent benchmark results',
    '',
    'All servers run in their own processes on 127.0.0.1; see benchmark/README.md for what each scenario measures. '
      + 'Each scenario says when, where and with which command it was measured.',
    '',
  ];
  entries.forEach((entry, i) => {
    out.push(`## ${i + 1}. ${entry.title}`, '');
    if (entry.summary) out.push(entry.summary, '');
    out.push(`Run ${entry.date.slice(0, 16).replace('T', ' ')} UTC with \`${entry.command}\` on ${describeMachine(entry.machine)}.`, '');
    if (entry.params && Object.keys(entry.params).length) {
      out.push(`Parameters: ${Object.entries(entry.params).map(([k, v]) => `${k}=${v}`).join(', ')}.`, '');
    }
    for (const table of entry.tables || []) out.push(formatMarkdown(table), '');
    for (const note of entry.notes || []) out.push(`- ${note}`);
    if ((entry.notes || []).length) out.push('');
  });
  return `${out.join('\n').trimEnd()}\n`;
}

/** "Node v20.20.2, AMD EPYC, 2 cores, 24 GiB, Linux 6.18 x64" */
function describeMachine(m) {
  return `Node ${m.node}, ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}`;
}

/** Rewrites results.md from results.json, for a change in how it is rendered. */
function rerenderMarkdown() {
  fs.writeFileSync(MD_FILE, renderMarkdown(load()));
}

module.exports = {
  saveScenario, renderMarkdown, rerenderMarkdown, describeMachine, load, machine, command, commandLine,
  SAVE_FLAG, DIR, JSON_FILE, MD_FILE,
};
