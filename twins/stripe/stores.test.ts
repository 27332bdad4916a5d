import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../sdk/twin/build.js';
import { createGuestHarness } from '../../sdk/twin/testing.js';

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
