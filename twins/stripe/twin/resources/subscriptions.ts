/**
 * Subscriptions and subscription items: items, trials, default payment method, cancel now and
 * at period end, paused collection; each period invoiced (invoices.ts). Renewals are timed moves
 * on the world clock; a subscription on a test clock renews when its clock is advanced.
 */
import type { Move, Route } from '../../../../sdk/twin/types.js';
import { route, runMove } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { StripeError, invalid, paramMissing } from '../errors.js';
import { event, previousAttributes, saveWithEvent, updated } from '../lib/events.js';
import { includedList, registerIncludable } from '../lib/expand.js';
import { applyMetadata } from '../lib/metadata.js';
import type { Params } from '../lib/params.js';
import { search } from '../lib/search.js';
import { insert, load, mustLoad, newId, save } from '../lib/store.js';
import { eq, is, listOf, matching, newestWhere, type Filter } from '../lib/lists.js';
import { clone, isObj, type Obj } from '../lib/util.js';
import { makePrice } from './catalog.js';
import { resolvePaymentMethod } from './payment_methods.js';
import { taxRatesParam } from './tax.js';
import { DAY, periodAfter, at, clockTime, pageOf } from './billing_shared.js';
import { discountsParam } from './discounts.js';
import { pendingItems, createInvoiceRecord, finalize, attemptPayment, uncollectible, buildPreview } from './invoices.js';
import { ITEM_OF, itemsOf, setItems, periodOf, setPeriod, recurringOf, countPeriods, cycleLines, RETRY_DAYS, INCOMPLETE_TTL, nextDue, scheduleRenewal } from './subscription_periods.js';

function planOf(price: Obj): Obj {
  const rec = (price.recurring ?? {}) as Obj;
  return {
    id: price.id, object: 'plan', active: price.active, amount: price.unit_amount, amount_decimal: price.unit_amount_decimal,
    billing_scheme: price.billing_scheme, created: price.created, currency: price.currency, interval: rec.interval ?? null,
    interval_count: rec.interval_count ?? null, livemode: false, metadata: clone(price.metadata), meter: null,
    nickname: price.nickname, product: price.product, tiers_mode: null, transform_usage: null,
    trial_period_days: rec.trial_period_days ?? null, usage_type: rec.usage_type ?? 'licensed',
  };
}

/** "A list of up to 20 subscription items" (docs.stripe.com/api/subscriptions/create). */
const MAX_ITEMS = 20;

function tooManyItems(param: string): StripeError {
  return invalid(`A subscription can have up to ${MAX_ITEMS} items.`, param);
}

function subItem(c: Call, subId: string, p: Params, created: number): Obj {
  let price: Obj;
  const priceId = p.str('price');
  const priceData = p.obj('price_data');
  if (priceId !== undefined) price = mustLoad(c, 'price', priceId, 'price', p.name('price'));
  else if (priceData !== undefined && priceData !== null) price = makePrice(c, priceData);
  else throw paramMissing(p.name('price'));
  if (price.type !== 'recurring') {
    throw invalid(`The price specified is set to \`type=one_time\` but this field only accepts prices with \`type=recurring\`.`, p.name('price'));
  }
  if (price.active === false) throw invalid(`The price specified is inactive. This field only accepts active prices.`, p.name('price'));
  return {
    id: c.ctx.id('si_', 14), object: 'subscription_item', billing_thresholds: null, created, current_period_end: 0,
    current_period_start: 0, discounts: [], metadata: applyMetadata(undefined, p.get('metadata')), plan: planOf(price),
    price: clone(price), quantity: p.int('quantity', 0) ?? 1, subscription: subId, tax_rates: taxRatesParam(c, p, 'tax_rates') ?? [],
  };
}

