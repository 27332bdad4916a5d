/**
 * A twin project on disk (Node side): making one from the template (`kit twin new`), finding
 * its entry and its tests, and bundling those tests for `node --test` (`kit twin test`).
 * The template is `./template/`, real files the repository type-checks, with the placeholder
 * vendor `kitvendor` (`KITVENDOR` in variable names) replaced by the new twin's.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { buildFailure, repoRoot, SDK_ALIASES, sdkAliasPlugin } from './build.js';
import { VENDOR_ID } from './define.js';

/** A vendor id, as `defineTwin` and the hosts take it (define.ts). */
export { VENDOR_ID };

const TEMPLATE_VENDOR = 'kitvendor';
const TEMPLATE_DIR = join('sdk', 'twin', 'template');
/** Test files `kit twin test` runs: under `test/`, named `*.test.ts` (or .mts, .js, .mjs). */
const TEST_FILE = /\.test\.(ts|mts|js|mjs)$/;

/** Why a folder cannot take a new twin, or null when it can (missing or empty). */
export function folderRefusal(dir: string): string | null {
  if (!existsSync(dir)) return null;
  if (!statSync(dir).isDirectory()) return `${dir} exists and is not a folder`;
  const entries = readdirSync(dir);
  return entries.length === 0 ? null : `${dir} exists and is not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}); name a new folder`;
}

function templateFiles(root: string, under = ''): string[] {
  return readdirSync(join(root, under), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? templateFiles(root, join(under, e.name)) : [join(under, e.name)]))
    .sort();
}

/** The template's text for `vendor`: the placeholder vendor replaced, and its upper-case form in variable names. */
export function forVendor(text: string, vendor: string): string {
  return text.replaceAll(TEMPLATE_VENDOR, vendor).replaceAll(TEMPLATE_VENDOR.toUpperCase(), vendor.toUpperCase().replaceAll('-', '_'));
}

/**
 * Writes a new twin project for `vendor` into `dir` (made if missing; it must be empty), and
 * answers the files written, relative to `dir`. The caller checked the vendor id and the folder.
 */
export function makeTwinProject(vendor: string, dir: string): string[] {
  if (!VENDOR_ID.test(vendor)) throw new TypeError(`not a vendor id: ${JSON.stringify(vendor)}`);
  const refusal = folderRefusal(dir);
  if (refusal !== null) throw new Error(refusal);
  const kit = repoRoot();
  const template = join(kit, TEMPLATE_DIR);
  const written: string[] = [];
  const write = (file: string, text: string): void => {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
    written.push(file);
  };
  for (const file of templateFiles(template)) write(file, forVendor(readFileSync(join(template, file), 'utf8'), vendor));
  write('.gitignore', 'dist/\n');
  write('tsconfig.json', `${JSON.stringify(editorConfig(kit), null, 2)}\n`);
  return written;
}

/**
 * The project's tsconfig.json, for an editor and `tsc --noEmit`: `twinkit/twin` and
 * `twinkit/twin/testing` are this kit's own sources, by absolute path (the build maps them the
 * same way, so nothing is installed). Written again by nothing: edit it if the kit moves.
 */
function editorConfig(kit: string): unknown {
  return {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noUncheckedIndexedAccess: true,
      noEmit: true,
      skipLibCheck: true,
      typeRoots: [join(kit, 'node_modules', '@types')],
      types: ['node'],
      paths: Object.fromEntries(Object.entries(SDK_ALIASES).map(([name, file]) => [name, [join(kit, file)]])),
    },
    include: ['twin/**/*.ts', 'test/**/*.ts', '*.ts'],
  };
}

/** The twin's entry: `<dir>/twin/index.ts`, or `dir` itself when it names a file; null when there is none. */
export function twinEntry(dir: string): string | null {
  const path = resolve(dir);
  if (existsSync(path) && statSync(path).isFile()) return path;
  const entry = join(path, 'twin', 'index.ts');
  return existsSync(entry) ? entry : null;
}

/** The project's test files (`<dir>/test/**\/*.test.ts` and the like), sorted. */
export function twinTestFiles(dir: string): string[] {
  const root = join(resolve(dir), 'test');
  if (!existsSync(root)) return [];
  return templateFiles(root)
    .filter((f) => TEST_FILE.test(f) && !f.split(/[\\/]/).includes('node_modules'))
    .map((f) => join(root, f));
}

/**
 * Bundles each test file (and what it imports: the twin's own modules, npm libraries, the SDK's
 * `twinkit/twin/testing`) into one ES module in `outDir` for `node --test`, with its source map
 * inline so a failure points at the source. Answers the bundles' paths, in the files' order.
 * Throws an Error whose message has each build error as `file:line:column: text`.
 */
export async function bundleTwinTests(dir: string, files: readonly string[], outDir: string): Promise<string[]> {
  const base = resolve(dir);
  try {
    await esbuild.build({
      entryPoints: [...files],
      outdir: outDir,
      outbase: base,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      sourcemap: 'inline',
      logLevel: 'silent',
      // A CommonJS library bundled into an ES module still calls require() for Node's modules.
      banner: { js: "import { createRequire as __kitCreateRequire } from 'node:module'; const require = __kitCreateRequire(import.meta.url);" },
      plugins: [sdkAliasPlugin(['twinkit/twin', 'twinkit/twin/testing', 'twinkit/twin/codec'])],
    });
  } catch (e) {
    throw new Error(buildFailure(e).text);
  }
  return files.map((f) => join(outDir, relative(base, f)).replace(TEST_FILE, '.test.mjs'));
}
