import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness } from '../../../sdk/twin/testing.js';

/** `GET /twin/store/accounts`: each account's object counts, whether one account holds a type or several share it. */
describe('the accounts store', () => {
  it('counts each account\'s objects by type', async () => {
    const { source } = await buildTwin('twins/stripe/twin/index.ts');
    const h = createGuestHarness(source, { world: 'stores', now: '2026-03-01T00:00:00.000Z' });
    const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
    const a = as('sk_test_storesAccountA00001'), b = as('sk_test_storesAccountB00001');
    for (let i = 0; i < 3; i++) h.request('POST', '/v1/customers', { ...a, body: `name=a${i}` });
    h.request('POST', '/v1/customers', { ...b, body: 'name=b0' });
    // Products in account A only: one account holds the whole type.
    for (let i = 0; i < 2; i++) h.request('POST', '/v1/products', { ...a, body: `name=p${i}` });
    const answer = h.store('accounts').body as { accounts: { id: string; counts: Record<string, number> }[] };
    const counts = answer.accounts.map((x) => x.counts).sort((x, y) => (x.customer ?? 0) - (y.customer ?? 0));
    expect(counts).toEqual([
      { customer: 1, event: 1 },
      { customer: 3, event: 5, product: 2 },
    ]);
  });
});

/** `GET /twin/store/account_list` and what the world's own requests may name with `Stripe-Account`: the mirror's account switcher. */
describe('the account list, and the world reading any of its accounts', () => {
  const world = { headers: { 'x-kit-auth': 'authorization' } };
  const setup = async () => {
    const { source } = await buildTwin('twins/stripe/twin/index.ts');
    const h = createGuestHarness(source, { world: 'stores', now: '2026-03-01T00:00:00.000Z' });
    const made = (key: string, name: string) => {
      const res = h.request('POST', '/v1/customers', { headers: { authorization: `Bearer ${key}` }, body: `name=${name}` });
      return res.body as { id: string };
    };
    return { h, made };
  };

  it('lists the default account first, then every account with a record, paged', async () => {
    const { h, made } = await setup();
    made('sk_test_listAccountA000001', 'a');
    made('sk_test_listAccountB000001', 'b');
    h.request('POST', '/v1/customers', { ...world, body: 'name=own' });
    const accountOf = (key: string) => (h.request('GET', '/v1/account', { headers: { authorization: `Bearer ${key}` } }).body as { id: string }).id;
    const own = (h.request('GET', '/v1/account', world).body as { id: string }).id;
    const [a, b] = [accountOf('sk_test_listAccountA000001'), accountOf('sk_test_listAccountB000001')];
    const all = h.store('account_list').body as { default: string; data: string[]; has_more: boolean };
    expect(all.default).toBe(own);
    expect(all.data[0]).toBe(own);
    expect([...all.data].sort()).toEqual([own, a, b].sort());
    expect(all.has_more).toBe(false);
    const first = h.store('account_list', { limit: '1' }).body as { data: string[]; has_more: boolean };
    expect(first.has_more).toBe(true);
    const rest = h.store('account_list', { after: [a, b].sort()[0] as string }).body as { data: string[] };
    expect(rest.data).toEqual([[a, b].sort()[1]]);
  });

  it('reads another account with Stripe-Account only for the world itself, and only an account the world holds', async () => {
    const { h, made } = await setup();
    const customer = made('sk_test_readAccountA000001', 'someone');
    const acct = (h.request('GET', '/v1/account', { headers: { authorization: 'Bearer sk_test_readAccountA000001' } }).body as { id: string }).id;
    const asWorld = h.request('GET', `/v1/customers/${customer.id}`, { headers: { ...world.headers, 'stripe-account': acct } });
    expect(asWorld.status).toBe(200);
    expect((asWorld.body as { name: string }).name).toBe('someone');
    // The default account does not hold it.
    expect(h.request('GET', `/v1/customers/${customer.id}`, world).status).toBe(404);
    // Another key may not name it, as Stripe refuses an account a key cannot reach.
    const other = h.request('GET', '/v1/customers', { headers: { authorization: 'Bearer sk_test_readAccountB000001', 'stripe-account': acct } });
    expect(other.status).toBe(403);
    // An account the world does not hold is refused to the world too.
    const unknown = h.request('GET', '/v1/customers', { headers: { ...world.headers, 'stripe-account': 'acct_0000000000000000' } });
    expect(unknown.status).toBe(403);
    expect((unknown.body as { error: { code: string } }).error.code).toBe('account_invalid');
  });
});