function checkItems(items: Obj[], param: string): void {
  const first = items[0]?.price as Obj | undefined;
  if (first === undefined) throw paramMissing(param);
  if (items.length > MAX_ITEMS) throw tooManyItems(param);
  const r0 = first.recurring as Obj;
  for (const item of items) {
    const price = item.price as Obj;
    const r = price.recurring as Obj;
    if (price.currency !== first.currency || r.interval !== r0.interval || r.interval_count !== r0.interval_count) {
      throw invalid('Currency and interval fields must match across all plans on this subscription.', param);
    }
  }
}

/** Issues the invoice for a period and tries to collect it. Answers the decline, if any. */
function bill(c: Call, sub: Obj, reason: string, start: number, end: number, first: boolean, attempt: boolean, trial = false): { inv: Obj; error?: StripeError } {
  const cus = mustLoad(c, 'customer', sub.customer as string, 'customer');
  const id = newId(c, 'invoice', 'in_', 24);
  // Pending invoice items of this customer ride along on the subscription's invoice.
  const extra = pendingItems(c, cus.id as string, sub.id as string, id);
  const inv = createInvoiceRecord(c, id, {
    customer: cus, subscription: sub, lines: [...cycleLines(c, sub, start, end, trial), ...extra], reason, collectionMethod: sub.collection_method as string,
    daysUntilDue: (sub.days_until_due as number | null) ?? null, autoAdvance: true, discounts: sub.discounts as string[],
    firstInvoice: first, currency: sub.currency as string, description: (sub.description as string | null) ?? null,
    defaultTaxRates: (sub.default_tax_rates as Obj[] | null) ?? [],
  });
  sub.latest_invoice = inv.id;
  // Paused collection: the period's invoice is left as a draft, voided, or written off.
  const pause = isObj(sub.pause_collection) ? sub.pause_collection.behavior : null;
  if (pause === 'keep_as_draft') return { inv };
  if (pause === 'void') {
    inv.status = 'void';
    inv.amount_remaining = 0;
    (inv.status_transitions as Obj).voided_at = c.now;
    saveWithEvent(c, 'invoice', inv, 'invoice.voided');
    return { inv };
  }
  finalize(c, inv);
  if (pause === 'mark_uncollectible' && inv.status === 'open') {
    inv.status = 'uncollectible';
    (inv.status_transitions as Obj).marked_uncollectible_at = c.now;
    saveWithEvent(c, 'invoice', inv, 'invoice.marked_uncollectible');
    return { inv };
  }
  if (inv.status === 'paid' || sub.collection_method === 'send_invoice' || !attempt) return { inv };
  const error = attemptPayment(c, inv);
  return error === undefined ? { inv } : { inv, error };
}

