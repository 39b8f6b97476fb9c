'use strict';

// The code blocks of our Markdown documents, and how the tests run them: each
// ```js block runs as written against the servers the docs tell a user to
// start (example/server.js here, on free ports instead of 3000 and 3443), and
// the child trusts the fixture CA through NODE_EXTRA_CA_CERTS, as a user's
// own CA would be trusted.
//
// A block that must not run is marked on the line just before its fence:
//   <!-- not run: the reason -->
// and the tests hold the few such marks to a reason each.
const assert = require('node:assert/strict');
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { once } = require('node:events');
const readline = require('node:readline');

const root = path.join(__dirname, '..', '..');
const NOT_RUN = /^<!-- not run: (.+?) -->$/;
// npm's undici 6 on Node 18 writes this line to stderr whenever
// NODE_V8_COVERAGE is set (as CI's coverage run sets it): not the block's.
const UNDICI_COVERAGE_NOTICE = /^Using compatibility WeakRef and FinalizationRegistry\n/m;

/**
 * The ```js blocks of a Markdown file: { code, line, notRun } where notRun
 * is the reason a `<!-- not run: reason -->` line just before it gives.
 */
function codeBlocks(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^```(\w*)$/);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    if (['js', 'mjs', 'cjs', 'ts'].includes(open[1])) {
      const mark = i > 0 ? lines[i - 1].match(NOT_RUN) : null;
      blocks.push({ lang: open[1], code: `${lines.slice(i + 1, end).join('\n')}\n`, line: i + 1, notRun: mark ? mark[1] : null });
    }
    i = end;
  }
  return blocks;
}

/** The docs pages: docs/*.md. */
function docsPages() {
  return fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).sort()
    .map((name) => path.join(root, 'docs', name));
}

/** Runs a block's code in a child process (as an ES module where it imports). */
function runSnippet(code) {
  const esm = /^import /m.test(code);
  const args = esm ? ['--input-type=module', '-e', code] : ['-e', code];
  return new Promise((resolve) => {
    execFile(process.execPath, args, {
      cwd: root,
      encoding: 'utf8',
      timeout: 15000,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(root, 'test', 'fixtures', 'ca.pem') },
    }, (error, stdout, stderr) => resolve({ error, stdout, stderr: stderr.replace(UNDICI_COVERAGE_NOTICE, '') }));
  });
}

// example/server.js on free ports; its first line names them.
async function serveExample() {
  const child = spawn(process.execPath, [path.join(root, 'example', 'server.js')], {
    env: { ...process.env, PORT: '0', HTTPS_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const [first] = await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => { throw new Error(`example/server.js exited with ${code}`); }),
  ]);
  const match = first.match(/^http:\/\/127\.0\.0\.1:(\d+)\/ and https:\/\/localhost:(\d+)\//);
  assert.ok(match, first);
  return {
    child,
    httpPort: Number(match[1]),
    httpsPort: Number(match[2]),
    /** The block's code, aimed at this server's ports. */
    aim(code) {
      return code
        .replaceAll('127.0.0.1:3000', `127.0.0.1:${this.httpPort}`)
        .replaceAll('localhost:3443', `localhost:${this.httpsPort}`);
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/**
 * What every block's run must show: no error, nothing on stderr, output
 * where it logs; and for the blocks that print a status, stats or metrics
 * after one request, what that request left.
 */
function checkRun(code, { error, stdout, stderr }) {
  assert.equal(error, null, `${error && error.message}\n${stderr}`);
  assert.equal(stderr, '');
  if (/console\.log/.test(code) && !/setInterval/.test(code)) assert.notEqual(stdout, '');
  // A status printed after one request shows it counted and its socket
  // back in the pool, not what the agent holds during the response's 'end'.
  if (/console\.log\(.*getCurrentStatus\(\)/.test(code) && !/setInterval/.test(code)) {
    assert.match(stdout, /requestCount: 1,/);
    assert.match(stdout, /freeSockets: \{ '127\.0\.0\.1:\d+:': 1 \}/);
  }
  // The OpenTelemetry example exports after the agent has closed: no
  // connection left open, active or idle, and the closed one's duration.
  if (/observeAgent\(/.test(code)) {
    const open = stdout.slice(stdout.indexOf("name: 'http.client.open_connections'"));
    const points = open.slice(0, open.indexOf('descriptor:', 1) === -1 ? undefined : open.indexOf('descriptor:', 1));
    assert.match(points, /'http\.connection\.state': 'idle'/);
    assert.deepEqual([...points.matchAll(/value: (\d+)/g)].map((m) => m[1]), ['0', '0']);
    assert.match(stdout, /name: 'http\.client\.connection\.duration'/);
  }
  if (/console\.log\(.*getStats\(\)/.test(code)) {
    assert.match(stdout, /"requests": 1,/);
    assert.match(stdout, /"free": 1,/);
  }
}

module.exports = { codeBlocks, docsPages, runSnippet, serveExample, checkRun, root, NOT_RUN };
