import { LONG_ID_UNITS, storableId } from '../../sdk/twin/storable.js';
import type { Key, KeyPart } from './types.js';

/**
 * The one key order both storages share, matching lmdb's ordered-binary keys (checked
 * against lmdb 3.5.6): element by element, numbers before strings, numbers numerically,
 * strings by UTF-8 bytes (which is code-point order), a shorter prefix first.
 */
export function compareKeys(a: Key, b: Key): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = comparePart(a[i] as KeyPart, b[i] as KeyPart);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function comparePart(a: KeyPart, b: KeyPart): number {
  if (typeof a === 'number') {
    if (typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
    return -1;
  }
  if (typeof b === 'number') return 1;
  return compareStrings(a, b);
}

/** Code-point order; UTF-16 code-unit order differs for astral characters vs U+E000..U+FFFF. */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Both in the surrogate range or both outside it: code units order like code points.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs === ys) return x - y;
    // A surrogate (astral code point) sorts after every BMP code unit.
    return xs ? 1 : -1;
  }
  return a.length - b.length;
}

interface KeyNode<V> {
  /** The key whose value this node holds (set with the value). */
  key: Key | undefined;
  value: V | undefined;
  children: Map<KeyPart, KeyNode<V>> | undefined;
}

/**
 * A map keyed by storage keys, as Maps nested part by part. Unlike a Map keyed by one text per
 * key (each part typed and length-prefixed), it builds no text (one of a ~90-character key and
 * its hash cost ~0.5 µs a get and set; this ~0.2 µs), and a range's candidates are found
 * under the parts its bounds share instead of among every key. Numbers and strings stay
 * apart (a Map tells 1 from '1').
 */
export class KeyMap<V> {
  private readonly root: KeyNode<V> = { key: undefined, value: undefined, children: undefined };
  private readonly nodes: KeyNode<V>[] = [];

  get size(): number {
    return this.nodes.length;
  }

  get(key: Key): V | undefined {
    let node: KeyNode<V> | undefined = this.root;
    for (let i = 0; i < key.length && node !== undefined; i++) node = node.children?.get(key[i] as KeyPart);
    return node?.value;
  }

  set(key: Key, value: V): void {
    let node = this.root;
    for (let i = 0; i < key.length; i++) {
      const part = key[i] as KeyPart;
      node.children ??= new Map();
      let child = node.children.get(part);
      if (child === undefined) node.children.set(part, (child = { key: undefined, value: undefined, children: undefined }));
      node = child;
    }
    if (node.key === undefined) this.nodes.push(node);
    node.key = key;
    node.value = value;
  }

  /** The values, in the order their keys were first set. */
  *values(): IterableIterator<V> {
    for (const node of this.nodes) yield node.value as V;
  }

  /**
   * The values of every key that may lie in [start, end), and of some that do not: those
   * under the parts the bounds share, pruned at the first part they differ in. The caller
   * compares each key.
   */
  within(start: Key, end: Key): V[] {
    const out: V[] = [];
    let node: KeyNode<V> | undefined = this.root;
    let i = 0;
    for (; i < start.length && i < end.length && start[i] === end[i]; i++) {
      node = node.children?.get(start[i] as KeyPart);
      if (node === undefined) return out;
    }
    if (node.key !== undefined) out.push(node.value as V);
    if (node.children === undefined) return out;
    const low = start[i];
    const high = end[i];
    for (const [part, child] of node.children) {
      if (low !== undefined && comparePart(part, low) < 0) continue;
      if (high !== undefined && comparePart(part, high) > 0) continue;
      collect(child, out);
    }
    return out;
  }
}

function collect<V>(node: KeyNode<V>, out: V[]): void {
  if (node.key !== undefined) out.push(node.value as V);
  if (node.children !== undefined) for (const child of node.children.values()) collect(child, out);
}

/** lmdb's largest key (its default build), in ordered-binary bytes. */
export const MAX_KEY_BYTES = 1978;

