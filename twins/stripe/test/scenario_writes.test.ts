/**
 * Issue 30, item 4: a scenario left the Stripe twin broken for good. A `js` handler that wrote
 * the account record as a string and a customer as `{ garbage: true }` made every later
 * customer create answer an id of `undefined`s (`cus_undefinedundefined…X4Q9d9tj`) and a
 * retrieve answer `200 null`, still after the scenario was deleted. Now a scenario writes only
 * records of its own (`scenario.*`), and the twin answers a malformed record it finds with a
 * 500 naming it, never with a malformed object or id. Driven through the official `stripe`
 * package against the world server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { accountForKey } from '../twin/lib/auth.js';
import { startStripeTwin, type StripeTwin } from './harness.js';

let twin: StripeTwin;

beforeAll(async () => {
  twin = await startStripeTwin();
});
afterAll(async () => {
  await twin.close();
});

/**
 * The guest harness has no world (no scenarios); the local one runs it in a worker thread (no
 * direct writes); the edge brings records in as an import does (export, an entry added, import).
 */
const harness = process.env.STRIPE_TWIN_HARNESS;

/** A customer id as the twin makes them: `cus_` and 14 base-62 characters. */
const CUSTOMER_ID = /^cus_[0-9A-Za-z]{14}$/;

function worldApi(): NonNullable<StripeTwin['worldApi']> {
  if (twin.worldApi === null) throw new Error('these tests need a world (not STRIPE_TWIN_HARNESS=guest)');
  return twin.worldApi;
}

async function head(): Promise<number> {
  const map = (await worldApi()('GET', '/map')).json as { twins: { twin: string; position: number }[] };
  return map.twins.find((t) => t.twin === 'stripe')?.position ?? -1;
}

async function putScenario(doc: unknown): Promise<void> {
  const res = await worldApi()('PUT', '/twins/stripe/scenario', doc);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
}

async function failure(p: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(Stripe.errors.StripeError);
  return e as Stripe.errors.StripeError;
}

/** An SDK answer as the data it holds (without `lastResponse`). */
const plain = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

/** A customer that is well-formed, and the one the twin answered when it was made. */
async function expectWellFormed(stripe: Stripe, made: Stripe.Customer): Promise<void> {
  expect(made.id).toMatch(CUSTOMER_ID);
  expect(made.object).toBe('customer');
  expect(plain(await stripe.customers.retrieve(made.id))).toEqual(plain(made));
}

describe.skipIf(harness === 'guest')("a scenario js handler that writes the twin's records", () => {
  it('is refused with a vendor-shaped 500 naming the handler and the record, keeps nothing, and later customers are well-formed, also after the scenario is deleted', async () => {
    const key = 'sk_test_scenarioWritesWreck00001';
    const stripe = twin.client(key);
    const acct = accountForKey(key);
    const first = await stripe.customers.create({ email: 'first@example.com' });
    // The issue's scenario: the account record as a string, a customer as garbage.
    await putScenario({
      handlers: [{
        name: 'wreck',
        match: 'POST /v1/wreck',
        js: `ctx.tree.put('account', ${JSON.stringify(acct)}, 'not an object');
             ctx.tree.put('customer', ${JSON.stringify(`${acct}/${first.id}`)}, { garbage: true });
             return { status: 200, body: { wrecked: true } };`,
      }],
    });
    const before = await head();
    const e = await failure(stripe.rawRequest('POST', '/v1/wreck', {}));
    expect(e).toBeInstanceOf(Stripe.errors.StripeAPIError);
    expect([e.statusCode, e.rawType, e.code]).toEqual([500, 'api_error', 'handler_error']);
    expect(e.message).toContain('Scenario handler "wreck"');
    expect(e.message).toContain(`(type "account", id "${acct}")`);
    expect(e.message).toContain('through its vendor API');
    expect(await head()).toBe(before);

    await expectWellFormed(stripe, await stripe.customers.create({ email: 'second@example.com' }));
    expect(plain(await stripe.customers.retrieve(first.id))).toEqual(plain(first));

    expect((await worldApi()('DELETE', '/twins/stripe/scenario')).status).toBe(204);
    const third = await stripe.customers.create({ email: 'third@example.com' });
    await expectWellFormed(stripe, third);
    const listed = await stripe.customers.list({ limit: 10 });
    expect(listed.data.map((c) => c.id)).toEqual([third.id, expect.stringMatching(CUSTOMER_ID), first.id]);
    for (const c of listed.data) expect(c.object).toBe('customer');
  });

  it('is refused when it passes the request on to the twin too (nothing of it reaches the twin)', async () => {
    const key = 'sk_test_scenarioWritesPass000001';
    const stripe = twin.client(key);
    const acct = accountForKey(key);
    await putScenario({
      handlers: [{ name: 'sneak', match: 'POST /v1/customers', times: 1, js: `ctx.tree.put('account', ${JSON.stringify(acct)}, { n: 'x', hooks: 0 });` }],
    });
    const before = await head();
    const e = await failure(stripe.customers.create({ email: 'a@example.com' }));
    expect([e.statusCode, e.rawType, e.code]).toEqual([500, 'api_error', 'handler_error']);
    expect(e.message).toContain('Scenario handler "sneak"');
    expect(await head()).toBe(before);
    // `times: 1` is used up: the twin answers.
    await expectWellFormed(stripe, await stripe.customers.create({ email: 'a@example.com' }));
    expect((await worldApi()('DELETE', '/twins/stripe/scenario')).status).toBe(204);
  });

  it('is refused when it emits an event: webhooks and events are the twin\'s', async () => {
    await putScenario({
      handlers: [{ name: 'forge', match: 'POST /v1/forge', js: "ctx.emit('customer.created', { id: 'cus_forged' }); return { status: 200, body: {} };" }],
    });
    const before = await head();
    const e = await failure(twin.stripe.rawRequest('POST', '/v1/forge', {}));
    expect([e.statusCode, e.rawType, e.code]).toEqual([500, 'api_error', 'handler_error']);
    expect(e.message).toContain('emitted the event "customer.created"');
    expect(await head()).toBe(before);
    expect((await worldApi()('DELETE', '/twins/stripe/scenario')).status).toBe(204);
  });

  it('keeps records of its own under scenario.* types, which it reads back on a later call', async () => {
    await putScenario({
      handlers: [{
        name: 'count',
        match: 'POST /v1/counted',
        js: "const n = (ctx.tree.get('scenario.calls', 'n')?.n ?? 0) + 1; ctx.tree.put('scenario.calls', 'n', { n }); return { status: 200, body: { object: 'count', n } };",
      }],
    });
    expect(await twin.stripe.rawRequest('POST', '/v1/counted', {})).toMatchObject({ n: 1 });
    expect(await twin.stripe.rawRequest('POST', '/v1/counted', {})).toMatchObject({ n: 2 });
    expect((await worldApi()('DELETE', '/twins/stripe/scenario')).status).toBe(204);
    // The twin's own answers are untouched by them.
    await expectWellFormed(twin.stripe, await twin.stripe.customers.create({ email: 'counted@example.com' }));
  });
});

