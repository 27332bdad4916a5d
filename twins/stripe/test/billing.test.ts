/**
 * Conformance: subscriptions, invoices, invoice items, the invoice preview and test clocks —
 * through the official `stripe` package. Renewals follow the world clock (or a test clock).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { startStripeTwin, type StripeTwin } from './harness.js';

const DAY_MS = 86_400_000;
let twin: StripeTwin;
let stripe: Stripe;
let monthly: Stripe.Price;
let yearly: Stripe.Price;

beforeAll(async () => {
  twin = await startStripeTwin();
  stripe = twin.client('sk_test_billingAccount000001');
  const product = await stripe.products.create({ name: 'Pro plan' });
  monthly = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 2000, recurring: { interval: 'month' }, nickname: 'Pro monthly' });
  yearly = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 20000, recurring: { interval: 'year' } });
});
afterAll(async () => {
  await twin.close();
});

async function payingCustomer(token = 'pm_card_visa', clock?: string): Promise<{ customer: Stripe.Customer; pm: string }> {
  const customer = await stripe.customers.create({ email: 'sub@example.com', ...(clock === undefined ? {} : { test_clock: clock }) });
  const pm = await stripe.paymentMethods.attach(token, { customer: customer.id });
  await stripe.customers.update(customer.id, { invoice_settings: { default_payment_method: pm.id } });
  return { customer, pm: pm.id };
}

describe('subscriptions', () => {
  it('starts active: the first invoice is finalized and paid with the default payment method', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id, quantity: 2 }], expand: ['latest_invoice'] });
    expect(sub.id).toMatch(/^sub_/);
    expect(sub.status).toBe('active');
    const item = sub.items.data[0] as Stripe.SubscriptionItem;
    expect(item.price.id).toBe(monthly.id);
    expect(item.quantity).toBe(2);
    expect(item.current_period_end - item.current_period_start).toBe(31 * 86_400);
    const inv = sub.latest_invoice as Stripe.Invoice;
    expect(inv).toMatchObject({ status: 'paid', billing_reason: 'subscription_create', amount_due: 4000, amount_paid: 4000, amount_remaining: 0, total: 4000, customer: customer.id });
    expect(inv.number).toMatch(new RegExp(`^${customer.invoice_prefix as string}-0001$`));
    expect(inv.parent?.subscription_details?.subscription).toBe(sub.id);
    expect(inv.lines.data).toHaveLength(1);
    expect(inv.lines.data[0]).toMatchObject({ amount: 4000, quantity: 2 });
    const payments = await stripe.invoicePayments.list({ invoice: inv.id as string });
    const piId = (payments.data[0]?.payment as { payment_intent: string }).payment_intent;
    expect((await stripe.paymentIntents.retrieve(piId)).status).toBe('succeeded');
  });

  it('is incomplete without a payment method; paying the open invoice makes it active', async () => {
    const customer = await stripe.customers.create({});
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    expect(sub.status).toBe('incomplete');
    const inv = await stripe.invoices.retrieve(sub.latest_invoice as string);
    expect(inv.status).toBe('open');
    const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
    const paid = await stripe.invoices.pay(inv.id as string, { payment_method: pm.id });
    expect(paid.status).toBe('paid');
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('active');
  });

  it('default_incomplete: the app confirms the invoice\'s PaymentIntent with confirmation_secret, and the subscription starts', async () => {
    const customer = await stripe.customers.create({});
    const sub = await stripe.subscriptions.create({
      customer: customer.id, items: [{ price: monthly.id }], payment_behavior: 'default_incomplete',
      expand: ['latest_invoice.confirmation_secret'],
    });
    expect(sub.status).toBe('incomplete');
    const inv = sub.latest_invoice as Stripe.Invoice;
    expect(inv.status).toBe('open');
    const secret = inv.confirmation_secret?.client_secret as string;
    expect(secret).toMatch(/^pi_[A-Za-z0-9]+_secret_/);
    expect((await stripe.invoices.retrieve(inv.id as string)).confirmation_secret).toBeUndefined();
    const piId = secret.slice(0, secret.indexOf('_secret_'));
    const pi = await stripe.paymentIntents.confirm(piId, { payment_method: 'pm_card_visa' });
    expect(pi.status).toBe('succeeded');
    expect((await stripe.invoices.retrieve(inv.id as string)).status).toBe('paid');
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('active');
    const payments = await stripe.invoicePayments.list({ invoice: inv.id as string });
    expect(payments.data.map((p) => [p.status, p.amount_paid])).toEqual([['paid', 2000]]);
  });

  it('refuses with a card error and makes nothing under error_if_incomplete when the card declines', async () => {
    const { customer } = await payingCustomer('pm_card_chargeCustomerFail');
    const err = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }], payment_behavior: 'error_if_incomplete' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect((await stripe.subscriptions.list({ customer: customer.id, status: 'all' })).data).toEqual([]);
  });

  it('trials: trialing with a $0 invoice, then bills when the world clock passes the trial end', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }], trial_period_days: 7 });
    expect(sub.status).toBe('trialing');
    expect(sub.trial_end! - sub.trial_start!).toBe(7 * 86_400);
    const first = await stripe.invoices.retrieve(sub.latest_invoice as string);
    expect(first).toMatchObject({ status: 'paid', total: 0 });
    await twin.advance(5 * DAY_MS);
    // Three days before the trial ends, Stripe says so.
    const warned = await stripe.events.list({ type: 'customer.subscription.trial_will_end' });
    expect(warned.data.map((e) => (e.data.object as Stripe.Subscription).id)).toContain(sub.id);
    await twin.advance(3 * DAY_MS);
    const after = await stripe.subscriptions.retrieve(sub.id);
    expect(after.status).toBe('active');
    expect(after.latest_invoice).not.toBe(sub.latest_invoice);
    const second = await stripe.invoices.retrieve(after.latest_invoice as string);
    expect(second).toMatchObject({ status: 'paid', billing_reason: 'subscription_cycle', total: 2000 });
    expect(after.items.data[0]?.current_period_start).toBe(sub.trial_end);
  });

  it('renews each period on the world clock, and past_due when the renewal payment fails', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    await twin.advance(65 * DAY_MS);
    const invoices = await stripe.invoices.list({ subscription: sub.id });
    expect(invoices.data.map((i) => i.billing_reason)).toEqual(['subscription_cycle', 'subscription_cycle', 'subscription_create']);
    expect(invoices.data.every((i) => i.status === 'paid')).toBe(true);

    const failing = await payingCustomer('pm_card_chargeCustomerFail');
    const sub2 = await stripe.subscriptions.create({ customer: failing.customer.id, items: [{ price: monthly.id }], trial_period_days: 1 });
    await twin.advance(2 * DAY_MS);
    const after = await stripe.subscriptions.retrieve(sub2.id);
    expect(after.status).toBe('past_due');
    expect((await stripe.invoices.retrieve(after.latest_invoice as string)).status).toBe('open');
  });

  it('retries a failed renewal 3, 5 and 7 days apart; a working card then pays it', async () => {
    const failing = await payingCustomer('pm_card_chargeCustomerFail');
    const sub = await stripe.subscriptions.create({ customer: failing.customer.id, items: [{ price: monthly.id }], trial_period_days: 1 });
    await twin.advance(1 * DAY_MS);
    let inv = await stripe.invoices.retrieve((await stripe.subscriptions.retrieve(sub.id)).latest_invoice as string);
    expect(inv).toMatchObject({ status: 'open', attempt_count: 1 });
    expect(inv.next_payment_attempt).toBe(sub.trial_end! + 3 * 86_400);
    await twin.advance(3 * DAY_MS);
    inv = await stripe.invoices.retrieve(inv.id as string);
    expect(inv.attempt_count).toBe(2);
    // The customer fixes their card before the next retry.
    const good = await stripe.paymentMethods.attach('pm_card_visa', { customer: failing.customer.id });
    await stripe.customers.update(failing.customer.id, { invoice_settings: { default_payment_method: good.id } });
    await twin.advance(5 * DAY_MS);
    inv = await stripe.invoices.retrieve(inv.id as string);
    expect(inv).toMatchObject({ status: 'paid', attempt_count: 3 });
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('active');
  });

  it('ends the subscription when the last retry fails', async () => {
    const failing = await payingCustomer('pm_card_chargeCustomerFail');
    const sub = await stripe.subscriptions.create({ customer: failing.customer.id, items: [{ price: monthly.id }], trial_period_days: 1 });
    await twin.advance(17 * DAY_MS);
    const after = await stripe.subscriptions.retrieve(sub.id);
    expect(after.status).toBe('canceled');
    expect(after.cancellation_details?.reason).toBe('payment_failed');
    expect((await stripe.invoices.retrieve(after.latest_invoice as string)).attempt_count).toBe(4);
  });

  it('expires an incomplete subscription whose first invoice stays unpaid for 23 hours', async () => {
    const customer = await stripe.customers.create({});
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    expect(sub.status).toBe('incomplete');
    await twin.advance(24 * 3600_000);
    const after = await stripe.subscriptions.retrieve(sub.id);
    expect(after.status).toBe('incomplete_expired');
    expect((await stripe.invoices.retrieve(sub.latest_invoice as string)).status).toBe('void');
  });

  it('sends invoice.upcoming a week before a renewal, with the coming invoice', async () => {
    const s = twin.client('sk_test_upcomingAccount000001');
    const customer = await s.customers.create({ payment_method: 'pm_card_visa' });
    const pm = (await s.customers.listPaymentMethods(customer.id)).data[0] as Stripe.PaymentMethod;
    await s.customers.update(customer.id, { invoice_settings: { default_payment_method: pm.id } });
    const price = await s.prices.create({ currency: 'usd', unit_amount: 1200, recurring: { interval: 'month' }, product_data: { name: 'U' } });
    const sub = await s.subscriptions.create({ customer: customer.id, items: [{ price: price.id }] });
    await twin.advance(20 * DAY_MS);
    expect((await s.events.list({ type: 'invoice.upcoming' })).data).toEqual([]);
    await twin.advance(5 * DAY_MS);
    const upcoming = (await s.events.list({ type: 'invoice.upcoming' })).data;
    expect(upcoming).toHaveLength(1);
    const inv = upcoming[0]!.data.object as Stripe.Invoice;
    expect(inv.parent?.subscription_details?.subscription).toBe(sub.id);
    expect(inv).toMatchObject({ amount_due: 1200, billing_reason: 'subscription_cycle', period_start: sub.items.data[0]!.current_period_end });
  });

  it('pauses collection: renewal invoices are voided until resumes_at, then billed again', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    const firstEnd = sub.items.data[0]!.current_period_end;
    const paused = await stripe.subscriptions.update(sub.id, { pause_collection: { behavior: 'void', resumes_at: firstEnd + 20 * 86_400 } });
    expect(paused.pause_collection).toEqual({ behavior: 'void', resumes_at: firstEnd + 20 * 86_400 });
    await twin.advance(32 * DAY_MS);
    const voided = await stripe.invoices.retrieve((await stripe.subscriptions.retrieve(sub.id)).latest_invoice as string);
    expect(voided).toMatchObject({ status: 'void', billing_reason: 'subscription_cycle' });
    expect((await stripe.subscriptions.retrieve(sub.id)).status).toBe('active');
    await twin.advance(31 * DAY_MS);
    const after = await stripe.subscriptions.retrieve(sub.id);
    expect(after.pause_collection).toBeNull();
    expect((await stripe.invoices.retrieve(after.latest_invoice as string)).status).toBe('paid');
  });

  it('cancels at period end, and cancels now', async () => {
    const { customer } = await payingCustomer();
    const a = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    const marked = await stripe.subscriptions.update(a.id, { cancel_at_period_end: true });
    expect(marked).toMatchObject({ cancel_at_period_end: true, status: 'active' });
    await twin.advance(32 * DAY_MS);
    const ended = await stripe.subscriptions.retrieve(a.id);
    expect(ended.status).toBe('canceled');
    expect(ended.ended_at).toBe(a.items.data[0]?.current_period_end);
    expect((await stripe.invoices.list({ subscription: a.id })).data).toHaveLength(1);

    const b = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: yearly.id }] });
    const canceled = await stripe.subscriptions.cancel(b.id);
    expect(canceled.status).toBe('canceled');
    expect(canceled.canceled_at).toBe(Math.floor(twin.nowMs() / 1000));
    const events = await stripe.events.list({ type: 'customer.subscription.deleted' });
    expect(events.data.map((e) => (e.data.object as Stripe.Subscription).id)).toEqual(expect.arrayContaining([a.id, b.id]));
    expect((await stripe.subscriptions.list({ customer: customer.id })).data).toEqual([]);
    expect((await stripe.subscriptions.list({ customer: customer.id, status: 'canceled' })).data).toHaveLength(2);
  });

  it('applies a coupon to its invoices', async () => {
    const coupon = await stripe.coupons.create({ percent_off: 25, duration: 'forever' });
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }], discounts: [{ coupon: coupon.id }] });
    const inv = await stripe.invoices.retrieve(sub.latest_invoice as string);
    expect(inv).toMatchObject({ subtotal: 2000, total: 1500, amount_paid: 1500 });
    expect((await stripe.coupons.retrieve(coupon.id)).times_redeemed).toBe(1);
  });

  it('changes an item\'s quantity for the next invoice, and previews it', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    const item = sub.items.data[0] as Stripe.SubscriptionItem;
    await stripe.subscriptions.update(sub.id, { items: [{ id: item.id, quantity: 3 }] });
    await stripe.invoiceItems.create({ customer: customer.id, amount: 500, currency: 'usd', description: 'Setup fee' });
    const preview = await stripe.invoices.createPreview({ customer: customer.id, subscription: sub.id });
    expect(preview.total).toBe(6500);
    expect(preview.period_start).toBe(item.current_period_end);
    expect(preview.lines.data.map((l) => l.amount).sort((x, y) => x - y)).toEqual([500, 6000]);
    await twin.advance(32 * DAY_MS);
    const renewed = await stripe.invoices.retrieve((await stripe.subscriptions.retrieve(sub.id)).latest_invoice as string);
    expect(renewed.total).toBe(6500);
  });

  it('expands an invoice\'s payments down to the PaymentIntent, and a customer\'s subscriptions', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    const inv = await stripe.invoices.retrieve(sub.latest_invoice as string, { expand: ['payments.data.payment.payment_intent'] });
    const pi = inv.payments?.data[0]?.payment.payment_intent as Stripe.PaymentIntent;
    expect(pi.object).toBe('payment_intent');
    expect(pi.amount).toBe(2000);
    const withSubs = await stripe.customers.retrieve(customer.id, { expand: ['subscriptions'] }) as Stripe.Customer;
    expect(withSubs.subscriptions?.data.map((s) => s.id)).toEqual([sub.id]);
  });

  it('ends a customer\'s subscriptions when the customer is deleted', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    await stripe.customers.del(customer.id);
    const after = await stripe.subscriptions.retrieve(sub.id);
    expect(after.status).toBe('canceled');
    expect(after.ended_at).toBe(Math.floor(twin.nowMs() / 1000));
  });

  it('searches subscriptions by status and invoices by subscription', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }], metadata: { tier: 'gold' } });
    const subs = await stripe.subscriptions.search({ query: 'metadata["tier"]:"gold" AND status:"active"' });
    expect(subs.data.map((s) => s.id)).toEqual([sub.id]);
    const invs = await stripe.invoices.search({ query: `subscription:"${sub.id}"` });
    expect(invs.data.map((i) => i.id)).toEqual([sub.latest_invoice]);
  });
});

describe('invoices and invoice items', () => {
  it('moves draft → open → paid, with pending invoice items as lines', async () => {
    const { customer } = await payingCustomer();
    const ii1 = await stripe.invoiceItems.create({ customer: customer.id, amount: 1200, currency: 'usd', description: 'Consulting' });
    const ii2 = await stripe.invoiceItems.create({ customer: customer.id, pricing: { price: (await stripe.prices.create({ currency: 'usd', unit_amount: 300, product_data: { name: 'Widget' } })).id }, quantity: 2 });
    expect(ii2.amount).toBe(600);
    expect((await stripe.invoiceItems.list({ customer: customer.id, pending: true })).data).toHaveLength(2);
    const draft = await stripe.invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    expect(draft).toMatchObject({ status: 'draft', total: 1800, number: null, billing_reason: 'manual' });
    expect(draft.lines.data.map((l) => l.amount).sort((x, y) => x - y)).toEqual([600, 1200]);
    expect((await stripe.invoiceItems.retrieve(ii1.id)).invoice).toBe(draft.id);
    const lines = await stripe.invoices.listLineItems(draft.id as string, { limit: 1 });
    expect(lines.data).toHaveLength(1);
    expect(lines.has_more).toBe(true);
    const open = await stripe.invoices.finalizeInvoice(draft.id as string);
    expect(open.status).toBe('open');
    expect(open.number).toBeTruthy();
    expect(open.hosted_invoice_url).toBeTruthy();
    const edit = await stripe.invoiceItems.update(ii1.id, { amount: 1 }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((edit as Stripe.errors.StripeError).statusCode).toBe(400);
    const paid = await stripe.invoices.pay(open.id as string);
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 1800, amount_remaining: 0 });
    expect(paid.status_transitions.paid_at).toBe(Math.floor(twin.nowMs() / 1000));
  });

  it('adds an item to a draft, deletes a draft, voids and marks uncollectible', async () => {
    const customer = await stripe.customers.create({});
    const draft = await stripe.invoices.create({ customer: customer.id, collection_method: 'send_invoice', days_until_due: 30 });
    await stripe.invoiceItems.create({ customer: customer.id, invoice: draft.id as string, amount: 999, currency: 'usd' });
    const withItem = await stripe.invoices.retrieve(draft.id as string);
    expect(withItem.total).toBe(999);
    expect(withItem.due_date).toBe(draft.created + 30 * 86_400);
    expect(await stripe.invoices.del(draft.id as string)).toMatchObject({ deleted: true });

    const a = await stripe.invoices.create({ customer: customer.id, collection_method: 'send_invoice', days_until_due: 7 });
    await stripe.invoiceItems.create({ customer: customer.id, invoice: a.id as string, amount: 100, currency: 'usd' });
    await stripe.invoices.finalizeInvoice(a.id as string);
    expect((await stripe.invoices.voidInvoice(a.id as string)).status).toBe('void');
    const delVoid = await stripe.invoices.del(a.id as string).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((delVoid as Stripe.errors.StripeError).statusCode).toBe(400);

    const b = await stripe.invoices.create({ customer: customer.id, collection_method: 'send_invoice', days_until_due: 7 });
    await stripe.invoiceItems.create({ customer: customer.id, invoice: b.id as string, amount: 100, currency: 'usd' });
    await stripe.invoices.finalizeInvoice(b.id as string);
    expect((await stripe.invoices.markUncollectible(b.id as string)).status).toBe('uncollectible');
  });

  it('fails to pay with a declining card: a card error, the invoice stays open with an attempt', async () => {
    const { customer } = await payingCustomer('pm_card_chargeCustomerFail');
    await stripe.invoiceItems.create({ customer: customer.id, amount: 5000, currency: 'usd' });
    const inv = await stripe.invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    await stripe.invoices.finalizeInvoice(inv.id as string);
    const err = await stripe.invoices.pay(inv.id as string).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeCardError);
    const after = await stripe.invoices.retrieve(inv.id as string);
    expect(after).toMatchObject({ status: 'open', attempted: true, attempt_count: 1 });
  });
});

describe('test clocks', () => {
  it('advances through advancing to ready, renewing subscriptions on the clock', async () => {
    const start = Math.floor(twin.nowMs() / 1000);
    const clock = await stripe.testHelpers.testClocks.create({ frozen_time: start, name: 'Monthly renewals' });
    expect(clock).toMatchObject({ object: 'test_helpers.test_clock', status: 'ready', frozen_time: start });
    const { customer } = await payingCustomer('pm_card_visa', clock.id);
    expect(customer.test_clock).toBe(clock.id);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    expect(sub.test_clock).toBe(clock.id);
    const advancing = await stripe.testHelpers.testClocks.advance(clock.id, { frozen_time: start + 70 * 86_400 });
    expect(advancing.status).toBe('advancing');
    const ready = await stripe.testHelpers.testClocks.retrieve(clock.id);
    expect(ready).toMatchObject({ status: 'ready', frozen_time: start + 70 * 86_400 });
    const invoices = await stripe.invoices.list({ subscription: sub.id });
    expect(invoices.data).toHaveLength(3);
    // Each renewal invoice is dated at the clock's period end: one and two months after the start.
    const addMonths = (t: number, n: number): number => {
      const d = new Date(t * 1000);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()) / 1000;
    };
    expect(invoices.data.map((i) => i.created)).toEqual([addMonths(start, 2), addMonths(start, 1), start]);
    expect(invoices.data.every((i) => i.status === 'paid')).toBe(true);
    // The world clock did not move: a subscription off the clock is untouched.
    expect(Math.floor(twin.nowMs() / 1000)).toBe(start);
    const back = await stripe.testHelpers.testClocks.advance(clock.id, { frozen_time: start }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((back as Stripe.errors.StripeError).param).toBe('frozen_time');
    expect(await stripe.testHelpers.testClocks.del(clock.id)).toMatchObject({ deleted: true });
  });

  it('sends the notices that fall inside a test clock\'s jump: trial_will_end and invoice.upcoming', async () => {
    const s = twin.client('sk_test_clockNoticesAccount01');
    const start = Math.floor(twin.nowMs() / 1000);
    const clock = await s.testHelpers.testClocks.create({ frozen_time: start });
    const customer = await s.customers.create({ test_clock: clock.id, payment_method: 'pm_card_visa' });
    const pm = (await s.customers.listPaymentMethods(customer.id)).data[0] as Stripe.PaymentMethod;
    await s.customers.update(customer.id, { invoice_settings: { default_payment_method: pm.id } });
    const price = await s.prices.create({ currency: 'usd', unit_amount: 700, recurring: { interval: 'month' }, product_data: { name: 'C' } });
    const sub = await s.subscriptions.create({ customer: customer.id, items: [{ price: price.id }], trial_period_days: 14 });
    await s.testHelpers.testClocks.advance(clock.id, { frozen_time: start + 20 * 86_400 });
    await s.testHelpers.testClocks.retrieve(clock.id);
    const types = (await s.events.list({ limit: 100 })).data.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['customer.subscription.trial_will_end', 'invoice.upcoming']));
    const warned = (await s.events.list({ type: 'customer.subscription.trial_will_end' })).data[0];
    expect(warned?.created).toBe(sub.trial_end! - 3 * 86_400);
    expect((await s.subscriptions.retrieve(sub.id)).status).toBe('active');
  });
});

describe('events listed since an instant', () => {
  it('finds every event created since it, test clocks\' events in the past and the future included, page by page', async () => {
    const s = twin.client('sk_test_eventPollsAccount001');
    const start = Math.floor(twin.nowMs() / 1000);
    const subscribe = async (frozen: number): Promise<void> => {
      const clock = await s.testHelpers.testClocks.create({ frozen_time: frozen });
      const customer = await s.customers.create({ test_clock: clock.id, payment_method: 'pm_card_visa' });
      const pm = (await s.customers.listPaymentMethods(customer.id)).data[0] as Stripe.PaymentMethod;
      await s.customers.update(customer.id, { invoice_settings: { default_payment_method: pm.id } });
      const price = await s.prices.create({ currency: 'usd', unit_amount: 900, recurring: { interval: 'month' }, product_data: { name: 'Polled' } });
      await s.subscriptions.create({ customer: customer.id, items: [{ price: price.id }] });
      await s.testHelpers.testClocks.advance(clock.id, { frozen_time: frozen + 70 * 86_400 });
      await s.testHelpers.testClocks.retrieve(clock.id);
    };
    for (let i = 0; i < 3; i++) await s.customers.create({ name: `Before ${i}` });
    await twin.advance(60_000);
    await subscribe(start - 200 * 86_400);
    await twin.advance(60_000);
    for (let i = 0; i < 3; i++) await s.customers.create({ name: `Between ${i}` });
    await subscribe(start + 100 * 86_400);
    await twin.advance(60_000);
    for (let i = 0; i < 3; i++) await s.customers.create({ name: `After ${i}` });

    const all: Stripe.Event[] = [];
    for await (const e of s.events.list({ limit: 7 })) all.push(e);
    const instants = [...new Set(all.map((e) => e.created))];
    // Events at the world's three minutes and at both clocks' renewals, out of order between them.
    expect(instants.some((t) => t < start - 100 * 86_400)).toBe(true);
    expect(instants.some((t) => t > start + 100 * 86_400)).toBe(true);
    const bounds = [...new Set(instants.flatMap((t) => [t - 1, t, t + 1]))];
    for (const bound of bounds) {
      const got: string[] = [];
      for await (const e of s.events.list({ created: { gte: bound }, limit: 4 })) got.push(e.id);
      expect(got, `created[gte]=${bound}`).toEqual(all.filter((e) => e.created >= bound).map((e) => e.id));
    }
    const newest = Math.max(...all.filter((e) => e.type === 'customer.created').map((e) => e.created));
    const polled = await s.events.list({ created: { gt: newest - 1 }, type: 'customer.created' });
    expect(polled.data.map((e) => (e.data.object as Stripe.Customer).name)).toEqual(['After 2', 'After 1', 'After 0']);
    expect(polled.has_more).toBe(false);
  });
});

describe('promotion codes, subscription items and the customer portal', () => {
  it('redeems a promotion code on a subscription, counting its use', async () => {
    const coupon = await stripe.coupons.create({ amount_off: 500, currency: 'usd', duration: 'once' });
    const promo = await stripe.promotionCodes.create({ promotion: { type: 'coupon', coupon: coupon.id }, code: 'WELCOME5', max_redemptions: 1 });
    expect(promo).toMatchObject({ object: 'promotion_code', code: 'WELCOME5', active: true, times_redeemed: 0 });
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }], discounts: [{ promotion_code: promo.id }] });
    expect((await stripe.invoices.retrieve(sub.latest_invoice as string)).total).toBe(1500);
    expect((await stripe.promotionCodes.retrieve(promo.id)).times_redeemed).toBe(1);
    const again = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }], discounts: [{ promotion_code: promo.id }] }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((again as Stripe.errors.StripeError).param).toBe('discounts[0][promotion_code]');
    expect((await stripe.promotionCodes.list({ code: 'WELCOME5' })).data.map((p) => p.id)).toEqual([promo.id]);
  });

  it('adds, changes and removes subscription items; the next invoice follows', async () => {
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    const addon = await stripe.prices.create({ currency: 'usd', unit_amount: 300, recurring: { interval: 'month' }, product_data: { name: 'Add-on' } });
    const added = await stripe.subscriptionItems.create({ subscription: sub.id, price: addon.id, quantity: 2 });
    expect(added).toMatchObject({ object: 'subscription_item', subscription: sub.id, quantity: 2 });
    await stripe.subscriptionItems.update(added.id, { quantity: 3 });
    const items = await stripe.subscriptionItems.list({ subscription: sub.id });
    expect(items.data.map((i) => i.quantity)).toEqual([1, 3]);
    const preview = await stripe.invoices.createPreview({ customer: customer.id, subscription: sub.id });
    expect(preview.total).toBe(2000 + 900);
    expect(await stripe.subscriptionItems.del(added.id)).toMatchObject({ id: added.id, deleted: true });
    const last = await stripe.subscriptionItems.del(sub.items.data[0]!.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((last as Stripe.errors.StripeError).statusCode).toBe(400);
  });

  it('makes a customer portal session with a url', async () => {
    const customer = await stripe.customers.create({});
    const session = await stripe.billingPortal.sessions.create({ customer: customer.id, return_url: 'https://app.example/account' });
    expect(session).toMatchObject({ object: 'billing_portal.session', customer: customer.id, return_url: 'https://app.example/account' });
    expect(session.url).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\//);
  });
});

describe('tax rates', () => {
  it('taxes subscription invoices with exclusive default rates and item rates, after discounts', async () => {
    const vat = await stripe.taxRates.create({ display_name: 'VAT', percentage: 20, inclusive: false, country: 'DE' });
    expect(vat).toMatchObject({ object: 'tax_rate', percentage: 20, inclusive: false, active: true, rate_type: 'percentage' });
    const { customer } = await payingCustomer();
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }], default_tax_rates: [vat.id] });
    const inv = await stripe.invoices.retrieve(sub.latest_invoice as string);
    expect(inv).toMatchObject({ subtotal: 2000, total: 2400, total_excluding_tax: 2000, amount_paid: 2400 });
    expect(inv.total_taxes).toEqual([expect.objectContaining({ amount: 400, tax_behavior: 'exclusive', taxable_amount: 2000, tax_rate_details: { tax_rate: vat.id } })]);
    expect(inv.lines.data[0]?.taxes?.[0]?.amount).toBe(400);
    expect((sub.default_tax_rates ?? []).map((r) => r.id)).toEqual([vat.id]);
  });

  it('takes an inclusive rate out of the amount, and taxes invoice items by their own rates', async () => {
    const incl = await stripe.taxRates.create({ display_name: 'GST', percentage: 10, inclusive: true });
    const customer = await stripe.customers.create({});
    await stripe.invoiceItems.create({ customer: customer.id, amount: 1100, currency: 'usd', tax_rates: [incl.id] });
    const inv = await stripe.invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    expect(inv).toMatchObject({ subtotal: 1100, total: 1100, subtotal_excluding_tax: 1000, total_excluding_tax: 1000 });
    expect(inv.total_taxes?.[0]).toMatchObject({ amount: 100, tax_behavior: 'inclusive', taxable_amount: 1000 });
    const off = await stripe.taxRates.update(incl.id, { active: false });
    expect(off.active).toBe(false);
    const refused = await stripe.invoiceItems.create({ customer: customer.id, amount: 100, currency: 'usd', tax_rates: [incl.id] }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((refused as Stripe.errors.StripeError).param).toBe('tax_rates[0]');
    expect((await stripe.taxRates.list({ active: false })).data.map((r) => r.id)).toContain(incl.id);
  });
});

describe('customer balance', () => {
  it('applies a credit to the next invoice and records each change as a balance transaction', async () => {
    const { customer } = await payingCustomer();
    const credit = await stripe.customers.createBalanceTransaction(customer.id, { amount: -500, currency: 'usd', description: 'Goodwill' });
    expect(credit).toMatchObject({ object: 'customer_balance_transaction', amount: -500, ending_balance: -500, type: 'adjustment' });
    expect((await stripe.customers.retrieve(customer.id) as Stripe.Customer).balance).toBe(-500);
    const sub = await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }] });
    const inv = await stripe.invoices.retrieve(sub.latest_invoice as string);
    expect(inv).toMatchObject({ total: 2000, starting_balance: -500, ending_balance: 0, amount_due: 1500, amount_paid: 1500 });
    expect((await stripe.customers.retrieve(customer.id) as Stripe.Customer).balance).toBe(0);
    const txns = await stripe.customers.listBalanceTransactions(customer.id);
    expect(txns.data.map((t) => [t.type, t.amount])).toEqual([['applied_to_invoice', 500], ['adjustment', -500]]);
  });

  it('adds a debt to the next invoice; a credit larger than the invoice pays it whole', async () => {
    const customer = await stripe.customers.create({ balance: 300 });
    await stripe.invoiceItems.create({ customer: customer.id, amount: 1000, currency: 'usd' });
    const a = await stripe.invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include', collection_method: 'send_invoice', days_until_due: 7 });
    const open = await stripe.invoices.finalizeInvoice(a.id as string);
    expect(open).toMatchObject({ total: 1000, amount_due: 1300, starting_balance: 300, ending_balance: 0 });
    await stripe.customers.update(customer.id, { balance: -5000 });
    await stripe.invoiceItems.create({ customer: customer.id, amount: 1000, currency: 'usd' });
    const b = await stripe.invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    const paid = await stripe.invoices.finalizeInvoice(b.id as string);
    expect(paid).toMatchObject({ status: 'paid', amount_due: 0, ending_balance: -4000 });
  });
});
