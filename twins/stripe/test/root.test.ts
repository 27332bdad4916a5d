import { beforeAll, describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness, type GuestHarness, type HarnessEntry } from '../../../sdk/twin/testing.js';
import type { RootRead } from '../../../sdk/twin/types.js';

/**
 * The Stripe twin's root (twin/root/): a copy of a real account. The real account here is a
 * second Stripe twin, seeded through its API as an app would seed a Stripe account; the copy's
 * refresh reads it (each read answered by the real twin's own route, with the real account's
 * key), and then the copy's API must answer the real ids and data.
 */
let source = '';
beforeAll(async () => {
  source = (await buildTwin('twins/stripe/twin/index.ts')).source;
});

const ROOT = { url: 'https://api.stripe.com' };
const REAL_KEY = { authorization: 'Bearer sk_test_theRealAccount0001' };
/** The world's own token as the API key, as an app under `kit world attach` sends it (the host says so). */
const WORLD = { 'x-kit-auth': 'authorization' };

type Json = Record<string, unknown> & { id: string };
type List = { data: Json[]; has_more: boolean };

function form(params: Record<string, string | number>): string {
  return Object.entries(params).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
}

function call(h: GuestHarness, method: string, path: string, headers: Record<string, string>, body?: Record<string, string | number>): Json {
  const r = h.request(method, path, { headers, ...(body === undefined ? {} : { body: form(body) }) });
  if (r.status !== 200) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body as Json;
}

/** The real account answering a refresh's read, as api.stripe.com would with the sealed key. */
function answerFrom(real: GuestHarness, headers: Record<string, string> = REAL_KEY) {
  return (read: RootRead) => {
    expect(read.path.startsWith('/v1/')).toBe(true);
    const query = new URLSearchParams(read.query ?? {}).toString();
    const r = real.request('GET', query === '' ? read.path : `${read.path}?${query}`, { headers: { ...read.headers, ...headers } });
    return { status: r.status, body: r.body };
  };
}

/** Every item of a list, walked with `starting_after` a page at a time. */
function walk(h: GuestHarness, path: string, headers: Record<string, string>, limit = 100): { ids: string[]; pages: number } {
  const ids: string[] = [];
  let pages = 0;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const page = call(h, 'GET', `${path}${sep}limit=${limit}${ids.length > 0 ? `&starting_after=${ids[ids.length - 1]}` : ''}`, headers) as unknown as List;
    pages++;
    ids.push(...page.data.map((o) => o.id));
    if (!page.has_more) return { ids, pages };
  }
}

/** The real account: customers (some in the same second), a catalog, a subscription of 12 items and its invoice, an invoice of 12 lines, an endpoint. */
function seedReal(): { real: GuestHarness; customers: string[]; product: string; prices: string[]; subscription: string; invoices: string[]; coupon: string; endpoint: string } {
  const real = createGuestHarness(source, { world: 'real', now: '2026-03-01T00:00:00.000Z' });
  const customers: string[] = [];
  for (let i = 0; i < 130; i++) {
    // The first 40 in one second: their order is the list's, not their `created`.
    if (i >= 40) real.advance(1000);
    const metadata: Record<string, string> = i % 10 === 0 ? { 'metadata[tier]': 'gold' } : {};
    customers.push(call(real, 'POST', '/v1/customers', REAL_KEY, { name: `Customer ${i}`, email: `person${i}@example.com`, ...metadata }).id);
  }
  const product = call(real, 'POST', '/v1/products', REAL_KEY, { id: 'prod_realPlan', name: 'Real plan', 'metadata[plan]': 'pro' }).id;
  call(real, 'POST', '/v1/products', REAL_KEY, { name: 'Add-on' });
  const prices: string[] = [];
  for (let i = 0; i < 12; i++) {
    prices.push(call(real, 'POST', '/v1/prices', REAL_KEY, {
      product, currency: 'usd', unit_amount: 1000 + i, 'recurring[interval]': 'month', ...(i === 0 ? { lookup_key: 'pro_monthly' } : {}),
    }).id);
  }
  const oneTime = call(real, 'POST', '/v1/prices', REAL_KEY, { product, currency: 'usd', unit_amount: 500 }).id;
  const coupon = call(real, 'POST', '/v1/coupons', REAL_KEY, { id: 'WELCOME10', percent_off: 10, duration: 'once' }).id;
  const items: Record<string, string> = {};
  prices.forEach((price, i) => { items[`items[${i}][price]`] = price; });
  const subscription = call(real, 'POST', '/v1/subscriptions', REAL_KEY, {
    customer: customers[5]!, collection_method: 'send_invoice', days_until_due: 30, 'metadata[order]': 'A-1', ...items,
  }).id;
  for (let i = 0; i < 12; i++) call(real, 'POST', '/v1/invoiceitems', REAL_KEY, { customer: customers[7]!, 'pricing[price]': oneTime, quantity: i + 1 });
  const manual = call(real, 'POST', '/v1/invoices', REAL_KEY, {
    customer: customers[7]!, pending_invoice_items_behavior: 'include', collection_method: 'send_invoice', days_until_due: 10,
  }).id;
  const latest = (call(real, 'GET', `/v1/subscriptions/${subscription}`, REAL_KEY).latest_invoice) as string;
  const endpoint = call(real, 'POST', '/v1/webhook_endpoints', REAL_KEY, { url: 'https://shop.example.com/stripe', 'enabled_events[]': '*' }).id;
  return { real, customers, product, prices: [...prices, oneTime], subscription, invoices: [latest, manual], coupon, endpoint };
}

