import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness } from '../../../sdk/twin/testing.js';

/**
 * Every object the twin makes has every top-level field of Stripe's own fixture for that
 * resource, and nothing else, except where this API version differs from the fixture.
 */
const NOT_IN_THIS_VERSION: Record<string, string[]> = {
  charge: ['refunds'], // includable: `expand: ['refunds']`
  balance: ['connect_reserved'], // Connect only
  invoice: ['subscription'], // moved to `parent.subscription_details.subscription`
  account: ['external_accounts', 'future_requirements', 'requirements', 'tos_acceptance'], // Connect onboarding
};
const ONLY_IN_THIS_VERSION: Record<string, string[]> = {
  payment_intent: ['allowed_payment_method_types'],
  setup_intent: ['allowed_payment_method_types'],
  'checkout.session': ['allowed_payment_method_types'],
  webhook_endpoint: ['secret'], // answered once, on create
};
/** Nested fields of the fixtures the twin leaves out (Connect account settings). */
const NESTED_NOT_MODELLED = /^account\.(business_profile|settings)\./;

function dig(o: unknown, path: string[]): unknown {
  let at = o;
  for (const k of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[k];
  }
  return at;
}

describe('object shapes', () => {
it('match Stripe\'s fixtures field for field', async () => {
  const file = JSON.parse(readFileSync('twins/stripe/fixture-keys.json', 'utf8')) as Record<string, unknown>;
  const fixtures = file as Record<string, string[]>;
  const nested = file._nested as Record<string, string[]>;
  const { source } = await buildTwin('twins/stripe/twin/index.ts');
  const h = createGuestHarness(source);
  const headers = { authorization: 'Bearer sk_test_shapes000001' };
  const post = (path: string, body: string) => h.request('POST', path, { body, headers }).body as Record<string, unknown>;
  const get = (path: string) => h.request('GET', path, { headers }).body as Record<string, unknown>;
  const objs: Record<string, Record<string, unknown>> = {};
  const cus = post('/v1/customers', 'email=a%40b.c&payment_method=pm_card_visa');
  objs.customer = cus;
  const pm = (get(`/v1/customers/${cus.id as string}/payment_methods`).data as Record<string, unknown>[])[0]!;
  objs.payment_method = pm;
  post(`/v1/customers/${cus.id as string}`, `invoice_settings[default_payment_method]=${pm.id as string}`);
  const prod = post('/v1/products', 'name=P');
  objs.product = prod;
  const price = post('/v1/prices', `product=${prod.id as string}&currency=usd&unit_amount=1000&recurring[interval]=month`);
  objs.price = price;
  objs.coupon = post('/v1/coupons', 'percent_off=10');
  const pi = post('/v1/payment_intents', 'amount=1000&currency=usd&payment_method=pm_card_visa&confirm=true&allowed_payment_method_types[0]=card');
  objs.payment_intent = pi;
  objs.charge = get(`/v1/charges/${pi.latest_charge as string}`);
  objs.refund = post('/v1/refunds', `payment_intent=${pi.id as string}&amount=100`);
  objs.balance_transaction = get(`/v1/balance_transactions/${objs.charge.balance_transaction as string}`);
  objs.balance = get('/v1/balance');
  objs.setup_intent = post('/v1/setup_intents', 'allowed_payment_method_types[0]=card');
  const sub = post('/v1/subscriptions', `customer=${cus.id as string}&items[0][price]=${price.id as string}&discounts[0][coupon]=${objs.coupon.id as string}`);
  objs.subscription = sub;
  objs.subscription_item = ((sub.items as Record<string, unknown>).data as Record<string, unknown>[])[0]!;
  const inv = get(`/v1/invoices/${sub.latest_invoice as string}`);
  objs.invoice = inv;
  objs.line_item = ((inv.lines as Record<string, unknown>).data as Record<string, unknown>[])[0]!;
  objs.invoiceitem = post('/v1/invoiceitems', `customer=${cus.id as string}&amount=100&currency=usd`);
  objs.invoice_payment = (get(`/v1/invoice_payments?invoice=${inv.id as string}`).data as Record<string, unknown>[])[0]!;
  objs.discount = (get(`/v1/subscriptions/${sub.id as string}?expand[]=discounts`).discounts as Record<string, unknown>[])[0]!;
  objs['checkout.session'] = post('/v1/checkout/sessions', `mode=payment&line_items[0][price_data][currency]=usd&line_items[0][price_data][unit_amount]=500&line_items[0][price_data][product_data][name]=X&line_items[0][quantity]=1&success_url=https://x.example/`);
  objs['test_helpers.test_clock'] = post('/v1/test_helpers/test_clocks', `frozen_time=${Math.floor(h.nowMs() / 1000)}`);
  objs.webhook_endpoint = post('/v1/webhook_endpoints', 'url=https://a.example/&enabled_events[0]=*');
  objs.promotion_code = post('/v1/promotion_codes', `promotion[type]=coupon&promotion[coupon]=${objs.coupon.id as string}`);
  objs.tax_rate = post('/v1/tax_rates', 'display_name=VAT&percentage=20&inclusive=false');
  objs.token = post('/v1/tokens', 'card[number]=4242424242424242&card[exp_month]=12&card[exp_year]=2040');
  objs.card = post(`/v1/customers/${cus.id as string}/sources`, 'source=tok_visa');
  objs.customer_balance_transaction = post(`/v1/customers/${cus.id as string}/balance_transactions`, 'amount=-100&currency=usd');
  objs['billing_portal.session'] = post('/v1/billing_portal/sessions', `customer=${cus.id as string}`);
  objs.event = (get('/v1/events?limit=1').data as Record<string, unknown>[])[0]!;
  const dpi = post('/v1/payment_intents', 'amount=1000&currency=usd&payment_method=pm_card_createDispute&confirm=true&allowed_payment_method_types[0]=card');
  objs.dispute = (get(`/v1/disputes?payment_intent=${dpi.id as string}`).data as Record<string, unknown>[])[0]!;
  objs.account = get('/v1/account');
  post('/v1/payment_intents', 'amount=5000&currency=usd&payment_method=pm_card_bypassPending&confirm=true&allowed_payment_method_types[0]=card');
  objs.payout = post('/v1/payouts', 'amount=1000&currency=usd');
  objs.payment_link = post('/v1/payment_links', `line_items[0][price]=${price.id as string}&line_items[0][quantity]=1`);
  expect(Object.keys(objs).length).toBe(32);
  for (const [type, obj] of Object.entries(objs)) {
    const keys = fixtures[type];
    expect(keys, type).toBeDefined();
    expect(obj, type).toBeDefined();
    const missing = (keys ?? []).filter((k) => !(k in obj) && !(NOT_IN_THIS_VERSION[type] ?? []).includes(k));
    const extra = Object.keys(obj).filter((k) => !(keys ?? []).includes(k) && !(ONLY_IN_THIS_VERSION[type] ?? []).includes(k));
    expect({ type, missing, extra }).toEqual({ type, missing: [], extra: [] });
    // Inside objects the twin fills in (not null), the fixture's fields are there too.
    const nestedMissing = (nested[type] ?? []).filter((path) => {
      if (NESTED_NOT_MODELLED.test(`${type}.${path}`)) return false;
      const parts = path.split('.');
      const parent = dig(obj, parts.slice(0, -1));
      return typeof parent === 'object' && parent !== null && !Array.isArray(parent) && !((parts[parts.length - 1] as string) in parent);
    });
    expect({ type, nestedMissing }).toEqual({ type, nestedMissing: [] });
  }
});
});