export function createSub(c0: Call): Obj {
  const customerId = c0.p.reqStr('customer');
  const customer = mustLoad(c0, 'customer', customerId, 'customer', 'customer');
  const c = at(c0, clockTime(c0, customer.test_clock));
  const id = newId(c, 'subscription', 'sub_', 24);
  const itemParams = c.p.objects('items');
  if (itemParams === undefined || itemParams.length === 0) throw paramMissing('items');
  if (itemParams.length > MAX_ITEMS) throw tooManyItems('items');
  const items = itemParams.map((p) => subItem(c, id, p, c.now));
  checkItems(items, 'items');
  const pmId = c.p.nullableStr('default_payment_method') ?? null;
  if (pmId !== null) {
    const pm = resolvePaymentMethod(c, pmId, 'default_payment_method');
    if (pm.customer !== customerId) {
      throw invalid(`The customer does not have a payment method with the ID ${pmId}. The payment method must be attached to the customer.`, 'default_payment_method', 'resource_missing');
    }
  }
  const collection = c.p.oneOf('collection_method', ['charge_automatically', 'send_invoice'] as const) ?? 'charge_automatically';
  const daysUntilDue = c.p.int('days_until_due', 0) ?? null;
  if (collection === 'send_invoice' && daysUntilDue === null) throw paramMissing('days_until_due');
  const behavior = c.p.oneOf('payment_behavior', ['allow_incomplete', 'default_incomplete', 'error_if_incomplete', 'pending_if_incomplete'] as const) ?? 'allow_incomplete';
  const price0 = items[0]?.price as Obj;
  const rec0 = price0.recurring as Obj;
  // Trials: an explicit end, a number of days, or the price's own trial.
  let trialEnd: number | null = null;
  const trialEndParam = c.p.str('trial_end');
  if (trialEndParam !== undefined && trialEndParam !== 'now') {
    trialEnd = c.p.int('trial_end') as number;
    if (trialEnd <= c.now) throw invalid('Invalid timestamp: must be an integer Unix timestamp in the future.', 'trial_end');
  }
  const trialDays = c.p.int('trial_period_days', 0, 730);
  if (trialEnd === null && trialDays !== undefined && trialDays > 0) trialEnd = c.now + trialDays * DAY;
  if (trialEnd === null && c.p.bool('trial_from_plan') === true && typeof rec0.trial_period_days === 'number') {
    trialEnd = c.now + rec0.trial_period_days * DAY;
  }
  const cancelAt = c.p.int('cancel_at');
  const sub: Obj = {
    id, object: 'subscription', application: null, application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: trialEnd ?? c.now, billing_cycle_anchor_config: null,
    billing_mode: { flexible: null, type: 'classic', updated_at: c.now }, billing_schedules: [], billing_thresholds: null,
    cancel_at: cancelAt ?? null, cancel_at_period_end: c.p.bool('cancel_at_period_end') ?? false, canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null }, collection_method: collection,
    created: c.now, currency: price0.currency, customer: customerId, customer_account: null, days_until_due: daysUntilDue,
    default_payment_method: pmId, default_source: null, default_tax_rates: taxRatesParam(c, c.p, 'default_tax_rates') ?? [], description: c.p.nullableStr('description') ?? null,
    discounts: [], ended_at: null, invoice_settings: { account_tax_ids: null, custom_fields: null, description: null, footer: null, issuer: { type: 'self' } },
    items: null,
    latest_invoice: null, livemode: false, managed_payments: null, metadata: applyMetadata(undefined, c.p.get('metadata')),
    next_pending_invoice_item_invoice: null, on_behalf_of: null, pause_collection: null,
    payment_settings: { payment_method_options: null, payment_method_types: null, save_default_payment_method: 'off' },
    pending_invoice_item_interval: null, pending_setup_intent: null, pending_update: null, schedule: null,
    start_date: c.now, status: trialEnd !== null ? 'trialing' : 'incomplete', test_clock: customer.test_clock ?? null,
    transfer_data: null, trial_end: trialEnd, trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } },
    trial_start: trialEnd !== null ? c.now : null,
  };
  sub.discounts = discountsParam(c, c.p, customerId, id);
  const end = trialEnd ?? periodAfter(c.now, rec0.interval as string, rec0.interval_count as number, 1);
  setItems(c, sub, items.map((item) => ({ ...item, current_period_start: c.now, current_period_end: end })));
  insert(c, 'subscription', sub);
  const { inv, error } = bill(c, sub, 'subscription_create', c.now, end, true, behavior !== 'default_incomplete', trialEnd !== null);
  if (trialEnd !== null) sub.status = 'trialing';
  else if (inv.status === 'paid' || collection === 'send_invoice') sub.status = 'active';
  else sub.status = 'incomplete';
  if (error !== undefined && behavior === 'error_if_incomplete') {
    // Stripe makes no subscription when the first payment fails under error_if_incomplete.
    throw new StripeError(error.status, error.type, error.message, error.fields);
  }
  saveWithEvent(c, 'subscription', sub, 'customer.subscription.created');
  scheduleRenewal(c, sub);
  return sub;
}

