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
//                             got's own types). "steady-agent" resolves by name
//                             through "exports".
//   tsconfig.no-interop.json  the same without esModuleInterop, CommonJS
//                             (no-interop.ts) and ESM (no-interop.mts). TypeScript 7
//                             removed `esModuleInterop: false` (error TS5108:
//                             interop is always on), so only 5.x compiles it.
//   consumer/                 the compiler's defaults (no "types", no "module"),
//                             copied into a temporary project whose
//                             node_modules/steady-agent links to this package.
//
// Usage: node test/types/check.js   (exit status 1 if any compilation fails)
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

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
];

/** A project that depends on steady-agent, as npm would install it (a link, as `npm link` makes). */
function consumerProject(source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'steady-agent-types-'));
  fs.cpSync(source, dir, { recursive: true });
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(root, path.join(dir, 'node_modules', 'steady-agent'), 'dir');
  return dir;
}

let failed = 0;
for (const project of projects) {
  const dir = project.consumer && consumerProject(project.consumer);
  try {
    const config = project.config ?? path.join(dir, 'tsconfig.json');
    const label = path.relative(root, project.config ?? project.consumer);
    for (const compiler of compilers) {
      const prefix = `TypeScript ${compiler.version.padEnd(6)} ${label}`;
      const skipped = project.skip?.(compiler.major);
      if (skipped) {
        say(`${prefix}: skipped (${skipped})`);
        continue;
      }
      const run = spawnSync(process.execPath, [compiler.bin, '-p', config, '--pretty', 'false'],
        { cwd: root, encoding: 'utf8', timeout: 120000 });
      if (run.status === 0) {
        say(`${prefix}: ok`);
      } else {
        failed++;
        say(`${prefix}: FAILED (exit ${run.status ?? run.signal ?? run.error})`);
        process.stdout.write(run.stdout + run.stderr);
      }
    }
  } finally {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}
process.exitCode = failed ? 1 : 0;