describe.skipIf(harness === 'guest' || harness === 'local')('a malformed record already in the tree (brought in from elsewhere)', () => {
  function writeRecords(): NonNullable<StripeTwin['writeRecords']> {
    if (twin.writeRecords === null) throw new Error('these tests need records written into the world (the default harness or the edge)');
    return twin.writeRecords;
  }

  it('answers a create in an account whose record is malformed with a 500 naming it, never an id made of undefined', async () => {
    const key = 'sk_test_malformedAccount00000001';
    const stripe = twin.client(key);
    const acct = accountForKey(key);
    await stripe.customers.create({ email: 'before@example.com' });
    for (const bad of ['not an object', { garbage: true }, { n: 'x', hooks: 0 }, { n: 5 }]) {
      await writeRecords()([{ type: 'account', id: acct, value: bad }]);
      const e = await failure(stripe.customers.create({ email: 'after@example.com' }));
      expect(e).toBeInstanceOf(Stripe.errors.StripeAPIError);
      expect([e.statusCode, e.rawType]).toEqual([500, 'api_error']);
      expect(e.message).toContain(`record of type 'account' and id '${acct}' is malformed`);
    }
    // The account record put back as the twin writes it: creates work again.
    await writeRecords()([{ type: 'account', id: acct, value: { n: 0, hooks: 0, ix: 3, k: 1, bal: 1, ev: 1 } }]);
    await expectWellFormed(stripe, await stripe.customers.create({ email: 'again@example.com' }));
  });

  it('answers a retrieve, an update and a list of a malformed customer with a 500 naming it, never 200 null', async () => {
    const key = 'sk_test_malformedCustomer0000001';
    const stripe = twin.client(key);
    const acct = accountForKey(key);
    const made: Stripe.Customer[] = [];
    for (let i = 0; i < 4; i++) made.push(await stripe.customers.create({ email: `c${i}@example.com` }));
    const bad: [Stripe.Customer, unknown][] = [
      [made[0]!, { garbage: true }],
      [made[1]!, 'not an object'],
      [made[2]!, { s: 1, o: null }],
      [made[3]!, { s: 1, o: { id: 'cus_someoneElse0000', object: 'customer' } }],
    ];
    await writeRecords()(bad.map(([c, value]) => ({ type: 'customer', id: `${acct}/${c.id}`, value })));
    for (const [c] of bad) {
      for (const call of [stripe.customers.retrieve(c.id), stripe.customers.update(c.id, { name: 'x' })]) {
        const e = await failure(call);
        expect([e.statusCode, e.rawType]).toEqual([500, 'api_error']);
        expect(e.message).toContain(`record of type 'customer' and id '${acct}/${c.id}' is malformed`);
      }
    }
    const e = await failure(stripe.customers.list());
    expect([e.statusCode, e.rawType]).toEqual([500, 'api_error']);
    expect(e.message).toContain("record of type 'customer'");
    // Another account is not affected.
    await expectWellFormed(twin.stripe, await twin.stripe.customers.create({ email: 'elsewhere@example.com' }));
  });
});
