/**
 * Loading a WebAssembly component twin on Node: `loadComponentTwin(wasm | path)` → a
 * `TwinBundle` the runner serves like any twin (in its lane, runtime/lane/).
 *
 * 1. jco's transpile library turns the component into an ES module and core modules
 *    (`instantiation: async`: the host hands it its imports). It takes ~1 s warm, ~5 s for the
 *    first in a process, so the result is kept under `cacheDir` by the component's sha256 and a
 *    later load of the same bytes needs no jco at all.
 * 2. Its imports are checked: `kit:twin/tree` and `kit:twin/entropy`, and the WASI interfaces
 *    that get deterministic stubs (wasi.ts); anything else (sockets, HTTP) is refused, named.
 * 3. Each core module's memories get a maximum (`memoryBytes`) and are compiled here, once: the
 *    compiled modules cross to the lane's worker (and to a new one after a restart) as they are.
 * 4. The manifest is read in a lane (never in this thread: it is the component's code), and
 *    checked as any untrusted twin's is (runner/twin-check.ts `manifestInLane`).
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { KitError } from '../errors.js';
import { SandboxLane } from '../lane/lane.js';
import type { UntrustedLane } from '../lane/types.js';
import type { TwinBundle, TwinManifestJson } from '../runner/types.js';
import { manifestInLane } from '../runner/twin-check.js';
import { capDefinedMemories } from './core-memory.js';
import { loadComponentIntoLane } from './lane-load.js';
import { DEFAULT_COMPONENT_MEMORY_BYTES, type ComponentCode } from './types.js';
import { refusedImport } from './wasi.js';

export interface ComponentLoadOptions {
  /** Names the component in errors (default: the path, or `component <sha256 prefix>`). */
  label?: string;
  /** The cap of each memory the component defines. Default 64 MiB. */
  memoryBytes?: number;
  /**
   * Where transpiled components are kept by sha256 (default `$XDG_CACHE_HOME/twinkit/components`,
   * else `~/.cache/twinkit/components`: the user's own, since the transpiled JavaScript runs in the
   * lane's worker as trusted glue); null keeps none.
   */
  cacheDir?: string | null;
  /** The lane its manifest is read in (default: one of its own, closed after). */
  lane?: UntrustedLane;
  /** Vendor ids already served beside it: claiming one is refused (runner/twin-check.ts). */
  served?: readonly string[];
}

/** Names the transpile's tool and options in the cache: a change of either makes a new entry. */
const TRANSPILE_FORMAT = 'jco-1.34.0-instantiation-async-v1';
/** The component layer's preamble: `\0asm`, version 0x0d, layer 1 (a core module has version 1, layer 0). */
const COMPONENT_PREAMBLE = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
const CORE_PREAMBLE = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

function refuse(label: string, field: string, message: string, details: Record<string, unknown> = {}): KitError {
  return new KitError('invalid_twin', `${label}: ${message}`, { label, field, ...details });
}

/** A component twin from its bytes or its file, ready for `WorldRunner` (`TwinBundle.component`). */
export async function loadComponentTwin(input: Uint8Array | string, options: ComponentLoadOptions = {}): Promise<TwinBundle> {
  let bytes: Uint8Array;
  if (typeof input === 'string') {
    try {
      bytes = await readFile(input);
    } catch (e) {
      throw new KitError('invalid_twin', `${options.label ?? input}: the component cannot be read (${(e as Error).message})`, { label: options.label ?? input, field: 'component' });
    }
  } else bytes = input;
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const label = options.label ?? (typeof input === 'string' ? input : `component ${sha256.slice(0, 12)}`);
  if (COMPONENT_PREAMBLE.some((b, i) => bytes[i] !== b)) {
    const core = CORE_PREAMBLE.every((b, i) => bytes[i] === b);
    throw refuse(label, 'component', core ? 'this is a core WebAssembly module, not a component: make a component of it (e.g. `jco new` or `wasm-tools component new`) targeting the kit:twin world' : 'this is not a WebAssembly component');
  }
  const memoryBytes = options.memoryBytes ?? DEFAULT_COMPONENT_MEMORY_BYTES;
  const transpiled = await transpiledOf(bytes, sha256, label, options.cacheDir === undefined ? defaultCacheDir() : options.cacheDir);
  const refused = transpiled.imports.filter((name) => refusedImport(name) !== null);
  if (refused.length > 0) {
    const why = refused.map((name) => refusedImport(name)).join('; ');
    throw refuse(label, 'imports', `the component is refused: ${why}.`, { imports: refused });
  }
  enableExtendedConst();
  const modules: Record<string, WebAssembly.Module> = {};
  for (const [file, core] of Object.entries(transpiled.cores)) {
    try {
      modules[file] = await WebAssembly.compile(capDefinedMemories(core, memoryBytes, label));
    } catch (e) {
      if (e instanceof KitError) throw e;
      throw refuse(label, 'component', `its core module ${file} does not compile here: ${(e as Error).message}`);
    }
  }
  const code: ComponentCode = { sha256, js: transpiled.js, modules, imports: transpiled.imports, memoryBytes };
  const manifest = await readManifest(code, label, options.lane, options.served);
  return { vendor: manifest.vendor, source: '', manifest, component: code };
}

