/** Small helpers shared by every Stripe resource. Runs inside QuickJS: no Node APIs. */
import { copyJson } from '../../../../sdk/twin/copy.js';

// The builtins a file uses, as module bindings (every hot file of the twin has this line): in
// the trusted engine (a node:vm context) each use of a global name is looked up through the
// context's interceptor, ~0.15 µs; a module binding is a plain variable.
const { Array, JSON, Math, Object } = globalThis;

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The subscription an invoice or invoice item was billed for (`parent.subscription_details`), or null. */
export function billedSubscription(o: Obj): string | null {
  const parent = o.parent;
  if (!isObj(parent) || !isObj(parent.subscription_details)) return null;
  return (parent.subscription_details.subscription as string | null) ?? null;
}

/** Deep copy of JSON data, so a stored snapshot never aliases a live object. */
export const clone: <T>(v: T) => T = copyJson;

/** Stripe timestamps are whole seconds. */
export function seconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/** JSON with sorted keys, so two equal parameter sets fingerprint alike. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (isObj(v)) {
    return '{' + Object.keys(v).sort().map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  }
  return JSON.stringify(v ?? null);
}

/** FNV-1a (two lanes, 64 bits of output) as base-62: stable short names for keys and fingerprints. */
export function hash62(text: string, length = 16): string {
  const A = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let h1 = 0x811c9dc5, h2 = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
    h2 = (h2 ^ (h2 >>> 15)) >>> 0;
  }
  let out = '';
  for (let i = 0; i < length; i++) {
    const lane = (i % 2 === 0 ? h1 : h2) >>> 0;
    out += A[lane % 62] as string;
    if (i % 2 === 0) h1 = Math.imul(h1 ^ (h1 >>> 13), 0x5bd1e995) >>> 0;
    else h2 = Math.imul(h2 ^ (h2 >>> 16), 0x85ebca6b) >>> 0;
  }
  return out;
}

/** Reads a dotted path (`billing_details.address.postal_code`). */
export function getPath(o: unknown, path: string): unknown {
  let cur: unknown = o;
  for (const part of path.split('.')) {
    if (!isObj(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}
