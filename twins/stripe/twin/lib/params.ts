/**
 * Stripe parameters: bracket names folded into nested objects, and typed readers that
 * answer Stripe's own validation errors (`Invalid integer: abc`, param `limit`).
 * Form values arrive as strings, JSON values as themselves; both are accepted.
 */
import { invalid, paramMissing } from '../errors.js';
import { isObj, type Obj } from './util.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Array, JSON, Number, Object, Set, String, decodeURIComponent } = globalThis;

const MAX_DEPTH = 12;
/** A decimal as SDKs write one: `25`, `-0.5`, `.5`, `1e-7` (JavaScript's way with small numbers). */
const DECIMAL = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
const MAX_INDEX = 10_000;
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** Splits `a[b][]` into `['a', 'b', '']`; undefined when the brackets do not balance. */
function splitName(name: string): string[] | undefined {
  const open = name.indexOf('[');
  if (open < 0) return [name];
  const parts = [name.slice(0, open)];
  let rest = name.slice(open);
  while (rest.length > 0) {
    if (rest[0] !== '[') return undefined;
    const close = rest.indexOf(']');
    if (close < 0) return undefined;
    parts.push(rest.slice(1, close));
    rest = rest.slice(close + 1);
  }
  return parts;
}

/**
 * Folds `{ 'expand[]': ['a','b'], 'created[gte]': '1' }` into `{ expand: ['a','b'], created: { gte: '1' } }`.
 * Numeric keys become arrays in index order (`expand[0]`, `expand[1]`), as the SDK sends them.
 */
export function foldBrackets(query: Record<string, string | string[]>): Obj {
  const root: Obj = {};
  for (const [name, raw] of Object.entries(query)) {
    const values = Array.isArray(raw) ? raw : [raw];
    const parts = splitName(name);
    if (parts === undefined || parts[0] === '') throw invalid(`Invalid parameter name: ${name}`, name);
    if (parts.length > MAX_DEPTH) throw invalid(`Parameter nested too deeply: ${name}`, name);
    for (const value of values) place(root, parts, value, name);
  }
  return toArrays(root) as Obj;
}

function place(root: Obj, parts: string[], value: string, name: string): void {
  let cur: Obj = root;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (FORBIDDEN.has(part)) throw invalid(`Invalid parameter name: ${name}`, name);
    const last = i === parts.length - 1;
    if (part === '') {
      // `a[]`: an append; represent as the next free numeric key, folded to an array later.
      const key = String(Object.keys(cur).length);
      if (last) cur[key] = value;
      else {
        const child: Obj = {};
        cur[key] = child;
        cur = child;
      }
      continue;
    }
    if (last) {
      cur[part] = value;
      return;
    }
    let child = cur[part];
    if (!isObj(child)) {
      child = {};
      cur[part] = child;
    }
    cur = child as Obj;
  }
}

/** Objects whose keys are all indices become arrays (sorted by index), recursively. */
export function toArrays(v: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw invalid('Parameters nested too deeply.');
  if (Array.isArray(v)) return v.map((x) => toArrays(x, depth + 1));
  if (!isObj(v)) return v;
  const keys = Object.keys(v);
  for (const k of keys) if (FORBIDDEN.has(k)) throw invalid(`Invalid parameter name: ${k}`, k);
  if (keys.length > 0 && keys.every((k) => /^(0|[1-9]\d*)$/.test(k))) {
    const idx = keys.map(Number).sort((a, b) => a - b);
    if ((idx[idx.length - 1] ?? 0) > MAX_INDEX) throw invalid('Array index too large.');
    return idx.map((i) => toArrays(v[String(i)], depth + 1));
  }
  const out: Obj = {};
  for (const k of keys) out[k] = toArrays(v[k], depth + 1);
  return out;
}

/** Typed, validating reads of one (possibly nested) parameter object. */
export class Params {
  constructor(
    readonly raw: Obj,
    /** The bracket prefix for error `param`s, e.g. `recurring`. */
    readonly prefix = '',
  ) {}

  name(key: string): string {
    return this.prefix === '' ? key : `${this.prefix}[${key}]`;
  }

  has(key: string): boolean {
    return this.raw[key] !== undefined;
  }

  get(key: string): unknown {
    return this.raw[key];
  }

  str(key: string): string | undefined {
    const v = this.raw[key];
    if (v === undefined) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    if (v === null) return '';
    throw invalid(`Invalid string: ${JSON.stringify(v)}`, this.name(key));
  }

  reqStr(key: string): string {
    const v = this.str(key);
    if (v === undefined || v === '') throw paramMissing(this.name(key));
    return v;
  }

  /** A string, or null when sent empty (Stripe's way to clear a field). */
  nullableStr(key: string): string | null | undefined {
    const v = this.str(key);
    return v === '' ? null : v;
  }

