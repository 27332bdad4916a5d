import { describe, expect, it } from 'vitest';
import { deliveriesIn, scanDeliveries, type TimelineItem, type TimelinePage } from './deliveries.js';

/** A timeline item as the world answers it for a Stripe entry that made an event and sent it to endpoints. */
function item(position: number, eventId: string, type: string, endpoints: string[]): TimelineItem {
  const body = JSON.stringify({ id: eventId, object: 'event', type });
  return {
    twin: 'stripe',
    position,
    entry: {
      occurredAt: `2026-05-01T09:00:${String(position).padStart(2, '0')}.000Z`,
      events: [
        { type, data: { id: eventId, type, account: 'acct_x' } },
        ...endpoints.map((we) => ({ type: 'webhook.delivery', data: { id: `${eventId}:${we}`, url: `https://example.com/${we}`, headers: {}, body, sign: { scheme: 'stripe', secret: '[redacted]' } } })),
      ],
    },
  };
}

describe("an endpoint's deliveries from the world's timeline", () => {
  it('reads the deliveries to one endpoint from an entry, with the event they carry', () => {
    const it1 = item(7, 'evt_1', 'customer.created', ['we_a', 'we_b']);
    expect(deliveriesIn(it1, 'we_b')).toEqual([{ id: 'evt_1:we_b', eventId: 'evt_1', eventType: 'customer.created', url: 'https://example.com/we_b', at: '2026-05-01T09:00:07.000Z', position: 7 }]);
    expect(deliveriesIn(it1, 'we_c')).toEqual([]);
    // An endpoint id that ends another's does not match it.
    expect(deliveriesIn(item(1, 'evt_2', 'x.y', ['we_aa']), 'we_a')).toEqual([]);
    expect(deliveriesIn({ twin: 'stripe', position: 1, entry: { occurredAt: 'x', events: [{ type: 'webhook.delivery', data: null }] } }, 'we_a')).toEqual([]);
  });

  it('reads pages until it has enough, and says where to go on from', async () => {
    // 10 entries, newest first; every other one delivered to we_a; pages of 3.
    const all = Array.from({ length: 10 }, (_, i) => item(10 - i, `evt_${10 - i}`, 'customer.created', (10 - i) % 2 === 0 ? ['we_a'] : ['we_b']));
    const asked: (string | null)[] = [];
    const fetchPage = async (before: string | null): Promise<TimelinePage> => {
      asked.push(before);
      const from = before === null ? 0 : Number(before);
      const next = from + 3 < all.length ? String(from + 3) : null;
      return { entries: all.slice(from, from + 3), next };
    };
    const first = await scanDeliveries(fetchPage, 'we_a', null, { want: 2, maxPages: 4 });
    expect(first.deliveries.map((d) => d.eventId)).toEqual(['evt_10', 'evt_8']);
    // Both were in the first page: no second page was read.
    expect(first.next).toBe('3');
    expect(first.scanned).toBe(3);
    const rest = await scanDeliveries(fetchPage, 'we_a', first.next, { want: 20, maxPages: 4 });
    expect(rest.deliveries.map((d) => d.eventId)).toEqual(['evt_6', 'evt_4', 'evt_2']);
    expect(rest.next).toBeNull();
    expect(asked).toEqual([null, '3', '6', '9']);
    // A bound on pages: a busy world is never read whole in one go.
    const bounded = await scanDeliveries(fetchPage, 'we_none', null, { want: 5, maxPages: 2 });
    expect(bounded).toEqual({ deliveries: [], next: '6', scanned: 6 });
  });
});