function cancelNow(c: Call, sub: Obj, reason: string): void {
  const before = clone(sub);
  sub.status = 'canceled';
  sub.canceled_at = sub.canceled_at ?? c.now;
  sub.ended_at = c.now;
  (sub.cancellation_details as Obj).reason = reason;
  save(c, 'subscription', sub);
  scheduleRenewal(c, sub);
  event(c, 'customer.subscription.deleted', sub, previousAttributes(before, sub));
}

/**
 * Moves a subscription through everything due at or before `c.now`, oldest first: the
 * expiry of an unpaid first invoice, payment retries of a failed renewal, `cancel_at`,
 * and period ends (renew and invoice, or end at `cancel_at_period_end`).
 */
export function catchUp(c: Call, subId: string, from?: number): void {
  let seen = from;
  for (let guard = 0; guard < 500; guard++) {
    const sub = load(c, 'subscription', subId);
    if (sub === undefined || ['canceled', 'incomplete_expired'].includes(sub.status as string)) return;
    // On a test clock there are no timed moves: the notices that fell due in the jump go out here.
    if (seen !== undefined) {
      const upTo = Math.min(c.now, nextDue(c, sub));
      notices(c, sub, seen, upTo);
      seen = upTo;
    }
    if (sub.status === 'incomplete') {
      const expiry = (sub.created as number) + INCOMPLETE_TTL;
      if (expiry <= c.now) expireIncomplete(at(c, expiry), sub);
      else scheduleRenewal(c, sub);
      return;
    }
    const { end } = periodOf(sub);
    const cancelAt = typeof sub.cancel_at === 'number' ? sub.cancel_at : null;
    const retryInv = sub.status === 'past_due' && typeof sub.latest_invoice === 'string' ? load(c, 'invoice', sub.latest_invoice) : undefined;
    const retryAt = retryInv !== undefined && retryInv.status === 'open' && typeof retryInv.next_payment_attempt === 'number' ? retryInv.next_payment_attempt : null;
    const resumeAt = isObj(sub.pause_collection) && typeof sub.pause_collection.resumes_at === 'number' ? sub.pause_collection.resumes_at : null;
    const due = Math.min(end, cancelAt ?? Infinity, retryAt ?? Infinity, resumeAt ?? Infinity);
    if (due > c.now) {
      scheduleRenewal(c, sub);
      return;
    }
    if (resumeAt !== null && due === resumeAt) {
      // The pause ends at `resumes_at`: collection resumes from the next invoice.
      const before = clone(sub);
      sub.pause_collection = null;
      save(c, 'subscription', sub);
      updated(at(c, resumeAt), 'customer.subscription.updated', before, sub);
      continue;
    }
    if (cancelAt !== null && due === cancelAt) {
      cancelNow(at(c, cancelAt), sub, 'cancellation_requested');
      return;
    }
    if (retryAt !== null && due === retryAt && retryInv !== undefined) {
      retry(at(c, retryAt), sub, clone(retryInv));
      continue;
    }
    const cc = at(c, end);
    if (sub.cancel_at_period_end === true) {
      cancelNow(cc, sub, 'cancellation_requested');
      return;
    }
    const before = clone(sub);
    const { interval, count } = recurringOf(sub);
    const next = periodAfter(sub.billing_cycle_anchor as number, interval, count, 1 + Math.round(countPeriods(sub, end, interval, count)));
    setPeriod(cc, sub, end, next);
    const { inv, error } = bill(cc, sub, 'subscription_cycle', end, next, false, true);
    // While collection is paused the status stays as it was.
    const paused = isObj(sub.pause_collection);
    if (!paused && (inv.status === 'paid' || sub.collection_method === 'send_invoice')) sub.status = 'active';
    else if (!paused && (error !== undefined || inv.status === 'open')) {
      sub.status = 'past_due';
      inv.next_payment_attempt = end + (RETRY_DAYS[0] as number) * DAY;
      save(cc, 'invoice', inv);
    }
    save(cc, 'subscription', sub);
    updated(cc, 'customer.subscription.updated', before, sub);
  }
}

