/**
 * Invoices: made from line specs (draft → open → paid, void, uncollectible; lines), finalized
 * with their own PaymentIntent, paid by card or out of band, and the invoice preview; their routes.
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { StripeError, invalid, paramMissing } from '../errors.js';
import { event, insertWithEvent, saveWithEvent, updated } from '../lib/events.js';
import { INCLUDED_LIST_SIZE, includedList, objectsOf, registerIncludable } from '../lib/expand.js';
import { applyMetadata } from '../lib/metadata.js';
import { search } from '../lib/search.js';
import { insert, load, mustLoad, newId, save, unlist } from '../lib/store.js';
import { eq, is, listOf, matching, newestWhere } from '../lib/lists.js';
import { billedSubscription, clone, isObj, type Obj } from '../lib/util.js';
import { resolvePaymentMethod } from './payment_methods.js';
import { computeTaxes, taxRatesParam } from './tax.js';
import { applyBalance } from './customer_balance.js';
import { confirmIntent, createIntent, onIntentSucceeded } from './payments.js';
import { DAY, periodAfter, at, clockTime, embedded, pageOf, type LineSpec, idsOf } from './billing_shared.js';
import { discountsParam, applyDiscounts } from './discounts.js';
import { periodOf, recurringOf, countPeriods, cycleLines, scheduleRenewal } from './subscription_periods.js';

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

/**
 * Stripe caps an invoice at 250 invoice items ("You can add up to 250 invoice items to an
 * invoice", docs.stripe.com/billing/invoices/subscription; changelog 2016-02-22). More pending
 * items than that wait for the next invoice.
 */
export const MAX_INVOICE_ITEMS = 250;

/** All of an invoice's lines, when it has more than it embeds (keyed `<acct>/<in_id>`). */
export const LINES = 'invoice.lines';

/** Every line of an invoice: its embedded ones, or all of them kept aside when there are more. */
export function linesOf(c: Call, inv: Obj): Obj[] {
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
export function pendingItems(c: Call, customerId: string, subscriptionId: string | null, invoiceId: string | null): LineSpec[] {
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

export function createInvoiceRecord(c: Call, id: string, s: InvoiceSpec): Obj {
  const { inv, lines } = invoiceObject(c, id, s);
  keepLines(c, id, lines);
  insertWithEvent(c, 'invoice', inv, 'invoice.created');
  return inv;
}

export function finalize(c: Call, inv: Obj): Obj {
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
export function attemptPayment(c: Call, inv: Obj, pmParam?: string): StripeError | undefined {
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
export function refreshDraft(c: Call, invoiceId: string): void {
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

export const uncollectible = invoiceAction((c, inv) => {
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
export function buildPreview(c: Call, customer: Obj, sub: Obj | undefined): Obj | undefined {
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

registerIncludable('invoice', 'payments', (c, inv) =>
  includedList(objectsOf(newestWhere(c, 'invoice_payment', is('invoice', inv.id as string))), `/v1/invoice_payments?invoice=${inv.id as string}`));

export const invoiceRoutes: Route[] = [
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
];
