/**
 * Billing: subscriptions (items, trials, default payment method, cancel now and at period
 * end), invoices (draft → open → paid, void, uncollectible; lines), invoice items, the
 * invoice preview, and test clocks. Renewals are timed moves on the world clock; a
 * subscription on a test clock renews when its clock is advanced.
 */
import type { Move, Route, TwinContext } from '../../../../sdk/twin/types.js';
import { route, runMove } from '../lib/call.js';
import { cancelMove, type Call } from '../lib/request.js';
import { StripeError, invalid, missing, paramMissing } from '../errors.js';
import { event, insertWithEvent, previousAttributes, saveWithEvent, updated } from '../lib/events.js';
import { INCLUDED_LIST_SIZE, includedList, objectsOf, registerIncludable } from '../lib/expand.js';
import { applyMetadata } from '../lib/metadata.js';
import type { Params } from '../lib/params.js';
import { search } from '../lib/search.js';
import { eq, insert, is, listOf, load, matching, mustLoad, newestWhere, newId, save, unlist, type Filter } from '../lib/store.js';
import { billedSubscription, clone, isObj, type Obj } from '../lib/util.js';
import { couponValid, makePrice } from './catalog.js';
import { resolvePaymentMethod } from './payment_methods.js';
import { redeemPromotionCode } from './promotions.js';
import { computeTaxes, taxRatesParam } from './tax.js';
import { applyBalance } from './customer_balance.js';
import { confirmIntent, createIntent, onIntentSucceeded } from './payments.js';

const DAY = 86_400;

