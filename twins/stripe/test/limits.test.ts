/**
 * Stripe's limits on what one object can hold, through the official `stripe` package: string
 * parameters (5000 characters, fewer or more where Stripe documents it), an invoice's lines
 * (the first ten embedded, the rest paged from `/v1/invoices/:id/lines`, at most 250 invoice
 * items) and a subscription's items (the first ten embedded, the rest paged from
 * `/v1/subscription_items`, at most 20). Without them, ten customers with 3.9 MB descriptions
 * made a page of customers or events 39 MB, and 3,000 pending invoice items made a 2.7 MB
 * invoice on every retrieve.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { openWorldRunner } from '../../../runtime/runner/index.js';
import { MemoryStorage } from '../../../runtime/store/index.js';
import { buildGuestRuntime } from '../../../sdk/twin/build.js';
import { START, startStripeTwin, stripeBundle, type StripeTwin } from './harness.js';

let twin: StripeTwin;
beforeAll(async () => {
  twin = await startStripeTwin();
});
afterAll(async () => {
  await twin.close();
});

/** `total_count` of a list inside an object: Stripe sends it, the package's types leave it out. */
function totalCount(list: Stripe.ApiList<unknown>): number | undefined {
  return (list as Stripe.ApiList<unknown> & { total_count?: number }).total_count;
}

async function refusal(p: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
  return e as Stripe.errors.StripeError;
}

describe('string parameters', () => {
  it('refuses a string over 5000 characters with Stripe\'s message, naming the parameter, and makes nothing', async () => {
    const stripe = twin.client('sk_test_limitsStrings00000001');
    const long = `${'a'.repeat(10)}${'m'.repeat(4981)}${'z'.repeat(10)}`;
    const e = await refusal(stripe.customers.create({ name: 'Ada', address: { line1: long } }));
    expect([e.statusCode, e.rawType, e.param, e.message]).toEqual([
      400, 'invalid_request_error', 'address[line1]', 'Invalid string: aaaaaaaaaa...zzzzzzzzzz; must be at most 5000 characters',
    ]);
    expect((await stripe.customers.list()).data).toEqual([]);
    // 5000 is allowed; so are long metadata values up to their own limit, with their own message.
    const ok = await stripe.customers.create({ address: { line1: 'x'.repeat(5000) } });
    expect(ok.address?.line1).toHaveLength(5000);
    expect((await refusal(stripe.customers.update(ok.id, { metadata: { k: 'v'.repeat(501) } }))).message).toBe('Metadata values can have at most 500 characters.');
    // An array element is named by its index.
    const inv = await refusal(stripe.invoices.create({ customer: ok.id, custom_fields: [{ name: 'PO', value: 'v' }, { name: 'n'.repeat(41), value: 'v' }] }));
    expect([inv.param, inv.message]).toEqual(['custom_fields[1][name]', 'Invalid string: nnnnnnnnnn...nnnnnnnnnn; must be at most 40 characters']);
  });

  it('applies the limits Stripe documents for particular parameters, on create and update', async () => {
    const stripe = twin.client('sk_test_limitsStrings00000002');
    const cus = await stripe.customers.create({ description: 'd'.repeat(350), name: 'n'.repeat(150) });
    for (const [params, param, max] of [
      [{ description: 'd'.repeat(351) }, 'description', 350],
      [{ name: 'n'.repeat(151) }, 'name', 150],
      [{ email: `${'e'.repeat(510)}@x.test` }, 'email', 512],
    ] as const) {
      const e = await refusal(stripe.customers.update(cus.id, params));
      expect([e.param, e.message.endsWith(`must be at most ${max} characters`)]).toEqual([param, true]);
    }
    expect((await stripe.customers.retrieve(cus.id) as Stripe.Customer).description).toBe('d'.repeat(350));
    expect((await refusal(stripe.products.create({ name: 'p'.repeat(251) }))).param).toBe('name');
    const product = await stripe.products.create({ name: 'p'.repeat(250) });
    expect((await refusal(stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 100, lookup_key: 'k'.repeat(201) }))).param).toBe('lookup_key');
    expect((await refusal(stripe.invoiceItems.create({ customer: cus.id, amount: 100, currency: 'usd', description: 'i'.repeat(501) }))).param).toBe('description');
    expect((await refusal(stripe.invoices.create({ customer: cus.id, description: 'm'.repeat(501) }))).param).toBe('description');
  });

  it('takes dispute evidence texts up to their documented 20,000 characters', async () => {
    const stripe = twin.client('sk_test_limitsStrings00000003');
    const pi = await stripe.paymentIntents.create({ amount: 2000, currency: 'usd', payment_method: 'pm_card_createDispute', confirm: true, allowed_payment_method_types: ['card'] });
    const dispute = (await stripe.disputes.list({ payment_intent: pi.id })).data[0] as Stripe.Dispute;
    const e = await refusal(stripe.disputes.update(dispute.id, { evidence: { product_description: 'p'.repeat(20_001) }, submit: false }));
    expect([e.param, e.message.endsWith('must be at most 20000 characters')]).toEqual(['evidence[product_description]', true]);
    const updated = await stripe.disputes.update(dispute.id, { evidence: { product_description: 'p'.repeat(20_000) }, submit: false });
    expect(updated.evidence.product_description).toHaveLength(20_000);
  });
});

