'use strict';

// The peer-suite runners (test/peers/, `npm run test:peers`) read the
// upstream suites from a clone the caller gives: a git directory or a work
// tree. Both forms of one small repository, made here with git, must give the
// same files, the same selection by content and the same extracted tree.
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { openUpstream } = require('./peers/upstream');

function git(cwd, ...args) {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
}

describe('peer-suite runners: reading the upstream clone', () => {
  let tmp;
  let workTree;
  let bare;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'steady-upstream-'));
    workTree = path.join(tmp, 'clone');
    const files = {
      'package.json': '{}\n',
      'test/common/index.js': 'module.exports = {};\n',
      'test/parallel/test-http-agent-a.js': 'new http.Agent({ keepAlive: true });\n',
      'test/parallel/test-http-other.js': 'http.get(url);\n',
      'test/parallel/test-net-agent.js': 'new http.Agent();\n',
    };
    for (const [file, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(workTree, file)), { recursive: true });
      fs.writeFileSync(path.join(workTree, file), text);
    }
    git(workTree, 'init', '-q');
    git(workTree, 'add', '.');
    git(workTree, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'files');
    bare = path.join(tmp, 'mirror.git');
    git(tmp, 'clone', '-q', '--mirror', workTree, bare);
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('reads a git directory and a work tree alike', () => {
    const trees = [openUpstream(bare, 'mirror'), openUpstream(workTree, 'clone')];
    assert.deepEqual(trees.map((tree) => tree.cacheable), [true, false]);
    const revision = git(workTree, 'rev-parse', 'HEAD').trim();
    for (const tree of trees) {
      assert.equal(tree.revision(), revision);
      assert.deepEqual(tree.list(['test/parallel']), [
        'test/parallel/test-http-agent-a.js', 'test/parallel/test-http-other.js', 'test/parallel/test-net-agent.js',
      ]);
      // By content, among the files whose name matches.
      assert.deepEqual(tree.grep(/new (https?\.)?Agent\(|https?\.Agent\(/, ['test/parallel'], /^test-http/), [
        'test/parallel/test-http-agent-a.js',
      ]);
      assert.deepEqual(tree.grep(/nothing like this/, ['test/parallel'], /^test-/), []);
      assert.equal(tree.read('test/common/index.js').toString(), 'module.exports = {};\n');
      const dest = fs.mkdtempSync(path.join(tmp, 'extract-'));
      tree.extract(['package.json', 'test/common', 'test/parallel/test-http-other.js'], dest);
      assert.deepEqual(fs.readdirSync(dest, { recursive: true }).map((p) => p.split(path.sep).join('/')).sort(), [
        'package.json', 'test', 'test/common', 'test/common/index.js', 'test/parallel', 'test/parallel/test-http-other.js',
      ]);
    }
  });

  it('names a clone that is not there', () => {
    assert.throws(() => openUpstream(path.join(tmp, 'missing'), 'agentkeepalive'), /agentkeepalive: no such directory/);
  });
});
