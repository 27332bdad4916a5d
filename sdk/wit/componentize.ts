/**
 * Builds a twin written in JavaScript into a WebAssembly component of the `kit:twin` world
 * (twin.wit beside this file), the way jco 1.34.0's QuickJS backend does (`jco componentize
 * --backend qjs`), with componentize-qjs's options jco does not pass: `stubWasi` (the component
 * imports no WASI at all), `sync` (no component-model async ABI) and `optSize` (1.2 MB for the
 * notes twin where the default runtime makes 1.7 MB). Node only; needs the devDependency
 * `@bytecodealliance/jco` (componentize-qjs comes with it). Results are kept by content hash.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** This folder: `twin.wit`, the world a component twin targets. */
export const TWIN_WIT_DIR = dirname(fileURLToPath(import.meta.url)).replace(/[\\/]dist[\\/]sdk[\\/]wit$/, '/sdk/wit');

export interface ComponentizeOptions {
  /** A WIT folder whose world `world` includes kit:twin's (default: this folder's `twin`). */
  witDir?: string;
  world?: string;
  /** Stub WASI with traps, so the component imports none (default true). */
  stubWasi?: boolean;
  /** Where built components are kept by content hash; null keeps none. */
  cacheDir?: string | null;
}

/** The component's bytes for the JavaScript twin `entry` (bundled with esbuild first, `kit:twin/*` left as imports). */
export async function componentizeTwin(entry: string, options: ComponentizeOptions = {}): Promise<Uint8Array> {
  const witDir = options.witDir ?? TWIN_WIT_DIR;
  const world = options.world ?? 'twin';
  const stubWasi = options.stubWasi ?? true;
  const bundled = await build({ entryPoints: [entry], bundle: true, format: 'esm', platform: 'neutral', write: false, external: ['kit:twin/*', 'wasi:*'], logLevel: 'silent' });
  const jsSource = bundled.outputFiles[0]!.text;
  const hash = createHash('sha256').update(JSON.stringify({ world, stubWasi, version: await componentizerVersion() })).update(jsSource);
  for (const file of (await readdir(witDir, { recursive: true })).filter((f) => f.endsWith('.wit')).sort()) hash.update(file).update(await readFile(join(witDir, file)));
  const key = hash.digest('hex');
  const cached = options.cacheDir ? join(options.cacheDir, `${key}.wasm`) : null;
  if (cached !== null) {
    try {
      return await readFile(cached);
    } catch {
      // Not built yet.
    }
  }
  const { componentize } = (await import('componentize-qjs')) as { componentize(opts: object): Promise<{ component: Uint8Array }> };
  const { component } = await componentize({ witPath: witDir, world, jsSource, stubWasi, sync: true, optSize: true });
  if (cached !== null) {
    await mkdir(dirname(cached), { recursive: true });
    const partial = `${cached}.${process.pid}.partial`;
    await writeFile(partial, component);
    await rename(partial, cached);
  }
  return component;
}

async function componentizerVersion(): Promise<string> {
  try {
    const { createRequire } = await import('node:module');
    const pkg = createRequire(import.meta.url).resolve('componentize-qjs/package.json');
    return (JSON.parse(await readFile(pkg, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
