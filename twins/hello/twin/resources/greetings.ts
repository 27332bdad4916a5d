/**
 * The greeting resource: create, retrieve, list (newest first, cursor pagination), search,
 * update, delete, and the timed move that expires a greeting.
 *
 * State, as records in the twin's tree:
 * - `greeting/<id>` → the stored greeting (the wire object plus `seq`, its creation number:
 *   the log position of the entry that made it, which only grows, so no counter is kept);
 * - `greeting_by_seq/<seq, 12 digits>` → `{ id }`: an index in creation order, so a list is
 *   one ordered read and a cursor is a position in it. Ids are ordered (`ctx.orderedId`), so
 *   new greetings share storage pages, but worlds made before hold random ones: id order is
 *   not creation order there.
 * Worlds made before kept `greeting_counter/seq`; its numbers were never above the position of
 * the entry that drew them, so new greetings still sort after those.
 */
import type { Move, ReadTree, TwinContext, TwinRequest, TwinResponse } from '../../../../sdk/twin/index.js';
import { InvalidRequest, handler, missing } from '../errors.js';

export interface Greeting {
  id: string;
  object: 'greeting';
  name: string;
  message: string;
  status: 'active' | 'expired';
  /** Epoch seconds, from the world clock. */
  created: number;
  /** Epoch seconds when it expires (or expired), or null. */
  expires_at: number | null;
  metadata: Record<string, string>;
}

/** What the tree holds: the wire object plus fields only the twin sees. */
interface StoredGreeting extends Greeting {
  seq: number;
}

export const GREETING = 'greeting';
export const BY_SEQ = 'greeting_by_seq';
const MAX_EXPIRES_IN = 365 * 24 * 3600;

/** The wire shape: the stored record without the twin's own fields. */
export function present(stored: StoredGreeting): Greeting {
  const { seq: _seq, ...greeting } = stored;
  return greeting;
}

function seqKey(seq: number): string {
  return String(seq).padStart(12, '0');
}

// ------------------------------------------------------------------ input

/** The body as an object: JSON and form bodies both arrive parsed; no body is `{}`. */
function params(request: TwinRequest, allowed: readonly string[]): Record<string, unknown> {
  const body = request.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new InvalidRequest('parameter_invalid', 'The request body must be an object of parameters.');
  const out = body as Record<string, unknown>;
  for (const key of Object.keys(out)) {
    if (!allowed.includes(key)) throw new InvalidRequest('parameter_unknown', `Received unknown parameter: ${key}`, key);
  }
  return out;
}

function text(value: unknown, param: string, max: number): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > max) {
    throw new InvalidRequest('parameter_invalid_string', `${param} must be a non-empty string of at most ${max} characters.`, param);
  }
  return value;
}

/** An integer parameter; form bodies and query strings send numbers as text. */
function integer(value: unknown, param: string, min: number, max: number): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new InvalidRequest('parameter_invalid_integer', `${param} must be an integer from ${min} to ${max}.`, param);
  }
  return n;
}

/** Metadata as Stripe does it: string values; an empty string removes the key. */
function mergeMetadata(current: Record<string, string>, value: unknown): Record<string, string> {
  if (value === '') return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidRequest('parameter_invalid', 'metadata must be an object of strings.', 'metadata');
  const out = { ...current };
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string' && typeof v !== 'number') throw new InvalidRequest('parameter_invalid', `metadata[${key}] must be a string.`, `metadata[${key}]`);
    // defineProperty, not `out[key] =`: a key named `__proto__` stays a key.
    if (v === '') delete out[key];
    else Object.defineProperty(out, key, { value: String(v), enumerable: true, writable: true, configurable: true });
  }
  if (Object.keys(out).length > 50) throw new InvalidRequest('parameter_invalid', 'metadata holds at most 50 keys.', 'metadata');
  return out;
}

/** Schedules (or with no `expires_in`, keeps) the expiry of a greeting. */
function scheduleExpiry(ctx: TwinContext, greeting: StoredGreeting, expiresIn: number): void {
  const dueMs = ctx.nowMs() + expiresIn * 1000;
  greeting.expires_at = Math.floor(dueMs / 1000);
  greeting.status = 'active';
  ctx.schedule(greeting.id, 'expire', new Date(dueMs).toISOString(), { id: greeting.id });
}

/**
 * A stored greeting, checked for what the handlers rely on: answers are made from it, so a
 * record the twin did not write (brought into the world from elsewhere) is a failure naming
 * it, never an answer missing its id. A few typeof tests: every read goes through here.
 */
function load(ctx: TwinContext, id: string): StoredGreeting | undefined {
  const g = ctx.tree.get<StoredGreeting>(GREETING, id);
  if (g === undefined) return undefined;
  if (typeof g !== 'object' || g === null || g.id !== id || g.object !== 'greeting' || typeof g.seq !== 'number') {
    throw new Error(`The hello twin's record of type '${GREETING}' and id '${id}' is malformed (not a greeting with its id and seq): restore the world from before it was written.`);
  }
  return g;
}

// ------------------------------------------------------------------ handlers

