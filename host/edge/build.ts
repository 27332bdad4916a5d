/**
 * Builds the edge variant's Worker into `dist/edge/`: `worker.js` (one ES module: the Worker, its
 * Durable Objects, the host core, the runtime and the built-in twins) and `quickjs.wasm` beside it.
 *
 * What Node reads from files or compiles from strings at run time is made here, since workerd
 * does neither: the twins' bundles, each trusted twin as a module that makes its realm without
 * eval, the guest runtime, and QuickJS's glue made synchronous. Modules of Node alone (lmdb, uWS,
 * worker threads, vm, esbuild) are replaced by a stub that throws when used: the edge never calls
 * them, and a call that does is a bug said by name.
 *
 * Run: `node dist/host/edge/build.js` (make build does).
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { syncGlueSource } from '../../runtime/sandbox/index.js';
import { trustedModuleSource } from '../../runtime/sandbox/trusted-module.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/node.js';
import { readPageDirs } from '../node/pages.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The repository: this file runs from dist/host/edge/. */
const root = resolve(here, '../../..');

/** Imports the Worker's graph reaches that only Node has. */
const NODE_ONLY = /^(lmdb|uWebSockets\.js|esbuild|ws|node:worker_threads|node:vm|node:fs|node:fs\/promises|node:os|node:module|node:url|node:child_process|node:net|node:http|node:https|node:tls|node:timers\/promises|node:events|node:path)$/;

const STUB = `
// A module of Node alone, in the edge's Worker: any use of it throws, naming it.
function stub(path) {
  const fail = function () { throw new Error('kit edge: ' + path + ' is not available on the edge'); };
  return new Proxy(fail, { get: (_, key) => (key === '__esModule' ? false : key === 'then' ? undefined : stub(path + '.' + String(key))), construct: fail, apply: fail });
}
module.exports = stub(__kit_module);
`;

/** Page files embedded as text; any other is embedded as base64 and decoded when the Worker loads. */
const TEXT_FILE = /\.(js|css|json|map|svg|html|txt)$/;

/**
 * The `pageFiles` export of `kit-edge:assets`: the built pages under `dir` (dist/pages/, made by
 * pages/build.mjs), by page then file, text as strings and binary files as bytes, ready for
 * `pageFilesOf` (host/core/pages.ts). No pages built: an empty record, and the edge serves none.
 */
export function pageFilesSource(dir: string): string {
  const pages = readPageDirs(dir);
  const decoder = new TextDecoder();
  const body = Object.entries(pages).map(([page, files]) => {
    const entries = Object.entries(files).map(([file, bytes]) => {
      const value = TEXT_FILE.test(file) ? JSON.stringify(decoder.decode(bytes)) : `pageBytes(${JSON.stringify(Buffer.from(bytes).toString('base64'))})`;
      return `${JSON.stringify(file)}: ${value}`;
    });
    return `${JSON.stringify(page)}: { ${entries.join(', ')} }`;
  });
  return [
    `const pageBytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));`,
    `export const pageFiles = { ${body.join(',\n')} };`,
  ].join('\n');
}

export interface EdgeBuild {
  dir: string;
  worker: string;
  bytes: number;
}

export async function buildEdge(outDir = join(root, 'dist', 'edge')): Promise<EdgeBuild> {
  await mkdir(outDir, { recursive: true });
  const require = createRequire(import.meta.url);
  const quickjsDist = dirname(require.resolve('@jitl/quickjs-wasmfile-release-sync/package.json')) + '/dist/';
  await copyFile(quickjsDist + 'emscripten-module.wasm', join(outDir, 'quickjs.wasm'));
  const glue = `export default function (Date) {\n${syncGlueSource(await readFile(quickjsDist + 'emscripten-module.mjs', 'utf8'))}\n}\n`;

  const twins = [...(await loadBuiltinTwins()).values()];
  const trusted = new Map<string, string>();
  for (const t of twins) if (t.trusted === true) trusted.set(t.vendor, await trustedModuleSource(t.source));
  const guestRuntime = await buildGuestRuntime();
  const bundles = twins.map((t) => ({ vendor: t.vendor, source: t.source, manifest: t.manifest, trusted: t.trusted === true }));
  const assets = [
    `import quickjsWasm from './quickjs.wasm';`,
    `import quickjsGlue from 'kit-edge:glue';`,
    ...[...trusted.keys()].map((v, i) => `import trusted${i} from 'kit-edge:trusted/${v}';`),
    `export const twinBundles = JSON.parse(${JSON.stringify(JSON.stringify(bundles))});`,
    `const byVendor = new Map(twinBundles.map((t) => [t.vendor, t.source]));`,
    `export const trustedLoaders = new Map([${[...trusted.keys()].map((v, i) => `[byVendor.get(${JSON.stringify(v)}), trusted${i}]`).join(', ')}]);`,
    `export const guestRuntime = ${JSON.stringify(guestRuntime)};`,
    `export { quickjsWasm, quickjsGlue };`,
    pageFilesSource(join(root, 'dist', 'pages')),
  ].join('\n');

  const generated: esbuild.Plugin = {
    name: 'kit-edge',
    setup(build) {
      build.onResolve({ filter: /^kit-edge:/ }, (a) => ({ path: a.path, namespace: 'kit-edge' }));
      build.onResolve({ filter: /^\.\/quickjs\.wasm$/ }, (a) => ({ path: a.path, external: true }));
      build.onLoad({ filter: /.*/, namespace: 'kit-edge' }, (a) => {
        if (a.path === 'kit-edge:assets') return { contents: assets, loader: 'js', resolveDir: root };
        if (a.path === 'kit-edge:glue') return { contents: glue, loader: 'js' };
        const vendor = a.path.slice('kit-edge:trusted/'.length);
        const source = trusted.get(vendor);
        if (source === undefined) return { errors: [{ text: `no trusted twin ${vendor}` }] };
        return { contents: source, loader: 'js' };
      });
      build.onResolve({ filter: NODE_ONLY }, (a) => ({ path: a.path, namespace: 'kit-node-only' }));
      build.onLoad({ filter: /.*/, namespace: 'kit-node-only' }, (a) => ({ contents: `var __kit_module = ${JSON.stringify(a.path)};\n${STUB}`, loader: 'js' }));
    },
  };

  const worker = join(outDir, 'worker.js');
  const result = await esbuild.build({
    entryPoints: [join(root, 'host', 'edge', 'worker.ts')],
    outfile: worker,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'import'],
    external: ['cloudflare:*', 'node:crypto', 'node:buffer', 'node:async_hooks'],
    plugins: [generated],
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
  });
  const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
  await writeFile(join(outDir, 'README.md'), '# dist/edge/\n\nBuilt by `node dist/host/edge/build.js` (host/edge/build.ts): the Worker and QuickJS. Run it with `kit edge dev`; deploy with host/edge/wrangler.toml (docs/edge.md).\n');
  return { dir: outDir, worker, bytes };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const built = await buildEdge();
  console.log(`edge: ${built.worker} (${(built.bytes / 1024 / 1024).toFixed(1)} MB with its map)`);
}
