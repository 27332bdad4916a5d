/**
 * The sandbox module on Node: the QuickJS wasm and its glue read from the installed package
 * (`@jitl/quickjs-wasmfile-release-sync`), the glue made synchronous with `new Function`, and the
 * native stack of the thread that runs the sandboxes (a worker's `resourceLimits`), which sets
 * QuickJS's default stack. Hosts without Node APIs build their module with `sandboxModuleOf`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isMainThread, resourceLimits } from 'node:worker_threads';
import { makeSyncGlue, SandboxModule } from './wasm.js';

let cached: Promise<SandboxModule> | undefined;

/** Compiles the QuickJS wasm once per thread (later calls share the result). */
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

/** The package's files, for a build that writes them into modules of its own (see wasm.ts). */
export function quickjsPackageFiles(): { wasmPath: string; glueModuleText: string } {
  const dist = packageDist();
  return { wasmPath: dist + 'emscripten-module.wasm', glueModuleText: readFileSync(dist + 'emscripten-module.mjs', 'utf8') };
}

async function compile(): Promise<SandboxModule> {
  const { wasmPath } = quickjsPackageFiles();
  return nodeSandboxModule(await WebAssembly.compile(readFileSync(wasmPath)));
}

/**
 * The sandbox module around a `WebAssembly.Module` compiled elsewhere, e.g. by the thread that
 * started this worker (a compiled module crosses `postMessage`; its glue is rebuilt here, since
 * functions do not).
 */
export function nodeSandboxModule(wasm: WebAssembly.Module): SandboxModule {
  if (!(wasm instanceof WebAssembly.Module)) throw new TypeError('nodeSandboxModule: expected a WebAssembly.Module');
  return new SandboxModule(wasm, makeSyncGlue(quickjsPackageFiles().glueModuleText), nodeNativeStackBytes());
}

/** This thread's native stack: a worker's `stackSizeMb`, else `--stack-size` (KiB), else V8's 984 KiB. */
export function nodeNativeStackBytes(): number {
  if (!isMainThread && resourceLimits.stackSizeMb !== undefined) return resourceLimits.stackSizeMb * 1024 * 1024;
  const flag = [...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)].find((a) => a.startsWith('--stack-size='));
  const kb = flag === undefined ? NaN : Number(flag.slice('--stack-size='.length));
  return (Number.isFinite(kb) && kb > 0 ? kb : 984) * 1024;
}