  int(key: string, min?: number, max?: number): number | undefined {
    const v = this.raw[key];
    if (v === undefined) return undefined;
    let n: number;
    if (typeof v === 'number' && Number.isInteger(v)) n = v;
    else if (typeof v === 'string' && /^-?\d{1,16}$/.test(v.trim())) n = Number(v.trim());
    // Stripe refuses any fraction, even a zero one (`4995.00`), exponents and `_` separators, with this code.
    else throw invalid(`Invalid integer: ${typeof v === 'string' ? v : JSON.stringify(v)}`, this.name(key), 'parameter_invalid_integer');
    if (min !== undefined && n < min) {
      throw invalid(`This value must be greater than or equal to ${min}.`, this.name(key));
    }
    if (max !== undefined && n > max) {
      throw invalid(`This value must be less than or equal to ${max}.`, this.name(key));
    }
    return n;
  }

  reqInt(key: string, min?: number, max?: number): number {
    const v = this.int(key, min, max);
    if (v === undefined) throw paramMissing(this.name(key));
    return v;
  }

  num(key: string, min?: number, max?: number): number | undefined {
    const v = this.raw[key];
    if (v === undefined) return undefined;
    // Decimal notation only: `Number` alone would also take `0x10`, `0b1` and whitespace.
    const n = typeof v === 'number' ? v : typeof v === 'string' && DECIMAL.test(v) ? Number(v) : NaN;
    if (!Number.isFinite(n)) throw invalid(`Invalid decimal: ${String(v)}`, this.name(key));
    if (min !== undefined && n < min) throw invalid(`This value must be greater than or equal to ${min}.`, this.name(key));
    if (max !== undefined && n > max) throw invalid(`This value must be less than or equal to ${max}.`, this.name(key));
    return n;
  }

  /**
   * `true` and `false` in any case: stripe-python before 12.0.1 and stripe-dotnet before 2025 send
   * Python's and .NET's `True`/`False`, which Stripe's v1 API takes (their PRs 1499 and 3104).
   * Anything else (`1`, `yes`, an empty value) is refused as Stripe refuses it: `Invalid boolean: 1`, no code.
   */
  bool(key: string): boolean | undefined {
    const v = this.raw[key];
    if (v === undefined) return undefined;
    if (typeof v === 'boolean') return v;
    if (typeof v === 'string' && v.length <= 5) {
      const lower = v.toLowerCase();
      if (lower === 'true') return true;
      if (lower === 'false') return false;
    }
    throw invalid(`Invalid boolean: ${typeof v === 'string' ? v : JSON.stringify(v)}`, this.name(key));
  }

  oneOf<T extends string>(key: string, values: readonly T[]): T | undefined {
    const v = this.str(key);
    if (v === undefined) return undefined;
    if (!(values as readonly string[]).includes(v)) {
      const list = values.length > 1
        ? `${values.slice(0, -1).join(', ')}, or ${values[values.length - 1] ?? ''}`
        : values.join('');
      throw invalid(`Invalid ${this.name(key)}: must be one of ${list}`, this.name(key));
    }
    return v as T;
  }

  /** A nested object; `''` (sent to clear it) answers null. */
  obj(key: string): Params | null | undefined {
    const v = this.raw[key];
    if (v === undefined) return undefined;
    if (v === '' || v === null) return null;
    if (!isObj(v)) throw invalid(`Invalid object`, this.name(key));
    return new Params(v, this.name(key));
  }

  /**
   * An array of strings (`expand[]=a`, `ids[0]=a`); `key=` empties it. A lone value
   * (`expand=a`) is refused as Stripe refuses it: 400 `Invalid array` naming the parameter.
   */
  strings(key: string): string[] | undefined {
    const v = this.raw[key];
    if (v === undefined) return undefined;
    if (v === '') return [];
    if (!Array.isArray(v)) throw invalid(`Invalid array`, this.name(key));
    return v.map((x, i) => {
      if (typeof x === 'string') return x;
      if (typeof x === 'number') return String(x);
      throw invalid(`Invalid array`, `${this.name(key)}[${i}]`);
    });
  }

  /** An array of objects (`items[0][price]`). */
  objects(key: string): Params[] | undefined {
    const v = this.raw[key];
    if (v === undefined) return undefined;
    if (v === '') return [];
    if (!Array.isArray(v)) throw invalid(`Invalid array`, this.name(key));
    return v.map((x, i) => {
      if (!isObj(x)) throw invalid(`Invalid object`, `${this.name(key)}[${i}]`);
      return new Params(x, `${this.name(key)}[${i}]`);
    });
  }
}

/**
 * Stripe refuses a string parameter longer than 5000 characters (its API spec's `maxLength`
 * for nearly every string), so no request can store megabytes in a description that every
 * list and event then copies. Metadata is left to `applyMetadata` (40 and 500, its own messages).
 */
export const MAX_STRING = 5000;

