'use strict';

// What `npm publish` would ship: the runtime, its types, the ESM entry, the
// README and the LICENSE. Nothing from test/, example/ or benchmark/.
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const pkg = require('../package.json');

const root = path.join(__dirname, '..');

function npmPackDryRun() {
  return new Promise((resolve, reject) => {
    execFile('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      timeout: 60000,
      maxBuffer: 16 * 1024 * 1024,
    }, (err, stdout, stderr) => {
      if (err) {
        err.message += `\n${stderr}`;
        reject(err);
        return;
      }
      resolve(JSON.parse(stdout));
    });
  });
}

function filesUnder(dir) {
  return fs.readdirSync(path.join(root, dir), { recursive: true })
    .map((name) => path.posix.join(dir, name.split(path.sep).join('/')))
    .filter((name) => fs.statSync(path.join(root, name)).isFile());
}

describe('package contents (npm pack --dry-run)', function () {
  this.timeout(90000);

  let packed;
  before(async () => {
    const [manifest] = await npmPackDryRun();
    packed = manifest.files.map((file) => file.path).sort();
  });

  it('ships exactly the entry points (otel.d.ts and retry.d.ts too), lib/, README.md, LICENSE and package.json', () => {
    const expected = [
      'LICENSE',
      'README.md',
      'index.d.ts',
      'index.js',
      'index.mjs',
      'otel.d.ts',
      'package.json',
      'retry.d.ts',
      ...filesUnder('lib'),
    ].sort();
    assert.deepEqual(packed, expected);
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
