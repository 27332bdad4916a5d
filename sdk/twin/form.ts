/**
 * `application/x-www-form-urlencoded` bodies in the bracket syntax Stripe's SDKs send
 * (`a[b]=1`, `a[]=1&a[]=2`, `a[0][c]=2`, `metadata[key]=`, `expand[]=x`), and query strings.
 * The host uses these to fill `request.body` and `request.query`. Pure: no Node APIs.
 *
 * Hostile input: names like `__proto__` become own keys (never a prototype), nesting and the
 * number of pairs are capped, and a malformed percent escape stays literal instead of throwing.
 */

import { decodeLenient, parseQueryString } from '../../runtime/router/query.js';

export type FormErrorCode = 'form_too_many_params' | 'form_too_deep' | 'form_conflict';

/** A form body the parser refuses. The host answers it as a 400 (`bad_request`) naming `param`. */
export class FormError extends Error {
  override readonly name = 'FormError';
  constructor(
    readonly code: FormErrorCode,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

export interface FormLimits {
  /** Most `name=value` pairs (default 1000). */
  maxParams?: number;
  /** Most bracket levels in one name (default 16): `a[b][c]` has 2. */
  maxDepth?: number;
}

const DEFAULT_MAX_PARAMS = 1000;
const DEFAULT_MAX_DEPTH = 16;

/** Percent-decoding with `+` as space that never throws: a malformed escape stays as written. */
export function decodeFormComponent(s: string): string {
  return decodeLenient(s.includes('+') ? s.replace(/\+/g, ' ') : s);
}

/** Sets an own, enumerable property, so `__proto__` is a key like any other. */
function define(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Splits `a=1&b=2` into decoded pairs, refusing more than `maxParams`. */
function pairs(text: string, maxParams: number): [string, string][] {
  const out: [string, string][] = [];
  if (text === '') return out;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end === -1) end = text.length;
    const part = text.slice(start, end);
    start = end + 1;
    if (part === '') continue;
    if (out.length >= maxParams) {
      throw new FormError('form_too_many_params', `the body has more than ${maxParams} parameters`);
    }
    const eq = part.indexOf('=');
    const name = decodeFormComponent(eq === -1 ? part : part.slice(0, eq));
    const value = eq === -1 ? '' : decodeFormComponent(part.slice(eq + 1));
    if (name !== '') out.push([name, value]);
  }
  return out;
}

/**
 * Parses a query string (without `?`) exactly as the world runner does (`parseQueryString`):
 * a repeated name gives an array; bracket names stay as written (`expand[]`, `created[gte]`).
 * Refuses more than `maxParams` parameters.
 */
export function parseQuery(text: string, limits: FormLimits = {}): Record<string, string | string[]> {
  const maxParams = limits.maxParams ?? DEFAULT_MAX_PARAMS;
  let count = 0;
  for (const piece of (text.startsWith('?') ? text.slice(1) : text).split('&')) {
    if (piece !== '' && ++count > maxParams) throw new FormError('form_too_many_params', `the query has more than ${maxParams} parameters`);
  }
  return parseQueryString(text);
}

/** `a[b][]` → `['a', 'b', '']`; null when the brackets are not well formed (then the name is literal). */
function splitName(name: string): string[] | null {
  const open = name.indexOf('[');
  if (open <= 0) return null;
  const path = [name.slice(0, open)];
  let i = open;
  while (i < name.length) {
    if (name[i] !== '[') return null;
    const close = name.indexOf(']', i + 1);
    if (close === -1) return null;
    const segment = name.slice(i + 1, close);
    if (segment.includes('[')) return null;
    path.push(segment);
    i = close + 1;
  }
  return path;
}

/** While parsing, every container is an object; ones keyed 0..n become arrays at the end. */
interface Branch {
  kind: 'branch';
  keys: Map<string, Node>;
  /** Next index for `[]`. */
  next: number;
}
interface Leaf {
  kind: 'leaf';
  values: string[];
}
type Node = Branch | Leaf;

const INDEX = /^(?:0|[1-9][0-9]{0,8})$/;

function finish(node: Node): unknown {
  if (node.kind === 'leaf') return node.values.length === 1 ? node.values[0] : node.values.slice();
  const entries = [...node.keys];
  if (entries.length > 0 && entries.every(([k]) => INDEX.test(k))) {
    // `a[0][x]=…&a[2][x]=…` is an array in the order of its indexes, without holes.
    return entries.sort((x, y) => Number(x[0]) - Number(y[0])).map(([, v]) => finish(v));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) define(out, k, finish(v));
  return out;
}

/**
 * Parses a form body into nested objects and arrays:
 * `a[b]=1` → `{ a: { b: '1' } }`, `a[]=1&a[]=2` → `{ a: ['1', '2'] }`,
 * `a[0][c]=2` → `{ a: [{ c: '2' }] }`, `metadata[key]=` → `{ metadata: { key: '' } }`.
 * A repeated plain name gives an array. Throws `FormError` past the limits, or when one name
 * is used both as a value and as a container (`a=1&a[b]=2`).
 */
export function parseForm(text: string, limits: FormLimits = {}): Record<string, unknown> {
  const maxDepth = limits.maxDepth ?? DEFAULT_MAX_DEPTH;
  const root: Branch = { kind: 'branch', keys: new Map(), next: 0 };
  for (const [name, value] of pairs(text, limits.maxParams ?? DEFAULT_MAX_PARAMS)) {
    const path = splitName(name) ?? [name];
    if (path.length - 1 > maxDepth) {
      throw new FormError('form_too_deep', `'${name.slice(0, 100)}' nests deeper than ${maxDepth} levels`, name);
    }
    let at: Branch = root;
    for (let i = 0; i < path.length; i++) {
      let key = path[i]!;
      const last = i === path.length - 1;
      if (key === '' && i > 0) {
        // `a[][x]=1&a[][y]=2` fills one element until a name repeats (as Rack does).
        const nextKey = path[i + 1];
        const lastIndex = String(at.next - 1);
        const prev = at.next > 0 ? at.keys.get(lastIndex) : undefined;
        if (!last && nextKey !== undefined && prev?.kind === 'branch' && !prev.keys.has(nextKey)) key = lastIndex;
        else key = String(at.next);
      }
      if (INDEX.test(key)) at.next = Math.max(at.next, Number(key) + 1);
      const existing = at.keys.get(key);
      if (last) {
        if (existing === undefined) at.keys.set(key, { kind: 'leaf', values: [value] });
        else if (existing.kind === 'leaf') existing.values.push(value);
        else throw new FormError('form_conflict', `'${name.slice(0, 100)}' gives a value to what other parameters use as an object`, name);
      } else {
        if (existing === undefined) {
          const branch: Branch = { kind: 'branch', keys: new Map(), next: 0 };
          at.keys.set(key, branch);
          at = branch;
        } else if (existing.kind === 'branch') {
          at = existing;
        } else {
          throw new FormError('form_conflict', `'${name.slice(0, 100)}' uses as an object what another parameter gives a value`, name);
        }
      }
    }
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of root.keys) define(out, k, finish(v));
  return out;
}