/** `customer.subscription.trial_will_end` and `invoice.upcoming` that fall in (from, to]. */
function notices(c: Call, sub: Obj, from: number, to: number): void {
  if (!['active', 'trialing', 'past_due'].includes(sub.status as string)) return;
  const trialNotice = typeof sub.trial_end === 'number' ? sub.trial_end - 3 * DAY : null;
  if (sub.status === 'trialing' && trialNotice !== null && trialNotice > from && trialNotice <= to) {
    event(at(c, trialNotice), 'customer.subscription.trial_will_end', sub);
  }
  const upcomingAt = periodOf(sub).end - 7 * DAY;
  if (sub.cancel_at_period_end !== true && upcomingAt > from && upcomingAt <= to) {
    const customer = load(c, 'customer', sub.customer as string);
    const preview = customer === undefined ? undefined : buildPreview(at(c, upcomingAt), customer, sub);
    if (preview !== undefined) event(at(c, upcomingAt), 'invoice.upcoming', preview);
  }
}

/** Retries a failed renewal's payment; after the last retry fails, the subscription ends. */
function retry(c: Call, sub: Obj, inv: Obj): void {
  const error = attemptPayment(c, inv);
  if (error === undefined) return;
  const retries = (inv.attempt_count as number) - 1;
  const wait = RETRY_DAYS[retries];
  if (wait === undefined) {
    inv.next_payment_attempt = null;
    save(c, 'invoice', inv);
    const copy = clone(load(c, 'subscription', sub.id as string) ?? sub);
    copy.canceled_at = c.now;
    cancelNow(c, copy, 'payment_failed');
    return;
  }
  inv.next_payment_attempt = c.now + wait * DAY;
  save(c, 'invoice', inv);
}

/** The first invoice went unpaid for 23 hours: the subscription expires and the invoice is voided. */
function expireIncomplete(c: Call, sub: Obj): void {
  if (typeof sub.latest_invoice === 'string') {
    const inv = load(c, 'invoice', sub.latest_invoice);
    if (inv !== undefined && inv.status === 'open') {
      inv.status = 'void';
      inv.amount_remaining = 0;
      (inv.status_transitions as Obj).voided_at = c.now;
      saveWithEvent(c, 'invoice', inv, 'invoice.voided');
    }
  }
  const before = clone(sub);
  sub.status = 'incomplete_expired';
  sub.ended_at = c.now;
  save(c, 'subscription', sub);
  scheduleRenewal(c, sub);
  event(c, 'customer.subscription.deleted', sub, previousAttributes(before, sub));
}

