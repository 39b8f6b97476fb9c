'use strict';

// The compatibility suites: agentkeepalive's own tests and Node's own agent
// tests, run against this package. See CONTRIBUTING.md.
//
//   npm run test:peers -- <agentkeepalive> <node_test> [options]
//
// <agentkeepalive>  a clone of github.com/node-modules/agentkeepalive (4.6.0)
// <node_test>       a clone of github.com/denoland/node_test (Node 25.8.1's tests)
//                   Each a git directory (a mirror, a bare clone) or a work tree.
// --only=agentkeepalive|node-core   one suite
// --grep=REGEX      only the tests whose title (agentkeepalive) or file name (node-core) matches
// --work=DIR        where packages, tools, logs and extracted tests go
//                   (default: $TMPDIR/steady-agent-peers; kept between runs)
//
// Prints a line per test and each suite's figures, and exits 1 when a figure
// differs from what this package is known to give (EXPECTED below): a test
// that newly fails, or one of the known differences that now passes.
const os = require('node:os');
const path = require('node:path');
const { openUpstream } = require('./upstream');
const { runAgentkeepaliveSuite } = require('./agentkeepalive');
const { runNodeCoreSuite } = require('./node-core');

// What a full run gives today, and why (the README's "Migrating from
// agentkeepalive" and "Differences from Node's agent" say more).
const EXPECTED = {
  agentkeepalive: {
    skipped: 1, // a test upstream itself skips
    failing: {
      // Upstream's own, run one test at a time as here:
      'test/agent.test.js should request again and use the same socket': 'uses the agent of the test before it',
      'test/agent.test.js mock idle socket error should idle socket emit error event': 'needs the host r.cnpmjs.org',
      // Ours: the free timeout is one timer per agent, not socket.setTimeout.
      'test/agent.test.js options.socketActiveTTL should not expire active socket when it is in ttl': 'reads socket.timeout',
      'test/agent.test.js options.socketActiveTTL should TTL diff > freeSocketTimeout': 'reads socket.timeout',
    },
  },
  'node-core': {
    differences: [
      'test-http-agent-uninitialized.js',
      'test-http-client-agent.js',
      'test-http-client-timeout-on-connect.js',
      'test-https-agent-additional-options.js',
      'test-https-agent-getname.js',
      'test-https-agent-session-reuse.js',
    ],
  },
};

const say = (line) => process.stdout.write(`${line}\n`);

function parseArgs(argv) {
  const options = { positional: [] };
  for (const arg of argv) {
    const match = /^--(only|grep|work)=(.*)$/.exec(arg);
    if (match) options[match[1]] = match[2];
    else if (arg.startsWith('--')) throw new Error(`unknown option ${arg}`);
    else options.positional.push(arg);
  }
  if (options.positional.length !== 2) {
    throw new Error('usage: npm run test:peers -- <agentkeepalive clone> <node_test clone> [--only=agentkeepalive|node-core] [--grep=REGEX] [--work=DIR]');
  }
  if (options.only !== undefined && !['agentkeepalive', 'node-core'].includes(options.only)) {
    throw new Error(`--only must be agentkeepalive or node-core, not ${options.only}`);
  }
  return options;
}

function sameSet(a, b) {
  return a.length === b.length && a.every((item) => b.includes(item));
}

async function agentkeepalive(upstream, work, filter) {
  say(`== agentkeepalive's tests (${upstream.revision()})`);
  const result = await runAgentkeepaliveSuite({
    upstream,
    work,
    filter,
    report: (status, title, log) => say(`${status.padEnd(7)} ${title}  [${log}]`),
  });
  say(`agentkeepalive suite: ${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped`);
  const failing = result.results.filter((r) => r.status === 'FAIL' || r.status === 'TIMEOUT').map((r) => r.title);
  const expected = Object.keys(EXPECTED.agentkeepalive.failing).filter((title) => filter === undefined || filter.test(title));
  const ok = sameSet(failing, expected) && (filter !== undefined || result.skipped === EXPECTED.agentkeepalive.skipped);
  if (!ok) say(`agentkeepalive suite: expected to fail exactly: ${expected.join('; ') || '-'}`);
  return ok;
}

async function nodeCore(upstream, work, filter) {
  say(`== Node's agent tests (${upstream.revision()})`);
  const result = await runNodeCoreSuite({
    upstream,
    work,
    filter,
    report: ({ name, core, ours }) => say(`${name.padEnd(60)} core ${core.padEnd(8)} ours ${ours}`),
  });
  say(`node-core suite (${result.node}): ${result.results.length} tests run, ${result.baseline} pass with core; ` +
    `ours passes ${result.passed}/${result.baseline}`);
  say(`ours differs from core on ${result.differences.length}: ${result.differences.join(', ') || '-'}`);
  const expected = EXPECTED['node-core'].differences.filter((name) => filter === undefined || filter.test(name));
  const ok = sameSet(result.differences, expected);
  if (!ok) say(`node-core suite: expected to differ exactly on: ${expected.join(', ') || '-'}`);
  return ok;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const [aklClone, nodeClone] = options.positional;
  const work = path.resolve(options.work ?? path.join(os.tmpdir(), 'steady-agent-peers'));
  const filter = options.grep === undefined ? undefined : new RegExp(options.grep);
  let ok = true;
  if (options.only !== 'node-core') {
    ok = await agentkeepalive(openUpstream(aklClone, 'agentkeepalive'), path.join(work, 'agentkeepalive'), filter) && ok;
  }
  if (options.only !== 'agentkeepalive') {
    ok = await nodeCore(openUpstream(nodeClone, 'node_test'), path.join(work, 'node-core'), filter) && ok;
  }
  process.exitCode = ok ? 0 : 1;
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exitCode = 2;
});
