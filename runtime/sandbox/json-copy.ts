/**
 * `JSON.parse(JSON.stringify(value))` without the text: a copy in this realm of a value from
 * a trusted V8 context, with JSON's rules (toJSON, dropped undefined and functions, null for
 * them in arrays and for non-finite numbers, -0 as 0, unboxed primitives, own enumerable
 * string keys in their order). For the guest runtime's buffered writes and emitted events
 * (`bench/sandbox/run.ts` times a Stripe create's copies against the text round trip).
 * Throws on what `JSON.stringify` throws on (a cycle, a BigInt), with its own message: the
 * caller then asks `JSON.stringify` for the canonical error.
 *
 * `jsonClone` is the copy a twin's own `copyJson` asks for, remembered until `forgetClones()`
 * (the trusted host calls it after each call). `jsonAdopt` is the copy for a value its maker
 * hands over (it changes nothing in it afterwards): a clone of the same call in it, still
 * plain JSON data of this realm, is kept as it is instead of being copied again. So a record
 * the Stripe twin made from its clone crosses without a second copy.
 */
const toTag = Object.prototype.toString;
const hasOwn = Object.prototype.hasOwnProperty;
const getProto = Object.getPrototypeOf;
const ObjectProto = Object.prototype;
const ArrayProto = Array.prototype;

export function jsonCopy(value: unknown): unknown {
  const bottom = values.length;
  try {
    return copy(value, '', []);
  } finally {
    values.length = bottom;
  }
}

export function jsonClone(value: unknown): unknown {
  const out = jsonCopy(value);
  if (typeof out === 'object' && out !== null) clones.set(out, false);
  return out;
}

export function jsonAdopt(value: unknown): unknown {
  const bottom = values.length;
  adopting = true;
  try {
    return copy(value, '', []);
  } finally {
    adopting = false;
    values.length = bottom;
  }
}

/** Drops the clones remembered so far: they may be changed again, and are no longer kept. */
export function forgetClones(): void {
  if (clones.size > 0) clones.clear();
}

/**
 * The call's clones: objects of this realm made for the twin, which nobody else holds. True
 * once jsonAdopt kept one, checked: handed over, it does not change, so another write holding
 * it (a record and its event share the object) keeps it without a second walk. A Map, not a
 * WeakSet: a WeakSet's add cost the copy of a Stripe create's five values ~2 µs more.
 */
const clones = new Map<object, boolean>();
/** Set while jsonAdopt copies: clones may be kept. */
let adopting = false;

/** Deeper than this a kept object is copied instead (the copy then finds a cycle, if it is one). */
const MAX_KEPT_DEPTH = 64;

/**
 * Whether encoding `v` as it is gives what encoding its JSON copy would: only strings,
 * booleans, null, finite numbers other than -0, and arrays and plain objects of this realm
 * (no toJSON) holding nothing else.
 */
