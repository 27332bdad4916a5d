/**
 * QuickJS in WebAssembly, instantiated synchronously: one precompiled `WebAssembly.Module` per
 * process, one `WebAssembly.Instance` with its own capped `WebAssembly.Memory` per world.
 *
 * Why not `newQuickJSWASMModuleFromVariant`: the Emscripten glue of the sync release variant is an
 * `async` factory, so every world would need an `await` to start; the world runner wants a
 * synchronous `WorldSandbox.create`. We load the glue's source once, make its factory
 * synchronous with a handful of checked textual edits (the package version is pinned; an edit
 * that no longer applies makes `loadSandboxModule` reject with a SandboxGlueError rather than
 * misbehave),
 * and hand it our own memory and an `instantiateWasm` that builds the instance synchronously.
 *
 * The glue's clock and time zone imports are also made deterministic here (see `GlueDate`): a
 * guest's native `Date` then reads epoch 0 in UTC, whatever the host's clock and `TZ`, so no
 * intrinsic can leak the wall clock even if a guest digs out the original constructor.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { QuickJSWASMModule } from 'quickjs-emscripten-core';
import type { QuickJSEmscriptenModule, EmscriptenModuleLoaderOptions } from 'quickjs-emscripten-core';
import { QuickJSFFI } from '@jitl/quickjs-wasmfile-release-sync/ffi';

/** 64 KiB, the WebAssembly page. */
export const WASM_PAGE = 65536;
/**
 * The glue is built with INITIAL_MEMORY = 16 MiB and its memory import asks for that minimum,
 * so a world's memory can never be smaller.
 */
export const MIN_MEMORY_BYTES = 16 * 1024 * 1024;

type GlueFactory = (options: EmscriptenModuleLoaderOptions & Record<string, unknown>) => QuickJSEmscriptenModule;

/** The compiled QuickJS module and its synchronous glue; made once per process by `loadSandboxModule`. */
export class SandboxModule {
  /** @internal */
  constructor(
    /** @internal */ readonly wasm: WebAssembly.Module,
    /** @internal */ readonly glue: GlueFactory,
  ) {}
}

/** What an instantiated world sees of its instance. */
export interface WasmWorld {
  quickjs: QuickJSWASMModule;
  memory: WebAssembly.Memory;
}

let cached: Promise<SandboxModule> | undefined;

/** Compiles the QuickJS wasm once per process (later calls share the result). */
export function loadSandboxModule(): Promise<SandboxModule> {
  cached ??= compile().catch((e: unknown) => {
    cached = undefined; // let a later call retry rather than cache a failure forever
    throw e;
  });
  return cached;
}

function packageDist(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@jitl/quickjs-wasmfile-release-sync/package.json');
  return pkg.slice(0, -'package.json'.length) + 'dist/';
}

async function compile(): Promise<SandboxModule> {
  const dist = packageDist();
  const wasm = await WebAssembly.compile(readFileSync(dist + 'emscripten-module.wasm'));
  return new SandboxModule(wasm, makeSyncGlue(readFileSync(dist + 'emscripten-module.mjs', 'utf8')));
}

/**
 * The sandbox module around a `WebAssembly.Module` compiled elsewhere, e.g. by the thread that
 * started this worker (a compiled module crosses `postMessage`; its glue is rebuilt here, since
 * functions do not).
 */
export function sandboxModuleOf(wasm: WebAssembly.Module): SandboxModule {
  if (!(wasm instanceof WebAssembly.Module)) throw new TypeError('sandboxModuleOf: expected a WebAssembly.Module');
  return new SandboxModule(wasm, makeSyncGlue(readFileSync(packageDist() + 'emscripten-module.mjs', 'utf8')));
}

/**
 * Turns the Emscripten ESM glue (an async factory) into a synchronous one. Each edit must apply
 * exactly once; `SandboxGlueError` names the one that did not.
 */
