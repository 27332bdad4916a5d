// Builds the world's pages into dist/pages/: the world page (pages/world/main.tsx →
// dist/pages/world/) and every twin's mirror (twins/<vendor>/mirror/main.tsx →
// dist/pages/mirrors/<vendor>/). Each is `app.js` and, when its code imports CSS, `app.css`,
// minified; the host writes the HTML shell itself (host/core/pages.ts) and serves these beside it.
// Type-checks pages/tsconfig.json first. Run by `make build`; `node pages/build.mjs` from anywhere.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const out = join(root, 'dist', 'pages');

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const checked = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
if (checked.status !== 0) process.exit(checked.status ?? 1);

/** [entry file, output directory] of every page there is. */
const pages = [];
const worldEntry = join(here, 'world', 'main.tsx');
if (existsSync(worldEntry)) pages.push([worldEntry, join(out, 'world')]);
for (const vendor of readdirSync(join(root, 'twins')).sort()) {
  const entry = join(root, 'twins', vendor, 'mirror', 'main.tsx');
  if (existsSync(entry)) pages.push([entry, join(out, 'mirrors', vendor)]);
}

rmSync(out, { recursive: true, force: true });
for (const [entry, dir] of pages) {
  mkdirSync(dir, { recursive: true });
  await build({
    entryPoints: { app: entry },
    outdir: dir,
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.svg': 'dataurl', '.png': 'dataurl' },
    logLevel: 'warning',
  });
}
