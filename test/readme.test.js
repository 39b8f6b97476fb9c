'use strict';

// Every ```js block of the README runs as written against the servers the
// README tells a user to start (example/server.js, `npm run serve`), on free
// ports instead of 3000 and 3443, and the child trusts the fixture CA through
// NODE_EXTRA_CA_CERTS, as the README says.
const assert = require('node:assert/strict');
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { once } = require('node:events');
const readline = require('node:readline');
const { danglingLinks } = require('./support/markdown');

const root = path.join(__dirname, '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

function run(code, esm) {
  const args = esm ? ['--input-type=module', '-e', code] : ['-e', code];
  return new Promise((resolve) => {
    execFile(process.execPath, args, {
      cwd: root,
      encoding: 'utf8',
      timeout: 15000,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(__dirname, 'fixtures', 'ca.pem') },
    }, (error, stdout, stderr) => resolve({ error, stdout, stderr }));
  });
}

// example/server.js on free ports; its first line names them.
async function serve() {
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
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

describe('README examples', () => {
  let server;
  before(async () => {
    server = await serve();
  });
  after(async () => {
    await server?.stop();
  });

  it('has the examples', () => {
    assert.ok(blocks.length >= 10, `found ${blocks.length} js blocks`);
  });

  it('links only to headings and files that exist, in every document of the repository', () => {
    for (const name of ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'benchmark/README.md']) {
      assert.deepEqual(danglingLinks(path.join(root, name), root), [], name);
    }
  });

  it('says, before the first snippet, how to start their server and trust its CA', () => {
    assert.equal(require('../package.json').scripts.serve, 'node example/server.js');
    const beforeFirstSnippet = readme.slice(0, readme.indexOf('```js'));
    assert.match(beforeFirstSnippet, /npm run serve/);
    assert.match(beforeFirstSnippet, /NODE_EXTRA_CA_CERTS=test\/fixtures\/ca\.pem/);
  });

  blocks.forEach((block, index) => {
    const firstLine = block.split('\n').find((line) => line.trim() !== '');
    it(`block ${index + 1} runs: ${firstLine}`, async function () {
      this.timeout(20000);
      const code = block
        .replaceAll('127.0.0.1:3000', `127.0.0.1:${server.httpPort}`)
        .replaceAll('localhost:3443', `localhost:${server.httpsPort}`);
      const { error, stdout, stderr } = await run(code, /^import /m.test(block));
      assert.equal(error, null, `${error && error.message}\n${stderr}`);
      assert.equal(stderr, '');
      if (/console\.log/.test(block) && !/setInterval/.test(block)) assert.notEqual(stdout, '');
      // A status printed after one request shows it counted and its socket
      // back in the pool, not what the agent holds during the response's 'end'.
      if (/console\.log\(.*getCurrentStatus\(\)/.test(block) && !/setInterval/.test(block)) {
        assert.match(stdout, /requestCount: 1,/);
        assert.match(stdout, /freeSockets: \{ '127\.0\.0\.1:\d+:': 1 \}/);
      }
      // The OpenTelemetry snippet exports after the agent has closed: no
      // connection left open, active or idle, and the closed one's duration.
      if (/observeAgent\(/.test(block)) {
        const open = stdout.slice(stdout.indexOf("name: 'http.client.open_connections'"));
        const points = open.slice(0, open.indexOf('descriptor:', 1) === -1 ? undefined : open.indexOf('descriptor:', 1));
        assert.match(points, /'http\.connection\.state': 'idle'/);
        assert.deepEqual([...points.matchAll(/value: (\d+)/g)].map((m) => m[1]), ['0', '0']);
        assert.match(stdout, /name: 'http\.client\.connection\.duration'/);
      }
      if (/console\.log\(.*getStats\(\)/.test(block)) {
        assert.match(stdout, /"requests": 1,/);
        assert.match(stdout, /"free": 1,/);
      }
    });
  });
});
