/**
 * Lists filtered by a field an equality index serves (a customer's email; the customer of a
 * payment intent, payment method or subscription), through the official `stripe` package:
 * the same pages a walk over every object would give, as objects are made, moved from one
 * value to another, and deleted; and a filter the index does not serve still works beside it.
 * Prices by lookup key (one or several, merged newest first), promotion codes by code in any
 * case, subscription items by id, and the reads that find a customer's or an invoice's
 * objects through an index rather than a walk over all of them. A subscription's invoices, a
 * checkout session by its payment intent or subscription, and searches by a metadata value or
 * a customer's email, which read an index too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { idsBackward, idsForward, startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;
let stripe: Stripe;
let other: Stripe;

beforeAll(async () => {
  twin = await startStripeTwin();
  stripe = twin.client('sk_test_filteredListsAccount01');
  other = twin.client('sk_test_filteredListsAccount02');
});
afterAll(async () => {
  await twin.close();
});

describe('lists filtered by an indexed field', () => {
  it('customers by email: only the matches, newest first, paged both ways, following updates and deletes', async () => {
    const made: Stripe.Customer[] = [];
    for (let i = 0; i < 15; i++) {
      if (i === 12) await twin.advance(24 * 3600 * 1000);
      made.push(await stripe.customers.create({ email: i % 3 === 0 ? 'shared@example.com' : `own${i}@example.com`, name: `C${i}` }));
      // Another account's customer with the same email stays out of this account's lists.
      if (i % 5 === 0) await other.customers.create({ email: 'shared@example.com' });
    }
    // The list's email filter is case-sensitive, as Stripe's is (search is not: below).
    const cased = await stripe.customers.create({ email: 'Shared@Example.com' });
    expect((await stripe.customers.list({ email: 'Shared@Example.com' })).data.map((c) => c.id)).toEqual([cased.id]);
    await stripe.customers.del(cased.id);
    // Into the email, out of it, and deleted.
    await stripe.customers.update(made[4]!.id, { email: 'shared@example.com' });
    await stripe.customers.update(made[6]!.id, { email: 'moved@example.com' });
    await stripe.customers.del(made[9]!.id);
    const shared = [0, 3, 4, 12].map((i) => made[i]!.id).reverse();

    expect((await stripe.customers.list({ email: 'shared@example.com', limit: 100 })).data.map((c) => c.id)).toEqual(shared);
    expect(await idsForward((after) => stripe.customers.list({ email: 'shared@example.com', limit: 2, ...(after ? { starting_after: after } : {}) }))).toEqual(shared);
    const first = await stripe.customers.list({ email: 'shared@example.com', limit: 3 });
    expect(first.has_more).toBe(true);
    expect((await stripe.customers.list({ email: 'shared@example.com', limit: 4 })).has_more).toBe(false);
    // Backward from the oldest match: the newer ones, nearest first in page order.
    const before = await stripe.customers.list({ email: 'shared@example.com', limit: 2, ending_before: made[0]!.id });
    expect(before.data.map((c) => c.id)).toEqual([made[4]!.id, made[3]!.id]);
    expect(before.has_more).toBe(true);
    expect((await stripe.customers.list({ email: 'moved@example.com' })).data.map((c) => c.id)).toEqual([made[6]!.id]);
    expect((await stripe.customers.list({ email: 'own6@example.com' })).data).toEqual([]);
    expect((await stripe.customers.list({ email: 'own9@example.com' })).data).toEqual([]);
    expect((await stripe.customers.list({ email: 'nobody@example.com' })).data).toEqual([]);
    // With `created` beside the email, both apply (made[12] on was made a day later).
    expect((await stripe.customers.list({ email: 'shared@example.com', created: { gte: made[12]!.created } })).data.map((c) => c.id)).toEqual([made[12]!.id]);
    expect((await other.customers.list({ email: 'shared@example.com' })).data).toHaveLength(3);
  });

  it('payment intents, payment methods and subscriptions by customer, with another filter beside the index', async () => {
    const [a, b] = [await stripe.customers.create({ name: 'A' }), await stripe.customers.create({ name: 'B' })];
    const intents: Record<string, string[]> = { [a.id]: [], [b.id]: [] };
    for (let i = 0; i < 7; i++) {
      const who = i % 2 === 0 ? a.id : b.id;
      const pi = await stripe.paymentIntents.create({ amount: 100 + i, currency: 'usd', customer: who });
      intents[who]!.unshift(pi.id);
    }
    // An intent made without a customer and given one later is listed under it.
    const late = await stripe.paymentIntents.create({ amount: 999, currency: 'usd' });
    await stripe.paymentIntents.update(late.id, { customer: b.id });
    intents[b.id]!.unshift(late.id);
    expect(await idsForward((after) => stripe.paymentIntents.list({ customer: a.id, limit: 2, ...(after ? { starting_after: after } : {}) }))).toEqual(intents[a.id]);
    expect(await idsForward((after) => stripe.paymentIntents.list({ customer: b.id, limit: 3, ...(after ? { starting_after: after } : {}) }))).toEqual(intents[b.id]);

    const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: a.id });
    expect((await stripe.customers.listPaymentMethods(a.id)).data.map((m) => m.id)).toEqual([pm.id]);
    expect((await stripe.paymentMethods.list({ customer: a.id, type: 'card' })).data.map((m) => m.id)).toEqual([pm.id]);
    await stripe.paymentMethods.detach(pm.id);
    expect((await stripe.customers.listPaymentMethods(a.id)).data).toEqual([]);

    const product = await stripe.products.create({ name: 'Plan' });
    const price = await stripe.prices.create({ product: product.id, unit_amount: 500, currency: 'usd', recurring: { interval: 'month' } });
    expect((await stripe.prices.list({ product: product.id })).data.map((p) => p.id)).toEqual([price.id]);
    await stripe.paymentMethods.attach('pm_card_visa', { customer: b.id });
    const bPm = (await stripe.customers.listPaymentMethods(b.id)).data[0]!;
    await stripe.customers.update(b.id, { invoice_settings: { default_payment_method: bPm.id } });
    const kept = await stripe.subscriptions.create({ customer: b.id, items: [{ price: price.id }] });
    const canceled = await stripe.subscriptions.create({ customer: b.id, items: [{ price: price.id }] });
    await stripe.subscriptions.cancel(canceled.id);
    // The index picks b's subscriptions; the status filter (not indexed) then applies.
    expect((await stripe.subscriptions.list({ customer: b.id })).data.map((s) => s.id)).toEqual([kept.id]);
    expect((await stripe.subscriptions.list({ customer: b.id, status: 'all' })).data.map((s) => s.id)).toEqual([canceled.id, kept.id]);
    expect((await stripe.subscriptions.list({ customer: a.id, status: 'all' })).data).toEqual([]);
  });

  it('prices by lookup_keys[]: several keys merged newest first, paged both ways, following a transferred key', async () => {
    const product = await stripe.products.create({ name: 'Keyed' });
    const made: Stripe.Price[] = [];
    for (let i = 0; i < 9; i++) {
      if (i === 6) await twin.advance(3600 * 1000);
      made.push(await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 100 + i, lookup_key: `lk_${i}` }));
      // Prices without a key, and another account's with the same keys, in between.
      await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 1 });
      await other.prices.create({ product: (await other.products.create({ name: 'Theirs' })).id, currency: 'usd', unit_amount: 5, lookup_key: `lk_${i}` });
    }
    const keys = ['lk_1', 'lk_4', 'lk_6', 'lk_7', 'lk_4', 'lk_none'];
    const wanted = [7, 6, 4, 1].map((i) => made[i]!.id);
    const byKeys = (extra: Stripe.PriceListParams = {}) => stripe.prices.list({ lookup_keys: keys, ...extra });
    expect((await byKeys()).data.map((p) => p.id)).toEqual(wanted);
    expect(await idsForward((after) => byKeys({ limit: 1, ...(after ? { starting_after: after } : {}) }))).toEqual(wanted);
    expect(await idsBackward(made[1]!.id, (before) => byKeys({ limit: 2, ending_before: before }))).toEqual(wanted);
    expect((await byKeys({ limit: 2 })).has_more).toBe(true);
    // Another filter beside the keys applies too.
    expect((await byKeys({ active: true, created: { gte: made[6]!.created } })).data.map((p) => p.id)).toEqual(wanted.slice(0, 2));

    // The key moves to a new price: the old one is no longer found by it.
    const moved = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 999, lookup_key: 'lk_4', transfer_lookup_key: true });
    expect((await stripe.prices.list({ lookup_keys: ['lk_4'] })).data.map((p) => p.id)).toEqual([moved.id]);
    await expect(stripe.prices.update(made[6]!.id, { lookup_key: 'lk_7' })).rejects.toMatchObject({ param: 'lookup_key', statusCode: 400 });
    await stripe.prices.update(made[6]!.id, { lookup_key: 'lk_renamed' });
    expect((await byKeys()).data.map((p) => p.id)).toEqual([moved.id, made[7]!.id, made[1]!.id]);
    expect((await stripe.prices.list({ lookup_keys: ['lk_renamed'] })).data.map((p) => p.id)).toEqual([made[6]!.id]);
    expect((await other.prices.list({ lookup_keys: ['lk_4'] })).data).toHaveLength(1);
  });

  it("an invoice takes only its customer's pending items, and deleting the draft gives them back", async () => {
    const [mine, theirs] = [await stripe.customers.create({ name: 'Billed' }), await stripe.customers.create({ name: 'Not billed' })];
    const items: string[] = [];
    for (let i = 0; i < 4; i++) {
      items.push((await stripe.invoiceItems.create({ customer: mine.id, amount: 100 * (i + 1), currency: 'usd' })).id);
      await stripe.invoiceItems.create({ customer: theirs.id, amount: 7, currency: 'usd' });
    }
    const draft = await stripe.invoices.create({ customer: mine.id, pending_invoice_items_behavior: 'include' });
    expect(draft.amount_due).toBe(1000);
    expect(draft.lines.data.map((l) => l.amount).sort((a, b) => a - b)).toEqual([100, 200, 300, 400]);
    // An item added to the draft rebuilds its lines from the draft's items.
    await stripe.invoiceItems.create({ customer: mine.id, amount: 5, currency: 'usd', invoice: draft.id });
    expect((await stripe.invoices.retrieve(draft.id)).amount_due).toBe(1005);
    await stripe.invoices.del(draft.id);
    for (const id of items) expect((await stripe.invoiceItems.retrieve(id)).invoice).toBeNull();
    const again = await stripe.invoices.create({ customer: mine.id, pending_invoice_items_behavior: 'include' });
    expect(again.amount_due).toBe(1005);
    expect((await stripe.invoices.create({ customer: theirs.id, pending_invoice_items_behavior: 'include' })).amount_due).toBe(28);
  });

  it('promotion codes by code in any case, and a code taken while active', async () => {
    const coupon = await stripe.coupons.create({ percent_off: 10, duration: 'once' });
    const promo = (code: string, extra: Partial<Stripe.PromotionCodeCreateParams> = {}) =>
      stripe.promotionCodes.create({ promotion: { type: 'coupon', coupon: coupon.id }, code, ...extra });
    for (let i = 0; i < 5; i++) await promo(`OTHER${i}`);
    const summer = await promo('Summer10');
    const theirs = await other.promotionCodes.create({ promotion: { type: 'coupon', coupon: (await other.coupons.create({ percent_off: 5, duration: 'once' })).id }, code: 'SUMMER10' });
    expect(theirs.code).toBe('SUMMER10');
    for (const asTyped of ['summer10', 'SUMMER10', 'Summer10']) {
      expect((await stripe.promotionCodes.list({ code: asTyped })).data.map((p) => p.id)).toEqual([summer.id]);
    }
    expect((await stripe.promotionCodes.list({ code: 'summer1' })).data).toEqual([]);
    await expect(promo('SUMMER10')).rejects.toMatchObject({ code: 'resource_already_exists', param: 'code' });
    // Once the old one is inactive the code is free again; the list by code then has both.
    await stripe.promotionCodes.update(summer.id, { active: false });
    const again = await promo('sUmMeR10');
    expect((await stripe.promotionCodes.list({ code: 'summer10' })).data.map((p) => p.id)).toEqual([again.id, summer.id]);
    expect((await stripe.promotionCodes.list({ code: 'summer10', active: true })).data.map((p) => p.id)).toEqual([again.id]);
  });

  it("a subscription item is found by its id among many subscriptions' items, and not once deleted", async () => {
    const product = await stripe.products.create({ name: 'Seats' });
    const [base, addon] = [
      await stripe.prices.create({ product: product.id, unit_amount: 1000, currency: 'usd', recurring: { interval: 'month' } }),
      await stripe.prices.create({ product: product.id, unit_amount: 200, currency: 'usd', recurring: { interval: 'month' } }),
    ];
    const subs: Stripe.Subscription[] = [];
    for (let i = 0; i < 4; i++) {
      const who = await stripe.customers.create({ name: `Sub${i}` });
      subs.push(await stripe.subscriptions.create({ customer: who.id, items: [{ price: base.id }], collection_method: 'send_invoice', days_until_due: 30 }));
    }
    const target = subs[1]!;
    const added = await stripe.subscriptionItems.create({ subscription: target.id, price: addon.id, quantity: 2 });
    expect((await stripe.subscriptionItems.retrieve(added.id)).subscription).toBe(target.id);
    expect((await stripe.subscriptionItems.retrieve(subs[3]!.items.data[0]!.id)).subscription).toBe(subs[3]!.id);
    expect((await stripe.subscriptionItems.update(added.id, { quantity: 5 })).quantity).toBe(5);
    expect((await stripe.subscriptions.retrieve(target.id)).items.data.map((i) => [i.id, i.quantity])).toEqual([[target.items.data[0]!.id, 1], [added.id, 5]]);
    await stripe.subscriptionItems.del(added.id);
    await expect(stripe.subscriptionItems.update(added.id, { quantity: 1 })).rejects.toMatchObject({ statusCode: 400, code: 'resource_missing' });
    await expect(stripe.subscriptionItems.retrieve(added.id)).rejects.toMatchObject({ statusCode: 404 });
    // Another subscription's item is unaffected.
    expect((await stripe.subscriptionItems.update(subs[0]!.items.data[0]!.id, { quantity: 3 })).quantity).toBe(3);
  });

  it("invoices by subscription among other subscriptions' renewals; checkout sessions by payment intent and subscription", async () => {
    const product = await stripe.products.create({ name: 'Renewing' });
    const monthly = await stripe.prices.create({ product: product.id, unit_amount: 300, currency: 'usd', recurring: { interval: 'month' } });
    const customer = await stripe.customers.create({ name: 'Renews' });
    const subs: Stripe.Subscription[] = [];
    for (let i = 0; i < 4; i++) subs.push(await stripe.subscriptions.create({ customer: customer.id, items: [{ price: monthly.id }], collection_method: 'send_invoice', days_until_due: 30 }));
    // An invoice of the same customer that no subscription made.
    await stripe.invoiceItems.create({ customer: customer.id, amount: 100, currency: 'usd' });
    const manual = await stripe.invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    await twin.advance(32 * 86_400 * 1000);
    await stripe.subscriptions.cancel(subs[3]!.id);
    for (const sub of subs) {
      const invoices = await stripe.invoices.list({ subscription: sub.id, limit: 1 });
      expect(invoices.has_more).toBe(true);
      const all = await idsForward((after) => stripe.invoices.list({ subscription: sub.id, limit: 1, ...(after ? { starting_after: after } : {}) }));
      expect(all).toHaveLength(2);
      for (const id of all) expect((await stripe.invoices.retrieve(id)).parent?.subscription_details?.subscription).toBe(sub.id);
    }
    expect((await stripe.invoices.list({ customer: customer.id, limit: 100 })).data.map((i) => i.id)).toContain(manual.id);

    const price = await stripe.prices.create({ currency: 'usd', unit_amount: 700, product_data: { name: 'Cup' } });
    const sessions: Stripe.Checkout.Session[] = [];
    for (let i = 0; i < 3; i++) {
      const made = await stripe.checkout.sessions.create({ mode: 'payment', line_items: [{ price: price.id, quantity: 1 }], success_url: 'https://shop.example/ok' });
      sessions.push(i === 2 ? made : ((await stripe.rawRequest('POST', `/v1/test_helpers/checkout/sessions/${made.id}/complete`, {})) as unknown as Stripe.Checkout.Session));
    }
    const paid = sessions[1]!;
    expect((await stripe.checkout.sessions.list({ payment_intent: paid.payment_intent as string })).data.map((x) => x.id)).toEqual([paid.id]);
    const joined = await stripe.checkout.sessions.create({ mode: 'subscription', line_items: [{ price: monthly.id, quantity: 1 }], success_url: 'https://shop.example/ok', customer_email: 'joins@example.com' });
    const done = (await stripe.rawRequest('POST', `/v1/test_helpers/checkout/sessions/${joined.id}/complete`, {})) as unknown as Stripe.Checkout.Session;
    expect((await stripe.checkout.sessions.list({ subscription: done.subscription as string })).data.map((x) => x.id)).toEqual([joined.id]);
    expect((await stripe.checkout.sessions.list({ subscription: subs[0]!.id })).data).toEqual([]);
  });

  it("a product with prices is not deleted, one without is; a charge's refunds expand from the index", async () => {
    const [kept, gone] = [await stripe.products.create({ name: 'Kept' }), await stripe.products.create({ name: 'Gone' })];
    await stripe.prices.create({ product: kept.id, unit_amount: 100, currency: 'usd' });
    // Another product's prices, made later, do not hold `gone` back; `kept`'s one price does.
    for (let i = 0; i < 3; i++) await stripe.prices.create({ product: (await stripe.products.create({ name: `P${i}` })).id, unit_amount: 100 + i, currency: 'usd' });
    await expect(stripe.products.del(kept.id)).rejects.toMatchObject({ code: 'product_has_prices', statusCode: 400 });
    expect((await stripe.products.del(gone.id)).deleted).toBe(true);
    expect((await stripe.products.retrieve(kept.id)).id).toBe(kept.id);

    const pay = (amount: number) => stripe.paymentIntents.create({ amount, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } });
    const [first, second] = [await pay(1000), await pay(2000)];
    const refunds = [await stripe.refunds.create({ payment_intent: first.id, amount: 100 }), await stripe.refunds.create({ payment_intent: second.id, amount: 200 }), await stripe.refunds.create({ payment_intent: first.id, amount: 300 })];
    const charge = await stripe.charges.retrieve(first.latest_charge as string, { expand: ['refunds'] });
    expect(charge.refunds?.data.map((r) => r.id)).toEqual([refunds[2]!.id, refunds[0]!.id]);
  });
});

describe('searches an index serves', () => {
  /** Every page of a search, `limit` at a time, following `next_page`. */
  async function searchAll(search: (page?: string) => Promise<Stripe.ApiSearchResult<{ id: string }>>): Promise<string[]> {
    const ids: string[] = [];
    let page: string | undefined;
    for (;;) {
      const r = await search(page);
      ids.push(...r.data.map((o) => o.id));
      if (!r.has_more) return ids;
      expect(r.next_page).toBeTruthy();
      page = r.next_page as string;
    }
  }

  it('customers by a metadata value in any case: newest first, paged, following updates, removals and deletes', async () => {
    const made: Stripe.Customer[] = [];
    for (let i = 0; i < 24; i++) {
      made.push(await stripe.customers.create({ name: `M${i}`, metadata: { team: i % 4 === 0 ? 'Blue' : `red${i}`, n: String(i) } }));
    }
    // The same value under another key, and in another account, stays out.
    await stripe.customers.create({ metadata: { colour: 'blue' } });
    await other.customers.create({ metadata: { team: 'blue' } });
    await stripe.customers.update(made[5]!.id, { metadata: { team: 'BLUE' } });
    await stripe.customers.update(made[8]!.id, { metadata: { team: 'green' } });
    await stripe.customers.update(made[12]!.id, { metadata: { team: '' } });
    await stripe.customers.del(made[16]!.id);
    const blue = [0, 4, 5, 20].map((i) => made[i]!.id).reverse();

    const byTeam = (value: string, limit = 100) => searchAll((page) => stripe.customers.search({ query: `metadata["team"]:"${value}"`, limit, ...(page ? { page } : {}) }));
    expect(await byTeam('blue')).toEqual(blue);
    expect(await byTeam('bLuE', 1)).toEqual(blue);
    expect(await byTeam('green')).toEqual([made[8]!.id]);
    expect(await byTeam('red9')).toEqual([made[9]!.id]);
    expect(await byTeam('nobody')).toEqual([]);
    // The key is matched as written.
    expect((await stripe.customers.search({ query: 'metadata["Team"]:"blue"' })).data).toEqual([]);
    // Other clauses still apply beside the indexed one, and total_count counts the matches.
    const some = await stripe.customers.search({ query: 'metadata["team"]:"blue" AND -name:"M4" AND created>0', limit: 2, expand: ['total_count'] });
    expect(some.data.map((c) => c.id)).toEqual([made[20]!.id, made[5]!.id]);
    expect(some.has_more).toBe(true);
    expect((some as { total_count?: number }).total_count).toBe(3);
    // An OR, and a negated or null clause, read every customer, with the same answers.
    expect((await stripe.customers.search({ query: 'metadata["team"]:"blue" OR metadata["team"]:"green"', limit: 100 })).data.map((c) => c.id)).toEqual([made[20]!.id, made[8]!.id, made[5]!.id, made[4]!.id, made[0]!.id]);
    expect((await stripe.customers.search({ query: 'metadata["team"]:null AND metadata["n"]:"12"' })).data.map((c) => c.id)).toEqual([made[12]!.id]);
  });

  it('a long metadata value with control characters is kept and found: values differing only there share index entries, and each search still finds its own', async () => {
    const long = 'v'.repeat(70);
    const one = await stripe.customers.create({ metadata: { code: `${long}\u0001a` } });
    const two = await stripe.customers.create({ metadata: { code: `${long}\u0002a` } });
    expect((await stripe.customers.retrieve(one.id) as Stripe.Customer).metadata).toEqual({ code: `${long}\u0001a` });
    expect((await stripe.customers.search({ query: `metadata["code"]:"${long}\u0001a"` })).data.map((c) => c.id)).toEqual([one.id]);
    expect((await stripe.customers.search({ query: `metadata["code"]:"${long}\u0002a"` })).data.map((c) => c.id)).toEqual([two.id]);
    await stripe.customers.update(two.id, { metadata: { code: 'short' } });
    expect((await stripe.customers.search({ query: `metadata["code"]:"${long}\u0002a"` })).data).toEqual([]);
  });

  it('customers by email in any case, while the list filter keeps to the exact case', async () => {
    const ada = await stripe.customers.create({ email: 'ada@example.com', name: 'Ada' });
    const shouting = await stripe.customers.create({ email: 'ADA@EXAMPLE.COM', name: 'Ada again' });
    await stripe.customers.create({ email: 'ada@example.co', name: 'Not Ada' });
    await other.customers.create({ email: 'ada@example.com' });
    const moved = await stripe.customers.create({ email: 'soon@example.com' });
    await stripe.customers.update(moved.id, { email: 'Ada@Example.com' });
    expect((await stripe.customers.search({ query: 'email:"Ada@example.COM"' })).data.map((c) => c.id)).toEqual([moved.id, shouting.id, ada.id]);
    expect((await stripe.customers.search({ query: 'email:"ada@example.com" AND name:"ada"' })).data.map((c) => c.id)).toEqual([ada.id]);
    expect((await stripe.customers.search({ query: 'email:"soon@example.com"' })).data).toEqual([]);
    expect((await stripe.customers.list({ email: 'ada@example.com' })).data.map((c) => c.id)).toEqual([ada.id]);
    await stripe.customers.del(shouting.id);
    expect((await stripe.customers.search({ query: 'email:"ada@example.com"' })).data.map((c) => c.id)).toEqual([moved.id, ada.id]);
  });

  it('payment intents and their charges, prices and products by metadata; a value too long for the index still found', async () => {
    const [pi1, pi2] = [
      await stripe.paymentIntents.create({ amount: 500, currency: 'usd', metadata: { order_id: 'ord_1' }, payment_method: 'pm_card_visa', confirm: true, automatic_payment_methods: { enabled: true, allow_redirects: 'never' } }),
      await stripe.paymentIntents.create({ amount: 700, currency: 'usd', metadata: { order_id: 'ord_2' } }),
    ];
    expect((await stripe.paymentIntents.search({ query: "metadata['order_id']:'ord_1'" })).data.map((p) => p.id)).toEqual([pi1.id]);
    await stripe.paymentIntents.update(pi2.id, { metadata: { order_id: 'ord_1' } });
    expect((await stripe.paymentIntents.search({ query: "metadata['order_id']:'ORD_1' AND amount>600" })).data.map((p) => p.id)).toEqual([pi2.id]);
    const charge = pi1.latest_charge as string;
    expect((await stripe.charges.search({ query: "metadata['order_id']:'ord_1'" })).data.map((ch) => ch.id)).toEqual([charge]);

    const product = await stripe.products.create({ name: 'Kit', metadata: { sku: 'SKU-1' } });
    const price = await stripe.prices.create({ product: product.id, currency: 'usd', unit_amount: 100, metadata: { sku: 'SKU-1' } });
    expect((await stripe.products.search({ query: 'metadata["sku"]:"sku-1"' })).data.map((p) => p.id)).toEqual([product.id]);
    expect((await stripe.prices.search({ query: 'metadata["sku"]:"sku-1"' })).data.map((p) => p.id)).toEqual([price.id]);

    const long = 'x'.repeat(400);
    const wide = await stripe.customers.create({ metadata: { note: long } });
    expect((await stripe.customers.search({ query: `metadata["note"]:"${long.toUpperCase()}"` })).data.map((c) => c.id)).toEqual([wide.id]);
  });
});
