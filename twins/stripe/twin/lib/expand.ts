/**
 * `expand[]`: replace an id with its object, nested with dots (`latest_charge.balance_transaction`)
 * and through lists (`data.customer`). Stripe stops at four levels.
 */
import type { Call } from './request.js';
import { invalid } from '../errors.js';
import { load } from './store.js';
import { typeOfId } from './ids.js';
import { clone, isObj, type Obj } from './util.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Array, Map, Set, String } = globalThis;

const MAX_LEVELS = 4;

/** Field names Stripe makes expandable on some object; a null there stays null. */
const EXPANDABLE = new Set([
  'customer', 'payment_method', 'latest_charge', 'product', 'default_price', 'default_payment_method',
  'test_clock', 'balance_transaction', 'charge', 'payment_intent', 'invoice', 'subscription', 'latest_invoice',
  'default_source', 'source', 'setup_intent', 'price', 'on_behalf_of', 'application', 'review',
  'failure_balance_transaction', 'refunds', 'discounts', 'pending_setup_intent', 'latest_attempt', 'mandate',
  'single_use_mandate', 'schedule', 'payment_link', 'transfer', 'destination', 'dispute', 'application_fee',
  'source_transfer', 'transfer_reversal', 'source_transfer_reversal', 'promotion_code', 'coupon', 'plan',
]);

/**
 * Includable fields: absent unless expanded (`invoice.payments`, `charge.refunds`,
 * `customer.subscriptions`). Resources register how to build them, by object type.
 */
const INCLUDABLE = new Map<string, (c: Call, holder: Obj) => unknown>();

export function registerIncludable(objectType: string, field: string, build: (c: Call, holder: Obj) => unknown): void {
  INCLUDABLE.set(`${objectType}.${field}`, build);
}

/** The objects of a walk of records (`newestWhere`), read only as far as they are taken. */
export function* objectsOf(records: Iterable<{ o: Obj }>): Generator<Obj> {
  for (const r of records) yield r.o;
}

/** How many items a list inside an object holds, as at Stripe; the rest is `has_more`. */
export const INCLUDED_LIST_SIZE = 10;

/**
 * A list inside an object (`charge.refunds`, `customer.subscriptions`): its first ten items and
 * `has_more`. Unbounded, `expand[]=data.charge.refunds.data.charge.refunds` over a list of 100
 * refunds of one charge copied a number of objects cubic in the refunds (80 refunds: 322 MB).
 */
export function includedList(items: Iterable<Obj>, url: string): Obj {
  const data: Obj[] = [];
  let hasMore = false;
  for (const item of items) {
    if (data.length === INCLUDED_LIST_SIZE) {
      hasMore = true;
      break;
    }
    data.push(item);
  }
  return { object: 'list', data, has_more: hasMore, url };
}

function resolve(c: Call, id: string): Obj | undefined {
  const type = typeOfId(id);
  if (type === undefined) return undefined;
  return load(c, type, id);
}

function expandOne(c: Call, holder: Obj, parts: string[], full: string): void {
  const [head, ...rest] = parts;
  if (head === undefined) return;
  // Own fields only: `expand[]=__proto__` names no field of the object.
  if (!Object.prototype.hasOwnProperty.call(holder, head)) {
    const build = INCLUDABLE.get(`${String(holder.object)}.${head}`);
    if (build === undefined) throw invalid(`This property cannot be expanded (${full}).`, 'expand');
    holder[head] = build(c, holder);
  }
  let value = holder[head];
  if (typeof value === 'string') {
    const found = resolve(c, value);
    if (found === undefined) throw invalid(`This property cannot be expanded (${full}).`, 'expand');
    value = clone(found);
    holder[head] = value;
  } else if (Array.isArray(value)) {
    // Arrays of ids (`discounts`) expand element-wise; arrays of objects (`data`) pass through.
    value = value.map((v) => {
      if (typeof v !== 'string') return v;
      const found = resolve(c, v);
      return found === undefined ? v : clone(found);
    });
    holder[head] = value;
  } else if (value === null ? !EXPANDABLE.has(head) : !isObj(value)) {
    throw invalid(`This property cannot be expanded (${full}).`, 'expand');
  }
  if (rest.length === 0 || value === null) return;
  if (Array.isArray(value)) {
    for (const v of value) if (isObj(v)) expandOne(c, v, rest, full);
  } else if (isObj(value)) {
    expandOne(c, value, rest, full);
  }
}

/** Expands every path in place; `obj` must be the caller's own copy. */
export function applyExpand(c: Call, obj: Obj, paths: string[]): void {
  for (const path of paths) {
    // `total_count` on a search is an includable field the search itself fills in.
    if (path === '' || path === 'total_count') continue;
    const parts = path.split('.');
    const depth = parts.filter((p) => p !== 'data').length;
    if (depth > MAX_LEVELS) {
      throw invalid(
        `You cannot expand more than ${MAX_LEVELS} levels of a property. Property: ${path}`,
        'expand',
      );
    }
    expandOne(c, obj, parts, path);
  }
}
