/**
 * Trusted realms on Node: each loaded script in a `node:vm` context of its own, with the context's
 * own intrinsics (its `Date`, `Math`, `Array.prototype`…), so one script's changes to them stay in
 * its context.
 */
import vm from 'node:vm';
import { nodeHostBytes } from './host-bytes-node.js';
import { PRELUDE_SOURCE } from './prelude.js';
import { TrustedContexts, type Prelude, type TrustedRealm, type TrustedRealmMaker } from './trusted.js';

/**
 * Globals a loaded script sees as parameters of a wrapping function rather than through the
 * context's global object: every global lookup in a vm context goes through Node's property
 * interceptor (~0.15 µs each, measured in the Stripe twin's key hash), a parameter is a
 * register. The same objects either way. Not `Date`, which the guest runtime replaces with the
 * world clock after load, and nothing a script is expected to assign.
 */
const BOUND_GLOBALS = [
  'globalThis', 'JSON', 'Math', 'Object', 'Array', 'String', 'Number', 'Boolean', 'Symbol', 'BigInt',
  'Map', 'Set', 'WeakMap', 'WeakSet', 'Reflect', 'Proxy', 'Promise', 'RegExp',
  'Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError',
  'ArrayBuffer', 'DataView', 'Uint8Array', 'Uint16Array', 'Uint32Array', 'Int8Array', 'Int16Array', 'Int32Array', 'Float32Array', 'Float64Array',
  'parseInt', 'parseFloat', 'isFinite', 'isNaN', 'encodeURIComponent', 'decodeURIComponent', 'encodeURI', 'decodeURI',
].join(', ');

/** The script as the body of a function that takes `BOUND_GLOBALS` (the newline ends a trailing line comment). */
function withBoundGlobals(source: string): string {
  return `(function (${BOUND_GLOBALS}) {\n${source}\n}).call(globalThis, ${BOUND_GLOBALS});`;
}

/** A `node:vm` context per script, the prelude run in it. */
export const nodeTrustedRealms: TrustedRealmMaker = (name: string, source: string): TrustedRealm => {
  const global: Record<string, unknown> = {};
  const context = vm.createContext(global, { name: `trusted ${name}` });
  const prelude = vm.runInContext(PRELUDE_SOURCE, context, { filename: '<prelude>' }) as Prelude;
  return {
    global,
    prelude,
    runScript: () => new vm.Script(withBoundGlobals(source), { filename: name }).runInContext(context),
  };
};

/** The trusted engine as Node runs it (`node:vm` contexts), with node:crypto and node:zlib behind `__host_bytes`. */
export function nodeTrustedContexts(): TrustedContexts {
  return new TrustedContexts(nodeTrustedRealms, nodeHostBytes);
}