// Dispute evidence texts: "Has a maximum character count of 20,000" (the `stripe` package's types).
const EVIDENCE_TEXT = Object.fromEntries(['access_activity_log', 'cancellation_policy_disclosure', 'cancellation_rebuttal',
  'duplicate_charge_explanation', 'product_description', 'refund_policy_disclosure', 'refund_refusal_explanation',
  'uncategorized_text'].map((f) => [`evidence[${f}]`, 20_000]));
// Custom fields on invoices: name up to 40 characters, value up to 140 (the package's types).
const customFields = (at: string): Record<string, number> => ({ [`${at}[][name]`]: 40, [`${at}[][value]`]: 140 });
// Checkout's and payment links' custom fields and texts: labels up to 100 characters, texts up to 1200.
const CHECKOUT_TEXT: Record<string, number> = {
  'custom_fields[][label][custom]': 100, 'custom_fields[][dropdown][options][][label]': 100,
  ...Object.fromEntries(['after_submit', 'shipping_address', 'submit', 'terms_of_service_acceptance'].map((t) => [`custom_text[${t}][message]`, 1200])),
  ...customFields('invoice_creation[invoice_data][custom_fields]'),
};
const CUSTOMER: Record<string, number> = {
  // The package's types: "This may be up to 150 characters" (name, business_name), 512 (email).
  name: 150, business_name: 150, email: 512,
  // Stripe's changelog, 2018-10-31: customer descriptions have a limit of 350 characters.
  description: 350,
  ...customFields('invoice_settings[custom_fields]'),
};
// Stripe's changelog, 2018-10-31: product names up to 250 characters, invoice line item
// descriptions up to 500 (an invoice item's description is its line's). An invoice's memo
// (`description`) is up to 500 characters (support.stripe.com, "Customize invoices").
const PRODUCT: Record<string, number> = { name: 250, 'marketing_features[][name]': 80 };
const PRICE: Record<string, number> = { lookup_key: 200 };
const INVOICE: Record<string, number> = { description: 500, ...customFields('custom_fields') };
const SUBSCRIPTION = customFields('invoice_settings[custom_fields]');

/**
 * Parameters whose documented limit is not 5000, by route, then by name with array indexes
 * written `[]` (`invoice_settings[custom_fields][][name]`).
 */
const STRING_LIMITS: Record<string, Record<string, number>> = {
  'customers.create': CUSTOMER, 'customers.update': CUSTOMER,
  'products.create': PRODUCT, 'products.update': PRODUCT,
  'prices.create': PRICE, 'prices.update': PRICE,
  'invoices.create': INVOICE, 'invoices.update': INVOICE,
  'invoiceitems.create': { description: 500 }, 'invoiceitems.update': { description: 500 },
  'subscriptions.create': SUBSCRIPTION, 'subscriptions.update': SUBSCRIPTION,
  'disputes.update': EVIDENCE_TEXT,
  'checkout.sessions.create': CHECKOUT_TEXT, 'payment_links.create': CHECKOUT_TEXT, 'payment_links.update': CHECKOUT_TEXT,
};

/** The shortest limit anywhere: a string no longer than it needs no name worked out. */
const SHORTEST = 40;

/**
 * Refuses the request's first string parameter over its limit, as Stripe does: 400
 * `Invalid string: <first 10>...<last 10>; must be at most 5000 characters`, naming the parameter.
 */
export function checkStringLengths(raw: Obj, route: string): void {
  walkStrings(raw, '', '', STRING_LIMITS[route], 0);
}

function walkStrings(v: unknown, name: string, pattern: string, limits: Record<string, number> | undefined, depth: number): void {
  if (typeof v === 'string') {
    if (v.length <= SHORTEST) return;
    // A number only: a parameter named `toString` must not find Object.prototype's.
    const own = limits?.[pattern];
    const max = typeof own === 'number' ? own : MAX_STRING;
    if (v.length > max) {
      const shown = v.length > 20 ? `${v.slice(0, 10)}...${v.slice(-10)}` : v;
      throw invalid(`Invalid string: ${shown}; must be at most ${max} characters`, name);
    }
    return;
  }
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) walkStrings(v[i], `${name}[${i}]`, `${pattern}[]`, limits, depth + 1);
  } else if (isObj(v)) {
    for (const k of Object.keys(v)) {
      if (k === 'metadata') continue;
      walkStrings(v[k], name === '' ? k : `${name}[${k}]`, pattern === '' ? k : `${pattern}[${k}]`, limits, depth + 1);
    }
  }
}

/** Parses `application/x-www-form-urlencoded` text in Stripe's bracket syntax. */
export function parseForm(text: string): Obj {
  const query: Record<string, string | string[]> = {};
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const eqAt = pair.indexOf('=');
    const rawName = eqAt < 0 ? pair : pair.slice(0, eqAt);
    const rawValue = eqAt < 0 ? '' : pair.slice(eqAt + 1);
    let name: string, value: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      throw invalid('Invalid form encoding: a malformed percent escape.');
    }
    const prev = query[name];
    if (prev === undefined) query[name] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else query[name] = [prev, value];
  }
  return foldBrackets(query);
}
