/**
 * How a Stripe object the root shows becomes the twin's records: what a refresh copies (KINDS),
 * the call a root's read or webhook runs as, and filing one object with the records the
 * twin's routes read beside it (a subscription's items past the ten it embeds, an invoice's
 * lines past ten).
 */
import type { TwinContext } from '../../../../sdk/twin/types.js';
import type { Call } from '../lib/request.js';
import { Params } from '../lib/params.js';
import { fileCopy, loadRec, type Rec } from '../lib/store.js';
import { TxTree } from '../lib/tx.js';
import { isObj, seconds, type Obj } from '../lib/util.js';
import { INCLUDED_LIST_SIZE } from '../lib/expand.js';
import { LINES } from '../resources/invoices.js';
import { ITEMS, ITEM_OF } from '../resources/subscription_periods.js';

/** A Stripe list a refresh reads whole, and the object type (also the twin's record type) of its items. */
export interface Kind {
  type: string;
  path: string;
  /** Beyond `limit` and `starting_after`. */
  query?: Record<string, string>;
  /** Whether `<type>.deleted` means it is gone (a subscription's means canceled: it stays, as at Stripe). */
  deletes: boolean;
}

export const KINDS: readonly Kind[] = [
  { type: 'customer', path: '/v1/customers', deletes: true },
  { type: 'product', path: '/v1/products', deletes: true },
  { type: 'price', path: '/v1/prices', deletes: true },
  { type: 'coupon', path: '/v1/coupons', deletes: true },
  { type: 'subscription', path: '/v1/subscriptions', query: { status: 'all' }, deletes: false },
  { type: 'invoice', path: '/v1/invoices', deletes: true },
  { type: 'webhook_endpoint', path: '/v1/webhook_endpoints', deletes: true },
];

export function kindOf(type: string): Kind | undefined {
  return KINDS.find((k) => k.type === type);
}

/** An id the twin can file (`<acct>/<id>`): Stripe's, and the custom ids of products and coupons. */
const OBJECT_ID = /^[\x21-\x7e]{1,255}$/;

/** The object, when it is a `type` with an id the twin can file; else undefined. */
export function copyable(o: unknown, type: string): Obj | undefined {
  return isObj(o) && o.object === type && typeof o.id === 'string' && OBJECT_ID.test(o.id) ? o : undefined;
}

/**
 * The call a root's read or webhook runs as, for `acct`: its writes are buffered and applied by
 * `done` (a read that throws leaves none). It emits nothing and schedules nothing.
 */
export function copyCall(ctx: TwinContext, acct: string): Call {
  const nowMs = ctx.nowMs();
  return {
    req: { method: 'ROOT', path: '', params: {}, query: {}, headers: {}, body: undefined, requestId: '', readOnly: false },
    ctx, tree: new TxTree(ctx.tree), acct, p: new Params({}), requestId: '', idempotencyKey: null,
    nowMs, now: seconds(nowMs), emits: [], schedules: [], endpoints: undefined, automatic: true,
  };
}

export function done(c: Call): void {
  (c.tree as TxTree).commit();
}

/** The list an object embeds (`items`, `lines`), made one to page through when it embeds none. */
function embeddedList(o: Obj, field: string, url: string): Obj {
  const list = o[field];
  if (isObj(list) && Array.isArray(list.data)) return list;
  const made: Obj = { object: 'list', data: [], has_more: true, total_count: 0, url };
  o[field] = made;
  return made;
}

/** A read the object needs besides its list page: all of what it embeds only ten of. */
export interface Aside {
  type: 'subscription' | 'invoice';
  id: string;
}

/**
 * Files one copied object of `type` at seq `s` (`stored`: its record before, if any), as a
 * refresh or a webhook shows it. Answers what else must be read for it (a refresh reads it).
 * `ingest`: from a webhook, which cannot read more (what was kept aside stays until a refresh),
 * and is folded whole: the records the stored object had and this one has not are removed. A
 * refresh removes none: the stored object may be the world's own edit, which the runner keeps
 * while the root's object is unchanged, and records the root no longer shows are swept.
 */
export function fileObject(c: Call, type: string, o: Obj, s: number, stored: Rec | undefined, ingest: boolean): Aside | undefined {
  const was = ingest && stored !== undefined && stored.u !== true ? stored.o : undefined;
  // Stripe answers an endpoint's secret only to its create: a copy keeps none if one came anyway.
  if (type === 'webhook_endpoint') delete o.secret;
  let aside: Aside | undefined;
  if (type === 'subscription' || type === 'invoice') {
    const id = o.id as string;
    const field = type === 'subscription' ? 'items' : 'lines';
    const list = embeddedList(o, field, type === 'subscription' ? `/v1/subscription_items?subscription=${id}` : `/v1/invoices/${id}/lines`);
    if (list.has_more === true) aside = { type, id };
    else if (was !== undefined) dropAside(c, type, id, was);
  }
  fileCopy(c, type, o, s, was);
  return ingest ? undefined : aside;
}

/** The records kept aside for what `was` embedded only ten of, when the object now embeds all. */
function dropAside(c: Call, type: string, id: string, was: Obj): void {
  const field = type === 'subscription' ? 'items' : 'lines';
  const list = was[field];
  if (!isObj(list) || list.has_more !== true) return;
  if (type === 'invoice') {
    c.tree.delete(LINES, `${c.acct}/${id}`);
    return;
  }
  const all = c.tree.get<Obj[]>(ITEMS, `${c.acct}/${id}`) ?? [];
  for (const item of all.slice(INCLUDED_LIST_SIZE)) if (typeof item.id === 'string') c.tree.delete(ITEM_OF, `${c.acct}/${item.id}`);
  c.tree.delete(ITEMS, `${c.acct}/${id}`);
}

/**
 * Keeps aside all of what a stored object embeds ten of (`all`, as the root listed them): a
 * subscription's items (and each one past the ten, findable by its id), an invoice's lines.
 * Those it embeds come first, in its order, as the twin's own lists keep them.
 */
export function keepAside(c: Call, aside: Aside, all: Obj[]): void {
  const rec = loadRec(c, aside.type, aside.id);
  if (rec === undefined) return;
  const list = rec.o[aside.type === 'subscription' ? 'items' : 'lines'] as Obj;
  const shown = (list.data as Obj[]).filter((item) => isObj(item) && typeof item.id === 'string');
  const seen = new Set(shown.map((item) => item.id as string));
  const whole = [...shown, ...all.filter((item) => isObj(item) && typeof item.id === 'string' && !seen.has(item.id as string))];
  if (shown.length === 0 && whole.length > 0) {
    // The root embedded none (embeddedList): the object shows the first ten, as Stripe's do.
    const o = { ...rec.o, [aside.type === 'subscription' ? 'items' : 'lines']: { ...list, data: whole.slice(0, INCLUDED_LIST_SIZE), has_more: whole.length > INCLUDED_LIST_SIZE, total_count: whole.length } };
    fileCopy(c, aside.type, o, rec.s, rec.o);
  }
  if (aside.type === 'invoice') {
    c.tree.put(LINES, `${c.acct}/${aside.id}`, whole);
    return;
  }
  c.tree.put(ITEMS, `${c.acct}/${aside.id}`, whole);
  for (const item of whole.slice(INCLUDED_LIST_SIZE)) c.tree.put(ITEM_OF, `${c.acct}/${item.id as string}`, aside.id);
}
