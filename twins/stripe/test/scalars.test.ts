/**
 * Scalar parameters as Stripe's v1 API reads them from forms and queries, sent through the
 * official `stripe` package where it can carry the value (a string where its types want a
 * boolean or a number) and as raw form bodies the way other SDKs write them. Booleans take
 * `True`/`FALSE` (stripe-python before 12.0.1 and stripe-dotnet send `True`); integers refuse a
 * fraction, even `.00`, with `parameter_invalid_integer`. Sources: twins/stripe/README.md,
 * "Scalar parameters".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;
beforeAll(async () => {
  twin = await startStripeTwin();
});
afterAll(async () => {
  await twin.close();
});

/** A value the package's types do not allow, sent as it is (the package writes strings unchanged). */
function loose<T>(v: string): T {
  return v as unknown as T;
}

async function refusal(p: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
  return e as Stripe.errors.StripeError;
}

function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

describe('booleans', () => {
  it('takes True, TRUE, False and FALSE in a form body, as older stripe-python and stripe-dotnet send them', async () => {
    const stripe = twin.client('sk_test_scalarsBools000000001');
    const confirmed = await stripe.paymentIntents.create({
      amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', allowed_payment_method_types: ['card'], confirm: loose<boolean>('True'),
    });
    expect(confirmed.status).toBe('succeeded');
    const hidden = await stripe.products.create({ name: 'Hidden', active: loose<boolean>('FALSE') });
    expect(hidden.active).toBe(false);
    expect((await stripe.products.update(hidden.id, { active: loose<boolean>('TRUE') })).active).toBe(true);
    expect((await stripe.products.update(hidden.id, { active: loose<boolean>('False') })).active).toBe(false);

    // stripe-dotnet writes the body itself: `capture_method`… `confirm=True`, form-encoded.
    const key = 'sk_test_scalarsBools000000001';
    const raw = await twin.raw('POST', '/v1/payment_intents', {
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form({ amount: '1500', currency: 'usd', payment_method: 'pm_card_visa', 'allowed_payment_method_types[0]': 'card', confirm: 'True', 'metadata[from]': 'dotnet' }),
    });
    expect(raw.status).toBe(200);
    expect(raw.body).toMatchObject({ object: 'payment_intent', status: 'succeeded', amount: 1500, metadata: { from: 'dotnet' } });
  });

  it('takes them in a query too: a list filtered with active=True', async () => {
    const stripe = twin.client('sk_test_scalarsBools000000002');
    const on = await stripe.products.create({ name: 'On' });
    const off = await stripe.products.create({ name: 'Off', active: false });
    expect((await stripe.products.list({ active: loose<boolean>('True') })).data.map((p) => p.id)).toEqual([on.id]);
    expect((await stripe.products.list({ active: loose<boolean>('FALSE') })).data.map((p) => p.id)).toEqual([off.id]);
    const raw = await twin.raw('GET', '/v1/products?active=True', { headers: { authorization: 'Bearer sk_test_scalarsBools000000002' } });
    expect((raw.body as { data: { id: string }[] }).data.map((p) => p.id)).toEqual([on.id]);
  });

  it('refuses 1, yes and an empty value as Stripe does, naming the parameter, and makes nothing', async () => {
    const stripe = twin.client('sk_test_scalarsBools000000003');
    for (const v of ['1', 'yes', '', 'truthy']) {
      const e = await refusal(stripe.products.create({ name: 'P', active: loose<boolean>(v) }));
      expect([e.statusCode, e.param, e.message, e.code]).toEqual([400, 'active', `Invalid boolean: ${v}`, undefined]);
    }
    expect((await stripe.products.list()).data).toEqual([]);
  });

  it("takes off_session=recurring and one_off on confirm, the values Stripe's types allow beside a boolean", async () => {
    const stripe = twin.client('sk_test_scalarsBools000000004');
    const customer = await stripe.customers.create({ email: 'ada@example.test' });
    const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
    for (const offSession of ['recurring', 'one_off'] as const) {
      const pi = await stripe.paymentIntents.create({ amount: 2000, currency: 'usd', customer: customer.id, payment_method: pm.id, allowed_payment_method_types: ['card'] });
      const confirmed = await stripe.paymentIntents.confirm(pi.id, { off_session: offSession });
      expect(confirmed.status).toBe('succeeded');
    }
  });
});

describe('integers', () => {
  it('refuses a fraction, even .00, an exponent and a separator, with parameter_invalid_integer', async () => {
    const stripe = twin.client('sk_test_scalarsInts0000000001');
    const product = await stripe.products.create({ name: 'P' });
    // A leading `+` is not documented either way and no SDK writes one: refused like the rest.
    for (const v of ['4995.00', '1.0', '10.99', '1.0038e+06', '29_40', '', '+100']) {
      const e = await refusal(stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: loose<number>(v) }));
      expect([e.statusCode, e.param, e.message, e.code]).toEqual([400, 'unit_amount', `Invalid integer: ${v}`, 'parameter_invalid_integer']);
      expect((e.raw as { doc_url?: string }).doc_url).toBe('https://stripe.com/docs/error-codes/parameter-invalid-integer');
    }
    expect((await stripe.prices.list()).data).toEqual([]);
  });

  it('reads digits as a decimal integer, leading zeros and all, and a query limit the same way', async () => {
    const stripe = twin.client('sk_test_scalarsInts0000000002');
    const product = await stripe.products.create({ name: 'P' });
    expect((await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: loose<number>('0100') })).unit_amount).toBe(100);
    for (let i = 0; i < 3; i++) await stripe.customers.create({ name: `c${i}` });
    expect((await stripe.customers.list({ limit: loose<number>('02') })).data).toHaveLength(2);
    const e = await refusal(stripe.customers.list({ limit: loose<number>('2.0') }));
    expect([e.param, e.code]).toEqual(['limit', 'parameter_invalid_integer']);
  });
});

describe('decimals', () => {
  it('takes decimal notation and refuses hexadecimal and a comma with Invalid decimal', async () => {
    const stripe = twin.client('sk_test_scalarsDecimals00001');
    expect((await stripe.coupons.create({ percent_off: 12.5, duration: 'once' })).percent_off).toBe(12.5);
    expect((await stripe.coupons.create({ percent_off: loose<number>('.5'), duration: 'once' })).percent_off).toBe(0.5);
    for (const v of ['0x10', '0,6', 'Infinity', ' ']) {
      const e = await refusal(stripe.coupons.create({ percent_off: loose<number>(v), duration: 'once' }));
      expect([e.param, e.message]).toEqual(['percent_off', `Invalid decimal: ${v}`]);
    }
  });
});
