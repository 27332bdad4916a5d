/**
 * What a component twin carries from its load (Node, load.ts) to where it runs (a lane's
 * worker, instance.ts): jco's transpiled module and its compiled core modules. Everything here
 * crosses threads by structured clone (a `WebAssembly.Module` crosses without recompiling).
 */

export interface ComponentCode {
  /** sha256 of the component's bytes, hex: names its transpiled form in caches. */
  sha256: string;
  /** jco's transpiled ES module (`--instantiation async`): `instantiate(getCoreModule, imports, instantiateCore)`. */
  js: string;
  /** Its core modules by file name, compiled, each defined memory capped at `memoryBytes`. */
  modules: Record<string, WebAssembly.Module>;
  /** The interfaces it imports, without versions (`kit:twin/tree`, `wasi:clocks/wall-clock`). */
  imports: string[];
  /** The cap of each memory it defines. */
  memoryBytes: number;
}

/** Default cap of a component twin's memories: QuickJS inside a componentized JS twin starts near 3 MiB. */
export const DEFAULT_COMPONENT_MEMORY_BYTES = 64 * 1024 * 1024;
