import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness } from '../../../sdk/twin/testing.js';

/**
 * Which endpoints an event goes to, as the deliveries the twin hands the world on the entry
 * (the world sends them; webhook_delivery.test.ts receives them over HTTP). Endpoints
 * come and go: each event reaches exactly the endpoints the account has enabled at that moment.
 */
describe('webhook deliveries follow the endpoints an account has', () => {
  it('delivers to each endpoint, then only to those left after deletes, and to none once all are gone', async () => {
    const { source } = await buildTwin('twins/stripe/twin/index.ts');
    const h = createGuestHarness(source, { world: 'hooks', now: '2026-03-01T00:00:00.000Z' });
    const as = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });
    const mine = as('sk_test_hooksAccount0001');
    const other = as('sk_test_hooksAccount0002');
    const create = (opts: { headers: Record<string, string> }) => {
      const r = h.request('POST', '/v1/customers', { ...opts, body: 'name=Hooked' });
      expect(r.status).toBe(200);
      const deliveries = r.events.filter((e) => e.type === 'webhook.delivery').map((e) => (e.data as { url: string }).url).sort();
      // The entry names the event; the event says how many endpoints it went to.
      const named = r.events.find((e) => e.type === 'customer.created')?.data as { id: string };
      const created = h.request('GET', `/v1/events/${named.id}`, opts).body as { pending_webhooks: number };
      expect(created.pending_webhooks).toBe(deliveries.length);
      return deliveries;
    };
    const endpoint = (url: string, events: string[]) => {
      const body = `url=${encodeURIComponent(url)}&${events.map((e) => `enabled_events[]=${encodeURIComponent(e)}`).join('&')}`;
      const r = h.request('POST', '/v1/webhook_endpoints', { ...mine, body });
      expect(r.status).toBe(200);
      return (r.body as { id: string }).id;
    };

    expect(create(mine)).toEqual([]);
    const a = endpoint('https://example.com/a', ['customer.created']);
    const b = endpoint('https://example.com/b', ['*']);
    endpoint('https://example.com/c', ['customer.deleted']);
    expect(create(mine)).toEqual(['https://example.com/a', 'https://example.com/b']);
    // Another account's events go to its own endpoints: it has none.
    expect(create(other)).toEqual([]);

    const disabled = h.request('POST', `/v1/webhook_endpoints/${b}`, { ...mine, body: 'disabled=true' });
    expect((disabled.body as { status: string }).status).toBe('disabled');
    expect(create(mine)).toEqual(['https://example.com/a']);
    h.request('POST', `/v1/webhook_endpoints/${b}`, { ...mine, body: 'disabled=false' });

    expect(h.request('DELETE', `/v1/webhook_endpoints/${a}`, mine).status).toBe(200);
    expect(create(mine)).toEqual(['https://example.com/b']);
    // Deleting twice is a 404 and changes nothing.
    expect(h.request('DELETE', `/v1/webhook_endpoints/${a}`, mine).status).toBe(404);
    expect(create(mine)).toEqual(['https://example.com/b']);

    for (const ep of (h.request('GET', '/v1/webhook_endpoints', mine).body as { data: { id: string }[] }).data) {
      expect(h.request('DELETE', `/v1/webhook_endpoints/${ep.id}`, mine).status).toBe(200);
    }
    expect(create(mine)).toEqual([]);
    endpoint('https://example.com/again', ['customer.created']);
    expect(create(mine)).toEqual(['https://example.com/again']);
  });
});
