/**
 * Lists newest first, through the official `stripe` package, for the objects a payment flow
 * makes: in a new account their ids begin with the creation sequence (as customers' and
 * events' do) and lists read the records themselves, with no `ix.` copy per object. The ids
 * keep Stripe's prefixes and lengths; every object a flow makes indirectly (charges, balance
 * transactions, invoices) lists in order too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { idsBackward, idsForward, startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;
let stripe: Stripe;

beforeAll(async () => {
  twin = await startStripeTwin();
  stripe = twin.client('sk_test_creationOrderAccount01');
});
afterAll(async () => {
  await twin.close();
});

describe('objects of a payment flow list in creation order', () => {
  it('payment intents, charges, refunds, balance transactions, payment methods, setup intents, prices, subscriptions, invoices, invoice items and checkout sessions', async () => {
    const made: Record<string, string[]> = {
      pi: [], re: [], pm: [], seti: [], price: [], sub: [], ii: [], cs: [],
    };
    const product = await stripe.products.create({ name: 'Plan' });
    for (let round = 0; round < 4; round++) {
      const customer = await stripe.customers.create({ email: `order${round}@example.com` });
      const pm = await stripe.paymentMethods.attach('pm_card_visa', { customer: customer.id });
      made.pm!.push(pm.id);
      await stripe.customers.update(customer.id, { invoice_settings: { default_payment_method: pm.id } });
      for (let k = 0; k < 2; k++) {
        const pi = await stripe.paymentIntents.create({
          amount: 1000 + round * 10 + k, currency: 'usd', customer: customer.id, payment_method: pm.id, confirm: true,
          automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
        });
        expect(pi.status).toBe('succeeded');
        made.pi!.push(pi.id);
      }
      made.re!.push((await stripe.refunds.create({ payment_intent: made.pi!.at(-1)!, amount: 100 })).id);
      made.seti!.push((await stripe.setupIntents.create({ customer: customer.id })).id);
      const price = await stripe.prices.create({ product: product.id, unit_amount: 500 + round, currency: 'usd', recurring: { interval: 'month' } });
      made.price!.push(price.id);
      made.sub!.push((await stripe.subscriptions.create({ customer: customer.id, items: [{ price: price.id }] })).id);
      made.ii!.push((await stripe.invoiceItems.create({ customer: customer.id, amount: 250, currency: 'usd' })).id);
      made.cs!.push((await stripe.checkout.sessions.create({
        mode: 'payment', success_url: 'https://example.com/ok',
        line_items: [{ price_data: { currency: 'usd', unit_amount: 700, product_data: { name: 'T' } }, quantity: 1 }],
      })).id);
    }

    // Stripe's prefixes and lengths.
    const shapes: [string[], RegExp][] = [
      [made.pi!, /^pi_[0-9A-Za-z]{24}$/], [made.re!, /^re_[0-9A-Za-z]{24}$/], [made.pm!, /^pm_[0-9A-Za-z]{24}$/],
      [made.seti!, /^seti_[0-9A-Za-z]{24}$/], [made.price!, /^price_[0-9A-Za-z]{24}$/], [made.sub!, /^sub_[0-9A-Za-z]{24}$/],
      [made.ii!, /^ii_[0-9A-Za-z]{24}$/], [made.cs!, /^cs_test_[0-9A-Za-z]{58}$/],
    ];
    for (const [ids, shape] of shapes) for (const id of ids) expect(id).toMatch(shape);

    const newestFirst = (ids: string[]): string[] => [...ids].reverse();
    const lists: [string, (after?: string) => Promise<Stripe.ApiList<{ id: string }>>, (before: string) => Promise<Stripe.ApiList<{ id: string }>>, string[] | undefined][] = [
      ['payment intents', (a) => stripe.paymentIntents.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.paymentIntents.list({ limit: 3, ending_before: b }), undefined],
      ['charges', (a) => stripe.charges.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.charges.list({ limit: 3, ending_before: b }), undefined],
      ['refunds', (a) => stripe.refunds.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.refunds.list({ limit: 3, ending_before: b }), newestFirst(made.re!)],
      ['balance transactions', (a) => stripe.balanceTransactions.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.balanceTransactions.list({ limit: 3, ending_before: b }), undefined],
      ['setup intents', (a) => stripe.setupIntents.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.setupIntents.list({ limit: 3, ending_before: b }), newestFirst(made.seti!)],
      ['prices', (a) => stripe.prices.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.prices.list({ limit: 3, ending_before: b }), undefined],
      ['subscriptions', (a) => stripe.subscriptions.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.subscriptions.list({ limit: 3, ending_before: b }), newestFirst(made.sub!)],
      ['invoices', (a) => stripe.invoices.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.invoices.list({ limit: 3, ending_before: b }), undefined],
      ['invoice items', (a) => stripe.invoiceItems.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.invoiceItems.list({ limit: 3, ending_before: b }), undefined],
      ['checkout sessions', (a) => stripe.checkout.sessions.list({ limit: 3, ...(a ? { starting_after: a } : {}) }), (b) => stripe.checkout.sessions.list({ limit: 3, ending_before: b }), newestFirst(made.cs!)],
    ];
    for (const [name, after, before, expected] of lists) {
      const ids = await idsForward(after);
      expect(ids.length, name).toBeGreaterThanOrEqual(4);
      if (expected !== undefined) expect(ids, name).toEqual(expected);
      expect(await idsBackward(ids.at(-1)!, before), name).toEqual(ids);
    }

    // Payment intents: the ones made here, newest first (subscriptions' invoices made others in between).
    const intents = await idsForward((a) => stripe.paymentIntents.list({ limit: 3, ...(a ? { starting_after: a } : {}) }));
    expect(intents.filter((id) => made.pi!.includes(id))).toEqual(newestFirst(made.pi!));
    // Each intent's charge lists in the intents' order; each refund's balance transaction after its charge's.
    const charges = await idsForward((a) => stripe.charges.list({ limit: 4, ...(a ? { starting_after: a } : {}) }));
    const chargeOf = new Map((await Promise.all(charges.map((id) => stripe.charges.retrieve(id)))).map((ch) => [ch.payment_intent as string, ch.id]));
    expect(intents.map((pi) => chargeOf.get(pi)).filter((x) => x !== undefined)).toEqual(charges);
    // Prices: the ones made here, newest first (each checkout session's price_data made one in between).
    const prices = await idsForward((a) => stripe.prices.list({ limit: 3, ...(a ? { starting_after: a } : {}) }));
    expect(prices.filter((id) => made.price!.includes(id))).toEqual(newestFirst(made.price!));
    // Invoice items: the standalone ones made here, newest first.
    const items = await idsForward((a) => stripe.invoiceItems.list({ limit: 3, ...(a ? { starting_after: a } : {}) }));
    expect(items.filter((id) => made.ii!.includes(id))).toEqual(newestFirst(made.ii!));
    // Payment methods, per customer list: one each; all of them through the customers, newest customer first.
    const customers = await idsForward((a) => stripe.customers.list({ limit: 10, ...(a ? { starting_after: a } : {}) }));
    const pms = (await Promise.all(customers.map((id) => stripe.customers.listPaymentMethods(id)))).flatMap((l) => l.data.map((m) => m.id));
    expect(pms).toEqual(newestFirst(made.pm!));

    // No list-order copies were written for these types.
    const account = await stripe.accounts.retrieveCurrent();
    for (const type of ['payment_intent', 'charge', 'refund', 'balance_transaction', 'payment_method', 'setup_intent', 'price', 'subscription', 'invoice', 'invoiceitem', 'checkout.session']) {
      expect(await twin.recordCount(`ix.${type}.${account.id}`), type).toBe(0);
    }
    // Products (whose ids an app may choose) keep theirs.
    expect(await twin.recordCount(`ix.product.${account.id}`)).toBe((await stripe.products.list({ limit: 100 })).data.length);
  });
});
