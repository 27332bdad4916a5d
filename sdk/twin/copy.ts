/** `copyJson`: a deep copy of JSON data for twin code, as fast as the engine allows. Runs inside QuickJS. */

/**
 * Offered with `__host_value`: `JSON.parse(JSON.stringify(v))` made by the host, in its own
 * realm, without the text.
 */
export type HostCopy = (value: unknown) => unknown;

/**
 * The host's copy, where the engine offers one: a trusted V8 context, which shares the host's
 * heap (runtime/sandbox/json-copy.ts). It is installed before a twin's bundle runs. The clone
 * is that copy, remembered for the call: a write handed over (`put` with `handOver`) that
 * holds it crosses without another copy.
 */
const hostGlobals = globalThis as { __host_copy?: HostCopy; __host_clone?: HostCopy };
const hostCopy = hostGlobals.__host_clone ?? hostGlobals.__host_copy;

/**
 * `JSON.parse(JSON.stringify(value))`: a copy that shares nothing with `value`, with JSON's
 * rules (toJSON, undefined dropped, non-finite numbers as null). Where the engine offers the
 * host's copy it is made without the text, about 4× as fast (`bench/sandbox/run.ts`), and its
 * objects are of the host's realm, as the tree's reads there already are (`Array.isArray`
 * holds, `instanceof Array` does not). A value JSON cannot hold at the top (undefined, a
 * function) copies as undefined; one it cannot hold anywhere (a cycle, a BigInt) throws
 * JSON.stringify's own error.
 */
export function copyJson<T>(value: T): T {
  if (value === undefined) return value;
  if (hostCopy !== undefined) {
    try {
      return hostCopy(value) as T;
    } catch {
      // Fall through: JSON.stringify throws the canonical error.
    }
  }
  const text = JSON.stringify(value) as string | undefined;
  return (text === undefined ? undefined : JSON.parse(text)) as T;
}
