'use strict';

// benchmark/results.json keeps one entry per scenario; running a scenario
// alone replaces only its own entry. benchmark/results.md is rebuilt from the
// JSON every time, so it always shows every scenario's latest tables.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { formatMarkdown } = require('./table');

const DIR = path.join(__dirname, '..');
const JSON_FILE = path.join(DIR, 'results.json');
const MD_FILE = path.join(DIR, 'results.md');

// The order scenarios appear in results.md.
const ORDER = ['proxy', 'client-cost', 'https-cost', 'instructions', 'nagle', 'race', 'axios-latency', 'proxy-tunnel'];

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
    .filter((name) => name.startsWith('BENCH_') && name !== 'BENCH_COMMAND')
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
  // BENCH_SAVE=0 for runs that must not replace the recorded tables (profiling).
  if (process.env.BENCH_SAVE === '0') return null;
  const results = load();
  results.scenarios[entry.id] = {
    ...entry,
    machine: machine(),
    date: new Date().toISOString(),
    command: command(),
  };
  results.updated = new Date().toISOString();
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
  const out = ['# steady-agent benchmark results', ''];
  const latest = entries.reduce((a, b) => (!a || b.date > a.date ? b : a), null);
  if (latest) {
    const m = latest.machine;
    out.push(
      `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}; Node ${m.node}.`,
      'All servers run in their own processes on 127.0.0.1; see benchmark/README.md for what each scenario measures.',
      '',
    );
  }
  entries.forEach((entry, i) => {
    out.push(`## ${i + 1}. ${entry.title}`, '');
    if (entry.summary) out.push(entry.summary, '');
    const m = entry.machine;
    out.push(`Run ${entry.date.slice(0, 16).replace('T', ' ')} UTC with \`${entry.command}\` (Node ${m.node}, ${m.cpu}, ${m.cores} cores).`, '');
    if (entry.params && Object.keys(entry.params).length) {
      out.push(`Parameters: ${Object.entries(entry.params).map(([k, v]) => `${k}=${v}`).join(', ')}.`, '');
    }
    for (const table of entry.tables || []) out.push(formatMarkdown(table), '');
    for (const note of entry.notes || []) out.push(`- ${note}`);
    if ((entry.notes || []).length) out.push('');
  });
  return `${out.join('\n').trimEnd()}\n`;
}

module.exports = { saveScenario, renderMarkdown, machine, command, commandLine, JSON_FILE, MD_FILE };