describe('invoice lines', () => {
  const stripe = (): Stripe => twin.client('sk_test_limitsInvoiceLines001');

  async function customerWithItems(n: number, amount = (i: number) => 100 + i): Promise<{ customer: Stripe.Customer; items: Stripe.InvoiceItem[] }> {
    const customer = await stripe().customers.create({ name: 'Lines' });
    const items: Stripe.InvoiceItem[] = [];
    for (let i = 0; i < n; i++) items.push(await stripe().invoiceItems.create({ customer: customer.id, amount: amount(i), currency: 'usd', description: `item ${i}` }));
    return { customer, items };
  }

  it('embeds the first ten lines with has_more and total_count, and pages the rest from the lines url', async () => {
    const { customer, items } = await customerWithItems(25);
    const inv = await stripe().invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    expect(inv.lines).toMatchObject({ object: 'list', has_more: true, total_count: 25, url: `/v1/invoices/${inv.id}/lines` });
    expect(inv.lines.data).toHaveLength(10);
    expect(inv.subtotal).toBe(items.reduce((n, ii) => n + ii.amount, 0));
    const all = await stripe().invoices.listLineItems(inv.id, { limit: 7 }).autoPagingToArray({ limit: 100 });
    expect(all.map((l) => l.description)).toEqual(items.map((ii) => ii.description));
    expect(all.slice(0, 10).map((l) => l.id)).toEqual(inv.lines.data.map((l) => l.id));
    // The same on retrieve, in lists and in the invoice.created event.
    expect((await stripe().invoices.retrieve(inv.id)).lines.data).toHaveLength(10);
    expect((await stripe().invoices.list({ customer: customer.id })).data[0]!.lines).toMatchObject({ has_more: true, total_count: 25 });
    const created = (await stripe().events.list({ type: 'invoice.created' })).data.find((e) => (e.data.object as Stripe.Invoice).id === inv.id)!;
    expect((created.data.object as Stripe.Invoice).lines.data).toHaveLength(10);
    // ending_before pages back; a cursor that is not a line is 404.
    const back = await stripe().invoices.listLineItems(inv.id, { limit: 5, ending_before: all[12]!.id });
    expect([back.data.map((l) => l.id), back.has_more]).toEqual([all.slice(7, 12).map((l) => l.id), true]);
    expect((await refusal(stripe().invoices.listLineItems(inv.id, { starting_after: 'il_nope' }))).statusCode).toBe(404);
    // Finalized and paid on all 25 lines.
    const paid = await stripe().invoices.pay(inv.id, { paid_out_of_band: true });
    expect([paid.status, paid.amount_paid]).toEqual(['paid', inv.subtotal]);
  });

  it('keeps a draft\'s lines whole as invoice items come and go', async () => {
    const { customer } = await customerWithItems(10);
    const draft = await stripe().invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    expect(draft.lines).toMatchObject({ has_more: false, total_count: 10 });
    const extra = await stripe().invoiceItems.create({ customer: customer.id, invoice: draft.id, amount: 5000, currency: 'usd', description: 'eleventh' });
    const grown = await stripe().invoices.retrieve(draft.id);
    expect([grown.lines.data.length, grown.lines.has_more, totalCount(grown.lines), grown.subtotal]).toEqual([10, true, 11, draft.subtotal + 5000]);
    expect((await stripe().invoices.listLineItems(draft.id, { limit: 100 })).data.map((l) => l.description)).toContain('eleventh');
    await stripe().invoiceItems.del(extra.id);
    const back = await stripe().invoices.retrieve(draft.id);
    expect([back.lines.data.length, back.lines.has_more, back.subtotal]).toEqual([10, false, draft.subtotal]);
    expect((await stripe().invoices.listLineItems(draft.id, { limit: 100 })).data).toHaveLength(10);
  });

  it('takes at most 250 invoice items: the oldest, the rest stay pending, and a 251st is refused', async () => {
    const { customer, items } = await customerWithItems(260, () => 100);
    const inv = await stripe().invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    expect([totalCount(inv.lines), inv.subtotal]).toEqual([250, 25_000]);
    const pending = await stripe().invoiceItems.list({ customer: customer.id, pending: true, limit: 100 });
    expect(pending.data.map((ii) => ii.id).sort()).toEqual(items.slice(250).map((ii) => ii.id).sort());
    const e = await refusal(stripe().invoiceItems.create({ customer: customer.id, invoice: inv.id, amount: 100, currency: 'usd' }));
    expect([e.statusCode, e.param]).toEqual([400, 'invoice']);
    expect(e.message).toMatch(/up to 250 invoice items/);
    // The preview of the next invoice holds the ten left, and embeds lines as an invoice does.
    const preview = await stripe().invoices.createPreview({ customer: customer.id });
    expect([totalCount(preview.lines), preview.lines.has_more, preview.subtotal]).toEqual([10, false, 1000]);
  });

  it('embeds the first ten lines of a preview too', async () => {
    const { customer } = await customerWithItems(30);
    const preview = await stripe().invoices.createPreview({ customer: customer.id });
    expect([preview.lines.data.length, preview.lines.has_more, totalCount(preview.lines)]).toEqual([10, true, 30]);
    expect(preview.subtotal).toBe(Array.from({ length: 30 }, (_, i) => 100 + i).reduce((a, b) => a + b, 0));
  });
});

