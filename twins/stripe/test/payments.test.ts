/**
 * Conformance: payment methods, payment intents (confirm, capture, cancel, declines, 3D Secure),
 * charges, refunds, balance, setup intents and events — through the official `stripe` package.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;
let stripe: Stripe;

beforeAll(async () => {
  twin = await startStripeTwin();
  stripe = twin.client('sk_test_paymentsAccount00001');
});
afterAll(async () => {
  await twin.close();
});

const cardOnly = { allowed_payment_method_types: ['card' as const] };

async function cardError(p: Promise<unknown>): Promise<Stripe.errors.StripeCardError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(Stripe.errors.StripeCardError);
  return e as Stripe.errors.StripeCardError;
}

describe('payment methods', () => {
  it('makes a new PaymentMethod from a test token each time it is used', async () => {
    const cus = await stripe.customers.create({});
    const a = await stripe.paymentMethods.attach('pm_card_visa', { customer: cus.id });
    const b = await stripe.paymentMethods.attach('pm_card_mastercard', { customer: cus.id });
    expect(a.id).toMatch(/^pm_[A-Za-z0-9]{24}$/);
    expect(a.customer).toBe(cus.id);
    expect(a.card).toMatchObject({ brand: 'visa', last4: '4242', funding: 'credit', country: 'US' });
    expect(b.card).toMatchObject({ brand: 'mastercard', last4: '4444' });
    const listed = await stripe.paymentMethods.list({ customer: cus.id, type: 'card' });
    expect(listed.data.map((p) => p.id).sort()).toEqual([a.id, b.id].sort());
  });

  it('creates from a test card number and from a tok_ token, with stable fingerprints', async () => {
    const year = new Date(twin.nowMs()).getUTCFullYear() + 2;
    const n1 = await stripe.paymentMethods.create({ type: 'card', card: { number: '4242424242424242', exp_month: 12, exp_year: year, cvc: '123' } });
    const n2 = await stripe.paymentMethods.create({ type: 'card', card: { number: '4242 4242 4242 4242', exp_month: 1, exp_year: year } });
    const t = await stripe.paymentMethods.create({ type: 'card', card: { token: 'tok_amex' } });
    expect(n1.card).toMatchObject({ brand: 'visa', last4: '4242', exp_month: 12, exp_year: year });
    expect(n1.card?.checks?.cvc_check).toBe('pass');
    expect(n1.card?.fingerprint).toBe(n2.card?.fingerprint);
    expect(t.card?.brand).toBe('amex');
    expect(t.card?.fingerprint).not.toBe(n1.card?.fingerprint);
  });

  it('refuses a card number that fails the Luhn check as a card_error', async () => {
    const e = await cardError(stripe.paymentMethods.create({ type: 'card', card: { number: '4242424242424241', exp_month: 12, exp_year: 2040 } }));
    expect(e.code).toBe('incorrect_number');
    expect(e.statusCode).toBe(402);
  });

  it('checks a raw card the same way for payment methods and for tokens: number, month, expiry', async () => {
    const year = new Date(twin.nowMs()).getUTCFullYear();
    const cases: [{ number: string; exp_month: number; exp_year: number }, string, string][] = [
      [{ number: '4242424242424241', exp_month: 12, exp_year: year + 2 }, 'incorrect_number', 'card[number]'],
      [{ number: '4242424242424242', exp_month: 13, exp_year: year + 2 }, 'invalid_expiry_month', 'card[exp_month]'],
      [{ number: '4242424242424242', exp_month: 1, exp_year: year - 1 }, 'invalid_expiry_year', 'card[exp_year]'],
    ];
    for (const [card, code, param] of cases) {
      const viaMethod = await cardError(stripe.paymentMethods.create({ type: 'card', card }));
      const viaToken = await cardError(stripe.tokens.create({ card: { ...card, exp_month: String(card.exp_month), exp_year: String(card.exp_year) } }));
      for (const e of [viaMethod, viaToken]) expect([e.code, e.param, e.statusCode]).toEqual([code, param, 402]);
    }
  });

  it('detaches, and refuses to detach twice', async () => {
    const cus = await stripe.customers.create({});
    const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: cus.id });
    const det = await stripe.paymentMethods.detach(pm.id);
    expect(det.customer).toBeNull();
    expect((await stripe.customers.listPaymentMethods(cus.id)).data).toEqual([]);
    const again = await stripe.paymentMethods.detach(pm.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((again as Stripe.errors.StripeError).statusCode).toBe(400);
  });

  it('refuses to attach a card that declines, but attaches chargeCustomerFail', async () => {
    const cus = await stripe.customers.create({});
    const e = await cardError(stripe.paymentMethods.attach('pm_card_chargeDeclined', { customer: cus.id }));
    expect(e.code).toBe('card_declined');
    const ok = await stripe.paymentMethods.attach('pm_card_chargeCustomerFail', { customer: cus.id });
    expect(ok.customer).toBe(cus.id);
  });

  it('updates billing details and metadata', async () => {
    const pm = await stripe.paymentMethods.create({ type: 'card', card: { token: 'tok_visa' } });
    const upd = await stripe.paymentMethods.update(pm.id, { billing_details: { name: 'Jenny', email: 'j@example.com' }, metadata: { a: '1' } });
    expect(upd.billing_details).toMatchObject({ name: 'Jenny', email: 'j@example.com' });
    expect(upd.metadata).toEqual({ a: '1' });
  });
});

describe('payment intents', () => {
  it('creates, then confirms with a card: succeeded with a charge and a balance transaction', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 2000, currency: 'usd', ...cardOnly, description: 'Order 1', metadata: { order: '1' } });
    expect(pi.id).toMatch(/^pi_[A-Za-z0-9]{24}$/);
    expect(pi.status).toBe('requires_payment_method');
    expect(pi.client_secret).toMatch(new RegExp(`^${pi.id}_secret_`));
    const confirmed = await stripe.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_visa' });
    expect(confirmed.status).toBe('succeeded');
    expect(confirmed.amount_received).toBe(2000);
    expect(confirmed.latest_charge).toMatch(/^ch_/);
    const charge = await stripe.charges.retrieve(confirmed.latest_charge as string);
    expect(charge).toMatchObject({ amount: 2000, amount_captured: 2000, paid: true, captured: true, status: 'succeeded', payment_intent: pi.id, description: 'Order 1', metadata: { order: '1' } });
    expect(charge.payment_method_details?.card?.last4).toBe('4242');
    const txn = await stripe.balanceTransactions.retrieve(charge.balance_transaction as string);
    expect(txn).toMatchObject({ amount: 2000, fee: 88, net: 1912, type: 'charge', source: charge.id, status: 'pending' });
  });

  it('confirms at creation with confirm: true', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_mastercard', confirm: true, ...cardOnly });
    expect(pi.status).toBe('succeeded');
    expect(pi.payment_method).toMatch(/^pm_/);
  });

  it('declines as a card_declined card error with decline_code, keeping last_payment_error', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', ...cardOnly });
    const e = await cardError(stripe.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_chargeDeclinedInsufficientFunds' }));
    expect(e.code).toBe('card_declined');
    expect(e.decline_code).toBe('insufficient_funds');
    expect(e.message).toBe('Your card has insufficient funds.');
    expect(e.payment_intent?.id).toBe(pi.id);
    expect(e.payment_intent?.status).toBe('requires_payment_method');
    const after = await stripe.paymentIntents.retrieve(pi.id);
    expect(after.status).toBe('requires_payment_method');
    expect(after.payment_method).toBeNull();
    expect(after.last_payment_error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' });
    const failed = await stripe.charges.retrieve(after.latest_charge as string);
    expect(failed).toMatchObject({ status: 'failed', paid: false, failure_code: 'card_declined' });
    // A retry with a good card succeeds on the same PaymentIntent.
    const retry = await stripe.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_visa' });
    expect(retry.status).toBe('succeeded');
    expect(retry.last_payment_error).toBeNull();
  });

  it('declines each test card with its own code', async () => {
    const cases: [string, string, string][] = [
      ['pm_card_chargeDeclined', 'card_declined', 'generic_decline'],
      ['pm_card_insufficientFunds', 'card_declined', 'insufficient_funds'],
      ['pm_card_chargeDeclinedLostCard', 'card_declined', 'lost_card'],
      ['pm_card_chargeDeclinedFraudulent', 'card_declined', 'fraudulent'],
      ['pm_card_chargeDeclinedExpiredCard', 'expired_card', 'expired_card'],
      ['pm_card_chargeDeclinedIncorrectCvc', 'incorrect_cvc', 'incorrect_cvc'],
      ['pm_card_chargeDeclinedProcessingError', 'processing_error', 'processing_error'],
    ];
    for (const [token, code, decline] of cases) {
      const e = await cardError(stripe.paymentIntents.create({ amount: 700, currency: 'usd', payment_method: token, confirm: true, ...cardOnly }));
      expect([token, e.code, e.decline_code]).toEqual([token, code, decline]);
    }
  });

  it('needs authentication: requires_action with next_action, then succeeds once authenticated', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 3000, currency: 'usd', payment_method: 'pm_card_authenticationRequired', confirm: true, return_url: 'https://shop.example/return', ...cardOnly });
    expect(pi.status).toBe('requires_action');
    expect(pi.next_action?.type).toBe('redirect_to_url');
    expect(pi.next_action?.redirect_to_url?.return_url).toBe('https://shop.example/return');
    const done = await stripe.rawRequest('POST', `/v1/test_helpers/authenticate/${pi.id}`, { outcome: 'succeed' });
    expect((done as unknown as { status: string }).status).toBe('succeeded');
    expect((await stripe.paymentIntents.retrieve(pi.id)).status).toBe('succeeded');
  });

  it('fails off-session payments that need authentication with authentication_required', async () => {
    const cus = await stripe.customers.create({});
    const e = await cardError(stripe.paymentIntents.create({ amount: 3000, currency: 'usd', customer: cus.id, payment_method: 'pm_card_authenticationRequired', confirm: true, off_session: true, ...cardOnly }));
    expect(e.code).toBe('authentication_required');
    expect(e.payment_intent?.status).toBe('requires_payment_method');
  });

  it('captures manually, in part, and the rest is released', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 5000, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    expect(pi.status).toBe('requires_capture');
    expect(pi.amount_capturable).toBe(5000);
    const ch0 = await stripe.charges.retrieve(pi.latest_charge as string);
    expect(ch0.captured).toBe(false);
    expect(ch0.balance_transaction).toBeNull();
    const captured = await stripe.paymentIntents.capture(pi.id, { amount_to_capture: 3000 });
    expect(captured).toMatchObject({ status: 'succeeded', amount_received: 3000, amount_capturable: 0 });
    const ch = await stripe.charges.retrieve(pi.latest_charge as string);
    expect(ch).toMatchObject({ captured: true, amount_captured: 3000, amount_refunded: 2000 });
    const again = await stripe.paymentIntents.capture(pi.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((again as Stripe.errors.StripeError).code).toBe('payment_intent_unexpected_state');
  });

  it('lets an uncaptured authorization lapse after seven days on the world clock', async () => {
    const s = twin.client('sk_test_authExpiryAccount0001');
    const pi = await s.paymentIntents.create({ amount: 2500, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    const kept = await s.paymentIntents.create({ amount: 2500, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    await s.paymentIntents.capture(kept.id);
    await twin.advance(8 * 86_400_000);
    const lapsed = await s.paymentIntents.retrieve(pi.id);
    expect(lapsed).toMatchObject({ status: 'canceled', cancellation_reason: 'automatic', amount_capturable: 0 });
    expect((await s.charges.retrieve(pi.latest_charge as string)).refunded).toBe(true);
    expect((await s.paymentIntents.retrieve(kept.id)).status).toBe('succeeded');
    const events = await s.events.list({ type: 'charge.expired' });
    expect(events.data.map((e) => (e.data.object as Stripe.Charge).id)).toEqual([pi.latest_charge]);
  });

  it('refuses to capture more than is capturable', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    const err = await stripe.paymentIntents.capture(pi.id, { amount_to_capture: 1001 }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).param).toBe('amount_to_capture');
  });

  it('cancels, with a reason, and refuses to cancel a succeeded one', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', ...cardOnly });
    const canceled = await stripe.paymentIntents.cancel(pi.id, { cancellation_reason: 'requested_by_customer' });
    expect(canceled).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer' });
    expect(canceled.canceled_at).toBe(Math.floor(twin.nowMs() / 1000));
    const paid = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    const err = await stripe.paymentIntents.cancel(paid.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).code).toBe('payment_intent_unexpected_state');
  });

  it('refuses payment_method_types, which this API version renamed allowed_payment_method_types', async () => {
    const err = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method_types: ['card'] } as unknown as Stripe.PaymentIntentCreateParams).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).code).toBe('parameter_unknown');
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', ...cardOnly });
    expect(pi.allowed_payment_method_types).toEqual(['card']);
    expect(pi.payment_method_types).toEqual(['card']);
    expect(pi.automatic_payment_methods).toBeNull();
  });

  it('wants a return_url to confirm on-session when the Dashboard\'s payment methods (and redirects) are on', async () => {
    const auto = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd' });
    expect(auto.automatic_payment_methods).toEqual({ allow_redirects: 'always', enabled: true });
    const err = await stripe.paymentIntents.confirm(auto.id, { payment_method: 'pm_card_visa' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).param).toBe('return_url');
    expect((await stripe.paymentIntents.retrieve(auto.id)).status).toBe('requires_payment_method');
    const ok = await stripe.paymentIntents.confirm(auto.id, { payment_method: 'pm_card_visa', return_url: 'https://shop.example/done' });
    expect(ok.status).toBe('succeeded');
    const never = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', automatic_payment_methods: { enabled: true, allow_redirects: 'never' }, payment_method: 'pm_card_visa', confirm: true });
    expect(never.status).toBe('succeeded');
    const cus = await stripe.customers.create({});
    const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: cus.id });
    const offSession = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', customer: cus.id, payment_method: pm.id, off_session: true, confirm: true });
    expect(offSession.status).toBe('succeeded');
  });

  it('refuses an amount below the minimum and a confirm without a payment method', async () => {
    const small = await stripe.paymentIntents.create({ amount: 10, currency: 'usd' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((small as Stripe.errors.StripeError).code).toBe('amount_too_small');
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', ...cardOnly });
    const err = await stripe.paymentIntents.confirm(pi.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).code).toBe('payment_intent_unexpected_state');
  });

  it('updates amount and metadata, and saves the card with setup_future_usage', async () => {
    const cus = await stripe.customers.create({});
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', customer: cus.id, ...cardOnly });
    const upd = await stripe.paymentIntents.update(pi.id, { amount: 1200, metadata: { k: 'v' }, setup_future_usage: 'off_session' });
    expect(upd).toMatchObject({ amount: 1200, metadata: { k: 'v' }, setup_future_usage: 'off_session' });
    const done = await stripe.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_visa' });
    expect(done.amount_received).toBe(1200);
    const saved = await stripe.customers.listPaymentMethods(cus.id);
    expect(saved.data.map((p) => p.id)).toEqual([done.payment_method]);
  });

  it('lists by customer and searches by status', async () => {
    const cus = await stripe.customers.create({});
    const a = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', customer: cus.id, ...cardOnly });
    const b = await stripe.paymentIntents.create({ amount: 2000, currency: 'usd', customer: cus.id, payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    expect((await stripe.paymentIntents.list({ customer: cus.id })).data.map((p) => p.id)).toEqual([b.id, a.id]);
    const r = await stripe.paymentIntents.search({ query: `customer:"${cus.id}" AND status:"succeeded"` });
    expect(r.data.map((p) => p.id)).toEqual([b.id]);
  });
});

describe('refunds and balance', () => {
  it('refunds in part, then the rest, then refuses a third', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 4000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    const r1 = await stripe.refunds.create({ payment_intent: pi.id, amount: 1500, reason: 'requested_by_customer' });
    expect(r1).toMatchObject({ object: 'refund', amount: 1500, status: 'succeeded', payment_intent: pi.id, charge: pi.latest_charge, reason: 'requested_by_customer' });
    expect(r1.id).toMatch(/^re_/);
    let ch = await stripe.charges.retrieve(pi.latest_charge as string);
    expect(ch).toMatchObject({ amount_refunded: 1500, refunded: false });
    const tooMuch = await stripe.refunds.create({ charge: ch.id, amount: 3000 }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((tooMuch as Stripe.errors.StripeError).param).toBe('amount');
    const r2 = await stripe.refunds.create({ charge: ch.id });
    expect(r2.amount).toBe(2500);
    ch = await stripe.charges.retrieve(ch.id);
    expect(ch).toMatchObject({ amount_refunded: 4000, refunded: true });
    const third = await stripe.refunds.create({ charge: ch.id }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((third as Stripe.errors.StripeError).code).toBe('charge_already_refunded');
    const listed = await stripe.refunds.list({ payment_intent: pi.id });
    expect(listed.data.map((r) => r.id)).toEqual([r2.id, r1.id]);
    const txn = await stripe.balanceTransactions.retrieve(r1.balance_transaction as string);
    expect(txn).toMatchObject({ amount: -1500, type: 'refund', net: -1500 });
    const withRefunds = await stripe.charges.retrieve(ch.id, { expand: ['refunds'] });
    expect(withRefunds.refunds?.data.map((r) => r.id)).toEqual([r2.id, r1.id]);
  });

  it("expands a charge's refunds as Stripe lists inside objects: the ten newest and has_more", async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1200, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    const made: string[] = [];
    for (let i = 0; i < 12; i++) made.push((await stripe.refunds.create({ payment_intent: pi.id, amount: 100 })).id);
    const ch = await stripe.charges.retrieve(pi.latest_charge as string, { expand: ['refunds'] });
    expect(ch.refunds).toMatchObject({ object: 'list', has_more: true, url: `/v1/charges/${ch.id}/refunds` });
    expect(ch.refunds?.data.map((r) => r.id)).toEqual(made.slice(2).reverse());
    // The rest is a page of the refunds list away.
    const rest = await stripe.refunds.list({ charge: ch.id, starting_after: made[2] });
    expect(rest.data.map((r) => r.id)).toEqual([made[1], made[0]]);
  });

  it('searches charges by card last4, amount and refunded', async () => {
    const s = twin.client('sk_test_chargeSearchAccount01');
    const visa = await s.paymentIntents.create({ amount: 3100, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    const mc = await s.paymentIntents.create({ amount: 4100, currency: 'usd', payment_method: 'pm_card_mastercard', confirm: true, ...cardOnly });
    await s.refunds.create({ payment_intent: mc.id });
    const byLast4 = await s.charges.search({ query: 'payment_method_details.card.last4:"4444"' });
    expect(byLast4.data.map((ch) => ch.id)).toEqual([mc.latest_charge]);
    const refunded = await s.charges.search({ query: 'refunded:"true" OR amount<3200' });
    expect(refunded.data.map((ch) => ch.id).sort()).toEqual([visa.latest_charge, mc.latest_charge].sort());
    const notRefunded = await s.charges.search({ query: '-refunded:"true" AND status:"succeeded"' });
    expect(notRefunded.data.map((ch) => ch.id)).toEqual([visa.latest_charge]);
  });

  it('refuses to refund a PaymentIntent that has not succeeded', async () => {
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', ...cardOnly });
    const err = await stripe.refunds.create({ payment_intent: pi.id }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(400);
  });

  it('keeps a balance: pending until funds are available, then available as the clock moves', async () => {
    const s = twin.client('sk_test_balanceAccount000001');
    const empty = await s.balance.retrieve();
    expect(empty).toMatchObject({ object: 'balance', available: [{ amount: 0, currency: 'usd' }], pending: [{ amount: 0, currency: 'usd' }] });
    await s.paymentIntents.create({ amount: 10000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    const pending = await s.balance.retrieve();
    expect(pending.pending[0]?.amount).toBe(10000 - 320);
    expect(pending.available[0]?.amount).toBe(0);
    await twin.advance(3 * 86_400_000);
    const available = await s.balance.retrieve();
    expect(available.available[0]?.amount).toBe(9680);
    expect(available.pending[0]?.amount).toBe(0);
    const txns = await s.balanceTransactions.list({ type: 'charge' });
    expect(txns.data.map((t) => t.status)).toEqual(['available']);
  });
});

describe('payouts', () => {
  it('pays out from the available balance, paid on the arrival date; refuses more than is available', async () => {
    const s = twin.client('sk_test_payoutsAccount000001');
    await s.paymentIntents.create({ amount: 10000, currency: 'usd', payment_method: 'pm_card_bypassPending', confirm: true, ...cardOnly });
    const available = (await s.balance.retrieve()).available[0]!.amount;
    expect(available).toBe(10000 - 320);
    const tooMuch = await s.payouts.create({ amount: available + 1, currency: 'usd' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((tooMuch as Stripe.errors.StripeError).code).toBe('balance_insufficient');
    const payout = await s.payouts.create({ amount: 5000, currency: 'usd' });
    expect(payout).toMatchObject({ object: 'payout', status: 'pending', amount: 5000, method: 'standard' });
    expect(payout.arrival_date).toBe(Math.floor(twin.nowMs() / 1000) + 2 * 86_400);
    expect((await s.balance.retrieve()).available[0]!.amount).toBe(available - 5000);
    const second = await s.payouts.create({ amount: 1000, currency: 'usd' });
    const canceled = await s.payouts.cancel(second.id);
    expect(canceled.status).toBe('canceled');
    expect((await s.balance.retrieve()).available[0]!.amount).toBe(available - 5000);
    await twin.advance(3 * 86_400_000);
    expect((await s.payouts.retrieve(payout.id)).status).toBe('paid');
    expect((await s.events.list({ type: 'payout.paid' })).data.map((e) => (e.data.object as Stripe.Payout).id)).toEqual([payout.id]);
  });
});

describe('disputes', () => {
  it('opens a dispute on the dispute test card, withdraws the funds and the fee, and winning evidence reinstates them', async () => {
    const s = twin.client('sk_test_disputesAccount00001');
    const pi = await s.paymentIntents.create({ amount: 5000, currency: 'usd', payment_method: 'pm_card_createDispute', confirm: true, ...cardOnly });
    expect(pi.status).toBe('succeeded');
    const charge = await s.charges.retrieve(pi.latest_charge as string);
    expect(charge.disputed).toBe(true);
    const disputes = await s.disputes.list({ payment_intent: pi.id });
    const dispute = disputes.data[0] as Stripe.Dispute;
    expect(dispute).toMatchObject({ object: 'dispute', amount: 5000, status: 'needs_response', reason: 'fraudulent', charge: charge.id });
    expect(dispute.balance_transactions[0]).toMatchObject({ object: 'balance_transaction', amount: -5000, fee: 1500, net: -6500 });
    const txn = await s.balanceTransactions.retrieve(dispute.balance_transactions[0]!.id);
    expect(txn.net).toBe(-6500);
    const won = await s.disputes.update(dispute.id, { evidence: { uncategorized_text: 'winning_evidence' } });
    expect(won.status).toBe('won');
    expect(won.balance_transactions.map((t) => t.net)).toEqual([-6500, 6500]);
    const types = (await s.events.list({ limit: 100 })).data.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['charge.dispute.created', 'charge.dispute.funds_withdrawn', 'charge.dispute.funds_reinstated', 'charge.dispute.closed']));
  });

  it('loses with losing evidence or when closed; an inquiry withdraws nothing', async () => {
    const s = twin.client('sk_test_disputesAccount00002');
    const a = await s.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_createDisputeProductNotReceived', confirm: true, ...cardOnly });
    const da = (await s.disputes.list({ payment_intent: a.id })).data[0] as Stripe.Dispute;
    expect(da.reason).toBe('product_not_received');
    expect((await s.disputes.close(da.id)).status).toBe('lost');
    const b = await s.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_createDisputeInquiry', confirm: true, ...cardOnly });
    const db = (await s.disputes.list({ payment_intent: b.id })).data[0] as Stripe.Dispute;
    expect(db).toMatchObject({ status: 'warning_needs_response', balance_transactions: [] });
    const again = await s.disputes.close(da.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((again as Stripe.errors.StripeError).statusCode).toBe(400);
  });
});

describe('legacy tokens, sources and charges', () => {
  it('charges a test token directly, with the card as source, and refunds it', async () => {
    const ch = await stripe.charges.create({ amount: 2000, currency: 'usd', source: 'tok_visa', description: 'legacy' });
    expect(ch).toMatchObject({ object: 'charge', status: 'succeeded', paid: true, captured: true, payment_intent: null, amount_captured: 2000 });
    expect(ch.source).toMatchObject({ object: 'card', brand: 'Visa', last4: '4242' });
    expect((await stripe.balanceTransactions.retrieve(ch.balance_transaction as string)).net).toBe(2000 - 88);
    const re = await stripe.refunds.create({ charge: ch.id });
    expect(re.amount).toBe(2000);
  });

  it('declines with the charge id in the error', async () => {
    const e = await cardError(stripe.charges.create({ amount: 2000, currency: 'usd', source: 'tok_chargeDeclinedInsufficientFunds' }));
    expect(e.decline_code).toBe('insufficient_funds');
    expect(e.charge).toMatch(/^ch_/);
    expect((await stripe.charges.retrieve(e.charge as string)).status).toBe('failed');
  });

  it('saves a token on a customer as the default source and charges the customer; a token is used once', async () => {
    const year = new Date(twin.nowMs()).getUTCFullYear() + 3;
    const token = await stripe.tokens.create({ card: { number: '5555555555554444', exp_month: '10', exp_year: String(year), cvc: '123' } });
    expect(token).toMatchObject({ object: 'token', type: 'card', used: false });
    const cus = await stripe.customers.create({});
    const card = await stripe.customers.createSource(cus.id, { source: token.id }) as Stripe.Card;
    expect(card).toMatchObject({ object: 'card', brand: 'MasterCard', last4: '4444', customer: cus.id });
    expect((await stripe.customers.retrieve(cus.id) as Stripe.Customer).default_source).toBe(card.id);
    const again = await stripe.customers.createSource(cus.id, { source: token.id }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((again as Stripe.errors.StripeError).code).toBe('token_already_used');
    const ch = await stripe.charges.create({ amount: 1500, currency: 'usd', customer: cus.id, capture: false });
    expect(ch).toMatchObject({ captured: false, customer: cus.id, balance_transaction: null });
    const captured = await stripe.charges.capture(ch.id, { amount: 1000 });
    expect(captured).toMatchObject({ captured: true, amount_captured: 1000, amount_refunded: 500 });
    const twice = await stripe.charges.capture(ch.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((twice as Stripe.errors.StripeError).code).toBe('charge_already_captured');
    expect((await stripe.customers.listSources(cus.id, { object: 'card' })).data.map((c) => c.id)).toEqual([card.id]);
    expect(await stripe.customers.deleteSource(cus.id, card.id)).toMatchObject({ id: card.id, deleted: true });
    expect((await stripe.customers.retrieve(cus.id) as Stripe.Customer).default_source).toBeNull();
    const none = await stripe.charges.create({ amount: 1500, currency: 'usd', customer: cus.id }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((none as Stripe.errors.StripeError).statusCode).toBe(400);
  });
});

describe('setup intents', () => {
  it('saves a card for a customer', async () => {
    const cus = await stripe.customers.create({});
    const si = await stripe.setupIntents.create({ customer: cus.id, ...cardOnly });
    expect(si.id).toMatch(/^seti_/);
    expect(si).toMatchObject({ status: 'requires_payment_method', usage: 'off_session' });
    const done = await stripe.setupIntents.confirm(si.id, { payment_method: 'pm_card_visa' });
    expect(done.status).toBe('succeeded');
    const pms = await stripe.customers.listPaymentMethods(cus.id);
    expect(pms.data.map((p) => p.id)).toEqual([done.payment_method]);
    // Saved for later: an off-session payment with it succeeds.
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', customer: cus.id, payment_method: done.payment_method as string, off_session: true, confirm: true, ...cardOnly });
    expect(pi.status).toBe('succeeded');
  });

  it('needs authentication on setup for authenticationRequiredOnSetup, then off-session payments pass', async () => {
    const cus = await stripe.customers.create({});
    const si = await stripe.setupIntents.create({ customer: cus.id, payment_method: 'pm_card_authenticationRequiredOnSetup', confirm: true, ...cardOnly });
    expect(si.status).toBe('requires_action');
    await stripe.rawRequest('POST', `/v1/test_helpers/authenticate/${si.id}`, { outcome: 'succeed' });
    const done = await stripe.setupIntents.retrieve(si.id);
    expect(done.status).toBe('succeeded');
    const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', customer: cus.id, payment_method: done.payment_method as string, off_session: true, confirm: true, ...cardOnly });
    expect(pi.status).toBe('succeeded');
  });

  it('fails a declining card with a card error and last_setup_error; cancels', async () => {
    const si = await stripe.setupIntents.create({ ...cardOnly });
    const e = await cardError(stripe.setupIntents.confirm(si.id, { payment_method: 'pm_card_chargeDeclined' }));
    expect(e.code).toBe('card_declined');
    const after = await stripe.setupIntents.retrieve(si.id);
    expect(after.last_setup_error?.code).toBe('card_declined');
    const canceled = await stripe.setupIntents.cancel(si.id, { cancellation_reason: 'abandoned' });
    expect(canceled).toMatchObject({ status: 'canceled', cancellation_reason: 'abandoned' });
  });
});

describe('events', () => {
  it('records an event for each change, newest first, filterable by type and retrievable', async () => {
    const s = twin.client('sk_test_eventsAccount0000001');
    const cus = await s.customers.create({ email: 'ev@example.com' });
    await s.customers.update(cus.id, { name: 'Evented' });
    const pi = await s.paymentIntents.create({ amount: 1000, currency: 'usd', customer: cus.id, payment_method: 'pm_card_visa', confirm: true, ...cardOnly });
    const all = await s.events.list({ limit: 100 });
    const types = all.data.map((e) => e.type);
    expect(types[types.length - 1]).toBe('customer.created');
    expect(types).toEqual(expect.arrayContaining(['customer.created', 'customer.updated', 'payment_intent.created', 'charge.succeeded', 'payment_intent.succeeded']));
    const updated = await s.events.list({ type: 'customer.updated' });
    expect(updated.data.length).toBe(1);
    const ev = updated.data[0] as Stripe.Event;
    expect(ev.id).toMatch(/^evt_/);
    expect((ev.data.object as Stripe.Customer).name).toBe('Evented');
    expect(ev.data.previous_attributes).toEqual({ name: null });
    expect(ev.request?.id).toMatch(/^req_/);
    const got = await s.events.retrieve(ev.id);
    expect(got.id).toBe(ev.id);
    const piEvents = await s.events.list({ type: 'payment_intent.*' });
    expect(piEvents.data.every((e) => (e.data.object as { id: string }).id === pi.id)).toBe(true);
    const some = await s.events.list({ types: ['charge.succeeded', 'customer.created'] });
    expect(some.data.map((e) => e.type).sort()).toEqual(['charge.succeeded', 'customer.created']);
  });

  it('emits each event on the log entry the request made', async () => {
    const s = twin.client('sk_test_eventsAccount0000002');
    await s.customers.create({ email: 'logged@example.com' });
    expect(await twin.lastEntryEvents()).toEqual(['customer.created']);
  });
});
