/**
 * A subscription's items and billing periods, the lines a period bills, and when the twin
 * next looks at it (renewals, retries, expiry, the `invoice.upcoming` and trial notices).
 */
import { cancelMove, type Call } from '../lib/request.js';
import { INCLUDED_LIST_SIZE } from '../lib/expand.js';
import { load } from '../lib/store.js';
import { clone, isObj, type Obj } from '../lib/util.js';
import { DAY, iso, periodAfter, at, embedded, type LineSpec, idsOf } from './billing_shared.js';

/** All of a subscription's items, when it has more than it embeds (keyed `<acct>/<sub_id>`). */
export const ITEMS = 'subscription.items';

/** An item a subscription does not embed → the subscription (the `item` index files those it does). */
export const ITEM_OF = 'subscription.item';

/** Every item of a subscription (its `items` embeds the first ten), in a new array. */
export function itemsOf(c: Call, sub: Obj): Obj[] {
  const list = sub.items as Obj;
  if (list.has_more !== true) return [...(list.data as Obj[])];
  return [...(c.tree.get<Obj[]>(ITEMS, `${c.acct}/${sub.id as string}`) ?? (list.data as Obj[]))];
}

/**
 * Sets a subscription's items: the first ten embedded in `items`, as Stripe embeds them, and
 * when there are more, all of them kept aside and each one not embedded findable by its id.
 */
export function setItems(c: Call, sub: Obj, items: Obj[]): void {
  const id = sub.id as string;
  const list = isObj(sub.items) ? sub.items : undefined;
  // Not embedded before: what it kept aside (a subscription stored before embedded them all).
  const shown = new Set(list === undefined ? [] : (list.data as Obj[]).map((i) => i.id as string));
  const was = new Set(list === undefined ? [] : itemsOf(c, sub).map((i) => i.id as string).filter((si) => !shown.has(si)));
  const now = new Set(items.slice(INCLUDED_LIST_SIZE).map((i) => i.id as string));
  for (const si of was) if (!now.has(si)) c.tree.delete(ITEM_OF, `${c.acct}/${si}`);
  for (const si of now) if (!was.has(si)) c.tree.put(ITEM_OF, `${c.acct}/${si}`, id);
  if (items.length > INCLUDED_LIST_SIZE) c.tree.put(ITEMS, `${c.acct}/${id}`, clone(items));
  else if (list?.has_more === true) c.tree.delete(ITEMS, `${c.acct}/${id}`);
  sub.items = embedded(items, `/v1/subscription_items?subscription=${id}`);
}

export function periodOf(sub: Obj): { start: number; end: number } {
  const first = ((sub.items as Obj).data as Obj[])[0] as Obj;
  return { start: first.current_period_start as number, end: first.current_period_end as number };
}

export function setPeriod(c: Call, sub: Obj, start: number, end: number): void {
  const items = itemsOf(c, sub).map((item) => ({ ...item, current_period_start: start, current_period_end: end }));
  setItems(c, sub, items);
}

export function recurringOf(sub: Obj): { interval: string; count: number } {
  const item = ((sub.items as Obj).data as Obj[])[0] as Obj;
  const rec = (item.price as Obj).recurring as Obj;
  return { interval: rec.interval as string, count: rec.interval_count as number };
}

export function cycleLines(c: Call, sub: Obj, start: number, end: number, trial = false): LineSpec[] {
  return itemsOf(c, sub).map((item) => {
    const price = item.price as Obj;
    const qty = (item.quantity as number) ?? 1;
    const unit = (price.unit_amount as number) ?? 0;
    const product = typeof price.product === 'string' ? price.product : '';
    const name = (price.nickname as string | null) ?? product;
    return {
      amount: trial ? 0 : unit * qty, currency: price.currency as string,
      description: trial ? `Trial period for ${name}` : `${qty} × ${name} (at ${(unit / 100).toFixed(2)} / ${(price.recurring as Obj).interval as string})`,
      quantity: qty, price, period: { start, end }, subscriptionItem: item.id as string, subscription: sub.id as string,
      taxRates: idsOf(item.tax_rates),
    };
  });
}

/** Days between payment retries of a failed renewal; after the last one fails the subscription ends. */
export const RETRY_DAYS = [3, 5, 7];

/** An `incomplete` subscription whose first invoice stays unpaid expires after 23 hours. */
export const INCOMPLETE_TTL = 23 * 3600;

/** When the twin next has to look at a subscription: a period end, a retry, or an expiry. */
export function nextDue(c: Call, sub: Obj): number {
  if (sub.status === 'incomplete') return (sub.created as number) + INCOMPLETE_TTL;
  let due = periodOf(sub).end;
  if (typeof sub.cancel_at === 'number') due = Math.min(due, sub.cancel_at);
  if (isObj(sub.pause_collection) && typeof sub.pause_collection.resumes_at === 'number') due = Math.min(due, sub.pause_collection.resumes_at);
  if (sub.status === 'past_due' && typeof sub.latest_invoice === 'string') {
    const inv = load(c, 'invoice', sub.latest_invoice);
    if (inv !== undefined && inv.status === 'open' && typeof inv.next_payment_attempt === 'number') due = Math.min(due, inv.next_payment_attempt);
  }
  return due;
}

export function scheduleRenewal(c: Call, sub: Obj): void {
  const key = `sub.${c.acct}.${sub.id as string}`;
  const trialKey = `trial.${c.acct}.${sub.id as string}`;
  if (typeof sub.test_clock === 'string' || sub.status === 'canceled' || sub.status === 'incomplete_expired') {
    cancelMove(c, key, trialKey, `upcoming.${c.acct}.${sub.id as string}`);
    return;
  }
  c.schedules.push({ id: key, move: 'renew', dueAt: iso(nextDue(c, sub)), data: { acct: c.acct, id: sub.id } });
  // `invoice.upcoming` goes out a week before a renewal (at once when less is left).
  const upcomingKey = `upcoming.${c.acct}.${sub.id as string}`;
  const { end } = periodOf(sub);
  if (sub.status !== 'incomplete' && sub.cancel_at_period_end !== true && end > c.now) {
    c.schedules.push({ id: upcomingKey, move: 'invoiceUpcoming', dueAt: iso(Math.max(c.now, end - 7 * DAY)), data: { acct: c.acct, id: sub.id, periodEnd: end } });
  } else {
    cancelMove(c, upcomingKey);
  }
  // Stripe warns three days before a trial ends (at once when less is left).
  if (sub.status === 'trialing' && typeof sub.trial_end === 'number') {
    c.schedules.push({ id: trialKey, move: 'trialWillEnd', dueAt: iso(Math.max(c.now, sub.trial_end - 3 * DAY)), data: { acct: c.acct, id: sub.id, trialEnd: sub.trial_end } });
  } else {
    cancelMove(c, trialKey);
  }
}

/** How many whole periods lie between the anchor and `at` (for anchoring months on the anchor's day). */
export function countPeriods(sub: Obj, atTime: number, interval: string, count: number): number {
  const anchor = sub.billing_cycle_anchor as number;
  let k = 0;
  while (periodAfter(anchor, interval, count, k + 1) <= atTime && k < 10_000) k++;
  return k;
}
