/**
 * A webhook endpoint's deliveries, found where the twin records them: each event an enabled
 * endpoint takes becomes a `webhook.delivery` on the log entry that made the event (data
 * `{ id: '<evt id>:<we id>', url, body }`, twin/lib/events.ts), which the world sends once the
 * entry is durable. The twin keeps no record of its own per delivery and none of the
 * receiver's answers, so the mirror reads the world's timeline of the twin, newest first, a
 * few pages at a time. No DOM here (deliveries.test.ts).
 */

/** A timeline item as the world API answers it (`GET {world_api}/timeline`). */
export interface TimelineItem {
  twin: string;
  position: number;
  entry: { occurredAt: string; events?: { type: string; data: unknown }[] };
}

export interface TimelinePage {
  entries: TimelineItem[];
  next: string | null;
}

export interface Delivery {
  /** `<evt id>:<we id>`, the twin's id of the delivery. */
  id: string;
  eventId: string;
  /** The event's type, read from the body the world sends. */
  eventType: string | null;
  url: string;
  /** When the entry that asked for it was made (ISO). */
  at: string;
  position: number;
}

/** The deliveries to `endpointId` an item's entry asks for. */
export function deliveriesIn(item: TimelineItem, endpointId: string): Delivery[] {
  const out: Delivery[] = [];
  for (const event of item.entry.events ?? []) {
    if (event.type !== 'webhook.delivery' || typeof event.data !== 'object' || event.data === null) continue;
    const d = event.data as { id?: unknown; url?: unknown; body?: unknown };
    if (typeof d.id !== 'string' || !d.id.endsWith(`:${endpointId}`)) continue;
    const eventId = d.id.slice(0, d.id.length - endpointId.length - 1);
    out.push({ id: d.id, eventId, eventType: typeOfBody(d.body), url: typeof d.url === 'string' ? d.url : '', at: item.entry.occurredAt, position: item.position });
  }
  return out;
}

function typeOfBody(body: unknown): string | null {
  if (typeof body !== 'string') return null;
  try {
    const parsed = JSON.parse(body) as { type?: unknown };
    return typeof parsed.type === 'string' ? parsed.type : null;
  } catch {
    return null;
  }
}

export interface DeliveryScan {
  deliveries: Delivery[];
  /** The timeline cursor to go on from; null when the timeline's start was reached. */
  next: string | null;
  /** How many timeline entries were read. */
  scanned: number;
}

/**
 * Reads the timeline from `cursor` (null: the newest) until `want` deliveries to the endpoint
 * are found or `maxPages` pages were read, so a busy world costs a bounded read per click.
 */
export async function scanDeliveries(
  fetchPage: (before: string | null) => Promise<TimelinePage>,
  endpointId: string,
  cursor: string | null,
  { want = 20, maxPages = 4 }: { want?: number; maxPages?: number } = {},
): Promise<DeliveryScan> {
  const deliveries: Delivery[] = [];
  let next = cursor;
  let scanned = 0;
  for (let pages = 0; pages < maxPages; pages++) {
    const page = await fetchPage(next);
    scanned += page.entries.length;
    for (const item of page.entries) deliveries.push(...deliveriesIn(item, endpointId));
    next = page.next;
    if (next === null || deliveries.length >= want) break;
  }
  return { deliveries, next, scanned };
}