describe('subscription items', () => {
  const stripe = (): Stripe => twin.client('sk_test_limitsSubItems000001');
  let prices: Stripe.Price[] = [];

  beforeAll(async () => {
    const product = await stripe().products.create({ name: 'Seats' });
    prices = [];
    for (let i = 0; i < 22; i++) prices.push(await stripe().prices.create({ product: product.id, currency: 'usd', unit_amount: 100 * (i + 1), recurring: { interval: 'month' } }));
  });

  async function subscribe(n: number): Promise<Stripe.Subscription> {
    const customer = await stripe().customers.create({ name: 'Subscriber' });
    return stripe().subscriptions.create({ customer: customer.id, items: prices.slice(0, n).map((p) => ({ price: p.id })), collection_method: 'send_invoice', days_until_due: 30 });
  }

  it('embeds the first ten items; the rest page from /v1/subscription_items and bill like the others', async () => {
    const sub = await subscribe(12);
    expect(sub.items).toMatchObject({ object: 'list', has_more: true, total_count: 12, url: `/v1/subscription_items?subscription=${sub.id}` });
    expect(sub.items.data.map((i) => i.price.id)).toEqual(prices.slice(0, 10).map((p) => p.id));
    const all = await stripe().subscriptionItems.list({ subscription: sub.id, limit: 5 }).autoPagingToArray({ limit: 100 });
    expect(all.map((i) => i.price.id)).toEqual(prices.slice(0, 12).map((p) => p.id));
    // Every item is billed, and an item that is not embedded is found and changed by its id.
    const invoice = await stripe().invoices.retrieve(sub.latest_invoice as string);
    expect([totalCount(invoice.lines), invoice.subtotal]).toEqual([12, 100 * (12 * 13) / 2]);
    const twelfth = all[11]!;
    expect((await stripe().subscriptionItems.retrieve(twelfth.id)).price.id).toBe(prices[11]!.id);
    expect((await stripe().subscriptionItems.update(twelfth.id, { quantity: 3 })).quantity).toBe(3);
    const preview = await stripe().invoices.createPreview({ subscription: sub.id });
    expect(preview.subtotal).toBe(100 * (12 * 13) / 2 + 2 * 1200);
    // Deleting an embedded item brings the next one in; the items stay findable.
    await stripe().subscriptionItems.del(all[0]!.id);
    await stripe().subscriptionItems.del(all[1]!.id);
    const now = await stripe().subscriptions.retrieve(sub.id);
    expect([now.items.data.length, now.items.has_more, totalCount(now.items)]).toEqual([10, false, 10]);
    expect(now.items.data.map((i) => i.id)).toEqual(all.slice(2).map((i) => i.id));
    expect((await stripe().subscriptionItems.retrieve(twelfth.id)).quantity).toBe(3);
  });

  it('takes at most 20 items, on create, update and subscription_items.create', async () => {
    const e = await refusal(subscribe(21));
    expect([e.statusCode, e.param, e.message]).toEqual([400, 'items', 'A subscription can have up to 20 items.']);
    const sub = await subscribe(20);
    expect(totalCount(sub.items)).toBe(20);
    expect((await refusal(stripe().subscriptionItems.create({ subscription: sub.id, price: prices[20]!.id }))).message).toBe('A subscription can have up to 20 items.');
    expect((await refusal(stripe().subscriptions.update(sub.id, { items: [{ price: prices[21]!.id }] }))).param).toBe('items');
    expect((await stripe().subscriptionItems.list({ subscription: sub.id, limit: 100 })).data).toHaveLength(20);
  });
});

