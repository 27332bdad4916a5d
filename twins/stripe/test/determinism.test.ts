import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness } from '../../../sdk/twin/testing.js';

/** The same requests in two fresh worlds of the same name answer the same bytes: ids and times come from the world. */
describe('determinism', () => {
  it('answers identically in two fresh worlds, and differently in another world', async () => {
    const { source } = await buildTwin('twins/stripe/twin/index.ts');
    const headers = { authorization: 'Bearer sk_test_determinism0001' };
    const script = (world: string): unknown[] => {
      const h = createGuestHarness(source, { world, now: '2026-03-01T00:00:00.000Z' });
      const out: unknown[] = [];
      const cus = h.request('POST', '/v1/customers', { body: 'email=d%40example.com&metadata[a]=1', headers });
      out.push(cus.body);
      const id = (cus.body as { id: string }).id;
      out.push(h.request('POST', '/v1/payment_intents', { body: `amount=1500&currency=usd&customer=${id}&payment_method=pm_card_visa&confirm=true&allowed_payment_method_types[0]=card`, headers }).body);
      h.advance(3 * 86_400_000);
      out.push(h.request('GET', '/v1/balance', { headers }).body);
      out.push(h.request('GET', '/v1/events?limit=100', { headers }).body);
      return out;
    };
    const a = script('world-a');
    expect(script('world-a')).toEqual(a);
    const other = script('world-b');
    expect((other[0] as { id: string }).id).not.toBe((a[0] as { id: string }).id);
    expect((a[1] as { status: string }).status).toBe('succeeded');
  });
});