function isSettledJson(v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !(v === 0 && 1 / v < 0);
    case 'object': {
      if (v === null) return true;
      if (depth >= MAX_KEPT_DEPTH) return false;
      if (Array.isArray(v)) {
        if (getProto(v) !== ArrayProto) return false;
        // A hole reads as undefined, which is not settled: JSON writes it as null.
        for (let i = 0; i < v.length; i++) if (!isSettledJson(v[i], depth + 1)) return false;
        return true;
      }
      if (getProto(v) !== ObjectProto || typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
      for (const k in v) {
        if (!isSettledJson((v as Record<string, unknown>)[k], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * The values of the objects being copied, each object's on top of its parent's: an object's
 * kept values are pushed as its keys are walked, its maker reads them, and it pops them.
 */
const values: unknown[] = [];

function copy(v: unknown, key: string, path: object[]): unknown {
  if (adopting && typeof v === 'object' && v !== null) {
    const kept = clones.get(v);
    if (kept === true) return v;
    if (kept === false && isSettledJson(v, path.length)) {
      clones.set(v, true);
      return v;
    }
  }
  if (typeof v === 'object' && v !== null && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON(key: string): unknown }).toJSON(key);
  }
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? (v === 0 ? 0 : v) : null;
    case 'object': {
      if (v === null) return null;
      if (path.includes(v)) throw new TypeError('a cycle is not JSON data');
      path.push(v);
      let out: unknown;
      if (Array.isArray(v)) {
        const list = new Array<unknown>(v.length);
        for (let i = 0; i < v.length; i++) {
          const c = copy(v[i], String(i), path);
          list[i] = c === undefined ? null : c;
        }
        out = list;
      } else {
        const tag = toTag.call(v);
        if (tag === '[object Number]') out = copy(Number(v), key, path);
        else if (tag === '[object String]') out = String(v);
        else if (tag === '[object Boolean]') out = (v as { valueOf(): boolean }).valueOf();
        else out = copyRecord(v as Record<string, unknown>, path);
      }
      path.pop();
      return out;
    }
    case 'bigint':
      throw new TypeError('a BigInt is not JSON data');
    default:
      return undefined;
  }
}

/**
 * A key list seen before, as a path from ROOT: walking an object's kept keys down the tree
 * finds the maker for that list without joining the keys into a text and hashing it (that
 * was most of the copy's time). Property names are interned strings with their hash kept, so
 * each step is a cheap Map lookup.
 */
interface Shape {
  readonly key: string;
  readonly parent: Shape | null;
  readonly next: Map<string, Shape>;
  make: ((values: unknown[], from: number) => Record<string, unknown>) | undefined;
}

const ROOT: Shape = { key: '', parent: null, next: new Map(), make: undefined };
/** Keys a guest makes up (metadata, say) must not grow the tree without end. */
const MAX_SHAPES = 16_384;
let shapes = 0;

function copyRecord(v: Record<string, unknown>, path: object[]): Record<string, unknown> {
  const from = values.length;
  let shape = ROOT;
  // Keys past the point where the tree stopped growing (MAX_SHAPES), in order.
  let rest: string[] | undefined;
  // for…in with hasOwn visits the own enumerable string keys in Object.keys order, and
  // measured faster than Object.keys (V8's enum cache, no array).
  for (const k in v) {
    if (!hasOwn.call(v, k)) continue;
    const c = copy(v[k], k, path);
    if (c === undefined) continue;
    values.push(c);
    if (rest === undefined) {
      const next = shape.next.get(k) ?? grow(shape, k);
      if (next !== undefined) {
        shape = next;
        continue;
      }
      rest = [];
    }
    rest.push(k);
  }
  const out = rest === undefined ? (shape.make ??= compile(keysOf(shape)))(values, from) : slowMake([...keysOf(shape), ...rest], values, from);
  values.length = from;
  return out;
}

function grow(shape: Shape, key: string): Shape | undefined {
  if (shapes >= MAX_SHAPES) return undefined;
  shapes++;
  const next: Shape = { key, parent: shape, next: new Map(), make: undefined };
  shape.next.set(key, next);
  return next;
}

function keysOf(shape: Shape): string[] {
  const keys: string[] = [];
  for (let s: Shape | null = shape; s !== null && s !== ROOT; s = s.parent) keys.push(s.key);
  return keys.reverse();
}

/**
 * A function that makes an object with these keys from `values[from…]`, compiled once per key
 * list: an object literal, as JSON.parse makes, has fast properties; one filled key by key
 * turns into a dictionary after a dozen keys, and msgpack then took 3× as long to write it.
 */
function compile(keys: string[]): (values: unknown[], from: number) => Record<string, unknown> {
  if (!codeGeneration || keys.length > 64 || keys.includes('__proto__')) return (vs, from) => slowMake(keys, vs, from);
  try {
    return new Function('v', 'o', `return {${keys.map((k, i) => `${JSON.stringify(k)}: v[o + ${i}]`).join(', ')}};`) as (values: unknown[], from: number) => Record<string, unknown>;
  } catch {
    // A host that refuses code generation (workerd: "Code generation from strings disallowed"):
    // the same objects, made key by key.
    codeGeneration = false;
    return (vs, from) => slowMake(keys, vs, from);
  }
}

/** False once the host refused `new Function`: every later shape is made by `slowMake`. */
let codeGeneration = true;

function slowMake(keys: string[], vs: unknown[], from: number): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) Object.defineProperty(record, keys[i] as string, { value: vs[from + i], enumerable: true, writable: true, configurable: true });
  return record;
}
