'use strict';

// What `npm publish` would ship: the runtime, its types, the ESM entry, the
// README, the docs/ pages and the CHANGELOG they link to, and the LICENSE;
// no chart (the docs give the figures as text).
// Nothing from test/ or example/, nor the benchmarks themselves. The tarball
// is really packed and unpacked, and its README read as a user gets it.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const pkg = require('../package.json');
const { danglingLinks } = require('./support/markdown');

const root = path.join(__dirname, '..');

function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: 60000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        err.message += `\n${stderr}`;
        reject(err);
        return;
      }
      resolve(stdout);
    });
  });
}

// The tarball `npm pack` makes, unpacked into dir/package.
async function packAndUnpack(dir) {
  const [manifest] = JSON.parse(await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], root));
  await run('tar', ['-xzf', path.join(dir, manifest.filename)], dir);
  return manifest;
}

function filesUnder(dir) {
  return fs.readdirSync(path.join(root, dir), { recursive: true })
    .map((name) => path.posix.join(dir, name.split(path.sep).join('/')))
    .filter((name) => fs.statSync(path.join(root, name)).isFile());
}

describe('package contents (npm pack)', function () {
  this.timeout(90000);

  let packed;
  let tmp;
  let unpacked;
  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'steady-pack-'));
    const manifest = await packAndUnpack(tmp);
    packed = manifest.files.map((file) => file.path).sort();
    unpacked = path.join(tmp, 'package');
  });
  after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('ships exactly the entry points (otel, retry, fetch and undici types too, fetch.mjs, undici.mjs), lib/, README.md, docs/, CHANGELOG.md, LICENSE and package.json', () => {
    const expected = [
      'CHANGELOG.md',
      'LICENSE',
      'README.md',
      'fetch.d.ts',
      'fetch.mjs',
      'index.d.ts',
      'index.js',
      'index.mjs',
      'otel.d.ts',
      'package.json',
      'retry.d.ts',
      'undici.d.ts',
      'undici.mjs',
      ...filesUnder('lib'),
      ...filesUnder('docs'),
    ].sort();
    assert.deepEqual(packed, expected);
  });

  it('has no dangling link in any packed Markdown file: each resolves, anchors too, inside the package', () => {
    const documents = packed.filter((name) => name.endsWith('.md'));
    assert.ok(documents.includes('README.md') && documents.includes('docs/options.md'), documents.join(', '));
    for (const name of documents) {
      assert.deepEqual(danglingLinks(path.join(unpacked, name), unpacked), [], name);
    }
  });

  it('matches what npm pack --dry-run lists', async () => {
    const [manifest] = JSON.parse(await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], root));
    assert.deepEqual(manifest.files.map((file) => file.path).sort(), packed);
  });

  it('says nothing of a repository it does not ship, nor of one it cannot link to', () => {
    for (const name of packed.filter((file) => file.endsWith('.md') && file !== 'CHANGELOG.md')) {
      const text = fs.readFileSync(path.join(unpacked, name), 'utf8');
      assert.doesNotMatch(text, /in the repository/i, name);
    }
  });

  it('ships every file that package.json points at', () => {
    const targets = [pkg.main, pkg.types];
    for (const entry of Object.values(pkg.exports)) {
      if (typeof entry === 'string') targets.push(entry);
      else targets.push(...Object.values(entry));
    }
    for (const target of targets) {
      assert.ok(packed.includes(path.posix.normalize(target)), `${target} is not packed`);
    }
  });

  it('lists "types" first in every conditional export', () => {
    for (const [subpath, entry] of Object.entries(pkg.exports)) {
      if (typeof entry === 'object') assert.equal(Object.keys(entry)[0], 'types', subpath);
    }
  });

  it('declares the Node versions the suite runs on', () => {
    assert.equal(pkg.engines.node, '>=18');
  });
});
