/** Conformance: customers, products, prices, coupons — through the official `stripe` package. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { START, startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;
let stripe: Stripe;

beforeAll(async () => {
  twin = await startStripeTwin();
  stripe = twin.client('sk_test_catalogAccount000001');
});
afterAll(async () => {
  await twin.close();
});

describe('customers', () => {
  it('creates with Stripe\'s shape, id prefix and created from the world clock', async () => {
    const cus = await stripe.customers.create({
      email: 'jenny@example.com', name: 'Jenny Rosen', phone: '+15555550100', description: 'first',
      address: { line1: '1 Main St', city: 'Springfield', country: 'US', postal_code: '12345' },
      preferred_locales: ['en', 'fr'],
    });
    expect(cus.id).toMatch(/^cus_[A-Za-z0-9]{14}$/);
    expect(cus.object).toBe('customer');
    expect(cus.created).toBe(Math.floor(twin.nowMs() / 1000));
    expect(cus.created).toBeGreaterThanOrEqual(START / 1000);
    expect(cus.livemode).toBe(false);
    expect(cus.address).toEqual({ line1: '1 Main St', line2: null, city: 'Springfield', state: null, country: 'US', postal_code: '12345' });
    expect(cus.preferred_locales).toEqual(['en', 'fr']);
    expect(cus.invoice_prefix).toMatch(/^[0-9A-F]{8}$/);
    expect(cus.balance).toBe(0);
    expect(cus.tax_exempt).toBe('none');
    expect(cus.invoice_settings.default_payment_method).toBeNull();
  });

  it('retrieves, updates (clearing a field with an empty string), lists by email', async () => {
    const cus = await stripe.customers.create({ email: 'upd@example.com', name: 'Before' });
    const updated = await stripe.customers.update(cus.id, { name: 'After', description: 'd' });
    expect(updated.name).toBe('After');
    expect((await stripe.customers.retrieve(cus.id) as Stripe.Customer).description).toBe('d');
    const cleared = await stripe.customers.update(cus.id, { description: '' });
    expect(cleared.description).toBeNull();
    const byEmail = await stripe.customers.list({ email: 'upd@example.com' });
    expect(byEmail.data.map((c) => c.id)).toEqual([cus.id]);
  });

  it('deletes: the answer and later retrievals are the deleted stub, and lists drop it', async () => {
    const cus = await stripe.customers.create({ email: 'gone@example.com' });
    const del = await stripe.customers.del(cus.id);
    expect(del).toMatchObject({ id: cus.id, object: 'customer', deleted: true });
    const again = await stripe.customers.retrieve(cus.id);
    expect(again.deleted).toBe(true);
    expect((await stripe.customers.list({ email: 'gone@example.com' })).data).toEqual([]);
    const err = await stripe.customers.update(cus.id, { name: 'x' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).code).toBe('resource_missing');
  });

  it('sets a default payment method only when it is attached to the customer', async () => {
    const cus = await stripe.customers.create({ payment_method: 'pm_card_visa' });
    const pms = await stripe.customers.listPaymentMethods(cus.id);
    expect(pms.data.length).toBe(1);
    const pm = pms.data[0] as Stripe.PaymentMethod;
    const withDefault = await stripe.customers.update(cus.id, { invoice_settings: { default_payment_method: pm.id } });
    expect(withDefault.invoice_settings.default_payment_method).toBe(pm.id);
    const other = await stripe.paymentMethods.create({ type: 'card', card: { token: 'tok_mastercard' } });
    const err = await stripe.customers.update(cus.id, { invoice_settings: { default_payment_method: other.id } }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).param).toBe('invoice_settings[default_payment_method]');
  });
});

describe('products', () => {
  it('creates with a custom id, default_price_data, updates and lists by active', async () => {
    const product = await stripe.products.create({
      id: 'prod_custom_tshirt', name: 'T-shirt', description: 'Cotton',
      default_price_data: { currency: 'usd', unit_amount: 2000 },
      metadata: { sku: 'TS-1' },
    });
    expect(product.id).toBe('prod_custom_tshirt');
    expect(product.active).toBe(true);
    expect(typeof product.default_price).toBe('string');
    const price = await stripe.prices.retrieve(product.default_price as string);
    expect(price).toMatchObject({ product: product.id, unit_amount: 2000, currency: 'usd', type: 'one_time', recurring: null });
    const dup = await stripe.products.create({ id: 'prod_custom_tshirt', name: 'again' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((dup as Stripe.errors.StripeError).code).toBe('resource_already_exists');
    const archived = await stripe.products.update(product.id, { active: false });
    expect(archived.active).toBe(false);
    const inactive = await stripe.products.list({ active: false });
    expect(inactive.data.map((p) => p.id)).toContain(product.id);
    const active = await stripe.products.list({ active: true });
    expect(active.data.map((p) => p.id)).not.toContain(product.id);
  });

  it('deletes a product without prices, and refuses one with prices', async () => {
    const bare = await stripe.products.create({ name: 'Bare' });
    expect(await stripe.products.del(bare.id)).toMatchObject({ id: bare.id, deleted: true });
    const err = await stripe.products.retrieve(bare.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(404);
    const priced = await stripe.products.create({ name: 'Priced', default_price_data: { currency: 'usd', unit_amount: 100 } });
    const refused = await stripe.products.del(priced.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((refused as Stripe.errors.StripeError).statusCode).toBe(400);
  });

  it('searches products by name and active', async () => {
    await stripe.products.create({ name: 'Searchable Widget' });
    const r = await stripe.products.search({ query: 'name~"Widget" AND active:"true"' });
    expect(r.data.map((p) => p.name)).toEqual(['Searchable Widget']);
  });
});

describe('prices', () => {
  it('creates a recurring price with Stripe\'s recurring shape', async () => {
    const product = await stripe.products.create({ name: 'Plan' });
    const price = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 1500, recurring: { interval: 'month' }, lookup_key: 'plan_monthly', nickname: 'Monthly' });
    expect(price.id).toMatch(/^price_[A-Za-z0-9]{24}$/);
    expect(price.type).toBe('recurring');
    expect(price.recurring).toEqual({ interval: 'month', interval_count: 1, meter: null, trial_period_days: null, usage_type: 'licensed' });
    expect(String(price.unit_amount_decimal)).toBe('1500');
    expect(price.billing_scheme).toBe('per_unit');
    const byKey = await stripe.prices.list({ lookup_keys: ['plan_monthly'] });
    expect(byKey.data.map((p) => p.id)).toEqual([price.id]);
    const recurring = await stripe.prices.list({ product: product.id, type: 'recurring', recurring: { interval: 'month' } });
    expect(recurring.data.map((p) => p.id)).toEqual([price.id]);
  });

  it('refuses a taken lookup key unless transfer_lookup_key moves it', async () => {
    const product = await stripe.products.create({ name: 'Keys' });
    const a = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 100, lookup_key: 'the_key' });
    const err = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 200, lookup_key: 'the_key' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).param).toBe('lookup_key');
    const b = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 200, lookup_key: 'the_key', transfer_lookup_key: true });
    expect(b.lookup_key).toBe('the_key');
    expect((await stripe.prices.retrieve(a.id)).lookup_key).toBeNull();
  });

  it('creates with product_data, updates, and searches by product', async () => {
    const price = await stripe.prices.create({ currency: 'eur', unit_amount: 999, product_data: { name: 'Inline product' } });
    expect(price.product).toMatch(/^prod_/);
    const upd = await stripe.prices.update(price.id, { active: false, nickname: 'old', metadata: { k: 'v' } });
    expect(upd).toMatchObject({ active: false, nickname: 'old', metadata: { k: 'v' } });
    const r = await stripe.prices.search({ query: `product:"${price.product as string}" AND currency:"eur"` });
    expect(r.data.map((p) => p.id)).toEqual([price.id]);
  });

  it('refuses a price with no amount and a bad interval', async () => {
    const product = await stripe.products.create({ name: 'Bad' });
    const e1 = await stripe.prices.create({ product: product.id, currency: 'usd' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((e1 as Stripe.errors.StripeError).statusCode).toBe(400);
    const e2 = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 1, recurring: { interval: 'year', interval_count: 4 } }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((e2 as Stripe.errors.StripeError).param).toBe('recurring[interval_count]');
  });
});

describe('coupons', () => {
  it('creates percent and amount coupons, updates, deletes', async () => {
    const pct = await stripe.coupons.create({ percent_off: 25.5, duration: 'repeating', duration_in_months: 3, name: 'Quarter' });
    expect(pct).toMatchObject({ object: 'coupon', percent_off: 25.5, amount_off: null, duration: 'repeating', duration_in_months: 3, valid: true, times_redeemed: 0 });
    const amt = await stripe.coupons.create({ id: 'FIVEOFF', amount_off: 500, currency: 'usd', duration: 'once' });
    expect(amt.id).toBe('FIVEOFF');
    expect(amt.currency).toBe('usd');
    const renamed = await stripe.coupons.update('FIVEOFF', { name: 'Five off', metadata: { a: 'b' } });
    expect(renamed.name).toBe('Five off');
    const list = await stripe.coupons.list();
    expect(list.data.map((c) => c.id)).toEqual(expect.arrayContaining(['FIVEOFF', pct.id]));
    expect(await stripe.coupons.del('FIVEOFF')).toMatchObject({ id: 'FIVEOFF', object: 'coupon', deleted: true });
    const gone = await stripe.coupons.retrieve('FIVEOFF').catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((gone as Stripe.errors.StripeError).code).toBe('resource_missing');
  });

  it('refuses a coupon with both or neither discount, and repeating without months', async () => {
    const both = await stripe.coupons.create({ percent_off: 10, amount_off: 100, currency: 'usd' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((both as Stripe.errors.StripeError).statusCode).toBe(400);
    const neither = await stripe.coupons.create({ duration: 'once' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((neither as Stripe.errors.StripeError).statusCode).toBe(400);
    const months = await stripe.coupons.create({ percent_off: 10, duration: 'repeating' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((months as Stripe.errors.StripeError).param).toBe('duration_in_months');
  });

  it('marks a coupon invalid once redeem_by passes on the world clock', async () => {
    const soon = await stripe.coupons.create({ percent_off: 5, redeem_by: Math.floor(twin.nowMs() / 1000) + 3600 });
    expect(soon.valid).toBe(true);
    await twin.advance(2 * 3600_000);
    expect((await stripe.coupons.retrieve(soon.id)).valid).toBe(false);
  });
});
