'use strict';

// `npm run test:types`: compiles the type tests (never runs them) with the
// oldest TypeScript we support (the `typescript` devDependency, 5.9) and the
// latest (`typescript-7`, the native compiler: its npm package ships a Go
// binary for each platform, started by its bin/tsc).
//
//   tsconfig.json             strict, exactOptionalPropertyTypes, esModuleInterop,
//                             module nodenext: a CommonJS consumer (usage.ts,
//                             no-interop.ts, otel.ts) and ES module ones (esm.mts;
//                             retry.mts, the retry helpers with axios-retry's and
//                             got's own types; fetch.mts, steady-agent/fetch and
//                             steady-agent/undici with undici's own types). "steady-agent" resolves by name
//                             through "exports".
//   tsconfig.no-interop.json  the same without esModuleInterop, CommonJS
//                             (no-interop.ts) and ESM (no-interop.mts). TypeScript 7
//                             removed `esModuleInterop: false` (error TS5108:
//                             interop is always on), so only 5.x compiles it.
//   consumer/                 the compiler's defaults (no "types", no "module"),
//                             copied into a temporary project whose
//                             node_modules/steady-agent links to this package.
//   README.md, docs/*.md      every ```js block of the README and the docs
//                             pages (but those marked not run), as JavaScript
//                             checked by TypeScript (checkJs, strict but for
//                             noImplicitAny, as a JavaScript file is written),
//                             in a temporary folder here, so that the README's
//                             clients (axios, got, ...) resolve as in the repo.
//
// Usage: node test/types/check.js   (exit status 1 if any compilation fails)
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { codeBlocks, docsPages } = require('../support/snippets');

const root = path.join(__dirname, '..', '..');
const say = (line) => process.stdout.write(`${line}\n`);

const compilers = ['typescript', 'typescript-7'].map((name) => {
  const manifest = require.resolve(`${name}/package.json`);
  const { version } = require(manifest);
  return { name, version, major: Number(version.split('.')[0]), bin: path.join(path.dirname(manifest), 'bin', 'tsc') };
});

const projects = [
  { config: path.join(__dirname, 'tsconfig.json') },
  { config: path.join(__dirname, 'tsconfig.no-interop.json'), skip: (major) => major >= 7 && 'TS5108: esModuleInterop: false was removed' },
  { consumer: path.join(__dirname, 'consumer') },
  { readme: path.join(root, 'README.md') },
];

/** The ```js blocks of the README and docs/, each a file (.mjs where it imports), and a tsconfig over them. */
function readmeProject(readme) {
  const dir = fs.mkdtempSync(path.join(__dirname, '.readme-'));
  const blocks = [readme, ...docsPages()].flatMap((file) => codeBlocks(file))
    .filter((block) => block.notRun === null).map((block) => block.code);
  const files = blocks.map((code, i) => {
    const file = `block-${i + 1}.${/^import /m.test(code) ? 'mjs' : 'cjs'}`;
    fs.writeFileSync(path.join(dir, file), code);
    return file;
  });
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true,
      noImplicitAny: false,
      allowJs: true,
      checkJs: true,
      noEmit: true,
      module: 'nodenext',
      target: 'es2022',
      types: ['node'],
    },
    files,
  }));
  return dir;
}

/** A project that depends on steady-agent, as npm would install it (a link, as `npm link` makes). */
function consumerProject(source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'steady-agent-types-'));
  fs.cpSync(source, dir, { recursive: true });
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(root, path.join(dir, 'node_modules', 'steady-agent'), 'dir');
  return dir;
}

// One compilation: resolves with its report, never rejects.
function compile(compiler, config) {
  return new Promise((resolve) => {
    execFile(process.execPath, [compiler.bin, '-p', config, '--pretty', 'false'],
      { cwd: root, encoding: 'utf8', timeout: 120000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ ok: err === null, exit: err && (err.code ?? err.signal), output: stdout + stderr }));
  });
}

// The compilations run side by side, as many at a time as there are cores:
// each is one process, mostly loading Node's types. Reports come in order.
async function main() {
  const dirs = [];
  const jobs = [];
  for (const project of projects) {
    const dir = (project.consumer && consumerProject(project.consumer)) || (project.readme && readmeProject(project.readme));
    if (dir) dirs.push(dir);
    const config = project.config ?? path.join(dir, 'tsconfig.json');
    const label = path.relative(root, project.config ?? project.consumer ?? project.readme);
    for (const compiler of compilers) {
      jobs.push({ prefix: `TypeScript ${compiler.version.padEnd(6)} ${label}`, skipped: project.skip?.(compiler.major), compiler, config });
    }
  }
  try {
    const results = new Array(jobs.length);
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const index = next++;
        const job = jobs[index];
        results[index] = job.skipped ? null : await compile(job.compiler, job.config);
      }
    };
    const width = Math.max(2, os.availableParallelism?.() ?? os.cpus().length);
    await Promise.all(Array.from({ length: width }, worker));
    let failed = 0;
    for (const [index, job] of jobs.entries()) {
      const result = results[index];
      if (result === null) {
        say(`${job.prefix}: skipped (${job.skipped})`);
      } else if (result.ok) {
        say(`${job.prefix}: ok`);
      } else {
        failed++;
        say(`${job.prefix}: FAILED (exit ${result.exit})`);
        process.stdout.write(result.output);
      }
    }
    process.exitCode = failed ? 1 : 0;
  } finally {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
