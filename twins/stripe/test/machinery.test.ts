/**
 * Conformance, shared machinery: keys, errors, Request-Id, lists and cursors, expand,
 * metadata, idempotency, search — driven only through the official `stripe` package.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;
let stripe: Stripe;

beforeAll(async () => {
  twin = await startStripeTwin();
  stripe = twin.stripe;
});
afterAll(async () => {
  await twin.close();
});

describe('keys and accounts', () => {
  it('refuses a request without a key with 401 and Stripe\'s message', async () => {
    const res = await twin.raw('GET', '/v1/customers');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('You did not provide an API key') } });
    expect(String(res.headers['request-id'])).toMatch(/^req_/);
  });

  it('refuses a malformed key as StripeAuthenticationError, masking the key', async () => {
    const bad = twin.client('not_a_key_at_all_1234');
    const err = await bad.customers.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    const e = err as Stripe.errors.StripeError;
    expect(e.statusCode).toBe(401);
    expect(e.message).toContain('Invalid API Key provided');
    expect(e.message).not.toContain('not_a_key_at_all_1234');
    expect(e.requestId).toMatch(/^req_/);
  });

  it('refuses a live key and a publishable key', async () => {
    for (const key of ['sk_live_abcdefghijklmnop', 'pk_test_abcdefghijklmnop']) {
      const err = await twin.client(key).customers.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    }
  });

  it('gives each key its own account: one key cannot see another key\'s objects', async () => {
    const a = twin.client('sk_test_accountA000000000001');
    const b = twin.client('sk_test_accountB000000000001');
    const cus = await a.customers.create({ email: 'only-in-a@example.com' });
    expect((await a.customers.retrieve(cus.id)).id).toBe(cus.id);
    const err = await b.customers.retrieve(cus.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((err as Stripe.errors.StripeError).code).toBe('resource_missing');
    expect((await b.customers.list()).data.map((c) => c.id)).not.toContain(cus.id);
  });

  it('answers resource_missing, not a server error, for an id longer than any id can be', async () => {
    const long = `cus_${'a'.repeat(1100)}`;
    const err = await stripe.customers.retrieve(long).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect([(err as Stripe.errors.StripeError).statusCode, (err as Stripe.errors.StripeError).code]).toEqual([404, 'resource_missing']);
    const page = await stripe.customers.list({ starting_after: long }).catch((e: unknown) => e);
    expect((page as Stripe.errors.StripeError).code).toBe('resource_missing');
  });

  it('refuses a form body that is not UTF-8 and creates nothing, instead of a customer without its parameters', async () => {
    const before = (await stripe.customers.list({ limit: 100 })).data.length;
    const body = Uint8Array.from([...Buffer.from('name='), 0xe9, ...Buffer.from('t&description=ok')]);
    const res = await twin.raw('POST', '/v1/customers', { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(400);
    expect((await stripe.customers.list({ limit: 100 })).data.length).toBe(before);
  });

  it('raises a body it cannot parse as an invalid request, not as a server error', async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const conflict = await twin.raw('POST', '/v1/customers', { headers: form, body: 'metadata[a]=1&metadata[a][b]=2' });
    expect([conflict.status, (conflict.body as { error: { type: string } }).error.type]).toEqual([400, 'invalid_request_error']);
    const json = await twin.raw('POST', '/v1/customers', { headers: { 'content-type': 'application/json' }, body: '{' });
    expect([json.status, (json.body as { error: { type: string } }).error.type]).toEqual([400, 'invalid_request_error']);
  });

  it('opens the default account for an app whose API key is the world token', async () => {
    const app = twin.worldTokenClient();
    const cus = await app.customers.create({ email: 'attached-app@example.com' });
    expect((await app.customers.retrieve(cus.id)).id).toBe(cus.id);
    const err = await stripe.customers.retrieve(cus.id).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).code).toBe('resource_missing');
  });

  it('accepts the key as Basic auth user name, as curl -u sends it', async () => {
    const auth = 'Basic ' + Buffer.from('sk_test_basicAuthKey0001:').toString('base64');
    const res = await twin.raw('GET', '/v1/customers', { headers: { authorization: auth } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', data: [] });
  });
});

describe('errors', () => {
  it('answers a missing object with 404 resource_missing naming the id', async () => {
    const err = await stripe.customers.retrieve('cus_doesnotexist').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    const e = err as Stripe.errors.StripeError;
    expect(e.statusCode).toBe(404);
    expect(e.code).toBe('resource_missing');
    expect(e.param).toBe('id');
    expect(e.message).toBe("No such customer: 'cus_doesnotexist'");
  });

  it('answers a missing required parameter with param and parameter_missing', async () => {
    const err = await stripe.prices.create({ unit_amount: 100, product: 'prod_x' } as unknown as Stripe.PriceCreateParams).catch((e: unknown) => e);
    const e = err as Stripe.errors.StripeError;
    expect(e.type).toBe('StripeInvalidRequestError');
    expect(e.statusCode).toBe(400);
    expect(e.param).toBe('currency');
    expect(e.code).toBe('parameter_missing');
  });

  it('answers a malformed integer with Invalid integer', async () => {
    const res = await twin.raw('GET', '/v1/customers?limit=abc', { headers: { authorization: 'Bearer sk_test_x1' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { type: 'invalid_request_error', param: 'limit', message: 'Invalid integer: abc' } });
  });

  it('answers an unknown URL with 404 Unrecognized request URL', async () => {
    const res = await twin.raw('GET', '/v1/no_such_thing', { headers: { authorization: 'Bearer sk_test_x1' } });
    expect(res.status).toBe(404);
    expect((res.body as { error: { message: string } }).error.message).toContain('Unrecognized request URL (GET: /v1/no_such_thing)');
  });

  it('puts a Request-Id on every answer, success and failure alike, each one different', async () => {
    const ok = await stripe.customers.create({ name: 'req id' });
    const failed = await stripe.customers.retrieve('cus_nope').catch((e: unknown) => e as Stripe.errors.StripeError);
    expect(ok.lastResponse.requestId).toMatch(/^req_[A-Za-z0-9]{8,}$/);
    expect((failed as Stripe.errors.StripeError).requestId).toMatch(/^req_/);
    expect((failed as Stripe.errors.StripeError).requestId).not.toBe(ok.lastResponse.requestId);
  });

  it('leaves no half-written state when a request fails validation', async () => {
    const before = (await stripe.products.list({ limit: 100 })).data.length;
    // product_data makes a product, then the bad recurring interval fails the request.
    const err = await stripe.prices.create({
      currency: 'usd', unit_amount: 100, product_data: { name: 'half' },
      recurring: { interval: 'fortnight' as 'month' },
    }).catch((e: unknown) => e);
    expect((err as Stripe.errors.StripeError).param).toBe('recurring[interval]');
    expect((await stripe.products.list({ limit: 100 })).data.length).toBe(before);
  });
});

describe('lists and cursors', () => {
  let ids: string[] = [];
  let s: Stripe;
  beforeAll(async () => {
    s = twin.client('sk_test_listsAccount00000001');
    ids = [];
    for (let i = 0; i < 7; i++) ids.push((await s.customers.create({ name: `c${i}` })).id);
  });

  it('lists newest first with Stripe\'s list shape', async () => {
    const page = await s.customers.list({ limit: 3 });
    expect(page.object).toBe('list');
    expect(page.url).toBe('/v1/customers');
    expect(page.has_more).toBe(true);
    expect(page.data.map((c) => c.id)).toEqual([ids[6], ids[5], ids[4]]);
  });

  it('pages with starting_after and ending_before', async () => {
    const next = await s.customers.list({ limit: 3, starting_after: ids[4] });
    expect(next.data.map((c) => c.id)).toEqual([ids[3], ids[2], ids[1]]);
    expect(next.has_more).toBe(true);
    const last = await s.customers.list({ limit: 3, starting_after: ids[1] });
    expect(last.data.map((c) => c.id)).toEqual([ids[0]]);
    expect(last.has_more).toBe(false);
    const back = await s.customers.list({ limit: 2, ending_before: ids[2] });
    expect(back.data.map((c) => c.id)).toEqual([ids[4], ids[3]]);
    expect(back.has_more).toBe(true);
  });

  it('auto-pagination walks every object once', async () => {
    const seen: string[] = [];
    for await (const c of s.customers.list({ limit: 2 })) seen.push(c.id);
    expect(seen).toEqual([...ids].reverse());
  });

  it('refuses limit outside 1–100 and both cursors at once', async () => {
    for (const limit of [0, 101]) {
      const err = await s.customers.list({ limit }).catch((e: unknown) => e as Stripe.errors.StripeError);
      expect((err as Stripe.errors.StripeError).param).toBe('limit');
    }
    const err = await s.customers.list({ starting_after: ids[1], ending_before: ids[3] }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(400);
  });

  it('filters by created range', async () => {
    await twin.advance(60_000);
    const later = await s.customers.create({ name: 'later' });
    const recent = await s.customers.list({ created: { gte: later.created } });
    expect(recent.data.map((c) => c.id)).toEqual([later.id]);
    const older = await s.customers.list({ created: { lt: later.created }, limit: 100 });
    expect(older.data.map((c) => c.id)).toEqual([...ids].reverse());
  });
});

describe('expand', () => {
  it('expands an id into its object, nested, and through lists with data.*', async () => {
    const product = await stripe.products.create({ name: 'Expandable' });
    const price = await stripe.prices.create({ currency: 'usd', unit_amount: 500, product: product.id });
    const got = await stripe.prices.retrieve(price.id, { expand: ['product'] });
    expect(typeof got.product).toBe('object');
    expect((got.product as Stripe.Product).name).toBe('Expandable');
    const list = await stripe.prices.list({ product: product.id, expand: ['data.product'] });
    expect((list.data[0]?.product as Stripe.Product).id).toBe(product.id);

    const pi = await stripe.paymentIntents.create({ amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    const deep = await stripe.paymentIntents.retrieve(pi.id, { expand: ['latest_charge.balance_transaction', 'payment_method'] });
    const charge = deep.latest_charge as Stripe.Charge;
    expect(charge.object).toBe('charge');
    expect((charge.balance_transaction as Stripe.BalanceTransaction).object).toBe('balance_transaction');
    expect((deep.payment_method as Stripe.PaymentMethod).card?.last4).toBe('4242');
  });

  it('refuses a property that cannot be expanded', async () => {
    const cus = await stripe.customers.create({});
    const err = await stripe.customers.retrieve(cus.id, { expand: ['email'] }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).message).toBe('This property cannot be expanded (email).');
  });
});

describe('metadata', () => {
  it('merges on update, removes a key sent empty, and clears all with metadata=""', async () => {
    const cus = await stripe.customers.create({ metadata: { a: '1', b: '2' } });
    expect(cus.metadata).toEqual({ a: '1', b: '2' });
    const merged = await stripe.customers.update(cus.id, { metadata: { c: '3', a: 'one' } });
    expect(merged.metadata).toEqual({ a: 'one', b: '2', c: '3' });
    const removed = await stripe.customers.update(cus.id, { metadata: { b: '' } });
    expect(removed.metadata).toEqual({ a: 'one', c: '3' });
    const cleared = await stripe.customers.update(cus.id, { metadata: '' as unknown as Stripe.MetadataParam });
    expect(cleared.metadata).toEqual({});
  });

  it('refuses a key longer than 40 characters', async () => {
    const err = await stripe.customers.create({ metadata: { ['k'.repeat(41)]: 'v' } }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(400);
    expect((err as Stripe.errors.StripeError).param).toBe(`metadata[${'k'.repeat(41)}]`);
  });
});

describe('idempotency', () => {
  it('replays the first answer with Idempotent-Replayed: true and creates nothing new', async () => {
    const first = await stripe.customers.create({ email: 'idem@example.com' }, { idempotencyKey: 'idem-key-1' });
    const again = await stripe.customers.create({ email: 'idem@example.com' }, { idempotencyKey: 'idem-key-1' });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(first.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    const all = await stripe.customers.search({ query: 'email:"idem@example.com"' });
    expect(all.data.length).toBe(1);
  });

  it('refuses the same key with other parameters as an idempotency_error', async () => {
    await stripe.customers.create({ email: 'x@example.com' }, { idempotencyKey: 'idem-key-2' });
    const err = await stripe.customers.create({ email: 'y@example.com' }, { idempotencyKey: 'idem-key-2' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect((err as Stripe.errors.StripeError).statusCode).toBe(400);
    expect((err as Stripe.errors.StripeError).message).toContain("Try using a key other than 'idem-key-2'");
  });

  it('replays a decline too: the card error comes back without a second charge', async () => {
    const params = { amount: 1500, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true, allowed_payment_method_types: ['card' as const] };
    const e1 = await stripe.paymentIntents.create(params, { idempotencyKey: 'idem-decline' }).catch((e: unknown) => e as Stripe.errors.StripeCardError);
    const e2 = await stripe.paymentIntents.create(params, { idempotencyKey: 'idem-decline' }).catch((e: unknown) => e as Stripe.errors.StripeCardError);
    expect(e1).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(e2).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect((e2 as Stripe.errors.StripeCardError).payment_intent?.id).toBe((e1 as Stripe.errors.StripeCardError).payment_intent?.id);
  });

  it('keeps keys per account', async () => {
    const a = await twin.client('sk_test_idemAccountA0001').customers.create({ name: 'a' }, { idempotencyKey: 'shared-key' });
    const b = await twin.client('sk_test_idemAccountB0001').customers.create({ name: 'b' }, { idempotencyKey: 'shared-key' });
    expect(b.id).not.toBe(a.id);
    expect(b.name).toBe('b');
  });
});

describe('search', () => {
  let s: Stripe;
  const made: Record<string, string> = {};
  beforeAll(async () => {
    s = twin.client('sk_test_searchAccount000001');
    made.jane = (await s.customers.create({ name: 'Jane Doe', email: 'jane@example.com', metadata: { plan: 'pro' } })).id;
    made.john = (await s.customers.create({ name: 'John Smith', email: 'john@example.org', metadata: { plan: 'free' } })).id;
    made.jim = (await s.customers.create({ name: 'Jim Doe', email: 'jim@example.com' })).id;
  });

  it('matches exact values, case-insensitively', async () => {
    const r = await s.customers.search({ query: 'email:"JANE@example.com"' });
    expect(r.object).toBe('search_result');
    expect(r.data.map((c) => c.id)).toEqual([made.jane]);
  });

  it('matches substrings with ~', async () => {
    const r = await s.customers.search({ query: 'name~"Doe"' });
    expect(r.data.map((c) => c.id).sort()).toEqual([made.jane, made.jim].sort());
  });

  it('matches metadata, AND, OR, negation and null', async () => {
    expect((await s.customers.search({ query: 'metadata["plan"]:"pro"' })).data.map((c) => c.id)).toEqual([made.jane]);
    expect((await s.customers.search({ query: 'name~"Doe" AND -email:"jim@example.com"' })).data.map((c) => c.id)).toEqual([made.jane]);
    expect((await s.customers.search({ query: 'email:"john@example.org" OR email:"jim@example.com"' })).data.map((c) => c.id).sort()).toEqual([made.john, made.jim].sort());
    expect((await s.customers.search({ query: 'metadata["plan"]:null' })).data.map((c) => c.id)).toEqual([made.jim]);
  });

  it('compares numbers on amount and created', async () => {
    for (const amount of [1000, 3000, 5000]) {
      await s.paymentIntents.create({ amount, currency: 'usd', allowed_payment_method_types: ['card'] });
    }
    const r = await s.paymentIntents.search({ query: 'amount>=3000 AND currency:"usd"' });
    expect(r.data.map((p) => p.amount).sort()).toEqual([3000, 5000]);
    const none = await s.paymentIntents.search({ query: `created>${twin.nowMs() / 1000}` });
    expect(none.data).toEqual([]);
  });

  it('pages with next_page', async () => {
    const first = await s.customers.search({ query: 'email~"example"', limit: 2 });
    expect(first.has_more).toBe(true);
    expect(first.next_page).toBeTruthy();
    const second = await s.customers.search({ query: 'email~"example"', limit: 2, page: first.next_page as string });
    expect(second.has_more).toBe(false);
    const all = [...first.data, ...second.data].map((c) => c.id);
    expect(new Set(all).size).toBe(3);
  });

  it('refuses an unsupported field and a malformed query with param query', async () => {
    const e1 = await s.customers.search({ query: 'balance:0' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((e1 as Stripe.errors.StripeError).param).toBe('query');
    expect((e1 as Stripe.errors.StripeError).message).toContain('unsupported search field');
    const e2 = await s.customers.search({ query: 'email:"a" AND name:"b" OR phone:"c"' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((e2 as Stripe.errors.StripeError).statusCode).toBe(400);
    const e3 = await s.customers.search({ query: 'name:unquoted' }).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((e3 as Stripe.errors.StripeError).statusCode).toBe(400);
  });
});

describe('idempotency keys expire after 24 hours', () => {
  it('runs a request again once its key is older than a day, and forgets old saved answers', async () => {
    const s = twin.client('sk_test_idemExpiryAccount001');
    const first = await s.customers.create({ name: 'once' }, { idempotencyKey: 'day-old-key' });
    expect((await s.customers.create({ name: 'once' }, { idempotencyKey: 'day-old-key' })).id).toBe(first.id);
    const saved = await twin.recordCount('idem');
    expect(saved).toBeGreaterThan(10);
    await twin.advance(25 * 3600_000);
    const later = await s.customers.create({ name: 'once' }, { idempotencyKey: 'day-old-key' });
    expect(later.id).not.toBe(first.id);
    expect(later.lastResponse.headers['idempotent-replayed']).toBeUndefined();
    // Each keyed request drops up to two expired answers: the store shrinks instead of growing.
    await s.customers.create({ name: 'more' });
    expect(await twin.recordCount('idem')).toBeLessThan(saved);
  });
});

describe('unknown parameters', () => {
  it('refuses a top-level parameter Stripe does not know, as parameter_unknown', async () => {
    const err = await stripe.customers.create({ emial: 'typo@example.com' } as unknown as Stripe.CustomerCreateParams).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect(err).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((err as Stripe.errors.StripeError).code).toBe('parameter_unknown');
    expect((err as Stripe.errors.StripeError).param).toBe('emial');
    expect((err as Stripe.errors.StripeError).message).toBe('Received unknown parameter: emial');
    const list = await stripe.customers.list({ colour: 'red' } as unknown as Stripe.CustomerListParams).catch((e: unknown) => e as Stripe.errors.StripeError);
    expect((list as Stripe.errors.StripeError).param).toBe('colour');
  });

  it('accepts parameters Stripe knows even where the twin does not model them', async () => {
    const cus = await stripe.customers.create({ email: 'v@example.com', validate: true } as Stripe.CustomerCreateParams);
    expect(cus.email).toBe('v@example.com');
  });
});

describe('the account', () => {
  it('answers the key\'s own account, and refuses a Stripe-Account it cannot reach', async () => {
    const s = twin.client('sk_test_accountRetrieve00001');
    const account = await s.accounts.retrieveCurrent();
    expect(account).toMatchObject({ object: 'account', charges_enabled: true, country: 'US', default_currency: 'usd' });
    expect(account.id).toMatch(/^acct_/);
    expect((await twin.client('sk_test_accountRetrieve00002').accounts.retrieveCurrent()).id).not.toBe(account.id);
    const own = await s.customers.list({}, { stripeAccount: account.id });
    expect(own.object).toBe('list');
    const err = await s.customers.list({}, { stripeAccount: 'acct_someoneElse0000' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Stripe.errors.StripePermissionError);
  });
});
