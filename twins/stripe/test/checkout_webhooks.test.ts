/** Conformance: Checkout Sessions and webhook endpoints, through the official `stripe` package. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;
let stripe: Stripe;

beforeAll(async () => {
  twin = await startStripeTwin();
  stripe = twin.client('sk_test_checkoutAccount00001');
});
afterAll(async () => {
  await twin.close();
});

async function complete(id: string, params: Record<string, string> = {}): Promise<Stripe.Checkout.Session> {
  return (await stripe.rawRequest('POST', `/v1/test_helpers/checkout/sessions/${id}/complete`, params)) as unknown as Stripe.Checkout.Session;
}

describe('checkout sessions', () => {
  it('payment mode: url and amount_total; completing it pays a PaymentIntent', async () => {
    const price = await stripe.prices.create({ currency: 'usd', unit_amount: 1250, product_data: { name: 'Book' } });
    const session = await stripe.checkout.sessions.create({
      mode: 'payment', line_items: [{ price: price.id, quantity: 2 }, { price_data: { currency: 'usd', unit_amount: 500, product_data: { name: 'Gift wrap' } }, quantity: 1 }],
      success_url: 'https://shop.example/success', cancel_url: 'https://shop.example/cancel', client_reference_id: 'order-7',
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.url).toBe(`https://checkout.stripe.com/c/pay/${session.id}`);
    expect(session).toMatchObject({ object: 'checkout.session', mode: 'payment', status: 'open', payment_status: 'unpaid', amount_subtotal: 3000, amount_total: 3000, currency: 'usd', client_reference_id: 'order-7' });
    expect(session.expires_at).toBe(session.created + 86_400);
    const items = await stripe.checkout.sessions.listLineItems(session.id);
    expect(items.data.map((i) => [i.quantity, i.amount_total])).toEqual([[2, 2500], [1, 500]]);
    const done = await complete(session.id, { email: 'buyer@example.com' });
    expect(done).toMatchObject({ status: 'complete', payment_status: 'paid', url: null });
    const pi = await stripe.paymentIntents.retrieve(done.payment_intent as string);
    expect(pi).toMatchObject({ status: 'succeeded', amount_received: 3000 });
    const events = await stripe.events.list({ type: 'checkout.session.completed' });
    expect((events.data[0]?.data.object as Stripe.Checkout.Session).id).toBe(session.id);
  });

  it('subscription mode: completing it makes a customer and an active subscription', async () => {
    const price = await stripe.prices.create({ currency: 'usd', unit_amount: 900, recurring: { interval: 'month' }, product_data: { name: 'Club' } });
    const session = await stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price: price.id, quantity: 1 }], success_url: 'https://shop.example/ok', customer_email: 'member@example.com' });
    expect(session.amount_total).toBe(900);
    const done = await complete(session.id);
    expect(done.status).toBe('complete');
    const sub = await stripe.subscriptions.retrieve(done.subscription as string);
    expect(sub.status).toBe('active');
    const customer = await stripe.customers.retrieve(done.customer as string) as Stripe.Customer;
    expect(customer.email).toBe('member@example.com');
  });

  it('hands payment_intent_data and subscription_data on, and expands line_items', async () => {
    const price = await stripe.prices.create({ currency: 'usd', unit_amount: 400, product_data: { name: 'Tea' } });
    const pay = await stripe.checkout.sessions.create({
      mode: 'payment', line_items: [{ price: price.id, quantity: 3 }], success_url: 'https://x.example/',
      payment_intent_data: { metadata: { order: 'o-1' }, description: 'Tea order' },
    });
    const withItems = await stripe.checkout.sessions.retrieve(pay.id, { expand: ['line_items'] });
    expect(withItems.line_items?.data.map((i) => i.quantity)).toEqual([3]);
    const done = await complete(pay.id);
    const pi = await stripe.paymentIntents.retrieve(done.payment_intent as string);
    expect(pi).toMatchObject({ metadata: { order: 'o-1' }, description: 'Tea order', amount: 1200 });

    const plan = await stripe.prices.create({ currency: 'usd', unit_amount: 900, recurring: { interval: 'month' }, product_data: { name: 'Tea club' } });
    const subSession = await stripe.checkout.sessions.create({
      mode: 'subscription', line_items: [{ price: plan.id, quantity: 1 }], success_url: 'https://x.example/',
      subscription_data: { trial_period_days: 14, metadata: { plan: 'tea' } },
    });
    expect(subSession.amount_total).toBe(0);
    const subDone = await complete(subSession.id, { email: 'club@example.com' });
    expect(subDone.payment_status).toBe('no_payment_required');
    const sub = await stripe.subscriptions.retrieve(subDone.subscription as string);
    expect(sub).toMatchObject({ status: 'trialing', metadata: { plan: 'tea' } });
  });

  it('refuses a recurring price in payment mode; expires an open session', async () => {
    const recurring = await stripe.prices.create({ currency: 'usd', unit_amount: 900, recurring: { interval: 'month' }, product_data: { name: 'R' } });
    const err = await stripe.checkout.sessions.create({ mode: 'payment', line_items: [{ price: recurring.id, quantity: 1 }], success_url: 'https://x.example/' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).param).toBe('line_items[0][price]');
    const one = await stripe.prices.create({ currency: 'usd', unit_amount: 100, product_data: { name: 'O' } });
    const session = await stripe.checkout.sessions.create({ mode: 'payment', line_items: [{ price: one.id, quantity: 1 }], success_url: 'https://x.example/' });
    const expired = await stripe.checkout.sessions.expire(session.id);
    expect(expired.status).toBe('expired');
    const list = await stripe.checkout.sessions.list({ status: 'expired' });
    expect(list.data.map((s) => s.id)).toEqual([session.id]);
  });

  it('expires an open session at expires_at on the world clock', async () => {
    const one = await stripe.prices.create({ currency: 'usd', unit_amount: 700, product_data: { name: 'E' } });
    const session = await stripe.checkout.sessions.create({ mode: 'payment', line_items: [{ price: one.id, quantity: 1 }], success_url: 'https://x.example/', expires_at: Math.floor(twin.nowMs() / 1000) + 3600 });
    await twin.advance(2 * 3600_000);
    const after = await stripe.checkout.sessions.retrieve(session.id);
    expect(after).toMatchObject({ status: 'expired', url: null });
  });

  it('a declined card leaves the session open and answers the card error', async () => {
    const one = await stripe.prices.create({ currency: 'usd', unit_amount: 100 * 10, product_data: { name: 'D' } });
    const session = await stripe.checkout.sessions.create({ mode: 'payment', line_items: [{ price: one.id, quantity: 1 }], success_url: 'https://x.example/' });
    const err = await complete(session.id, { payment_method: 'pm_card_chargeDeclined' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect((await stripe.checkout.sessions.retrieve(session.id)).status).toBe('open');
  });
});

describe('payment links', () => {
  it('makes a link with a url; paying it completes a Checkout Session; a completed-sessions limit deactivates it', async () => {
    const price = await stripe.prices.create({ currency: 'usd', unit_amount: 1500, product_data: { name: 'Poster' } });
    const link = await stripe.paymentLinks.create({ line_items: [{ price: price.id, quantity: 2 }], restrictions: { completed_sessions: { limit: 1 } }, metadata: { campaign: 'spring' } });
    expect(link).toMatchObject({ object: 'payment_link', active: true, currency: 'usd', metadata: { campaign: 'spring' } });
    expect(link.url).toMatch(/^https:\/\/buy\.stripe\.com\/test_/);
    const items = await stripe.paymentLinks.listLineItems(link.id);
    expect(items.data.map((i) => [i.quantity, i.amount_total])).toEqual([[2, 3000]]);
    const session = (await stripe.rawRequest('POST', `/v1/test_helpers/payment_links/${link.id}/complete`, { email: 'fan@example.com' })) as unknown as Stripe.Checkout.Session;
    expect(session).toMatchObject({ status: 'complete', payment_status: 'paid', payment_link: link.id, amount_total: 3000 });
    expect((await stripe.paymentLinks.retrieve(link.id)).active).toBe(false);
    const again = await stripe.rawRequest('POST', `/v1/test_helpers/payment_links/${link.id}/complete`, {}).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((again as Stripe.errors.StripeError).statusCode).toBe(400);
    const listed = await stripe.checkout.sessions.list({ payment_link: link.id } as Stripe.Checkout.SessionListParams);
    expect(listed.data.map((s) => s.id)).toEqual([session.id]);
  });
});

describe('webhook endpoints', () => {
  it('answers the secret once, then lists, updates and deletes', async () => {
    const ep = await stripe.webhookEndpoints.create({ url: 'https://app.example/hooks', enabled_events: ['payment_intent.succeeded', 'customer.created'], description: 'main' });
    expect(ep.id).toMatch(/^we_/);
    expect(ep.secret).toMatch(/^whsec_/);
    expect(ep).toMatchObject({ status: 'enabled', enabled_events: ['payment_intent.succeeded', 'customer.created'], url: 'https://app.example/hooks' });
    const got = await stripe.webhookEndpoints.retrieve(ep.id);
    expect(got.secret).toBeUndefined();
    const upd = await stripe.webhookEndpoints.update(ep.id, { disabled: true, enabled_events: ['*'] });
    expect(upd).toMatchObject({ status: 'disabled', enabled_events: ['*'] });
    expect((await stripe.webhookEndpoints.list()).data.map((e) => e.id)).toContain(ep.id);
    expect(await stripe.webhookEndpoints.del(ep.id)).toMatchObject({ id: ep.id, deleted: true });
    const gone = await stripe.webhookEndpoints.retrieve(ep.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((gone as Stripe.errors.StripeError).statusCode).toBe(404);
  });

  it('counts the endpoints an event goes to in pending_webhooks', async () => {
    const s = twin.client('sk_test_pendingWebhooks00001');
    await s.webhookEndpoints.create({ url: 'https://a.example/hook', enabled_events: ['customer.created'] });
    await s.webhookEndpoints.create({ url: 'https://b.example/hook', enabled_events: ['*'] });
    const off = await s.webhookEndpoints.create({ url: 'https://c.example/hook', enabled_events: ['*'] });
    await s.webhookEndpoints.update(off.id, { disabled: true });
    const cus = await s.customers.create({ email: 'hooked@example.com' });
    await s.customers.update(cus.id, { name: 'x' });
    const created = await s.events.list({ type: 'customer.created' });
    const changed = await s.events.list({ type: 'customer.updated' });
    expect(created.data[0]?.pending_webhooks).toBe(2);
    expect(changed.data[0]?.pending_webhooks).toBe(1);
  });

  it('refuses a bad URL and a missing enabled_events', async () => {
    const bad = await stripe.webhookEndpoints.create({ url: 'not a url', enabled_events: ['*'] }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((bad as Stripe.errors.StripeError).param).toBe('url');
    const none = await stripe.webhookEndpoints.create({ url: 'https://a.example/' } as Stripe.WebhookEndpointCreateParams).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((none as Stripe.errors.StripeError).param).toBe('enabled_events');
    const pattern = await stripe.webhookEndpoints.create({ url: 'https://a.example/', enabled_events: ['customer.*' as 'customer.created'] }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((pattern as Stripe.errors.StripeError).param).toBe('enabled_events[0]');
  });
});
