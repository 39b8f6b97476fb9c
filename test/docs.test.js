'use strict';

// Every ```js block of every docs/ page runs as written against a local
// server, as the README's do (test/support/snippets.js). A block marked
// `<!-- not run: reason -->` is skipped, and there are few of them.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { danglingLinks } = require('./support/markdown');
const { codeBlocks, docsPages, runSnippet, serveExample, checkRun, root } = require('./support/snippets');

const pages = docsPages();

describe('docs/ examples', () => {
  let server;
  before(async () => {
    server = await serveExample();
  });
  after(async () => {
    await server?.stop();
  });

  it('has the pages the README links to, and an index that links to every page', () => {
    const index = fs.readFileSync(path.join(root, 'docs', 'README.md'), 'utf8');
    for (const page of pages) {
      const name = path.basename(page);
      if (name !== 'README.md') assert.ok(index.includes(`](${name}`), `docs/README.md does not link to ${name}`);
    }
  });

  it('links only to headings and files that exist', () => {
    for (const page of pages) assert.deepEqual(danglingLinks(page, root), [], path.relative(root, page));
  });

  it('says why for every block that does not run, and has few of them', () => {
    const notRun = pages.flatMap((page) => codeBlocks(page).filter((block) => block.notRun !== null));
    assert.ok(notRun.length <= 3, `${notRun.length} blocks are not run`);
    for (const block of notRun) assert.ok(block.notRun.trim().length >= 10, block.notRun);
    // A mark is only ever on the line before a fence.
    for (const page of pages) {
      const lines = fs.readFileSync(page, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (line.startsWith('<!-- not run')) assert.match(lines[i + 1] ?? '', /^```/, `${path.basename(page)}:${i + 1}`);
      });
    }
  });

  for (const page of pages) {
    const name = path.relative(root, page);
    describe(name, () => {
      codeBlocks(page).forEach((block) => {
        const firstLine = block.code.split('\n').find((line) => line.trim() !== '');
        const title = `line ${block.line} runs: ${firstLine}`;
        if (block.notRun !== null) {
          it.skip(`${title} (not run: ${block.notRun})`);
          return;
        }
        it(title, async function () {
          this.timeout(20000);
          checkRun(block.code, await runSnippet(server.aim(block.code)));
        });
      });
    });
  }
});
