// Builds the host's console page into dist/console/ (index.html, app.js, app.css): type-checks
// console/src with its own tsconfig, then bundles and minifies it with esbuild. Everything the
// page runs is in these three files; it fetches nothing but the host's own API.
// Run by `make build`; `node console/build.mjs` from anywhere.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, 'src');
const out = join(here, '..', 'dist', 'console');

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const checked = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
if (checked.status !== 0) process.exit(checked.status ?? 1);

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: join(src, 'main.tsx') },
  outdir: out,
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'warning',
});
await build({
  entryPoints: { app: join(src, 'app.css') },
  outdir: out,
  bundle: true,
  minify: true,
  logLevel: 'warning',
});
copyFileSync(join(src, 'index.html'), join(out, 'index.html'));
