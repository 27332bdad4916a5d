/**
 * What the billing sections share: billing time (a period after an anchor, a request seen at a
 * test clock's frozen time), lists embedded in an object and paged whole, and invoice line specs.
 */
import type { Call } from '../lib/request.js';
import { missing } from '../errors.js';
import { includedList } from '../lib/expand.js';
import { load } from '../lib/store.js';
import type { Obj } from '../lib/util.js';

export const DAY = 86_400;

export function iso(sec: number): string {
  return new Date(sec * 1000).toISOString();
}

/** `anchor` moved on by `k` billing periods; months and years keep the anchor's day where the month has it. */
export function periodAfter(anchor: number, interval: string, count: number, k: number): number {
  if (interval === 'day') return anchor + k * count * DAY;
  if (interval === 'week') return anchor + k * count * 7 * DAY;
  const d = new Date(anchor * 1000);
  const months = (interval === 'year' ? 12 : 1) * count * k;
  const y = d.getUTCFullYear(), m = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  const day = Math.min(d.getUTCDate(), lastDay);
  return Math.floor(Date.UTC(y, m, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()) / 1000);
}

/** The Call as seen at another instant (a test clock's frozen time); writes go to the same buffer. */
export function at(c: Call, now: number): Call {
  return { ...c, now, nowMs: now * 1000 };
}

export function clockTime(c: Call, clockId: unknown): number {
  if (typeof clockId !== 'string') return c.now;
  const clock = load(c, 'test_helpers.test_clock', clockId);
  return clock === undefined ? c.now : (clock.frozen_time as number);
}

export interface LineSpec {
  amount: number;
  currency: string;
  description: string;
  quantity: number;
  price: Obj | null;
  period: { start: number; end: number };
  subscriptionItem?: string;
  invoiceItem?: string;
  subscription?: string | null;
  metadata?: Obj;
  /** The line's own tax rate ids (else the invoice's defaults apply). */
  taxRates?: string[];
}

export function idsOf(rates: unknown): string[] {
  return Array.isArray(rates) ? rates.map((r) => (typeof r === 'string' ? r : String((r as Obj).id))) : [];
}

/**
 * A list inside an object as Stripe embeds one (includedList: the first ten items, `has_more`,
 * where to page through them) with the count of them all. Unbounded, 3,000 pending invoice
 * items made every retrieve of their invoice (and its `invoice.created`) 2.7 MB.
 */
export function embedded(all: Obj[], url: string): Obj {
  return { ...includedList(all, url), total_count: all.length };
}

/**
 * A page of a list the twin keeps whole (an invoice's lines, a subscription's items), in its
 * order: `limit` (1–100, 10 by default), `starting_after` or `ending_before` an item's id.
 */
export function pageOf(c: Call, all: Obj[], url: string, noun: string): Obj {
  const limit = c.p.int('limit', 1, 100) ?? 10;
  const cursor = (param: string): number | undefined => {
    const id = c.p.str(param);
    if (id === undefined) return undefined;
    const i = all.findIndex((o) => o.id === id);
    if (i < 0) throw missing(noun, id, param);
    return i;
  };
  const after = cursor('starting_after');
  const before = after === undefined ? cursor('ending_before') : undefined;
  const start = after !== undefined ? after + 1 : before !== undefined ? Math.max(0, before - limit) : 0;
  const end = before !== undefined ? before : Math.min(all.length, start + limit);
  const hasMore = before !== undefined ? start > 0 : end < all.length;
  return { object: 'list', data: all.slice(start, end), has_more: hasMore, url };
}