function updateSub(c0: Call): Obj {
  const id = c0.req.params.id as string;
  const stored = mustLoad(c0, 'subscription', id, 'subscription');
  const c = at(c0, clockTime(c0, stored.test_clock));
  const before = clone(stored);
  const sub = clone(stored);
  if (sub.status === 'canceled') {
    const allowed = Object.keys(c.p.raw).every((k) => ['metadata', 'cancellation_details', 'expand'].includes(k));
    if (!allowed) throw invalid('A canceled subscription can only update its cancellation_details and metadata.');
  }
  if (c.p.has('cancel_at_period_end')) {
    sub.cancel_at_period_end = c.p.bool('cancel_at_period_end');
    sub.canceled_at = sub.cancel_at_period_end === true ? c.now : null;
    (sub.cancellation_details as Obj).reason = sub.cancel_at_period_end === true ? 'cancellation_requested' : null;
  }
  if (c.p.has('cancel_at')) sub.cancel_at = c.p.str('cancel_at') === '' ? null : c.p.int('cancel_at');
  const details = c.p.obj('cancellation_details');
  if (details !== undefined && details !== null) {
    if (details.has('comment')) (sub.cancellation_details as Obj).comment = details.nullableStr('comment') ?? null;
    if (details.has('feedback')) (sub.cancellation_details as Obj).feedback = details.nullableStr('feedback') ?? null;
  }
  if (c.p.has('default_payment_method')) {
    const pmId = c.p.nullableStr('default_payment_method') ?? null;
    if (pmId !== null) {
      const pm = resolvePaymentMethod(c, pmId, 'default_payment_method');
      if (pm.customer !== sub.customer) throw invalid(`The customer does not have a payment method with the ID ${pmId}. The payment method must be attached to the customer.`, 'default_payment_method', 'resource_missing');
    }
    sub.default_payment_method = pmId;
  }
  if (c.p.has('description')) sub.description = c.p.nullableStr('description') ?? null;
  if (c.p.has('pause_collection')) {
    const pause = c.p.obj('pause_collection');
    sub.pause_collection = pause === null || pause === undefined ? null : {
      behavior: pause.oneOf('behavior', ['keep_as_draft', 'mark_uncollectible', 'void'] as const) ?? (() => { throw paramMissing('pause_collection[behavior]'); })(),
      resumes_at: pause.int('resumes_at') ?? null,
    };
  }
  if (c.p.has('default_tax_rates')) sub.default_tax_rates = taxRatesParam(c, c.p, 'default_tax_rates') ?? [];
  if (c.p.has('collection_method')) sub.collection_method = c.p.oneOf('collection_method', ['charge_automatically', 'send_invoice'] as const);
  if (c.p.has('days_until_due')) sub.days_until_due = c.p.int('days_until_due', 0) ?? null;
  sub.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  const itemParams = c.p.objects('items');
  if (itemParams !== undefined) {
    // Price and quantity changes take effect from the next invoice (no prorations).
    const items = itemsOf(c, sub);
    const { start, end } = periodOf(sub);
    itemParams.forEach((p) => {
      const itemId = p.str('id');
      if (itemId !== undefined) {
        const idx = items.findIndex((i) => i.id === itemId);
        if (idx < 0) throw invalid(`No such subscription item: '${itemId}'`, p.name('id'), 'resource_missing');
        if (p.bool('deleted') === true) { items.splice(idx, 1); return; }
        const item = items[idx] as Obj;
        if (p.has('price') || p.has('price_data')) {
          const fresh = subItem(c, id, p, item.created as number);
          item.price = fresh.price;
          item.plan = fresh.plan;
        }
        if (p.has('quantity')) item.quantity = p.int('quantity', 0);
        item.metadata = applyMetadata(item.metadata as Obj, p.get('metadata'));
      } else {
        const fresh = subItem(c, id, p, c.now);
        fresh.current_period_start = start;
        fresh.current_period_end = end;
        items.push(fresh);
      }
    });
    checkItems(items, 'items');
    setItems(c, sub, items);
  }
  const trialEnd = c.p.str('trial_end');
  save(c, 'subscription', sub);
  if (trialEnd === 'now' && sub.status === 'trialing') {
    // Ending the trial now starts a paid period at once.
    sub.trial_end = c.now;
    sub.billing_cycle_anchor = c.now;
    setPeriod(c, sub, periodOf(sub).start, c.now);
    save(c, 'subscription', sub);
    updated(c, 'customer.subscription.updated', before, sub);
    catchUp(c, id);
    return mustLoad(c, 'subscription', id, 'subscription');
  }
  updated(c, 'customer.subscription.updated', before, sub);
  scheduleRenewal(c, sub);
  return sub;
}

function cancelSub(c0: Call): Obj {
  const id = c0.req.params.id as string;
  const stored = mustLoad(c0, 'subscription', id, 'subscription');
  const c = at(c0, clockTime(c0, stored.test_clock));
  const sub = clone(stored);
  if (sub.status === 'canceled') throw invalid(`This subscription has already been canceled.`, undefined, 'resource_missing');
  const details = c.p.obj('cancellation_details');
  if (details !== undefined && details !== null) {
    (sub.cancellation_details as Obj).comment = details.nullableStr('comment') ?? null;
    (sub.cancellation_details as Obj).feedback = details.nullableStr('feedback') ?? null;
  }
  sub.canceled_at = c.now;
  cancelNow(c, sub, 'cancellation_requested');
  return sub;
}

