import { describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness } from '../../../sdk/twin/testing.js';

/**
 * Customers and events are listed newest first straight from their records (their ids carry
 * the creation order). These walk the lists as an app would, with deleted customers in the
 * way and with a host that answers small pages, and compare against the order of creation.
 */
describe('customer and event lists', () => {
  for (const listCap of [undefined, 3]) {
    it(`pages newest first, skipping deleted customers, across host pages (host page cap: ${listCap ?? 'none'})`, async () => {
      const { source } = await buildTwin('twins/stripe/twin/index.ts');
      const h = createGuestHarness(source, { world: 'lists', now: '2026-03-01T00:00:00.000Z', ...(listCap === undefined ? {} : { listCap }) });
      const mine = { headers: { authorization: 'Bearer sk_test_listsAccount0001' } };
      const other = { headers: { authorization: 'Bearer sk_test_listsAccount0002' } };
      const get = (path: string, opts = mine) => {
        const r = h.request('GET', path, opts);
        expect(r.status).toBe(200);
        return r.body as { data: { id: string; name?: string; type?: string }[]; has_more: boolean };
      };
      /** Every id of a list, walked forward with starting_after, `limit` at a time. */
      const walkForward = (path: string, limit: number): string[] => {
        const ids: string[] = [];
        let page = get(`${path}?limit=${limit}`);
        for (;;) {
          ids.push(...page.data.map((item) => item.id));
          if (!page.has_more) return ids;
          page = get(`${path}?limit=${limit}&starting_after=${ids[ids.length - 1]}`);
        }
      };
      const made: string[] = [];
      for (let i = 0; i < 14; i++) {
        const r = h.request('POST', '/v1/customers', { ...mine, body: `name=C${i}` });
        made.push((r.body as { id: string }).id);
        h.request('POST', '/v1/customers', { ...other, body: `name=Other${i}` });
        if (i % 4 === 0) h.advance(1000);
      }
      // Delete a run of customers that spans a host page, and the newest one.
      for (const i of [13, 9, 8, 7, 6, 2]) expect(h.request('DELETE', `/v1/customers/${made[i]}`, mine).status).toBe(200);
      const live = made.filter((_, i) => ![13, 9, 8, 7, 6, 2].includes(i)).reverse();

      expect(get('/v1/customers?limit=100').data.map((c) => c.id)).toEqual(live);
      // Forward with starting_after, a page of 3 at a time.
      expect(walkForward('/v1/customers', 3)).toEqual(live);
      // Backward with ending_before, from the oldest (made[0]) up to the newest.
      expect(get(`/v1/customers?limit=3&ending_before=${made[12]}`)).toMatchObject({ data: [], has_more: false });
      let cursor = made[0] as string;
      const backward: string[] = [cursor];
      for (;;) {
        const page = get(`/v1/customers?limit=3&ending_before=${cursor}`);
        backward.unshift(...page.data.map((c) => c.id));
        if (!page.has_more) break;
        cursor = page.data[0]!.id;
      }
      expect(backward).toEqual(live);
      // A deleted customer as the cursor still places the page.
      expect(get(`/v1/customers?limit=2&starting_after=${made[8]}`).data.map((c) => c.id)).toEqual([made[5], made[4]]);
      // The newest page is full and says more follow, though the newest customer was deleted.
      const first = get('/v1/customers?limit=2');
      expect(first.data.map((c) => c.id)).toEqual([made[12], made[11]]);
      expect(first.has_more).toBe(true);
      // The last page says nothing follows.
      expect(get(`/v1/customers?limit=5&starting_after=${made[3]}`)).toMatchObject({ has_more: false });

      // Events: every create and delete, newest first, this account's only.
      const events = get('/v1/events?limit=100').data;
      expect(events.map((e) => e.type)).toEqual([...Array(6).fill('customer.deleted'), ...Array(14).fill('customer.created')]);
      expect(walkForward('/v1/events', 7)).toEqual(events.map((e) => e.id));
      expect(get('/v1/events?limit=100&type=customer.deleted').data).toHaveLength(6);
    });
  }
});