/** ordered-binary escapes U+0000–U+0004 only in strings shorter than this; longer ones are bare UTF-8. */
const ESCAPED_BELOW = 64;

/**
 * A string part above `part` and every key under `[…, part]`, and below every other stored
 * part: the bound a walk uses for "just after". In code-point order that is `part + U+0000`;
 * but lmdb writes a part of 64 or more units bare, where U+0000 is the separator before the
 * next part, so a bound that long would sort below the keys under `part`. A part of
 * LONG_ID_UNITS or more gets U+0001 instead: as a stored part it holds no U+0000–U+0004, so
 * no stored part lies between.
 */
export function partAfter(part: string): string {
  return part.length < LONG_ID_UNITS ? `${part}\u0000` : `${part}\u0001`;
}

/** A key above every key that starts with `prefix`, and below every other stored key above those (in both storages). */
export function prefixEnd(prefix: Key): Key {
  const last = prefix[prefix.length - 1];
  const init = prefix.slice(0, -1);
  return typeof last === 'number' ? [...init, last + 1] : [...init, partAfter(last ?? '')];
}

/**
 * Programmer misuse (not outside input): keys are built by the engine. Checked before any
 * write, so a key LMDB would refuse fails the transaction that holds it, not a later commit.
 */
export function assertKey(key: Key): void {
  checkKey(key, true);
}

/**
 * A range's bound, as `assertKey`, but its parts need not be storable (`partAfter` ends a long
 * one with U+0001): it is compared with stored keys, never stored. Made of storable parts and
 * `partAfter`, it sits in the same place among stored keys in either storage.
 */
export function assertRangeBound(key: Key): void {
  checkKey(key, false);
}

function checkKey(key: Key, stored: boolean): void {
  if (!Array.isArray(key) || key.length === 0) throw new TypeError('a storage key is a non-empty array');
  // An upper bound of the encoded size: a UTF-16 unit is at most 3 UTF-8 bytes (an escaped
  // U+0000–U+0004, 2), a part adds a separator and maybe an escape prefix, a number at most 9
  // bytes and a separator.
  let bound = 0;
  for (const part of key) {
    if (typeof part === 'string') {
      // A long part LMDB would mangle (sdk/twin/storable.ts), refused in both storages alike.
      // A short part's lone surrogate is only placed differently, and the engine refuses it in
      // record ids and types (runtime/world/validate.ts); the rest of a key is the engine's own
      // ASCII, so a short part is not walked here, on every key of every read and write.
      if (stored && part.length >= LONG_ID_UNITS && !storableId(part)) {
        throw new TypeError(`a storage key part of ${LONG_ID_UNITS} or more UTF-16 units holds no U+0000–U+0004 and no lone surrogate`);
      }
      bound += part.length * 3 + 2;
    } else if (typeof part === 'number' && Number.isSafeInteger(part) && part >= 0) bound += 10;
    else throw new TypeError(`a storage key part is a string or a non-negative integer, got ${String(part)}`);
  }
  if (bound > MAX_KEY_BYTES && encodedKeyBytes(key) > MAX_KEY_BYTES) {
    throw new TypeError(`a storage key is at most ${MAX_KEY_BYTES} bytes`);
  }
}

/** At least what ordered-binary writes: UTF-8, a short part's escaped U+0000–U+0004 twice, a prefix and a separator. */
function encodedKeyBytes(key: Key): number {
  let n = 0;
  for (const part of key) {
    if (typeof part !== 'string') n += 10;
    else {
      n += Buffer.byteLength(part) + 2;
      if (part.length < ESCAPED_BELOW) for (let i = 0; i < part.length; i++) if (part.charCodeAt(i) <= 4) n++;
    }
  }
  return n;
}

/** Programmer misuse, as `assertKey`: `transact(fn)` with an async `fn` would commit before it ran. */
export function assertSynchronous(result: unknown): void {
  if (typeof result === 'object' && result !== null && typeof (result as { then?: unknown }).then === 'function') {
    throw new TypeError('transact() takes a synchronous function');
  }
}
