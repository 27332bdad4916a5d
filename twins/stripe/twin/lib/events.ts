/**
 * Stripe events: every state change records an `event` object (so `events.list` and
 * `events.retrieve` work), names it on the log entry (`{ id, type, account }`), and emits a
 * `webhook.delivery` with its JSON for each endpoint that takes it.
 */
import { API_VERSION, type Call, type Endpoint } from './request.js';
import { insertEvent, insertFresh, saveFresh } from './store.js';
import { newestFirst } from './lists.js';
import { accountState } from './account.js';
import { orderedId } from './ids.js';
import { clone, isObj, seconds, type Obj } from './util.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Array, JSON, Object, Set } = globalThis;

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

const NONE: Endpoint[] = [];

/** The account's enabled webhook endpoints, read once per request (kept on the call). */
function enabledEndpoints(c: Call): Endpoint[] {
  let endpoints = c.endpoints;
  if (endpoints === undefined) {
    endpoints = [];
    // The account record (read anyway for the event's seq) says whether there are any.
    if (accountState(c).hooks > 0) for (const rec of newestFirst(c, 'webhook_endpoint')) {
      const o = rec.o;
      if (o.status === 'enabled' && Array.isArray(o.enabled_events) && typeof o.url === 'string' && typeof o.id === 'string') {
        endpoints.push({ id: o.id, url: o.url, events: o.enabled_events as string[] });
      }
    }
    c.endpoints = endpoints;
  }
  return endpoints;
}

/** The enabled endpoints that take this event type (their count is Stripe's `pending_webhooks`). */
function endpointsFor(c: Call, type: string): Endpoint[] {
  const all = enabledEndpoints(c);
  return all.length === 0 ? NONE : all.filter((e) => e.events.includes('*') || e.events.includes(type));
}

/**
 * Records an event about `object` as it is now (the event keeps its own copy; with `fresh` the
 * caller promises `object` does not change again in this request, and the event shares it).
 * The event is stored as it is made: the answer must not be changed.
 */
export function event(c: Call, type: string, object: Obj, previous?: Obj, options?: { fresh: true }): Readonly<Obj> {
  const data: Obj = { object: options?.fresh === true ? object : clone(object) };
  if (previous !== undefined) data.previous_attributes = clone(previous);
  const endpoints = endpointsFor(c, type);
  const id = orderedId(c, 'evt_', 24);
  const request = c.automatic === true ? { id: null, idempotency_key: null } : { id: c.requestId, idempotency_key: c.idempotencyKey };
  const evt: Obj = {
    id, object: 'event', api_version: API_VERSION, created: c.now, data, livemode: false,
    pending_webhooks: endpoints.length, request, type,
  };
  insertEvent(c, evt, c.now === seconds(c.ctx.nowMs()));
  // The entry names the event; the event itself is the entry's `event` write. Emitting the
  // whole object again encoded it a third time (with the write and the head key): 6–7 µs of a
  // customer create's 56, 10–30 of a confirmed PaymentIntent's (bench/README.md).
  c.emits.push({ type, data: { id, type, account: c.acct } });
  // One delivery per endpoint, sent by the world once this entry is durable. Stripe signs
  // the instant it sends (constructEvent checks it against the real clock), so the world
  // signs at send time with the endpoint's secret.
  if (endpoints.length === 0) return evt;
  const body = JSON.stringify(evt, null, 2);
  for (const ep of endpoints) {
    const secret = c.tree.get<string>('webhook_secret', `${c.acct}/${ep.id}`);
    if (typeof secret !== 'string') continue;
    c.emits.push({
      type: 'webhook.delivery',
      data: { id: `${evt.id as string}:${ep.id}`, url: ep.url, headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' }, body, sign: { scheme: 'stripe', secret } },
    });
  }
  return evt;
}

/** An `*.updated` event when something changed. */
export function updated(c: Call, type: string, before: Obj, after: Obj): void {
  const prev = previousAttributes(before, after);
  if (Object.keys(prev).length > 0) event(c, type, after, prev);
}

/**
 * Stores a new object and records an event about it as it is now, from one copy of it: the
 * record and the event's object share the copy (reads of the record get copies of their own),
 * where `insert` then `event` copied the object twice. The caller may go on changing `obj`.
 */
export function insertWithEvent(c: Call, type: string, obj: Obj, eventType: string): void {
  const now = clone(obj);
  insertFresh(c, type, now);
  event(c, eventType, now, undefined, { fresh: true });
}

/** `save` then `event`, from one copy of the object (as insertWithEvent). */
export function saveWithEvent(c: Call, type: string, obj: Obj, eventType: string): void {
  const now = clone(obj);
  saveFresh(c, type, now);
  event(c, eventType, now, undefined, { fresh: true });
}
