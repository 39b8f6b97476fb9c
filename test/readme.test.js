'use strict';

// Every ```js block of the README runs as written against a local server
// (test/support/snippets.js says how), and the README keeps to a front page.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { danglingLinks } = require('./support/markdown');
const { codeBlocks, runSnippet, serveExample, checkRun, root } = require('./support/snippets');

const readmeFile = path.join(root, 'README.md');
const readme = fs.readFileSync(readmeFile, 'utf8');
const blocks = codeBlocks(readmeFile);

describe('README examples', () => {
  let server;
  before(async () => {
    server = await serveExample();
  });
  after(async () => {
    await server?.stop();
  });

  it('is a front page: at most 300 lines, the first example within the first 40', () => {
    const lines = readme.split('\n');
    assert.ok(lines.length <= 300, `${lines.length} lines`);
    assert.ok(blocks[0].line <= 40, `first example at line ${blocks[0].line}`);
  });

  it('has an example per client', () => {
    const all = blocks.map((block) => block.code).join('\n');
    for (const client of ["require('node:https')", "require('axios')", "from 'got'", "from 'node-fetch'", "require('superagent')"]) {
      assert.ok(all.includes(client), client);
    }
    assert.ok(blocks.every((block) => block.notRun === null), 'every README example runs');
  });

  it('links only to headings and files that exist, in every document of the repository', () => {
    for (const name of ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'benchmark/README.md']) {
      assert.deepEqual(danglingLinks(path.join(root, name), root), [], name);
    }
  });

  it('says, before the first example\'s end, where to read how to start a server', () => {
    const head = readme.slice(0, readme.indexOf('## What it is'));
    assert.match(head, /docs\/README\.md#running-the-examples/);
  });

  blocks.forEach((block, index) => {
    const firstLine = block.code.split('\n').find((line) => line.trim() !== '');
    it(`block ${index + 1} (line ${block.line}) runs: ${firstLine}`, async function () {
      this.timeout(20000);
      checkRun(block.code, await runSnippet(server.aim(block.code)));
    });
  });
});