async function readManifest(code: ComponentCode, label: string, given: UntrustedLane | undefined, served: readonly string[] | undefined): Promise<TwinManifestJson> {
  const lane = given ?? new SandboxLane({ name: `component ${label}` });
  const name = `component-check:${code.sha256}`;
  try {
    const loaded = await loadComponentIntoLane(lane, name, code);
    if ('error' in loaded) throw refuse(label, 'component', `it does not load: ${loaded.error.message}`);
    // The same checks as any twin the host does not trust (vendor id, routes that clash, …).
    const manifest = await manifestInLane(lane, name, { label, ...(served !== undefined ? { served } : {}) });
    if (manifest.protocol !== 'http') throw refuse(label, 'protocol', `its manifest's protocol '${manifest.protocol}' is not served for component twins (only http)`);
    return manifest;
  } finally {
    await lane.unload(name);
    if (given === undefined) await lane.close();
  }
}

interface Transpiled {
  js: string;
  cores: Record<string, Uint8Array>;
  imports: string[];
}

/** jco's transpile of the component, from the cache when these bytes were transpiled before. */
async function transpiledOf(bytes: Uint8Array, sha256: string, label: string, cacheDir: string | null): Promise<Transpiled> {
  const dir = cacheDir === null ? null : join(cacheDir, createHash('sha256').update(TRANSPILE_FORMAT).update(sha256).digest('hex'));
  if (dir !== null) {
    try {
      const imports = JSON.parse(await readFile(join(dir, 'imports.json'), 'utf8')) as string[];
      const js = await readFile(join(dir, 'twin.js'), 'utf8');
      const cores: Record<string, Uint8Array> = {};
      for (const file of await readdir(dir)) if (file.endsWith('.wasm')) cores[file] = await readFile(join(dir, file));
      return { js, cores, imports };
    } catch {
      // Not transpiled yet (or partly written by a process that stopped): transpile again.
    }
  }
  let transpile: (bytes: Uint8Array, opts: object) => Promise<{ files: Record<string, Uint8Array>; imports: string[] }>;
  try {
    ({ transpile } = (await import('@bytecodealliance/jco')) as unknown as { transpile: typeof transpile });
  } catch (e) {
    throw refuse(label, 'component', `transpiling a component needs @bytecodealliance/jco (npm install --save-exact @bytecodealliance/jco@1.34.0), which did not load: ${(e as Error).message}`);
  }
  let out: Awaited<ReturnType<typeof transpile>>;
  try {
    out = await transpile(bytes, { name: 'twin', instantiation: { tag: 'async' }, noTypescript: true, nodejsCompat: false, noNodejsCompat: true, tlaCompat: false, base64Cutoff: 0, nowasiShim: true });
  } catch (e) {
    throw refuse(label, 'component', `jco could not transpile it: ${(e as Error).message}`);
  }
  const js = new TextDecoder().decode(out.files['twin.js']);
  const cores: Record<string, Uint8Array> = {};
  for (const [file, content] of Object.entries(out.files)) if (file.endsWith('.wasm')) cores[file] = content;
  const imports = [...out.imports];
  if (dir !== null) {
    // Written beside, then renamed: a reader never sees half a transpile.
    const partial = `${dir}.${process.pid}.partial`;
    await mkdir(partial, { recursive: true });
    await writeFile(join(partial, 'twin.js'), js);
    for (const [file, content] of Object.entries(cores)) await writeFile(join(partial, file), content);
    await writeFile(join(partial, 'imports.json'), JSON.stringify(imports));
    try {
      await rename(partial, dir);
    } catch {
      await rm(partial, { recursive: true, force: true }); // another process wrote it first
    }
  }
  return { js, cores, imports };
}

function defaultCacheDir(): string {
  const xdg = process.env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache'), 'twinkit', 'components');
}

/** A module using extended constant expressions (i32.add in a global's initializer). */
const EXTENDED_CONST_PROBE = Uint8Array.of(0, 97, 115, 109, 1, 0, 0, 0, 6, 9, 1, 127, 0, 65, 1, 65, 2, 106, 11);

/**
 * componentize-qjs's QuickJS uses extended constant expressions (standard WebAssembly, on by
 * default from Node 22's V8); Node 20's V8 has them behind a flag, set here once.
 */
function enableExtendedConst(): void {
  if (WebAssembly.validate(EXTENDED_CONST_PROBE)) return;
  setFlagsFromString('--experimental-wasm-extended-const');
}
