/**
 * QuickJS in WebAssembly, instantiated synchronously: one precompiled `WebAssembly.Module` per
 * process (or per isolate), one `WebAssembly.Instance` with its own capped `WebAssembly.Memory`
 * per world.
 *
 * Why not `newQuickJSWASMModuleFromVariant`: the Emscripten glue of the sync release variant is an
 * `async` factory, so every world would need an `await` to start; the world runner wants a
 * synchronous `WorldSandbox.create`. The glue's source is made synchronous with a handful of
 * checked textual edits (`syncGlueSource`: the package version is pinned; an edit that no longer
 * applies throws a SandboxGlueError rather than misbehave), and given our own memory and an
 * `instantiateWasm` that builds the instance synchronously.
 *
 * This file needs no Node API and evaluates no code at run time except in `makeSyncGlue`
 * (`new Function`, which Node allows). Where code generation is refused (workerd), a build writes
 * `syncGlueSource` into a module of its own and hands the function it exports to
 * `sandboxModuleOf`, beside a `WebAssembly.Module` imported at build time. Node reads the package's
 * files in `wasm-node.ts`.
 *
 * The glue's clock and time zone imports are also made deterministic here (see `GlueDate`): a
 * guest's native `Date` then reads epoch 0 in UTC, whatever the host's clock and `TZ`, so no
 * intrinsic can leak the wall clock even if a guest digs out the original constructor.
 */
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

/** The synchronous Emscripten factory of one instance, as `syncGlueSource`'s function body returns it. */
export type GlueFactory = (options: EmscriptenModuleLoaderOptions & Record<string, unknown>) => QuickJSEmscriptenModule;

/** What QuickJS's default stack depends on where the module is made (see `defaultStackBytes` in sandbox.ts). */
export interface SandboxModuleOptions {
  /** The native stack of the thread that runs the sandboxes; default 984 KiB (V8's on a main thread). */
  nativeStackBytes?: number;
}

/** The compiled QuickJS module and its synchronous glue: made once per process (or isolate). */
export class SandboxModule {
  /** @internal */
  constructor(
    /** @internal */ readonly wasm: WebAssembly.Module,
    /** @internal */ readonly glue: GlueFactory,
    /** The native stack of the thread it was made for, when known. */
    readonly nativeStackBytes?: number,
  ) {}
}

/** What an instantiated world sees of its instance. */
export interface WasmWorld {
  quickjs: QuickJSWASMModule;
  memory: WebAssembly.Memory;
}

/**
 * The sandbox module around a `WebAssembly.Module` compiled elsewhere and a glue factory made
 * elsewhere: on workerd, the `.wasm` imported as a module and the default export of the module a
 * build wrote from `syncGlueSource` (`export default function (Date) { <syncGlueSource> }`,
 * called here with `GlueDate`); on Node, `wasm-node.ts` makes both from the package's files.
 */
export function sandboxModuleOf(wasm: WebAssembly.Module, glue: (date: typeof GlueDate) => GlueFactory, options: SandboxModuleOptions = {}): SandboxModule {
  if (!(wasm instanceof WebAssembly.Module)) throw new TypeError('sandboxModuleOf: expected a WebAssembly.Module');
  if (typeof glue !== 'function') throw new TypeError('sandboxModuleOf: expected the glue module\'s default export (a function of Date)');
  const factory = glue(GlueDate);
  if (typeof factory !== 'function') throw new SandboxGlueError('the glue function did not return the QuickJS factory');
  return new SandboxModule(wasm, factory, options.nativeStackBytes);
}

/**
 * The Emscripten ESM glue (an async factory) as the body of a function of one parameter, `Date`,
 * that returns a synchronous factory. Each edit must apply exactly once; `SandboxGlueError` names
 * the one that did not. Pure text: a build may run it and write the result into a module.
 */
export function syncGlueSource(glueModuleText: string): string {
  if (typeof glueModuleText !== 'string') throw new TypeError('syncGlueSource: expected the glue module as text');
  let src = glueModuleText;
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
  return src;
}

/**
 * `syncGlueSource` evaluated here with `new Function`: the package's own code, evaluated once in
 * the host realm, with our deterministic `Date` (Node; workerd refuses code generation).
 */
export function makeSyncGlue(glueModuleText: string): GlueFactory {
  const src = syncGlueSource(glueModuleText);
  let make: (date: typeof GlueDate) => GlueFactory;
  try {
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
 * Clock fixed at 0, every zone UTC. Passed as the `Date` parameter of the glue's function.
 */
export class GlueDate {
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
