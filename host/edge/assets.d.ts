/**
 * The module the edge build generates (build.ts) and bundles into the Worker: what Node reads
 * from files at run time, made at build time because workerd reads no files and compiles no
 * code from strings.
 */
declare module 'kit-edge:assets' {
  import type { TwinBundle } from '../../runtime/runner/types.js';
  /** The built-in twins, as `loadBuiltinTwins()` builds them. */
  export const twinBundles: TwinBundle[];
  /** Each trusted twin's realm maker (runtime/sandbox `trustedModuleSource`), by its bundle's source. */
  export const trustedLoaders: Map<string, unknown>;
  /** The twin SDK's guest runtime, for scenario `js` handlers. */
  export const guestRuntime: string;
  /** QuickJS, compiled by workerd when the Worker loads (a CompiledWasm module). */
  export const quickjsWasm: WebAssembly.Module;
  /** Its Emscripten glue made synchronous (runtime/sandbox `syncGlueSource`), as a function of `Date`. */
  export const quickjsGlue: (date: unknown) => unknown;
  /**
   * The built pages (dist/pages/, pages/build.mjs): `world` and a vendor per mirror, each file's
   * content as text (js, css, json, svg, …) or bytes (images, fonts). Empty when the build had
   * none. For `pageFilesOf` (host/core/pages.ts).
   */
  export const pageFiles: Readonly<Record<string, Readonly<Record<string, string | Uint8Array>>>>;
}