function listSubs(c: Call): Obj {
  const status = c.p.str('status');
  const price = c.p.str('price');
  const filters: (Filter | undefined)[] = [
    eq(c, 'customer'), eq(c, 'test_clock'),
    status === undefined ? (o) => o.status !== 'canceled' && o.status !== 'incomplete_expired'
      : status === 'all' ? undefined : (o) => o.status === status,
    price === undefined ? undefined : (o) => itemsOf(c, o).some((i) => (i.price as Obj).id === price),
  ];
  return listOf(c, 'subscription', '/v1/subscriptions', filters);
}

/** The subscription holding the item: through the item-id index, or for an item it does not embed, ITEM_OF. */
function subscriptionWithItem(c: Call, itemId: string): Obj | undefined {
  const sub = newestWhere(c, 'subscription', matching('subscription', 'item', itemId)).next().value?.o;
  if (sub !== undefined) return sub;
  const subId = c.tree.get<string>(ITEM_OF, `${c.acct}/${itemId}`);
  return subId === undefined ? undefined : load(c, 'subscription', subId);
}

function subscriptionOfItem(c: Call, itemId: string): string {
  const sub = subscriptionWithItem(c, itemId);
  if (sub === undefined) throw invalid(`No such subscription item: '${itemId}'`, 'id', 'resource_missing');
  return sub.id as string;
}

/** Changes a subscription's items (effective from the next invoice, no prorations). */
function changeItems(c0: Call, subId: string, change: (items: Obj[], sub: Obj) => Obj): Obj {
  const stored = mustLoad(c0, 'subscription', subId, 'subscription', 'subscription');
  if (stored.status === 'canceled') throw invalid('A canceled subscription can only update its cancellation_details and metadata.');
  const c = at(c0, clockTime(c0, stored.test_clock));
  const sub = clone(stored);
  const items = itemsOf(c, sub);
  const result = change(items, sub);
  checkItems(items, 'items');
  setItems(c, sub, items);
  save(c, 'subscription', sub);
  updated(c, 'customer.subscription.updated', stored, sub);
  return result;
}

registerIncludable('customer', 'subscriptions', (c, cus) => {
  const live = function* (): Generator<Obj> {
    for (const rec of newestWhere(c, 'subscription', is('customer', cus.id as string))) {
      if (rec.o.status !== 'canceled' && rec.o.status !== 'incomplete_expired') yield rec.o;
    }
  };
  return includedList(live(), `/v1/customers/${cus.id as string}/subscriptions`);
});

/** Deleting a customer ends their subscriptions at once, as at Stripe. */
export function cancelCustomerSubscriptions(c0: Call, customerId: string): void {
  for (const rec of [...newestWhere(c0, 'subscription', is('customer', customerId))]) {
    const sub = rec.o;
    if (['canceled', 'incomplete_expired'].includes(sub.status as string)) continue;
    const c = at(c0, clockTime(c0, sub.test_clock));
    const copy = clone(sub);
    copy.canceled_at = c.now;
    cancelNow(c, copy, 'cancellation_requested');
  }
}

