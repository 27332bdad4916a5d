/**
 * `JSON.parse(JSON.stringify(value))` without the text: a copy in this realm of a value from
 * a trusted V8 context, with JSON's rules (toJSON, dropped undefined and functions, null for
 * them in arrays and for non-finite numbers, -0 as 0, unboxed primitives, own enumerable
 * string keys in their order). For the guest runtime's buffered writes and emitted events:
 * about half the time of the text round trip for a Stripe customer. Throws on what
 * `JSON.stringify` throws on (a cycle, a BigInt), with its own message: the caller then asks
 * `JSON.stringify` for the canonical error.
 */
const toTag = Object.prototype.toString;

export function jsonCopy(value: unknown): unknown {
  return copy(value, '', []);
}

function copy(v: unknown, key: string, path: object[]): unknown {
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
        else {
          const keys: string[] = [];
          const values: unknown[] = [];
          for (const k of Object.keys(v)) {
            const c = copy((v as Record<string, unknown>)[k], k, path);
            if (c !== undefined) {
              keys.push(k);
              values.push(c);
            }
          }
          out = make(keys, values);
        }
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
 * An object with these keys and values, made by a function compiled once per key list: an
 * object literal, as JSON.parse makes, has fast properties; one filled key by key turns into a
 * dictionary after a dozen keys, and msgpack then took 3× as long to write it.
 */
const makers = new Map<string, (values: unknown[]) => Record<string, unknown>>();
const MAX_MAKERS = 2048;

function make(keys: string[], values: unknown[]): Record<string, unknown> {
  const signature = keys.join('\u0000');
  let maker = makers.get(signature);
  if (maker === undefined) {
    if (keys.length > 64 || makers.size >= MAX_MAKERS || keys.some((k) => k === '__proto__')) return slowMake(keys, values);
    maker = new Function('v', `return {${keys.map((k, i) => `${JSON.stringify(k)}: v[${i}]`).join(', ')}};`) as (values: unknown[]) => Record<string, unknown>;
    makers.set(signature, maker);
  }
  return maker(values);
}

function slowMake(keys: string[], values: unknown[]): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) Object.defineProperty(record, keys[i] as string, { value: values[i], enumerable: true, writable: true, configurable: true });
  return record;
}