export function makeSyncGlue(source: string): GlueFactory {
  let src = source;
  const edit = (from: string, to: string): void => {
    const n = src.split(from).length - 1;
    if (n !== 1) throw new SandboxGlueError(`glue edit applies ${n} times, expected once: ${from.slice(0, 60)}`);
    src = src.replace(from, () => to);
  };
  edit('async function QuickJSRaw(', 'function QuickJSRaw(');
  // Node detection only serves to read the .wasm file from disk; we bring the instance ourselves.
  edit('if(q){const {createRequire:a}=await import("node:module");var require=a(import.meta.url)}', '');
  edit('q=globalThis.process?.versions?.node&&"renderer"!=globalThis.process?.type', 'q=!1');
  src = src.split('import.meta.url').join('""');
  edit('Z=await (async function(){', 'Z=(function(){');
  edit(
    'if(d.instantiateWasm)return new Promise(b=>{d.instantiateWasm(c,(e,f)=>{b(a(e,f))})});',
    'if(d.instantiateWasm){let r;d.instantiateWasm(c,(e,f)=>{r=a(e,f)});return r}throw Error("instantiateWasm is required");',
  );
  edit('return a((await fa(c)).instance)', 'return void 0');
  edit('export default QuickJSRaw;', 'return QuickJSRaw;');
  // emscripten_resize_heap: tell the world when its memory could not grow (the cap is reached).
  edit('if(f)return!0}return!1}', 'if(f)return!0}d.onGrowFailed?.();return!1}');
  let make: (date: typeof GlueDate) => GlueFactory;
  try {
    // The glue is the package's own code, evaluated once in the host realm; `Date` inside it is
    // our deterministic stand-in.
    make = new Function('Date', src) as (date: typeof GlueDate) => GlueFactory;
  } catch (e) {
    throw new SandboxGlueError(`glue does not parse after edits: ${String(e)}`);
  }
  return make(GlueDate);
}

export class SandboxGlueError extends Error {
  override readonly name = 'SandboxGlueError';
}

/**
 * The `Date` the glue sees: it backs C's `time()`, `gettimeofday()`, `localtime_r()` and
 * `tzset()`, which QuickJS's own Date, its Math.random seed and its time zone offset use.
 * Clock fixed at 0, every zone UTC.
 */
class GlueDate {
  readonly #d: Date;
  constructor(...args: number[]) {
    if (args.length === 0) this.#d = new Date(0);
    else if (args.length === 1) this.#d = new Date(args[0] ?? 0);
    else this.#d = new Date(Date.UTC(args[0] ?? 1970, args[1] ?? 0, args[2] ?? 1, args[3] ?? 0, args[4] ?? 0, args[5] ?? 0));
  }
  static now(): number {
    return 0;
  }
  getSeconds(): number { return this.#d.getUTCSeconds(); }
  getMinutes(): number { return this.#d.getUTCMinutes(); }
  getHours(): number { return this.#d.getUTCHours(); }
  getDate(): number { return this.#d.getUTCDate(); }
  getMonth(): number { return this.#d.getUTCMonth(); }
  getFullYear(): number { return this.#d.getUTCFullYear(); }
  getDay(): number { return this.#d.getUTCDay(); }
  getTimezoneOffset(): number { return 0; }
}

/** Hooks a world's instance reports through. */
export interface WasmHooks {
  /** Emscripten `abort()`: the instance is unusable from here on. */
  onAbort(reason: string): void;
  /** malloc asked for more memory and the cap refused it. */
  onGrowFailed(): void;
}

/**
 * Instantiates one world: a new memory capped at `memoryBytes` (rounded down to whole pages)
 * and a new instance of the shared compiled module. Synchronous.
 */
export function instantiateWorld(module: SandboxModule, memoryBytes: number, hooks: WasmHooks): WasmWorld {
  const maximum = Math.floor(memoryBytes / WASM_PAGE);
  const memory = new WebAssembly.Memory({ initial: MIN_MEMORY_BYTES / WASM_PAGE, maximum });
  const quiet = (): void => {};
  const em = module.glue({
    wasmMemory: memory,
    print: quiet,
    printErr: quiet,
    onAbort: (what: unknown) => hooks.onAbort(String(what)),
    onGrowFailed: () => hooks.onGrowFailed(),
    instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void) {
      const instance = new WebAssembly.Instance(module.wasm, imports);
      done(instance, module.wasm);
      return instance.exports;
    },
  });
  (em as { type?: string }).type = 'sync';
  const quickjs = new QuickJSWASMModule(em, new QuickJSFFI(em));
  return { quickjs, memory };
}
