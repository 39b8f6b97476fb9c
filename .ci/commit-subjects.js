'use strict';

// Checks the subject of every non-merge commit made (committed) since this
// script was added: `type(scope): summary` (scope optional), at most 72 characters,
// types as CONTRIBUTING.md lists them. Exits 1 naming each that fails.
// In a shallow clone whose history lacks the commit that added the script,
// it checks what history it has and says so.
const { execFileSync } = require('node:child_process');

const TYPES = ['feat', 'fix', 'perf', 'refactor', 'test', 'docs', 'bench', 'build', 'ci', 'chore'];
const SUBJECT = new RegExp(`^(${TYPES.join('|')})(\\([a-z0-9][a-z0-9/_.-]*\\))?!?: \\S.*$`);
const MAX = 72;

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trim();

const added = git('log', '--diff-filter=A', '--format=%H', '--', '.ci/commit-subjects.js').split('\n').filter(Boolean).pop();
// Made after the check: committed no earlier than the commit that added it.
// (A range from that commit would also take in older commits of branches
// merged since, made before the check existed.)
let since = -Infinity;
let range = 'HEAD';
if (added !== undefined) {
  since = Number(git('log', '-1', '--format=%ct', added));
  range = `commits since ${added.slice(0, 7)}`;
} else if (git('rev-parse', '--is-shallow-repository') === 'true') {
  console.log('commit-subjects: shallow clone without the commit that added this check: checking the history present');
} else {
  console.log('commit-subjects: this check is not committed yet: nothing to check');
  process.exit(0);
}

const bad = [];
for (const entry of git('log', '--no-merges', '--format=%ct %h %s', 'HEAD').split('\n').filter(Boolean)) {
  const at = entry.indexOf(' ');
  if (Number(entry.slice(0, at)) < since) continue;
  const line = entry.slice(at + 1);
  const subject = line.slice(line.indexOf(' ') + 1);
  if (subject.length > MAX) bad.push(`${line}\n    ${subject.length} characters, more than ${MAX}`);
  else if (!SUBJECT.test(subject)) bad.push(`${line}\n    not type(scope): summary, type one of ${TYPES.join(' ')}`);
}
if (bad.length > 0) {
  console.error(`commit-subjects: ${bad.length} subject(s) to reword:\n${bad.join('\n')}`);
  process.exit(1);
}
console.log(`commit-subjects: ${range}: every subject follows type(scope): summary`);
