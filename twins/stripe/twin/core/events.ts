/**
 * Stripe events: every state change records an `event` object (so `events.list` and
 * `events.retrieve` work) and emits it on the log entry (webhook delivery reads those).
 */
import { API_VERSION, type Call } from './call.js';
import { insert, newestFirst } from './store.js';
import { clone, isObj, type Obj } from './util.js';

/** The top-level fields of `before` that differ in `after`, with their old values. */
export function previousAttributes(before: Obj, after: Obj): Obj {
  const prev: Obj = {};
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const k of keys) {
    if (k === 'updated') continue;
    const a = before[k], b = after[k];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    if (isObj(a) && isObj(b)) {
      const inner = previousAttributes(a, b);
      prev[k] = Object.keys(inner).length > 0 ? inner : a;
    } else {
      prev[k] = a === undefined ? null : a;
    }
  }
  return prev;
}

/** The account's enabled webhook endpoints' event lists, read once per request. */
const endpointCache = new WeakMap<Call, string[][]>();

/** How many enabled webhook endpoints take this event type: Stripe's `pending_webhooks`. */
function pendingWebhooks(c: Call, type: string): number {
  let lists = endpointCache.get(c);
  if (lists === undefined) {
    lists = [];
    for (const rec of newestFirst(c, 'webhook_endpoint')) {
      if (rec.o.status === 'enabled' && Array.isArray(rec.o.enabled_events)) lists.push(rec.o.enabled_events as string[]);
    }
    endpointCache.set(c, lists);
  }
  return lists.filter((events) => events.includes('*') || events.includes(type)).length;
}

export function event(c: Call, type: string, object: Obj, previous?: Obj): Obj {
  const data: Obj = { object: clone(object) };
  if (previous !== undefined) data.previous_attributes = clone(previous);
  const evt: Obj = {
    id: c.ctx.id('evt_', 24),
    object: 'event',
    api_version: API_VERSION,
    created: c.now,
    data,
    livemode: false,
    pending_webhooks: pendingWebhooks(c, type),
    request: c.automatic === true ? { id: null, idempotency_key: null } : { id: c.requestId, idempotency_key: c.idempotencyKey },
    type,
  };
  insert(c, 'event', evt);
  c.emits.push({ type, data: { ...evt, account: c.acct } });
  return evt;
}

/** An `*.updated` event when something changed. */
export function updated(c: Call, type: string, before: Obj, after: Obj): void {
  const prev = previousAttributes(before, after);
  if (Object.keys(prev).length > 0) event(c, type, after, prev);
}