function iso(sec: number): string {
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
function at(c: Call, now: number): Call {
  return { ...c, now, nowMs: now * 1000 };
}

function clockTime(c: Call, clockId: unknown): number {
  if (typeof clockId !== 'string') return c.now;
  const clock = load(c, 'test_helpers.test_clock', clockId);
  return clock === undefined ? c.now : (clock.frozen_time as number);
}

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

// ---- discounts -----------------------------------------------------------------------------

function makeDiscount(c: Call, couponId: string, customer: string, subscription: string | null, param: string, promotionCode: string | null = null): Obj {
  const coupon = mustLoad(c, 'coupon', couponId, 'coupon', param);
  if (!couponValid(c, coupon)) throw invalid(`Coupon expired: ${couponId}`, param, 'coupon_expired');
  const start = c.now;
  let end: number | null = null;
  if (coupon.duration === 'repeating') end = periodAfter(start, 'month', coupon.duration_in_months as number, 1);
  const discount: Obj = {
    id: c.ctx.id('di_', 24), object: 'discount', checkout_session: null, customer, customer_account: null, end,
    invoice: null, invoice_item: null, promotion_code: promotionCode, source: { coupon: couponId, type: 'coupon' }, start,
    subscription, subscription_item: null,
  };
  insert(c, 'discount', discount);
  const before = clone(coupon);
  coupon.times_redeemed = (coupon.times_redeemed as number) + 1;
  save(c, 'coupon', coupon);
  updated(c, 'coupon.updated', before, coupon);
  return discount;
}

function discountsParam(c: Call, p: Params, customer: string, subscription: string | null): string[] {
  const out: string[] = [];
  for (const d of p.objects('discounts') ?? []) {
    const coupon = d.str('coupon');
    const promotion = d.str('promotion_code');
    if (coupon !== undefined) out.push(makeDiscount(c, coupon, customer, subscription, d.name('coupon')).id as string);
    else if (promotion !== undefined) {
      const { promo, coupon: promoCoupon } = redeemPromotionCode(c, promotion, customer, d.name('promotion_code'));
      out.push(makeDiscount(c, promoCoupon, customer, subscription, d.name('promotion_code'), promo.id as string).id as string);
    }
  }
  return out;
}

/** Discount amounts for an invoice of `subtotal`: once-coupons apply to the first invoice only. */
function applyDiscounts(c: Call, ids: string[], subtotal: number, first: boolean): { amount: number; discount: string }[] {
  const out: { amount: number; discount: string }[] = [];
  let left = subtotal;
  for (const id of ids) {
    const d = load(c, 'discount', id);
    if (d === undefined) continue;
    if (typeof d.end === 'number' && d.end <= c.now) continue;
    const coupon = load(c, 'coupon', ((d.source as Obj).coupon as string));
    if (coupon === undefined) continue;
    if (coupon.duration === 'once' && !first) continue;
    const amount = typeof coupon.percent_off === 'number'
      ? Math.round(left * coupon.percent_off / 100)
      : Math.min(left, (coupon.amount_off as number) ?? 0);
    left -= amount;
    out.push({ amount, discount: id });
  }
  return out;
}

// ---- invoices ------------------------------------------------------------------------------

interface LineSpec {
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

function lineItem(c: Call, invoiceId: string | null, l: LineSpec): Obj {
  return {
    id: c.ctx.id('il_', 24),
    object: 'line_item',
    amount: l.amount,
    currency: l.currency,
    description: l.description,
    discount_amounts: [],
    discountable: true,
    discounts: [],
    invoice: invoiceId,
    livemode: false,
    metadata: clone(l.metadata ?? {}),
    parent: l.subscriptionItem !== undefined
      ? { invoice_item_details: null, subscription_item_details: { invoice_item: null, proration: false, proration_details: { credited_items: null }, subscription: l.subscription ?? null, subscription_item: l.subscriptionItem }, type: 'subscription_item_details' }
      : { invoice_item_details: { invoice_item: l.invoiceItem ?? null, proration: false, proration_details: { credited_items: null }, subscription: l.subscription ?? null }, subscription_item_details: null, type: 'invoice_item_details' },
    period: { ...l.period },
    pretax_credit_amounts: [],
    pricing: {
      price_details: l.price === null ? null : { price: l.price.id, product: l.price.product },
      type: 'price_details',
      unit_amount_decimal: l.quantity === 0 ? '0' : String(l.amount / l.quantity),
    },
    quantity: l.quantity,
    quantity_decimal: String(l.quantity),
    subscription: l.subscription ?? null,
    subtotal: l.amount,
    taxes: [],
  };
}

interface InvoiceSpec {
  customer: Obj;
  subscription?: Obj | null;
  lines: LineSpec[];
  reason: string;
  collectionMethod: string;
  daysUntilDue: number | null;
  description?: string | null;
  metadata?: Obj;
  autoAdvance: boolean;
  discounts: string[];
  firstInvoice: boolean;
  currency?: string;
  /** Tax rates for lines without their own. */
  defaultTaxRates?: Obj[];
}

function idsOf(rates: unknown): string[] {
  return Array.isArray(rates) ? rates.map((r) => (typeof r === 'string' ? r : String((r as Obj).id))) : [];
}

/**
 * Stripe caps an invoice at 250 invoice items ("You can add up to 250 invoice items to an
 * invoice", docs.stripe.com/billing/invoices/subscription; changelog 2016-02-22). More pending
 * items than that wait for the next invoice.
 */
const MAX_INVOICE_ITEMS = 250;

/** All of an invoice's lines, when it has more than it embeds (keyed `<acct>/<in_id>`). */
export const LINES = 'invoice.lines';

/**
 * A list inside an object as Stripe embeds one (includedList: the first ten items, `has_more`,
 * where to page through them) with the count of them all. Unbounded, 3,000 pending invoice
 * items made every retrieve of their invoice (and its `invoice.created`) 2.7 MB.
 */
function embedded(all: Obj[], url: string): Obj {
  return { ...includedList(all, url), total_count: all.length };
}

/** Every line of an invoice: its embedded ones, or all of them kept aside when there are more. */
function linesOf(c: Call, inv: Obj): Obj[] {
  const list = inv.lines as Obj;
  if (list.has_more !== true) return list.data as Obj[];
  return c.tree.get<Obj[]>(LINES, `${c.acct}/${inv.id as string}`) ?? (list.data as Obj[]);
}

/** Keeps a stored invoice's lines aside when it has more than it embeds (`had`: it did before). */
function keepLines(c: Call, id: string, lines: Obj[], had = false): void {
  if (lines.length > INCLUDED_LIST_SIZE) c.tree.put(LINES, `${c.acct}/${id}`, clone(lines));
  else if (had) c.tree.delete(LINES, `${c.acct}/${id}`);
}

/** An invoice as `s` makes it, with its lines embedded as Stripe does, and all its lines. */
function invoiceObject(c: Call, id: string, s: InvoiceSpec): { inv: Obj; lines: Obj[] } {
  const cus = s.customer;
  const lines = s.lines.map((l) => lineItem(c, id, l));
  const subtotal = lines.reduce((n, l) => n + (l.amount as number), 0);
  const discounts = applyDiscounts(c, s.discounts, subtotal, s.firstInvoice);
  const discounted = discounts.reduce((n, d) => n + d.amount, 0);
  const taxes = computeTaxes(c, s.lines.map((l) => ({ amount: l.amount, rates: l.taxRates ?? [] })), idsOf(s.defaultTaxRates), discounted);
  lines.forEach((line, i) => { line.taxes = taxes.lineTaxes[i] ?? []; });
  const total = subtotal - discounted + taxes.exclusive;
  const starts = s.lines.map((l) => l.period.start), ends = s.lines.map((l) => l.period.end);
  const sub = s.subscription ?? null;
  const inv: Obj = {
    id,
    object: 'invoice',
    account_country: 'US',
    account_name: 'Twinkit test account',
    account_tax_ids: null,
    amount_due: total,
    amount_overpaid: 0,
    amount_paid: 0,
    amount_remaining: total,
    amount_shipping: 0,
    application: null,
    attempt_count: 0,
    attempted: false,
    auto_advance: s.autoAdvance,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    automatically_finalizes_at: null,
    billing_reason: s.reason,
    collection_method: s.collectionMethod,
    created: c.now,
    currency: s.currency ?? s.lines[0]?.currency ?? cus.currency ?? 'usd',
    custom_fields: null,
    customer: cus.id,
    customer_account: null,
    customer_address: clone(cus.address ?? null),
    customer_email: cus.email ?? null,
    customer_name: cus.name ?? null,
    customer_phone: cus.phone ?? null,
    customer_shipping: clone(cus.shipping ?? null),
    customer_tax_exempt: cus.tax_exempt ?? 'none',
    customer_tax_ids: [],
    default_payment_method: null,
    default_source: null,
    default_tax_rates: clone(s.defaultTaxRates ?? []),
    description: s.description ?? null,
    discounts: [...s.discounts],
    due_date: s.collectionMethod === 'send_invoice' ? c.now + (s.daysUntilDue ?? 30) * DAY : null,
    effective_at: null,
    ending_balance: null,
    footer: null,
    from_invoice: null,
    hosted_invoice_url: null,
    invoice_pdf: null,
    issuer: { type: 'self' },
    last_finalization_error: null,
    latest_revision: null,
    lines: embedded(lines, `/v1/invoices/${id}/lines`),
    livemode: false,
    metadata: clone(s.metadata ?? {}),
    next_payment_attempt: null,
    number: null,
    on_behalf_of: null,
    parent: sub === null ? null : { quote_details: null, subscription_details: { metadata: clone(sub.metadata), subscription: sub.id }, type: 'subscription_details' },
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    period_end: ends.length > 0 ? Math.max(...ends) : c.now,
    period_start: starts.length > 0 ? Math.min(...starts) : c.now,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    rendering: null,
    shipping_cost: null,
    shipping_details: null,
    starting_balance: 0,
    statement_descriptor: null,
    status: 'draft',
    status_transitions: { finalized_at: null, marked_uncollectible_at: null, paid_at: null, voided_at: null },
    subtotal,
    subtotal_excluding_tax: subtotal - taxes.inclusive,
    test_clock: cus.test_clock ?? null,
    total,
    total_discount_amounts: discounts,
    total_excluding_tax: total - taxes.exclusive - taxes.inclusive,
    total_pretax_credit_amounts: discounts.map((d) => ({ amount: d.amount, credit_balance_transaction: null, discount: d.discount, type: 'discount' })),
    total_taxes: taxes.totalTaxes,
    webhooks_delivered_at: null,
  };
  return { inv, lines };
}

/**
 * The customer's pending invoice items (not yet on an invoice), oldest first, claimed for
 * `invoiceId`: the oldest 250 (MAX_INVOICE_ITEMS); the rest wait for the next invoice.
 */
function pendingItems(c: Call, customerId: string, subscriptionId: string | null, invoiceId: string | null): LineSpec[] {
  const pending: Obj[] = [];
  for (const rec of newestWhere(c, 'invoiceitem', is('customer', customerId))) {
    const ii = rec.o;
    if (ii.invoice !== null) continue;
    const itemSub = billedSubscription(ii);
    if (itemSub !== null && itemSub !== subscriptionId) continue;
    pending.push(ii);
  }
  const out: LineSpec[] = [];
  for (const ii of pending.slice(-MAX_INVOICE_ITEMS).reverse()) {
    const pricing = ii.pricing as Obj;
    const details = (pricing.price_details ?? null) as Obj | null;
    out.push({
      amount: ii.amount as number, currency: ii.currency as string, description: (ii.description as string | null) ?? 'Invoice item',
      quantity: ii.quantity as number, price: details === null ? null : { id: details.price, product: details.product },
      period: clone(ii.period as { start: number; end: number }), invoiceItem: ii.id as string, subscription: subscriptionId,
      metadata: clone(ii.metadata as Obj), taxRates: idsOf(ii.tax_rates),
    });
    if (invoiceId !== null) {
      ii.invoice = invoiceId;
      save(c, 'invoiceitem', ii);
    }
  }
  return out;
}

function createInvoiceRecord(c: Call, id: string, s: InvoiceSpec): Obj {
  const { inv, lines } = invoiceObject(c, id, s);
  keepLines(c, id, lines);
  insertWithEvent(c, 'invoice', inv, 'invoice.created');
  return inv;
}

function finalize(c: Call, inv: Obj): Obj {
  if (inv.status !== 'draft') throw invalid(`This invoice is already finalized, you can't re-finalize a non-draft invoice.`, undefined, 'invoice_not_editable');
  const cus = clone(mustLoad(c, 'customer', inv.customer as string, 'customer'));
  const seq = (cus.next_invoice_sequence as number) ?? 1;
  cus.next_invoice_sequence = seq + 1;
  save(c, 'customer', cus);
  applyBalance(c, inv, cus);
  inv.number = `${cus.invoice_prefix as string}-${String(seq).padStart(4, '0')}`;
  inv.status = 'open';
  inv.effective_at = c.now;
  (inv.status_transitions as Obj).finalized_at = c.now;
  inv.hosted_invoice_url = `https://invoice.stripe.com/i/${c.acct}/test_${inv.id as string}`;
  inv.invoice_pdf = `https://pay.stripe.com/invoice/${c.acct}/test_${inv.id as string}/pdf`;
  inv.automatically_finalizes_at = null;
  if (inv.collection_method === 'charge_automatically') inv.next_payment_attempt = c.now;
  if ((inv.amount_due as number) > 0) {
    // The invoice's own PaymentIntent: paid by the twin off-session, or confirmed by the app
    // with `confirmation_secret` (a subscription made with payment_behavior=default_incomplete).
    const pi = createIntent(c, {
      amount: inv.amount_due as number, currency: inv.currency as string, customer: inv.customer as string,
      description: `Invoice ${inv.number as string}`,
    });
    c.tree.put('invoice.pi', `${c.acct}/${inv.id as string}`, pi.id);
    const payment: Obj = {
      id: c.ctx.id('inpay_', 24), object: 'invoice_payment', amount_paid: null, amount_requested: inv.amount_due,
      created: c.now, currency: inv.currency, invoice: inv.id, is_default: true, livemode: false,
      payment: { payment_intent: pi.id, type: 'payment_intent' }, status: 'open',
      status_transitions: { canceled_at: null, paid_at: null },
    };
    insert(c, 'invoice_payment', payment);
    c.tree.put('invoice.intent', `${c.acct}/${pi.id as string}`, { invoice: inv.id, payment: payment.id });
  }
  saveWithEvent(c, 'invoice', inv, 'invoice.finalized');
  if ((inv.amount_due as number) === 0) markPaid(c, inv, null);
  return inv;
}

/** The invoice's own PaymentIntent, made at finalization. */
function intentOf(c: Call, inv: Obj): string | null {
  return c.tree.get<string>('invoice.pi', `${c.acct}/${inv.id as string}`) ?? null;
}

// `confirmation_secret` is includable: present only when expanded, as at Stripe.
registerIncludable('invoice', 'confirmation_secret', (c, inv) => {
  const piId = intentOf(c, inv);
  const pi = piId === null ? undefined : load(c, 'payment_intent', piId);
  return pi === undefined ? null : { client_secret: pi.client_secret, type: 'payment_intent' };
});

onIntentSucceeded((c, pi) => {
  const link = c.tree.get<{ invoice: string; payment: string }>('invoice.intent', `${c.acct}/${pi.id as string}`);
  if (link === undefined) return;
  const inv = load(c, 'invoice', link.invoice);
  if (inv === undefined || inv.status !== 'open') return;
  markPaid(c, clone(inv), pi);
});

function markPaid(c: Call, inv: Obj, pi: Obj | null): void {
  inv.status = 'paid';
  inv.amount_paid = inv.amount_due;
  inv.amount_remaining = 0;
  inv.next_payment_attempt = null;
  (inv.status_transitions as Obj).paid_at = c.now;
  save(c, 'invoice', inv);
  if (pi !== null) {
    const link = c.tree.get<{ invoice: string; payment: string }>('invoice.intent', `${c.acct}/${pi.id as string}`);
    const payment = link === undefined ? undefined : load(c, 'invoice_payment', link.payment);
    if (payment !== undefined) {
      payment.amount_paid = inv.amount_paid;
      payment.status = 'paid';
      (payment.status_transitions as Obj).paid_at = c.now;
      save(c, 'invoice_payment', payment);
    }
  }
  event(c, 'invoice.paid', inv);
  event(c, 'invoice.payment_succeeded', inv);
  const subId = billedSubscription(inv);
  if (subId !== null) {
    const sub = load(c, 'subscription', subId);
    if (sub !== undefined && (sub.status === 'incomplete' || sub.status === 'past_due' || sub.status === 'unpaid')) {
      const before = clone(sub);
      sub.status = 'active';
      save(c, 'subscription', sub);
      updated(c, 'customer.subscription.updated', before, sub);
      scheduleRenewal(c, sub);
    }
  }
}

function defaultPaymentMethod(c: Call, inv: Obj): string | null {
  if (typeof inv.default_payment_method === 'string') return inv.default_payment_method;
  const subId = billedSubscription(inv);
  if (subId !== null) {
    const sub = load(c, 'subscription', subId);
    if (sub !== undefined && typeof sub.default_payment_method === 'string') return sub.default_payment_method;
  }
  const cus = load(c, 'customer', inv.customer as string);
  const settings = cus?.invoice_settings;
  return isObj(settings) && typeof settings.default_payment_method === 'string' ? settings.default_payment_method : null;
}

/** Attempts payment of an open invoice; answers the card error on a decline (the attempt is kept). */
function attemptPayment(c: Call, inv: Obj, pmParam?: string): StripeError | undefined {
  const pm = pmParam ?? defaultPaymentMethod(c, inv);
  inv.attempted = true;
  inv.attempt_count = (inv.attempt_count as number) + 1;
  if (pm === null) {
    saveWithEvent(c, 'invoice', inv, 'invoice.payment_failed');
    return invalid('This customer has no attached payment source or default payment method. Please consider adding a default payment method.', undefined, 'invoice_no_payment_method_types');
  }
  const piId = intentOf(c, inv);
  if (piId === null) throw new TypeError(`invoice ${inv.id as string} has no PaymentIntent to confirm`);
  save(c, 'invoice', inv);
  const { pi, error } = confirmIntent(c, piId, pm, true);
  // A success marks the invoice paid through the PaymentIntent hook; pick that up.
  const fresh = load(c, 'invoice', inv.id as string);
  if (fresh !== undefined) Object.assign(inv, fresh);
  if (error === undefined && pi.status === 'succeeded') return undefined;
  saveWithEvent(c, 'invoice', inv, 'invoice.payment_failed');
  return error ?? invalid('The payment for this invoice requires authentication.', undefined, 'invoice_payment_intent_requires_action');
}

// ---- subscriptions -------------------------------------------------------------------------

/** "A list of up to 20 subscription items" (docs.stripe.com/api/subscriptions/create). */
const MAX_ITEMS = 20;
/** All of a subscription's items, when it has more than it embeds (keyed `<acct>/<sub_id>`). */
export const ITEMS = 'subscription.items';
/** An item a subscription does not embed → the subscription (the `item` index files those it does). */
export const ITEM_OF = 'subscription.item';

function tooManyItems(param: string): StripeError {
  return invalid(`A subscription can have up to ${MAX_ITEMS} items.`, param);
}

/** Every item of a subscription (its `items` embeds the first ten), in a new array. */
function itemsOf(c: Call, sub: Obj): Obj[] {
  const list = sub.items as Obj;
  if (list.has_more !== true) return [...(list.data as Obj[])];
  return [...(c.tree.get<Obj[]>(ITEMS, `${c.acct}/${sub.id as string}`) ?? (list.data as Obj[]))];
}

/**
 * Sets a subscription's items: the first ten embedded in `items`, as Stripe embeds them, and
 * when there are more, all of them kept aside and each one not embedded findable by its id.
 */
function setItems(c: Call, sub: Obj, items: Obj[]): void {
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

function periodOf(sub: Obj): { start: number; end: number } {
  const first = ((sub.items as Obj).data as Obj[])[0] as Obj;
  return { start: first.current_period_start as number, end: first.current_period_end as number };
}

function setPeriod(c: Call, sub: Obj, start: number, end: number): void {
  const items = itemsOf(c, sub).map((item) => ({ ...item, current_period_start: start, current_period_end: end }));
  setItems(c, sub, items);
}

function recurringOf(sub: Obj): { interval: string; count: number } {
  const item = ((sub.items as Obj).data as Obj[])[0] as Obj;
  const rec = (item.price as Obj).recurring as Obj;
  return { interval: rec.interval as string, count: rec.interval_count as number };
}

function cycleLines(c: Call, sub: Obj, start: number, end: number, trial = false): LineSpec[] {
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
const RETRY_DAYS = [3, 5, 7];
/** An `incomplete` subscription whose first invoice stays unpaid expires after 23 hours. */
const INCOMPLETE_TTL = 23 * 3600;

/** When the twin next has to look at a subscription: a period end, a retry, or an expiry. */
function nextDue(c: Call, sub: Obj): number {
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

function scheduleRenewal(c: Call, sub: Obj): void {
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

/** How many whole periods lie between the anchor and `at` (for anchoring months on the anchor's day). */
function countPeriods(sub: Obj, atTime: number, interval: string, count: number): number {
  const anchor = sub.billing_cycle_anchor as number;
  let k = 0;
  while (periodAfter(anchor, interval, count, k + 1) <= atTime && k < 10_000) k++;
  return k;
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

// ---- invoices (routes) ---------------------------------------------------------------------

function createInvoice(c: Call): Obj {
  const customerId = c.p.reqStr('customer');
  const customer = mustLoad(c, 'customer', customerId, 'customer', 'customer');
  const cc = at(c, clockTime(c, customer.test_clock));
  const collection = c.p.oneOf('collection_method', ['charge_automatically', 'send_invoice'] as const) ?? 'charge_automatically';
  const days = c.p.int('days_until_due', 0) ?? null;
  if (collection === 'send_invoice' && days === null && c.p.int('due_date') === undefined) throw paramMissing('days_until_due');
  const behavior = c.p.oneOf('pending_invoice_items_behavior', ['exclude', 'include'] as const) ?? 'exclude';
  const id = newId(cc, 'invoice', 'in_', 24);
  const pending = behavior === 'include' ? pendingItems(cc, customerId, null, id) : [];
  const { inv, lines } = invoiceObject(cc, id, {
    customer, lines: pending, reason: 'manual', collectionMethod: collection, daysUntilDue: days,
    description: c.p.nullableStr('description') ?? null, metadata: applyMetadata(undefined, c.p.get('metadata')),
    autoAdvance: c.p.bool('auto_advance') ?? false, discounts: discountsParam(cc, c.p, customerId, null), firstInvoice: true,
    currency: c.p.str('currency')?.toLowerCase() ?? (pending[0]?.currency ?? 'usd'),
    defaultTaxRates: taxRatesParam(cc, c.p, 'default_tax_rates') ?? [],
  });
  const pm = c.p.nullableStr('default_payment_method') ?? null;
  if (pm !== null) inv.default_payment_method = resolvePaymentMethod(cc, pm, 'default_payment_method').id;
  keepLines(cc, id, lines);
  insertWithEvent(cc, 'invoice', inv, 'invoice.created');
  return inv;
}

/** Rebuilds a draft's lines and totals after its invoice items changed. */
function refreshDraft(c: Call, invoiceId: string): void {
  const inv = load(c, 'invoice', invoiceId);
  if (inv === undefined || inv.status !== 'draft') return;
  const customer = mustLoad(c, 'customer', inv.customer as string, 'customer');
  const specs: LineSpec[] = [];
  for (const line of linesOf(c, inv)) {
    const parent = line.parent as Obj;
    if (parent.type === 'subscription_item_details') {
      const pd = (line.pricing as Obj).price_details as Obj | null;
      specs.push({ amount: line.amount as number, currency: line.currency as string, description: line.description as string,
        quantity: line.quantity as number, price: pd === null ? null : { id: pd.price, product: pd.product },
        period: clone(line.period as { start: number; end: number }),
        subscriptionItem: (parent.subscription_item_details as Obj).subscription_item as string, subscription: line.subscription as string | null,
        taxRates: ((line.taxes as Obj[] | undefined) ?? []).map((t) => (t.tax_rate_details as Obj).tax_rate as string) });
    }
  }
  for (const rec of newestWhere(c, 'invoiceitem', is('invoice', invoiceId))) {
    const ii = rec.o;
    const pd = (ii.pricing as Obj).price_details as Obj | null;
    specs.push({ amount: ii.amount as number, currency: ii.currency as string, description: (ii.description as string | null) ?? 'Invoice item',
      quantity: ii.quantity as number, price: pd === null ? null : { id: pd.price, product: pd.product },
      period: clone(ii.period as { start: number; end: number }), invoiceItem: ii.id as string, metadata: clone(ii.metadata as Obj),
      taxRates: idsOf(ii.tax_rates) });
  }
  const sub = billedSubscription(inv);
  const { inv: rebuilt, lines } = invoiceObject(at(c, inv.created as number), invoiceId, {
    customer, subscription: sub === null ? null : (load(c, 'subscription', sub) ?? null), lines: specs,
    reason: inv.billing_reason as string, collectionMethod: inv.collection_method as string,
    daysUntilDue: null, description: inv.description as string | null, metadata: inv.metadata as Obj,
    autoAdvance: inv.auto_advance as boolean, discounts: inv.discounts as string[], firstInvoice: true, currency: inv.currency as string,
    defaultTaxRates: (inv.default_tax_rates as Obj[] | null) ?? [],
  });
  rebuilt.due_date = inv.due_date;
  rebuilt.default_payment_method = inv.default_payment_method;
  keepLines(c, invoiceId, lines, (inv.lines as Obj).has_more === true);
  save(c, 'invoice', rebuilt);
}

/** An action on one invoice, seen at its customer's time (a test clock's, if any). */
function invoiceAction(fn: (c: Call, inv: Obj) => Obj): (c: Call) => Obj {
  return (c0) => {
    const stored = mustLoad(c0, 'invoice', c0.req.params.id as string, 'invoice');
    const c = at(c0, clockTime(c0, stored.test_clock));
    return fn(c, clone(stored));
  };
}

const payInvoice = invoiceAction((c, inv) => {
  if (inv.status === 'draft') finalize(c, inv);
  if (inv.status === 'paid') throw invalid('Invoice is already paid.', undefined, 'invoice_not_editable');
  if (inv.status !== 'open') throw invalid(`You cannot pay an invoice with a status of ${inv.status as string}.`, undefined, 'invoice_not_editable');
  if (c.p.bool('paid_out_of_band') === true) {
    markPaid(c, inv, null);
    return inv;
  }
  const pm = c.p.str('payment_method');
  const error = attemptPayment(c, inv, pm === '' ? undefined : pm);
  if (error !== undefined) throw new StripeError(error.status, error.type, error.message, error.fields, true);
  return inv;
});

const finalizeInvoice = invoiceAction((c, inv) => {
  finalize(c, inv);
  // With auto_advance the twin collects at once; a decline leaves the invoice open, as Stripe's
  // automatic collection does (the finalize itself succeeded).
  if (c.p.bool('auto_advance') === true && inv.status === 'open' && inv.collection_method === 'charge_automatically') {
    attemptPayment(c, inv);
  }
  return load(c, 'invoice', inv.id as string) ?? inv;
});

const voidInvoice = invoiceAction((c, inv) => {
  if (inv.status !== 'open' && inv.status !== 'uncollectible') {
    throw invalid(`You can only void an open or uncollectible invoice; this one is ${inv.status as string}.`, undefined, 'invoice_not_editable');
  }
  inv.status = 'void';
  inv.amount_remaining = 0;
  (inv.status_transitions as Obj).voided_at = c.now;
  saveWithEvent(c, 'invoice', inv, 'invoice.voided');
  return inv;
});

const uncollectible = invoiceAction((c, inv) => {
  if (inv.status !== 'open') throw invalid(`You can only mark an open invoice uncollectible; this one is ${inv.status as string}.`, undefined, 'invoice_not_editable');
  inv.status = 'uncollectible';
  (inv.status_transitions as Obj).marked_uncollectible_at = c.now;
  saveWithEvent(c, 'invoice', inv, 'invoice.marked_uncollectible');
  return inv;
});

function updateInvoice(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'invoice', id, 'invoice');
  const inv = clone(before);
  const draftOnly = Object.keys(c.p.raw).filter((k) => !['metadata', 'expand', 'description', 'footer', 'auto_advance'].includes(k));
  if (inv.status !== 'draft' && draftOnly.length > 0) {
    throw invalid(`Finalized invoices can't be updated in this way`, draftOnly[0], 'invoice_not_editable');
  }
  if (c.p.has('description')) inv.description = c.p.nullableStr('description') ?? null;
  if (c.p.has('footer')) inv.footer = c.p.nullableStr('footer') ?? null;
  if (c.p.has('auto_advance')) inv.auto_advance = c.p.bool('auto_advance');
  if (c.p.has('collection_method')) inv.collection_method = c.p.oneOf('collection_method', ['charge_automatically', 'send_invoice'] as const);
  if (c.p.has('days_until_due')) inv.due_date = inv.created as number + (c.p.int('days_until_due', 0) as number) * DAY;
  if (c.p.has('default_payment_method')) {
    const pm = c.p.nullableStr('default_payment_method') ?? null;
    inv.default_payment_method = pm === null ? null : resolvePaymentMethod(c, pm, 'default_payment_method').id;
  }
  inv.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'invoice', inv);
  updated(c, 'invoice.updated', before, inv);
  return inv;
}

function deleteInvoice(c: Call): Obj {
  const id = c.req.params.id as string;
  const inv = mustLoad(c, 'invoice', id, 'invoice');
  if (inv.status !== 'draft') throw invalid('You can only delete draft invoices.', undefined, 'invoice_not_editable');
  // Collected first: each save moves the item out of the index being read.
  for (const rec of [...newestWhere(c, 'invoiceitem', is('invoice', id))]) {
    const ii = clone(rec.o);
    ii.invoice = null;
    save(c, 'invoiceitem', ii);
  }
  if ((inv.lines as Obj).has_more === true) c.tree.delete(LINES, `${c.acct}/${id}`);
  unlist(c, 'invoice', id);
  event(c, 'invoice.deleted', inv);
  return { id, object: 'invoice', deleted: true };
}

/**
 * A page of a list the twin keeps whole (an invoice's lines, a subscription's items), in its
 * order: `limit` (1–100, 10 by default), `starting_after` or `ending_before` an item's id.
 */
function pageOf(c: Call, all: Obj[], url: string, noun: string): Obj {
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

/** `GET /v1/invoices/:id/lines`: every line, where the invoice embeds the first ten. */
function invoiceLines(c: Call): Obj {
  const inv = mustLoad(c, 'invoice', c.req.params.id as string, 'invoice');
  return pageOf(c, linesOf(c, inv), `/v1/invoices/${inv.id as string}/lines`, 'line item');
}

/** `POST /v1/invoices/create_preview`: the next invoice, not saved. */
function previewInvoice(c0: Call): Obj {
  const customerId = c0.p.str('customer');
  const subId = c0.p.str('subscription');
  let sub: Obj | undefined;
  if (subId !== undefined) sub = mustLoad(c0, 'subscription', subId, 'subscription', 'subscription');
  const cusId = customerId ?? (sub?.customer as string | undefined);
  if (cusId === undefined) throw paramMissing('customer');
  const customer = mustLoad(c0, 'customer', cusId, 'customer', 'customer');
  const c = at(c0, clockTime(c0, customer.test_clock));
  if (sub === undefined) {
    for (const rec of newestWhere(c, 'subscription', is('customer', cusId))) {
      if (!['canceled', 'incomplete_expired'].includes(rec.o.status as string)) { sub = rec.o; break; }
    }
  }
  const preview = buildPreview(c, customer, sub);
  if (preview === undefined) throw invalid('No upcoming invoices for customer: ' + cusId, undefined, 'invoice_upcoming_none');
  return preview;
}

/** The customer's next invoice as it stands (not saved), or undefined when nothing is due. */
function buildPreview(c: Call, customer: Obj, sub: Obj | undefined): Obj | undefined {
  const cusId = customer.id as string;
  const pending = pendingItems(c, cusId, sub?.id as string | undefined ?? null, null);
  let lines: LineSpec[] = pending;
  let start = c.now, end = c.now;
  if (sub !== undefined && sub.status !== 'canceled' && sub.cancel_at_period_end !== true) {
    const period = periodOf(sub);
    const { interval, count } = recurringOf(sub);
    start = period.end;
    end = periodAfter(sub.billing_cycle_anchor as number, interval, count, 1 + countPeriods(sub, period.end, interval, count));
    lines = [...cycleLines(c, sub, start, end), ...pending];
  }
  if (lines.length === 0) return undefined;
  // Not saved: its lines past the first ten are not kept (GET …/lines answers 404 for a preview).
  const { inv: preview } = invoiceObject(at(c, start), `upcoming_${c.ctx.id('in_', 24)}`, {
    customer, subscription: sub ?? null, lines, reason: sub === undefined ? 'upcoming' : 'subscription_cycle',
    collectionMethod: (sub?.collection_method as string | undefined) ?? 'charge_automatically', daysUntilDue: null,
    autoAdvance: true, discounts: (sub?.discounts as string[] | undefined) ?? [], firstInvoice: false,
    currency: (sub?.currency as string | undefined) ?? lines[0]?.currency ?? 'usd',
    defaultTaxRates: (sub?.default_tax_rates as Obj[] | null | undefined) ?? [],
  });
  preview.period_start = start;
  preview.period_end = end;
  preview.next_payment_attempt = sub === undefined ? null : start;
  return preview;
}

// ---- invoice items -------------------------------------------------------------------------

function createInvoiceItem(c: Call): Obj {
  const customerId = c.p.reqStr('customer');
  const customer = mustLoad(c, 'customer', customerId, 'customer', 'customer');
  const cc = at(c, clockTime(c, customer.test_clock));
  const pricing = c.p.obj('pricing');
  const priceId = pricing?.str('price') ?? c.p.str('price');
  const priceData = c.p.obj('price_data');
  let price: Obj | null = null;
  if (priceId !== undefined) price = mustLoad(cc, 'price', priceId, 'price', pricing !== undefined ? 'pricing[price]' : 'price');
  else if (priceData !== undefined && priceData !== null) {
    const product = priceData.reqStr('product');
    mustLoad(cc, 'product', product, 'product', 'price_data[product]');
    price = { id: null, product, unit_amount: priceData.int('unit_amount', 0) ?? 0, currency: priceData.reqStr('currency').toLowerCase() };
  }
  const quantity = c.p.int('quantity', 0) ?? 1;
  let amount: number;
  let cur: string;
  if (price !== null) {
    amount = ((price.unit_amount as number) ?? 0) * quantity;
    cur = price.currency as string;
  } else {
    const a = c.p.int('amount');
    if (a === undefined) throw invalid('You must specify either `amount`, `pricing[price]` or `price_data`.', 'amount', 'parameter_missing');
    amount = a;
    cur = (c.p.str('currency') ?? (customer.currency as string | null) ?? 'usd').toLowerCase();
  }
  const invoiceId = c.p.str('invoice');
  if (invoiceId !== undefined) {
    const inv = mustLoad(cc, 'invoice', invoiceId, 'invoice', 'invoice');
    if (inv.status !== 'draft') throw invalid('You can only add invoice items to draft invoices.', 'invoice', 'invoice_not_editable');
    if (inv.customer !== customerId) throw invalid('The invoice belongs to another customer.', 'invoice');
    const items = linesOf(cc, inv).filter((l) => (l.parent as Obj).type === 'invoice_item_details').length;
    if (items >= MAX_INVOICE_ITEMS) throw invalid(`You can add up to ${MAX_INVOICE_ITEMS} invoice items to an invoice; ${invoiceId} has ${items}.`, 'invoice');
  }
  const subId = c.p.str('subscription');
  if (subId !== undefined) mustLoad(cc, 'subscription', subId, 'subscription', 'subscription');
  const period = c.p.obj('period');
  const ii: Obj = {
    id: newId(cc, 'invoiceitem', 'ii_', 24), object: 'invoiceitem', amount, currency: cur, customer: customerId, customer_account: null,
    date: cc.now, description: c.p.nullableStr('description') ?? null, discountable: c.p.bool('discountable') ?? true,
    discounts: [], invoice: invoiceId ?? null, livemode: false, metadata: applyMetadata(undefined, c.p.get('metadata')),
    net_amount: amount,
    parent: subId === undefined ? null : { subscription_details: { subscription: subId }, type: 'subscription_details' },
    period: period === undefined || period === null ? { end: cc.now, start: cc.now } : { end: period.reqInt('end'), start: period.reqInt('start') },
    pricing: { price_details: price === null || price.id === null ? null : { price: price.id, product: price.product }, type: 'price_details', unit_amount_decimal: quantity === 0 ? '0' : String(amount / quantity) },
    proration: false, quantity, quantity_decimal: String(quantity), tax_rates: taxRatesParam(cc, c.p, 'tax_rates') ?? [], test_clock: customer.test_clock ?? null,
  };
  insertWithEvent(cc, 'invoiceitem', ii, 'invoiceitem.created');
  if (invoiceId !== undefined) refreshDraft(cc, invoiceId);
  return ii;
}

function editableItem(c: Call, id: string): Obj {
  const ii = mustLoad(c, 'invoiceitem', id, 'invoiceitem');
  if (typeof ii.invoice === 'string') {
    const inv = load(c, 'invoice', ii.invoice);
    if (inv !== undefined && inv.status !== 'draft') throw invalid('This invoice item is on a finalized invoice and can no longer be changed.', undefined, 'invoice_not_editable');
  }
  return ii;
}

function updateInvoiceItem(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = editableItem(c, id);
  const ii = clone(before);
  if (c.p.has('description')) ii.description = c.p.nullableStr('description') ?? null;
  if (c.p.has('quantity') || c.p.has('amount')) {
    const q = c.p.int('quantity', 0) ?? (ii.quantity as number);
    const unit = Number(((ii.pricing as Obj).unit_amount_decimal as string) ?? '0');
    ii.quantity = q;
    ii.amount = c.p.int('amount') ?? Math.round(unit * q);
    ii.net_amount = ii.amount;
  }
  ii.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'invoiceitem', ii);
  updated(c, 'invoiceitem.updated', before, ii);
  if (typeof ii.invoice === 'string') refreshDraft(c, ii.invoice);
  return ii;
}

function deleteInvoiceItem(c: Call): Obj {
  const id = c.req.params.id as string;
  const ii = editableItem(c, id);
  unlist(c, 'invoiceitem', id);
  event(c, 'invoiceitem.deleted', ii);
  if (typeof ii.invoice === 'string') refreshDraft(c, ii.invoice);
  return { id, object: 'invoiceitem', deleted: true };
}

// ---- test clocks ---------------------------------------------------------------------------

function createClock(c: Call): Obj {
  const frozen = c.p.reqInt('frozen_time');
  const clock: Obj = {
    id: c.ctx.id('clock_', 24), object: 'test_helpers.test_clock', created: c.now, deletes_after: c.now + 30 * DAY,
    frozen_time: frozen, livemode: false, name: c.p.nullableStr('name') ?? null, status: 'ready', status_details: {},
  };
  insertWithEvent(c, 'test_helpers.test_clock', clock, 'test_helpers.test_clock.created');
  return clock;
}

function advanceClock(c: Call): Obj {
  const id = c.req.params.id as string;
  const clock = clone(mustLoad(c, 'test_helpers.test_clock', id, 'test clock'));
  const target = c.p.reqInt('frozen_time');
  if (clock.status === 'advancing') throw invalid('This test clock is already advancing; wait until it is ready.', undefined, 'test_clock_advancing');
  if (target <= (clock.frozen_time as number)) {
    throw invalid('The frozen time must be after the test clock\'s current frozen time.', 'frozen_time');
  }
  clock.status = 'advancing';
  clock.status_details = { advancing: { target_frozen_time: target } };
  saveWithEvent(c, 'test_helpers.test_clock', clock, 'test_helpers.test_clock.advancing');
  // The clock moves in the twin's own time, just after this answer (the next request sees it ready).
  c.schedules.push({ id: `clock.${c.acct}.${id}`, move: 'advanceClock', dueAt: iso(c.now), data: { acct: c.acct, id, target } });
  return clock;
}

function finishClockAdvance(ctx: TwinContext, data: unknown): void {
  if (!isObj(data)) return;
  const { acct, id, target } = data as { acct: string; id: string; target: number };
  runMove(ctx, acct, ctx.nowMs(), (c) => {
    const clock = load(c, 'test_helpers.test_clock', id);
    if (clock === undefined) return;
    const cc = at(c, target);
    for (const rec of [...newestWhere(c, 'subscription', is('test_clock', id))]) catchUp(cc, rec.o.id as string, clock.frozen_time as number);
    const done = clone(clock);
    done.frozen_time = target;
    done.status = 'ready';
    done.status_details = {};
    saveWithEvent(c, 'test_helpers.test_clock', done, 'test_helpers.test_clock.ready');
  });
}

function deleteClock(c: Call): Obj {
  const id = c.req.params.id as string;
  const clock = mustLoad(c, 'test_helpers.test_clock', id, 'test clock');
  unlist(c, 'test_helpers.test_clock', id);
  event(c, 'test_helpers.test_clock.deleted', clock);
  return { id, object: 'test_helpers.test_clock', deleted: true };
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

registerIncludable('invoice', 'payments', (c, inv) =>
  includedList(objectsOf(newestWhere(c, 'invoice_payment', is('invoice', inv.id as string))), `/v1/invoice_payments?invoice=${inv.id as string}`));

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

export const billingMoves: Record<string, Move> = {
  renew: (ctx, data, dueAt) => {
    if (!isObj(data)) return;
    runMove(ctx, data.acct as string, Date.parse(dueAt), (c) => catchUp(c, data.id as string));
  },
  advanceClock: (ctx, data) => finishClockAdvance(ctx, data),
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
};

export const billingRoutes: Route[] = [
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

  route('invoices.search', 'GET', '/v1/invoices/search', (c) =>
    search(c, 'invoice', 'invoices', {
      created: 'number', currency: 'token', customer: 'token', number: 'string', receipt_number: 'string', status: 'token',
      subscription: ['token', 'parent.subscription_details.subscription'], total: 'number', metadata: 'string',
    })),
  route('invoices.createPreview', 'POST', '/v1/invoices/create_preview', previewInvoice),
  route('invoices.create', 'POST', '/v1/invoices', createInvoice),
  route('invoices.list', 'GET', '/v1/invoices', (c) => {
    const sub = c.p.str('subscription');
    return listOf(c, 'invoice', '/v1/invoices', [eq(c, 'customer'), eq(c, 'status'), eq(c, 'collection_method'),
      sub === undefined ? undefined : matching('invoice', 'subscription', sub)]);
  }),
  route('invoices.retrieve', 'GET', '/v1/invoices/:id', (c) => mustLoad(c, 'invoice', c.req.params.id as string, 'invoice')),
  route('invoices.update', 'POST', '/v1/invoices/:id', updateInvoice),
  route('invoices.del', 'DELETE', '/v1/invoices/:id', deleteInvoice),
  route('invoices.finalizeInvoice', 'POST', '/v1/invoices/:id/finalize', finalizeInvoice),
  route('invoices.pay', 'POST', '/v1/invoices/:id/pay', payInvoice),
  route('invoices.voidInvoice', 'POST', '/v1/invoices/:id/void', voidInvoice),
  route('invoices.markUncollectible', 'POST', '/v1/invoices/:id/mark_uncollectible', uncollectible),
  route('invoices.sendInvoice', 'POST', '/v1/invoices/:id/send', invoiceAction((c, inv) => {
    if (inv.status !== 'open') throw invalid('You can only send an open invoice.', undefined, 'invoice_not_editable');
    event(c, 'invoice.sent', inv);
    return inv;
  })),
  route('invoices.listLineItems', 'GET', '/v1/invoices/:id/lines', invoiceLines),
  route('invoice_payments.list', 'GET', '/v1/invoice_payments', (c) => listOf(c, 'invoice_payment', '/v1/invoice_payments', [eq(c, 'invoice')])),
  route('invoice_payments.retrieve', 'GET', '/v1/invoice_payments/:id', (c) => mustLoad(c, 'invoice_payment', c.req.params.id as string, 'invoice payment')),

  route('invoiceitems.create', 'POST', '/v1/invoiceitems', createInvoiceItem),
  route('invoiceitems.list', 'GET', '/v1/invoiceitems', (c) => {
    const pending = c.p.bool('pending');
    return listOf(c, 'invoiceitem', '/v1/invoiceitems', [eq(c, 'customer'), eq(c, 'invoice'),
      pending === undefined ? undefined : (o) => (o.invoice === null) === pending]);
  }),
  route('invoiceitems.retrieve', 'GET', '/v1/invoiceitems/:id', (c) => mustLoad(c, 'invoiceitem', c.req.params.id as string, 'invoiceitem')),
  route('invoiceitems.update', 'POST', '/v1/invoiceitems/:id', updateInvoiceItem),
  route('invoiceitems.del', 'DELETE', '/v1/invoiceitems/:id', deleteInvoiceItem),

  route('test_helpers.test_clocks.create', 'POST', '/v1/test_helpers/test_clocks', createClock),
  route('test_helpers.test_clocks.list', 'GET', '/v1/test_helpers/test_clocks', (c) => listOf(c, 'test_helpers.test_clock', '/v1/test_helpers/test_clocks')),
  route('test_helpers.test_clocks.retrieve', 'GET', '/v1/test_helpers/test_clocks/:id', (c) => mustLoad(c, 'test_helpers.test_clock', c.req.params.id as string, 'test clock')),
  route('test_helpers.test_clocks.advance', 'POST', '/v1/test_helpers/test_clocks/:id/advance', advanceClock),
  route('test_helpers.test_clocks.del', 'DELETE', '/v1/test_helpers/test_clocks/:id', deleteClock),
];
