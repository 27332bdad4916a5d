/**
 * The guest engines of a world on the edge: the built-in twins in realms made by the modules the
 * build wrote (no eval, no node:vm), and untrusted code in QuickJS in this thread over the
 * `.wasm` workerd compiled when the Worker loaded, stopped by step budgets.
 */
import { inlineGuestEngines, type GuestEngines } from '../../runtime/runner/engines.js';
import { edgeTrustedRealms, type TrustedRealmLoader } from '../../runtime/sandbox/trusted-edge.js';
import { sandboxModuleOf, type GlueDate, type GlueFactory } from '../../runtime/sandbox/wasm.js';

export interface EdgeGuestAssets {
  wasm: WebAssembly.Module;
  glue: (date: typeof GlueDate) => GlueFactory;
  trustedLoaders: ReadonlyMap<string, TrustedRealmLoader>;
}

let module: ReturnType<typeof sandboxModuleOf> | undefined;

export function edgeGuestEngines(assets: EdgeGuestAssets): GuestEngines {
  // One instance of the glue per isolate; each world instantiates its own memory from it.
  module ??= sandboxModuleOf(assets.wasm, assets.glue);
  return inlineGuestEngines(module, edgeTrustedRealms(assets.trustedLoaders));
}