export const subscriptionRoutes: Route[] = [
  route('subscriptions.search', 'GET', '/v1/subscriptions/search', (c) =>
    search(c, 'subscription', 'subscriptions', { created: 'number', status: 'token', metadata: 'string' })),
  route('subscriptions.create', 'POST', '/v1/subscriptions', createSub),
  route('subscriptions.list', 'GET', '/v1/subscriptions', listSubs),
  route('subscriptions.retrieve', 'GET', '/v1/subscriptions/:id', (c) => mustLoad(c, 'subscription', c.req.params.id as string, 'subscription')),
  route('subscriptions.update', 'POST', '/v1/subscriptions/:id', updateSub),
  route('subscriptions.cancel', 'DELETE', '/v1/subscriptions/:id', cancelSub),
  route('subscription_items.list', 'GET', '/v1/subscription_items', (c) => {
    const subId = c.p.reqStr('subscription');
    const sub = mustLoad(c, 'subscription', subId, 'subscription', 'subscription');
    return pageOf(c, itemsOf(c, sub), '/v1/subscription_items', 'subscription item');
  }),
  route('subscription_items.create', 'POST', '/v1/subscription_items', (c) => {
    const subId = c.p.reqStr('subscription');
    return changeItems(c, subId, (items, sub) => {
      const fresh = subItem(c, subId, c.p, c.now);
      const { start, end } = periodOf(sub);
      fresh.current_period_start = start;
      fresh.current_period_end = end;
      items.push(fresh);
      return fresh;
    });
  }),
  route('subscription_items.update', 'POST', '/v1/subscription_items/:id', (c) => {
    const id = c.req.params.id as string;
    return changeItems(c, subscriptionOfItem(c, id), (items) => {
      const item = items.find((i) => i.id === id) as Obj;
      if (c.p.has('price') || c.p.has('price_data')) {
        const fresh = subItem(c, item.subscription as string, c.p, item.created as number);
        item.price = fresh.price;
        item.plan = fresh.plan;
      }
      if (c.p.has('quantity')) item.quantity = c.p.int('quantity', 0);
      item.metadata = applyMetadata(item.metadata as Obj, c.p.get('metadata'));
      return item;
    });
  }),
  route('subscription_items.del', 'DELETE', '/v1/subscription_items/:id', (c) => {
    const id = c.req.params.id as string;
    changeItems(c, subscriptionOfItem(c, id), (items) => {
      if (items.length === 1) throw invalid('A subscription must have at least one active plan. To cancel a subscription, delete the subscription instead.');
      items.splice(items.findIndex((i) => i.id === id), 1);
      return {};
    });
    return { id, object: 'subscription_item', deleted: true };
  }),
  route('subscription_items.retrieve', 'GET', '/v1/subscription_items/:id', (c) => {
    const id = c.req.params.id as string;
    const sub = subscriptionWithItem(c, id);
    const item = sub === undefined ? undefined : itemsOf(c, sub).find((i) => i.id === id);
    return item ?? mustLoad(c, 'subscription_item', id, 'subscription item');
  }),
];

export const subscriptionMoves = {
  renew: (ctx, data, dueAt) => {
    if (!isObj(data)) return;
    runMove(ctx, data.acct as string, Date.parse(dueAt), (c) => catchUp(c, data.id as string));
  },
  invoiceUpcoming: (ctx, data, dueAt) => {
    if (!isObj(data)) return;
    runMove(ctx, data.acct as string, Date.parse(dueAt), (c) => {
      const sub = load(c, 'subscription', data.id as string);
      if (sub === undefined || !['active', 'trialing', 'past_due'].includes(sub.status as string)) return;
      if (sub.cancel_at_period_end === true || periodOf(sub).end !== data.periodEnd) return;
      const customer = load(c, 'customer', sub.customer as string);
      if (customer === undefined) return;
      const preview = buildPreview(c, customer, sub);
      if (preview !== undefined) event(c, 'invoice.upcoming', preview);
    });
  },
  trialWillEnd: (ctx, data, dueAt) => {
    if (!isObj(data)) return;
    runMove(ctx, data.acct as string, Date.parse(dueAt), (c) => {
      const sub = load(c, 'subscription', data.id as string);
      if (sub === undefined || sub.status !== 'trialing' || sub.trial_end !== data.trialEnd) return;
      event(c, 'customer.subscription.trial_will_end', sub);
    });
  },
} satisfies Record<string, Move>;
