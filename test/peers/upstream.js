'use strict';

// The upstream project a peer suite comes from, read where the caller keeps
// it: a git directory (a mirror or a bare clone: its HEAD is read) or a work
// tree (a clone with its files checked out: the files on disk are read).
// Nothing of it is ever written into this repository: files are extracted
// into a work directory outside it, at run time.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

function isGitDir(dir) {
  return fs.existsSync(path.join(dir, 'HEAD')) && fs.existsSync(path.join(dir, 'objects'));
}

function git(gitDir, args, options = {}) {
  return execFileSync('git', [`--git-dir=${gitDir}`, ...args], { maxBuffer: 256 * 1024 * 1024, ...options });
}

/** A git directory: every read is of its HEAD commit. */
class GitTree {
  constructor(gitDir) {
    this.gitDir = gitDir;
    // A commit never changes: what was extracted from it may be kept.
    this.cacheable = true;
  }

  revision() {
    return git(this.gitDir, ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  }

  /** Paths of the files under each of `dirs`. */
  list(dirs) {
    const out = git(this.gitDir, ['ls-tree', '-r', '--name-only', 'HEAD', '--', ...dirs], { encoding: 'utf8' });
    return out.split('\n').filter(Boolean);
  }

  /** Paths, among the files under `dirs` whose name matches `name`, whose content matches `content`. */
  grep(content, dirs, name) {
    const candidates = this.list(dirs).filter((file) => name.test(path.basename(file)));
    if (candidates.length === 0) return [];
    let out;
    try {
      out = git(this.gitDir, ['grep', '-l', '-E', content.source, 'HEAD', '--', ...candidates], { encoding: 'utf8' });
    } catch (err) {
      if (err.status === 1) return []; // nothing matched
      throw err;
    }
    return out.split('\n').filter(Boolean).map((line) => line.replace(/^HEAD:/, ''));
  }

  read(file) {
    return git(this.gitDir, ['show', `HEAD:${file}`]);
  }

  /** Writes `files` (paths or folders) under `dest`, as they are at HEAD. */
  extract(files, dest) {
    fs.mkdirSync(dest, { recursive: true });
    // git archive leaves out nothing it has; a blob missing from a partial
    // mirror is reported on stderr and skipped, and the caller checks what
    // it needs is there.
    const tar = git(this.gitDir, ['archive', '--format=tar', 'HEAD', '--', ...files], { stdio: ['ignore', 'pipe', 'ignore'] });
    execFileSync('tar', ['-xf', '-', '-C', dest], { input: tar });
  }
}

/** A folder of files (a clone's work tree). */
class WorkTree {
  constructor(dir) {
    this.dir = dir;
    this.cacheable = false;
  }

  revision() {
    try {
      return execFileSync('git', ['-C', this.dir, 'rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return `files in ${this.dir}`;
    }
  }

  list(dirs) {
    const files = [];
    for (const dir of dirs) {
      const full = path.join(this.dir, dir);
      if (!fs.existsSync(full)) continue;
      if (fs.statSync(full).isFile()) {
        files.push(dir);
        continue;
      }
      for (const entry of fs.readdirSync(full, { recursive: true, withFileTypes: true })) {
        if (entry.isFile()) files.push(path.relative(this.dir, path.join(entry.parentPath ?? entry.path, entry.name)).split(path.sep).join('/'));
      }
    }
    return files.sort();
  }

  grep(content, dirs, name) {
    return this.list(dirs).filter((file) => name.test(path.basename(file)) && content.test(this.read(file).toString('utf8')));
  }

  read(file) {
    return fs.readFileSync(path.join(this.dir, file));
  }

  extract(files, dest) {
    for (const file of files) {
      const from = path.join(this.dir, file);
      if (fs.existsSync(from)) fs.cpSync(from, path.join(dest, file), { recursive: true });
    }
  }
}

/** The upstream tree at `dir`, which must exist. */
function openUpstream(dir, what) {
  const full = path.resolve(dir);
  if (!fs.existsSync(full)) throw new Error(`${what}: no such directory: ${full}`);
  return isGitDir(full) ? new GitTree(full) : new WorkTree(full);
}

module.exports = { openUpstream };