/** Records the entries of a refresh wrote, as `type\u0000id` (the runner marks them, and sweeps those a later complete refresh does not write). */
function written(entries: HarnessEntry[]): Set<string> {
  return new Set(entries.flatMap((e) => e.writes.filter((w) => w.value !== null).map((w) => `${w.type}\u0000${w.id}`)));
}

describe('the Stripe twin copies a real account', () => {
  it('answers the real ids and data after a refresh: retrieve, lists across pages, search, update', () => {
    const seeded = seedReal();
    const { real, customers } = seeded;
    const copy = createGuestHarness(source, { world: 'copy', now: '2026-03-02T00:00:00.000Z' });
    const reads = copy.refresh(ROOT, answerFrom(real));

    // The reads: the account, then each list a hundred at a time (two pages of customers), then
    // what the subscription and the invoices embed only ten of.
    expect(reads[0]).toMatchObject({ path: '/v1/account', headers: { 'stripe-version': '2026-10-28.endive' } });
    const paths = reads.map((r) => `${r.path}?${new URLSearchParams(r.query ?? {}).toString()}`);
    expect(paths.filter((p) => p.startsWith('/v1/customers?'))).toEqual(['/v1/customers?limit=100', `/v1/customers?limit=100&starting_after=${customers[30]}`]);
    expect(paths).toContain('/v1/subscriptions?status=all&limit=100');
    expect(paths).toContain(`/v1/subscription_items?limit=100&subscription=${seeded.subscription}`);
    for (const invoice of seeded.invoices) expect(paths).toContain(`/v1/invoices/${invoice}/lines?limit=100`);
    expect(reads).toHaveLength(1 + 8 + 3);
    // Each read was one entry caused by the refresh, and none emitted an event.
    expect(copy.log.every((e) => e.cause.kind === 'refresh' && e.events.length === 0)).toBe(true);

    // The account: the copy's keys open the real one, whatever the key.
    const account = call(real, 'GET', '/v1/account', REAL_KEY);
    expect(call(copy, 'GET', '/v1/account', WORLD)).toEqual(account);
    expect(call(copy, 'GET', '/v1/account', { authorization: 'Bearer sk_test_anyOtherKey' }).id).toBe(account.id);

    // Every object retrieves as the real account answers it.
    const objects = [
      ...customers.map((id) => `/v1/customers/${id}`),
      `/v1/products/${seeded.product}`, ...seeded.prices.map((id) => `/v1/prices/${id}`), `/v1/coupons/${seeded.coupon}`,
      `/v1/subscriptions/${seeded.subscription}`, ...seeded.invoices.map((id) => `/v1/invoices/${id}`), `/v1/webhook_endpoints/${seeded.endpoint}`,
    ];
    for (const path of objects) expect(call(copy, 'GET', path, WORLD), path).toEqual(call(real, 'GET', path, REAL_KEY));

    // Lists: the same objects in the same order, across pages (the first 40 customers share a second).
    for (const list of ['/v1/customers', '/v1/products', '/v1/prices', '/v1/coupons', '/v1/subscriptions?status=all', '/v1/invoices', '/v1/webhook_endpoints']) {
      expect(walk(copy, list, WORLD, 7).ids, list).toEqual(walk(real, list, REAL_KEY, 7).ids);
    }
    const all = walk(copy, '/v1/customers', WORLD);
    expect(all).toEqual({ ids: [...customers].reverse(), pages: 2 });
    const newest = call(copy, 'GET', '/v1/customers?limit=100', WORLD) as unknown as List;
    expect(newest.data[0]).toEqual(call(real, 'GET', `/v1/customers/${customers[129]}`, REAL_KEY));
    expect(call(copy, 'GET', `/v1/customers?limit=3&ending_before=${customers[2]}`, WORLD).data).toEqual(
      call(real, 'GET', `/v1/customers?limit=3&ending_before=${customers[2]}`, REAL_KEY).data);

    // What the subscription and the invoices embed ten of, whole.
    expect(call(copy, 'GET', `/v1/subscription_items?subscription=${seeded.subscription}&limit=100`, WORLD))
      .toEqual(call(real, 'GET', `/v1/subscription_items?subscription=${seeded.subscription}&limit=100`, REAL_KEY));
    const lastItem = (call(real, 'GET', `/v1/subscription_items?subscription=${seeded.subscription}&limit=100`, REAL_KEY).data as Json[])[11]!.id;
    expect(call(copy, 'GET', `/v1/subscription_items/${lastItem}`, WORLD)).toEqual(call(real, 'GET', `/v1/subscription_items/${lastItem}`, REAL_KEY));
    for (const invoice of seeded.invoices) {
      const lines = call(copy, 'GET', `/v1/invoices/${invoice}/lines?limit=100`, WORLD);
      expect((lines.data as Json[]).length).toBe(12);
      expect(lines).toEqual(call(real, 'GET', `/v1/invoices/${invoice}/lines?limit=100`, REAL_KEY));
    }

    // Filtered lists and searches read the copy's indexes.
    const same = (path: string) => expect(call(copy, 'GET', path, WORLD), path).toEqual(call(real, 'GET', path, REAL_KEY));
    same('/v1/customers?email=person77@example.com');
    same(`/v1/customers/search?query=${encodeURIComponent('email:"PERSON77@example.com"')}`);
    same(`/v1/customers/search?query=${encodeURIComponent('metadata["tier"]:"gold"')}&limit=100`);
    same(`/v1/customers/search?query=${encodeURIComponent('name~"Customer 12"')}&limit=100`);
    same(`/v1/products/search?query=${encodeURIComponent('metadata["plan"]:"pro"')}`);
    same(`/v1/prices?lookup_keys[]=pro_monthly`);
    same(`/v1/prices?product=${seeded.product}&limit=100`);
    same(`/v1/subscriptions?customer=${customers[5]}`);
    same(`/v1/subscriptions/search?query=${encodeURIComponent('metadata["order"]:"A-1"')}`);
    same(`/v1/invoices?subscription=${seeded.subscription}`);
    same(`/v1/invoices?customer=${customers[7]}`);
    const found = call(copy, 'GET', `/v1/customers/search?query=${encodeURIComponent('email:"person77@example.com"')}`, WORLD).data as Json[];
    expect(found.map((c) => c.id)).toEqual([customers[77]]);

    // An update in the copy: answered and kept there, and searchable by its new email; the real account is untouched.
    const updated = call(copy, 'POST', `/v1/customers/${customers[77]}`, WORLD, { email: 'moved@example.com', 'metadata[note]': 'copied' });
    expect(updated).toMatchObject({ id: customers[77], email: 'moved@example.com', metadata: { note: 'copied' } });
    expect(call(copy, 'GET', `/v1/customers/${customers[77]}`, WORLD)).toEqual(updated);
    expect((call(copy, 'GET', `/v1/customers/search?query=${encodeURIComponent('email:"moved@example.com"')}`, WORLD).data as Json[]).map((c) => c.id)).toEqual([customers[77]]);
    expect(call(copy, 'GET', `/v1/customers/search?query=${encodeURIComponent('email:"person77@example.com"')}`, WORLD).data).toEqual([]);
    expect(call(real, 'GET', `/v1/customers/${customers[77]}`, REAL_KEY).email).toBe('person77@example.com');
    expect(call(copy, 'POST', `/v1/products/${seeded.product}`, WORLD, { name: 'Renamed' }).name).toBe('Renamed');
    expect(call(copy, 'POST', `/v1/subscriptions/${seeded.subscription}`, WORLD, { 'metadata[order]': 'A-2' }).metadata).toEqual({ order: 'A-2' });

    // What the app makes in the copy is the newest there.
    const made = call(copy, 'POST', '/v1/customers', WORLD, { name: 'Made in the copy' }).id;
    expect(made).toMatch(/^cus_[A-Za-z0-9]{14}$/);
    expect((call(copy, 'GET', '/v1/customers?limit=2', WORLD).data as Json[]).map((c) => c.id)).toEqual([made, customers[129]]);
    expect(walk(copy, '/v1/customers', WORLD, 50).ids).toEqual([made, ...[...customers].reverse()]);
    const event = (call(copy, 'GET', '/v1/events?limit=1', WORLD).data as Json[])[0]!;
    expect(event).toMatchObject({ type: 'customer.created', data: { object: { id: made } } });
  });

  it('follows the root on a second refresh: changed objects change, new ones come first, what is gone is no longer written', () => {
    const { real, customers, product } = seedReal();
    const copy = createGuestHarness(source, { world: 'copy', now: '2026-03-02T00:00:00.000Z' });
    copy.refresh(ROOT, answerFrom(real));
    const first = copy.log.length;
    const madeInCopy = call(copy, 'POST', '/v1/customers', WORLD, { name: 'Made in the copy' }).id;

    real.advance(60_000);
    call(real, 'POST', `/v1/customers/${customers[3]}`, REAL_KEY, { name: 'Renamed at the root', email: 'renamed@example.com' });
    call(real, 'DELETE', `/v1/customers/${customers[4]}`, REAL_KEY);
    const added = call(real, 'POST', '/v1/customers', REAL_KEY, { name: 'New at the root' }).id;
    call(real, 'POST', '/v1/prices', REAL_KEY, { product, currency: 'eur', unit_amount: 900 });
    // An edit the app made in the copy (the runner keeps it while the root's object is unchanged).
    call(copy, 'POST', `/v1/customers/${customers[10]}`, WORLD, { email: 'edited-in-copy@example.com' });
    const second = copy.log.length;
    copy.refresh(ROOT, answerFrom(real));
    // A refresh only writes: nothing of the world's own (the edit's index entries) is deleted by it.
    expect(copy.log.slice(second).flatMap((e) => e.writes.filter((w) => w.value === null))).toEqual([]);
    const acct = call(copy, 'GET', '/v1/account', WORLD).id;
    const seq = String((copy.get('customer', `${acct}/${customers[10]}`) as { s: number }).s).padStart(12, '0');
    expect(copy.get(`by.customer.email_folded.${acct}`, `26:edited-in-copy@example.com/${seq}`)).toBe(customers[10]);

    expect(call(copy, 'GET', `/v1/customers/${customers[3]}`, WORLD)).toEqual(call(real, 'GET', `/v1/customers/${customers[3]}`, REAL_KEY));
    expect((call(copy, 'GET', `/v1/customers/search?query=${encodeURIComponent('email:"renamed@example.com"')}`, WORLD).data as Json[]).map((c) => c.id)).toEqual([customers[3]]);
    expect(call(copy, 'GET', `/v1/customers/${added}`, WORLD)).toEqual(call(real, 'GET', `/v1/customers/${added}`, REAL_KEY));
    // The new customer is newer than the rest of the root's; the copy's own was made before it.
    expect((call(copy, 'GET', '/v1/customers?limit=3', WORLD).data as Json[]).map((c) => c.id)).toEqual([added, madeInCopy, customers[129]]);
    expect(walk(copy, '/v1/prices', WORLD, 5).ids).toEqual(walk(real, '/v1/prices', REAL_KEY, 5).ids);

    // The runner deletes, after a complete refresh, what the refresh wrote before and not this
    // time: here the deleted customer's records and the renamed one's entry under its old email,
    // so every record of what the root still shows is written again (an unchanged one costs
    // nothing: equal writes are dropped).
    const before = written(copy.log.slice(0, first));
    const now = written(copy.log.slice(second));
    const swept = [...before].filter((key) => !now.has(key)).map((key) => {
      const [type, id] = key.split('\u0000') as [string, string];
      const what = JSON.stringify(copy.get(type, id)).includes(customers[4]!) ? 'the deleted customer' : id.replace(/\/\d+$/, '');
      return `${type.replace(/\.acct_\w+$/, '')}: ${what}`;
    });
    expect(swept.sort()).toEqual([
      'by.customer.email_folded: 19:person3@example.com',
      'by.customer.email_folded: the deleted customer',
      'customer: the deleted customer',
      'ix.customer: the deleted customer',
    ]);
  });

  it('keeps the root order when new objects share a second with those copied before (a frozen clock)', () => {
    const real = createGuestHarness(source, { world: 'real', now: '2026-03-01T00:00:00.000Z' });
    const made = () => call(real, 'POST', '/v1/customers', REAL_KEY, { name: 'Same second' }).id;
    for (let i = 0; i < 20; i++) made();
    const copy = createGuestHarness(source, { world: 'copy' });
    copy.refresh(ROOT, answerFrom(real));
    const inCopy = call(copy, 'POST', '/v1/customers', WORLD, { name: 'Made in the copy' }).id;
    const later = [made(), made(), made()];
    copy.refresh(ROOT, answerFrom(real));
    const order = walk(copy, '/v1/customers', WORLD, 4).ids;
    expect(order.slice(0, 4)).toEqual([...later.reverse(), inCopy]);
    expect(order.filter((id) => id !== inCopy)).toEqual(walk(real, '/v1/customers', REAL_KEY).ids);
  });

  it('folds webhooks: an update, a delete, a new product; other events and events before a refresh write nothing', () => {
    const { real, customers, product } = seedReal();
    const copy = createGuestHarness(source, { world: 'copy', now: '2026-03-02T00:00:00.000Z' });
    const stripeEvent = (type: string, object: unknown) => ({ body: { id: `evt_${type}`, object: 'event', type, data: { object } } });

    // Before the first refresh the copy has no account to fold into.
    expect(copy.ingest(ROOT, stripeEvent('customer.updated', call(real, 'GET', `/v1/customers/${customers[1]}`, REAL_KEY))).position).toBeUndefined();
    copy.refresh(ROOT, answerFrom(real));

    const changed = call(real, 'POST', `/v1/customers/${customers[1]}`, REAL_KEY, { email: 'new-address@example.com', name: 'Changed' });
    const folded = copy.ingest(ROOT, stripeEvent('customer.updated', changed));
    expect(folded.thrown).toBeUndefined();
    expect(copy.log[copy.log.length - 1]?.cause).toEqual({ kind: 'ingest', source: 'test' });
    expect(call(copy, 'GET', `/v1/customers/${customers[1]}`, WORLD)).toEqual(changed);
    const search = (email: string) => (call(copy, 'GET', `/v1/customers/search?query=${encodeURIComponent(`email:"${email}"`)}`, WORLD).data as Json[]).map((c) => c.id);
    expect(search('new-address@example.com')).toEqual([customers[1]]);
    expect(search('person1@example.com')).toEqual([]);
    // Still in its place in the list.
    expect(walk(copy, '/v1/customers', WORLD).ids).toEqual([...customers].reverse());

    const gone = call(real, 'GET', `/v1/customers/${customers[2]}`, REAL_KEY);
    copy.ingest(ROOT, stripeEvent('customer.deleted', gone));
    expect(copy.request('GET', `/v1/customers/${customers[2]}`, { headers: WORLD }).status).toBe(404);
    expect(walk(copy, '/v1/customers', WORLD).ids).not.toContain(customers[2]);
    expect(search('person2@example.com')).toEqual([]);

    real.advance(5_000);
    const made = call(real, 'POST', '/v1/products', REAL_KEY, { name: 'Launched', 'metadata[plan]': 'pro' });
    copy.ingest(ROOT, stripeEvent('product.created', made));
    expect(call(copy, 'GET', `/v1/products/${made.id}`, WORLD)).toEqual(made);
    expect((call(copy, 'GET', '/v1/products?limit=1', WORLD).data as Json[])[0]?.id).toBe(made.id);
    expect((call(copy, 'GET', `/v1/products/search?query=${encodeURIComponent('metadata["plan"]:"pro"')}`, WORLD).data as Json[]).map((p) => p.id)).toEqual([made.id, product]);

    // A canceled subscription stays, canceled, as at Stripe.
    const sub = call(real, 'GET', '/v1/subscriptions?status=all&limit=1', REAL_KEY).data as Json[];
    const canceled = call(real, 'DELETE', `/v1/subscriptions/${sub[0]!.id}`, REAL_KEY);
    copy.ingest(ROOT, stripeEvent('customer.subscription.deleted', canceled));
    expect(call(copy, 'GET', `/v1/subscriptions/${canceled.id}`, WORLD)).toEqual(canceled);

    // Events about what the copy does not keep, and events that are not Stripe's, write nothing.
    const head = copy.log.length;
    for (const webhook of [
      stripeEvent('payment_intent.succeeded', { id: 'pi_123', object: 'payment_intent' }),
      stripeEvent('customer.updated', { id: 'pi_123', object: 'payment_intent' }),
      stripeEvent('customer.updated', { object: 'customer' }),
      stripeEvent('invoice.upcoming', { object: 'invoice', id: null }),
      { body: { hello: 'world' } },
      { body: [1, 2, 3] },
    ]) expect(copy.ingest(ROOT, webhook).position).toBeUndefined();
    expect(copy.log.length).toBe(head);
  });

  it('refuses what it cannot copy: a twin account begun by a key, a failing answer, a list that is not one', () => {
    const { real } = seedReal();
    // The copy's world used the real account's key before the root was set: that account is the twin's own.
    const used = createGuestHarness(source, { world: 'copy' });
    call(used, 'POST', '/v1/customers', REAL_KEY, { name: 'Before the root' });
    expect(() => used.refresh(ROOT, answerFrom(real))).toThrow(/already holds the account acct_\w+ as one of its own/);

    const copy = createGuestHarness(source, { world: 'copy' });
    expect(() => copy.refresh(ROOT, answerFrom(real, { authorization: 'Bearer sk_live_nope' }))).toThrow(/the root answered 401 to GET \/v1\/account: Invalid API Key/);
    expect(() => copy.refresh(ROOT, (read) => (read.path === '/v1/account' ? answerFrom(real)(read) : { status: 200, body: { data: 'no' } })))
      .toThrow(/is not a Stripe list/);
    expect(() => copy.refresh(ROOT, (read) => (read.path === '/v1/account' ? answerFrom(real)(read) : { status: 200, body: { data: [{ id: 'x', object: 'charge' }], has_more: false } })))
      .toThrow(/item 0 of the root's answer to GET \/v1\/customers is not a customer/);
    expect(() => copy.refresh(ROOT, (read) => (read.path === '/v1/account' ? answerFrom(real)(read) : { status: 500, body: { error: { message: 'boom' } } })))
      .toThrow(/the root answered 500 to GET \/v1\/customers: boom/);
  });

  it('copies what a restricted key may read: a list answered 403 is left out, an account it may not read is named after the root', () => {
    const { real, customers } = seedReal();
    const copy = createGuestHarness(source, { world: 'copy' });
    copy.refresh(ROOT, (read) => (read.path === '/v1/account' || read.path === '/v1/webhook_endpoints'
      ? { status: 403, body: { error: { type: 'invalid_request_error', message: 'The provided key does not have the required permissions' } } }
      : answerFrom(real)(read)));
    const account = call(copy, 'GET', '/v1/account', WORLD);
    expect(account.id).toMatch(/^acct_[A-Za-z0-9]{16}$/);
    expect(account.id).not.toBe(call(real, 'GET', '/v1/account', REAL_KEY).id);
    expect(call(copy, 'GET', `/v1/customers/${customers[0]}`, WORLD)).toEqual(call(real, 'GET', `/v1/customers/${customers[0]}`, REAL_KEY));
    expect(call(copy, 'GET', '/v1/webhook_endpoints', WORLD).data).toEqual([]);
  });

  it('declares its refresh defaults and Stripe webhook ingest in the manifest', () => {
    const copy = createGuestHarness(source);
    expect(copy.manifest.root).toEqual({ refresh: { atMost: '30s', every: '1h' }, ingest: 'stripe' });
  });
});