export const createGreeting = handler((request, ctx): TwinResponse => {
  const p = params(request, ['name', 'message', 'expires_in', 'metadata']);
  if (p['name'] === undefined) throw new InvalidRequest('parameter_missing', 'Missing required param: name.', 'name');
  const name = text(p['name'], 'name', 100);
  const message = p['message'] === undefined ? `Hello, ${name}!` : text(p['message'], 'message', 500);
  const expiresIn = p['expires_in'] === undefined ? undefined : integer(p['expires_in'], 'expires_in', 1, MAX_EXPIRES_IN);
  const metadata = p['metadata'] === undefined ? {} : mergeMetadata({}, p['metadata']);

  const greeting: StoredGreeting = {
    id: ctx.orderedId('grt_'),
    object: 'greeting',
    name,
    message,
    status: 'active',
    created: Math.floor(ctx.nowMs() / 1000),
    expires_at: null,
    metadata,
    seq: ctx.position,
  };
  if (expiresIn !== undefined) scheduleExpiry(ctx, greeting, expiresIn);
  ctx.tree.put(GREETING, greeting.id, greeting);
  ctx.tree.put(BY_SEQ, seqKey(greeting.seq), { id: greeting.id });
  ctx.emit('greeting.created', present(greeting));
  return { status: 200, body: present(greeting) };
});

export const retrieveGreeting = handler((request, ctx): TwinResponse => {
  const id = request.params['id'] ?? '';
  const greeting = load(ctx, id);
  return greeting ? { body: present(greeting) } : missing(id);
});

export const listGreetings = handler((request, ctx): TwinResponse => {
  const limitParam = request.query['limit'];
  const limit = limitParam === undefined ? 10 : integer(limitParam, 'limit', 1, 100);
  const after = request.query['starting_after'];
  let before: string | undefined;
  if (after !== undefined) {
    if (typeof after !== 'string') throw new InvalidRequest('parameter_invalid', 'starting_after must be one greeting id.', 'starting_after');
    const cursor = load(ctx, after);
    if (!cursor) return missing(after, 'starting_after');
    before = seqKey(cursor.seq);
  }
  // Newest first: walk the creation index downward from the cursor.
  const page = ctx.tree.list<{ id: string }>(BY_SEQ, { reverse: true, before, limit });
  const data = page.items.map((item) => load(ctx, item.value.id)).filter((g): g is StoredGreeting => g !== undefined).map(present);
  return { body: { object: 'list', url: '/v1/greetings', has_more: page.hasMore, data } };
});

/** Every greeting, oldest first, in pages of 100 (one host read per page). */
export function allGreetings(tree: ReadTree): StoredGreeting[] {
  const out: StoredGreeting[] = [];
  let after: string | undefined;
  for (;;) {
    const page = tree.list<StoredGreeting>(GREETING, { after, limit: 100 });
    for (const item of page.items) out.push(item.value);
    if (!page.hasMore || page.items.length === 0) break;
    after = page.items[page.items.length - 1]!.id;
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/**
 * Newest first, like the list: the creation index is read downward a page at a time and the
 * walk stops at `limit + 1` hits (the one past the page only says `has_more`), so a search
 * costs what it answers when matches are common. One that matches little still reads every
 * greeting: a twin whose search must stay cheap keeps an index of what it searches.
 */
export const searchGreetings = handler((request, ctx): TwinResponse => {
  const q = request.query['q'];
  if (typeof q !== 'string' || q.trim() === '') throw new InvalidRequest('parameter_missing', 'Missing required param: q.', 'q');
  const limitParam = request.query['limit'];
  const limit = limitParam === undefined ? 10 : integer(limitParam, 'limit', 1, 100);
  const needle = q.toLowerCase();
  const hits: StoredGreeting[] = [];
  let before: string | undefined;
  walk: for (;;) {
    const page = ctx.tree.list<{ id: string }>(BY_SEQ, { reverse: true, before, limit: 100 });
    for (const item of page.items) {
      const g = load(ctx, item.value.id);
      if (g === undefined || !(g.name.toLowerCase().includes(needle) || g.message.toLowerCase().includes(needle))) continue;
      hits.push(g);
      if (hits.length > limit) break walk;
    }
    if (!page.hasMore || page.items.length === 0) break;
    before = page.items[page.items.length - 1]!.id;
  }
  return {
    body: { object: 'search_result', url: '/v1/greetings/search', has_more: hits.length > limit, data: hits.slice(0, limit).map(present) },
  };
});

export const updateGreeting = handler((request, ctx): TwinResponse => {
  const id = request.params['id'] ?? '';
  const p = params(request, ['name', 'message', 'expires_in', 'metadata']);
  const greeting = load(ctx, id);
  if (!greeting) return missing(id);
  if (p['name'] !== undefined) greeting.name = text(p['name'], 'name', 100);
  if (p['message'] !== undefined) greeting.message = text(p['message'], 'message', 500);
  if (p['metadata'] !== undefined) greeting.metadata = mergeMetadata(greeting.metadata, p['metadata']);
  // A new `expires_in` counts from now and replaces the old schedule (same move id).
  if (p['expires_in'] !== undefined) scheduleExpiry(ctx, greeting, integer(p['expires_in'], 'expires_in', 1, MAX_EXPIRES_IN));
  ctx.tree.put(GREETING, id, greeting);
  return { body: present(greeting) };
});

export const deleteGreeting = handler((request, ctx): TwinResponse => {
  const id = request.params['id'] ?? '';
  const greeting = load(ctx, id);
  if (!greeting) return missing(id);
  ctx.tree.delete(GREETING, id);
  ctx.tree.delete(BY_SEQ, seqKey(greeting.seq));
  ctx.cancel(id);
  return { body: { id, object: 'greeting', deleted: true } };
});

// ------------------------------------------------------------------ timed move

/** Falls due `expires_in` seconds after create (or update): the greeting expires at that instant. */
export const expireGreeting: Move = (ctx, data) => {
  const id = (data as { id?: unknown } | null)?.id;
  if (typeof id !== 'string') return;
  const greeting = load(ctx, id);
  if (!greeting || greeting.status === 'expired') return;
  greeting.status = 'expired';
  ctx.tree.put(GREETING, id, greeting);
  ctx.emit('greeting.expired', present(greeting));
};
