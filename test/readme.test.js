'use strict';

// Every ```js block of the README runs as written against local servers: the
// README's port 3000 (http) and 3443 (https) become this test's servers, and
// the child trusts the fixture CA through NODE_EXTRA_CA_CERTS.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { createHttpServer, createHttpsServer } = require('./support/servers');

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

describe('README examples', () => {
  let httpServer;
  let httpsServer;
  before(async () => {
    httpServer = await createHttpServer((req, res) => res.end('hello'));
    httpsServer = await createHttpsServer((req, res) => res.end('hello'));
  });
  after(async () => {
    await httpServer.close();
    await httpsServer.close();
  });

  it('has the examples', () => {
    assert.ok(blocks.length >= 10, `found ${blocks.length} js blocks`);
  });

  blocks.forEach((block, index) => {
    const firstLine = block.split('\n').find((line) => line.trim() !== '');
    it(`block ${index + 1} runs: ${firstLine}`, async function () {
      this.timeout(20000);
      const code = block
        .replaceAll('127.0.0.1:3000', `127.0.0.1:${httpServer.port}`)
        .replaceAll('localhost:3443', `localhost:${httpsServer.port}`);
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
      if (/console\.log\(.*getStats\(\)/.test(block)) {
        assert.match(stdout, /"requests": 1,/);
        assert.match(stdout, /"free": 1,/);
      }
    });
  });
});