describe('a subscription stored before its items were embedded ten at a time', () => {
  it('keeps every item findable by its id once its items change', async () => {
    const runner = await openWorldRunner({ storage: new MemoryStorage(), world: 'legacy-items', twins: [await stripeBundle()], guestRuntime: await buildGuestRuntime(), now: () => START });
    let n = 0;
    const call = async (method: string, path: string, body = ''): Promise<{ status: number; json: any }> => { // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
      const res = await runner.handle({
        surface: 'vendor', method, path: `/stripe${path.split('?')[0]!}`, query: path.split('?')[1] ?? '', scope: 'write', requestId: `req_legacy${++n}`, receivedAt: START,
        headers: { authorization: 'Bearer sk_test_limitsLegacyItems01', 'content-type': 'application/x-www-form-urlencoded' },
        ...(body === '' ? {} : { body: new TextEncoder().encode(body) }),
      });
      return { status: res.status, json: JSON.parse(typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('utf8')) };
    };
    try {
      const acct = (await call('GET', '/v1/account')).json.id as string;
      const product = (await call('POST', '/v1/products', 'name=Seats')).json.id as string;
      const prices: string[] = [];
      for (let i = 0; i < 12; i++) prices.push((await call('POST', '/v1/prices', `product=${product}&currency=usd&unit_amount=${100 * (i + 1)}&recurring[interval]=month`)).json.id);
      const customer = (await call('POST', '/v1/customers', 'name=Legacy')).json.id as string;
      const made = await call('POST', '/v1/subscriptions', `customer=${customer}&collection_method=send_invoice&days_until_due=30&${prices.map((p, i) => `items[${i}][price]=${p}`).join('&')}`);
      const subId = made.json.id as string;
      // Rewrite it as a twin from before kept it: all twelve items inside, each filed in the item index.
      const w = runner.world;
      const rec = w.getRecord<{ s: number; o: { items: Record<string, unknown> } }>('stripe', 'subscription', `${acct}/${subId}`)!;
      const all = w.getRecord<{ id: string }[]>('stripe', 'subscription.items', `${acct}/${subId}`)!;
      expect(all).toHaveLength(12);
      const hidden = all.slice(10).map((i) => i.id);
      w.append('stripe', { cause: { kind: 'system', reason: 'a subscription as an older twin stored it' }, writes: [
        { type: 'subscription', id: `${acct}/${subId}`, value: { ...rec, o: { ...rec.o, items: { ...rec.o.items, data: all, has_more: false, total_count: 12 } } } },
        { type: 'subscription.items', id: `${acct}/${subId}`, value: null },
        ...hidden.map((si) => ({ type: 'subscription.item', id: `${acct}/${si}`, value: null })),
        ...hidden.map((si) => ({ type: `by.subscription.item.${acct}`, id: `${si.length}:${si}/${String(rec.s).padStart(12, '0')}`, value: subId })),
      ] });
      expect((await call('GET', `/v1/subscriptions/${subId}`)).json.items.data).toHaveLength(12);
      // A change to its items stores it the new way: ten embedded, the other two still found.
      expect((await call('POST', `/v1/subscription_items/${all[0]!.id}`, 'quantity=2')).status).toBe(200);
      const now = (await call('GET', `/v1/subscriptions/${subId}`)).json;
      expect([now.items.data.length, now.items.has_more, totalCount(now.items)]).toEqual([10, true, 12]);
      for (const si of hidden) expect((await call('GET', `/v1/subscription_items/${si}`)).json.id).toBe(si);
      expect((await call('GET', `/v1/subscription_items?subscription=${subId}&limit=100`)).json.data).toHaveLength(12);
    } finally {
      await runner.close();
    }
  });
});
