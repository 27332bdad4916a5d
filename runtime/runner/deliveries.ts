/**
 * Outbound webhooks for every twin. A twin asks for one by emitting a `webhook.delivery`
 * event on an entry (see `WebhookDelivery`); once that entry is durable the world sends it
 * — never inside the API request that caused it — retrying with exponential backoff, with
 * the entry's W3C trace continued in a new span. The outbox is kept in storage, so a
 * restart resumes what was not sent. Each attempt's outcome goes back to the twin through
 * its `webhook.result` move, when it declares one, as an entry of its own.
 *
 * Which delivery is due next is kept in memory (`DueQueue`, loaded from the outbox when the
 * deliverer starts), so queueing and sending cost the same however long the outbox has
 * grown: a load test whose receiver is down or slow piles deliveries up faster than they
 * go, and a walk over the whole outbox per send made that quadratic.
 */
import { randomBytes } from 'node:crypto';
import { stripeSignature } from '../roots/signatures.js';
import type { OutboundFetch } from '../roots/outbound.js';
import { prefixEnd } from '../store/keys.js';
import type { Storage } from '../store/index.js';
import type { Entry } from '../world/types.js';
import { unrefTimer } from '../timers.js';

/** The data of a `webhook.delivery` event. Unknown fields are the twin's own and ignored here. */
export interface WebhookDelivery {
  /** The twin's id for it; handed back in the result. */
  id?: string;
  url: string;
  method?: string;
  headers: Record<string, string>;
  body: string;
  /**
   * A signature made at send time, for schemes that sign the send instant: `stripe` adds
   * `Stripe-Signature: t=<unix seconds>,v1=<HMAC-SHA256 hex of "t.body">` with `secret`.
   */
  sign?: { scheme: 'stripe'; secret: string };
}

/** What the twin's `webhook.result` move receives after each attempt. */
export interface DeliveryResult {
  id: string | null;
  url: string;
  attempt: number;
  /** The HTTP status, or null when the request failed (refused, timed out). */
  status: number | null;
  ok: boolean;
  error: string | null;
  durationMs: number;
  /** Whether another attempt is scheduled. */
  willRetry: boolean;
  nextAttemptAt: string | null;
}

interface Pending {
  twin: string;
  delivery: WebhookDelivery;
  traceparent: string | null;
  attempt: number;
  nextAt: number;
}

export interface DelivererOptions {
  storage: Storage;
  world: string;
  /** Attempts in all (default 6: the first and five retries). */
  maxAttempts?: number;
  /** The first retry's delay; each next one doubles, up to an hour (default 1 s). */
  baseDelayMs?: number;
  timeoutMs?: number;
  /** Most deliveries in flight at once (default 8). */
  concurrency?: number;
  onResult?: (twin: string, result: DeliveryResult) => void;
  /** Sends each attempt (tests); else `outbound`, else the global fetch. */
  fetch?: typeof fetch;
  /** The host's one way out (roots/outbound.ts): its destination checks apply to every receiver. */
  outbound?: OutboundFetch;
}

const EVENT = 'webhook.delivery';
const MAX_DELAY_MS = 3_600_000;
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-[0-9a-f]{16}-([0-9a-f]{2})$/;

/** The deliveries an entry asks for, checked: a malformed one is dropped with a warning. */
export function deliveriesOf(twin: string, entry: Entry): WebhookDelivery[] {
  const out: WebhookDelivery[] = [];
  for (const event of entry.events ?? []) {
    if (event.type !== EVENT) continue;
    const d = event.data as Partial<WebhookDelivery> | null;
    const valid =
      d !== null &&
      typeof d === 'object' &&
      typeof d.url === 'string' &&
      /^https?:\/\//.test(d.url) &&
      typeof d.body === 'string' &&
      typeof d.headers === 'object' &&
      d.headers !== null &&
      Object.values(d.headers).every((v) => typeof v === 'string') &&
      (d.sign === undefined || (d.sign.scheme === 'stripe' && typeof d.sign.secret === 'string'));
    if (!valid) {
      console.warn(`twinkit: ${twin} entry ${entry.position} asked for a malformed webhook delivery; dropped`);
      continue;
    }
    const delivery: WebhookDelivery = { url: d.url!, headers: d.headers!, body: d.body! };
    if (typeof d.id === 'string') delivery.id = d.id;
    if (typeof d.method === 'string') delivery.method = d.method.toUpperCase();
    if (d.sign) delivery.sign = d.sign;
    out.push(delivery);
  }
  return out;
}

/** The entry's trace, continued in a new span (W3C traceparent). */
export function continueTrace(traceparent: string | null | undefined): string | null {
  const m = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!m) return null;
  return `${m[1]}-${m[2]}-${randomBytes(8).toString('hex')}-${m[3]}`;
}

/** A delivery's attempt as the host's outbound fetch makes it (a `fetch`-shaped adapter: status and a drained body). */
function viaOutbound(outbound: OutboundFetch, timeoutMs: number): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries((init?.headers ?? {}) as Record<string, string>)) headers[name.toLowerCase()] = value;
    const answer = await outbound(
      { method: init?.method ?? 'POST', url: String(input), headers, purpose: 'webhook', ...(typeof init?.body === 'string' ? { body: new TextEncoder().encode(init.body) } : {}) },
      { timeoutMs, maxBytes: 1024 * 1024 },
    );
    return { status: answer.status, arrayBuffer: async () => answer.body.buffer } as unknown as Response;
  }) as typeof fetch;
}

export class Deliverer {
  private readonly storage: Storage;
  private readonly world: string;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly onResult: DelivererOptions['onResult'];
  private readonly send: typeof fetch;
  private readonly inFlight = new Set<string>();
  /** Every delivery in the outbox that is not in flight, by when it is next due. */
  private readonly due = new DueQueue();
  private timer: NodeJS.Timeout | null = null;
  private seq = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(options: DelivererOptions) {
    this.storage = options.storage;
    this.world = options.world;
    this.maxAttempts = options.maxAttempts ?? 6;
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.concurrency = options.concurrency ?? 8;
    this.onResult = options.onResult;
    // Called as a plain function: workerd's fetch refuses a `this` other than the global one
    // ("Illegal invocation"), which `this.send(…)` would give it.
    const outbound = options.outbound;
    this.send = options.fetch ?? (outbound !== undefined ? viaOutbound(outbound, options.timeoutMs ?? 10_000) : (input, init) => fetch(input, init));
    // Resume what a previous run left.
    const outbox = this.outbox();
    for (const { key, value } of this.storage.range<Pending>({ start: outbox, end: prefixEnd(outbox) })) {
      const id = String(key[key.length - 1]);
      this.due.push(typeof value.nextAt === 'number' ? value.nextAt : 0, id);
      const n = Number(id.split(':')[0]);
      if (Number.isSafeInteger(n)) this.seq = Math.max(this.seq, n);
    }
    this.schedule(0);
  }

  private outbox(): string[] {
    return ['#runner', this.world, 'outbox'];
  }

  /** The storage key of outbox item `id`. */
  private key(id: string): string[] {
    return [...this.outbox(), id];
  }

  /** Queues the deliveries a durable entry asks for. */
  enqueue(twin: string, entry: Entry): number {
    const deliveries = deliveriesOf(twin, entry);
    if (deliveries.length === 0) return 0;
    const now = Date.now();
    const ids: string[] = [];
    this.storage.transact((w) => {
      for (const delivery of deliveries) {
        const pending: Pending = { twin, delivery, traceparent: entry.traceparent ?? null, attempt: 0, nextAt: now };
        const id = String(this.seq + ids.length + 1).padStart(12, '0');
        w.put(this.key(id), pending);
        ids.push(id);
      }
    });
    // Only once the transaction took them: a refused one leaves nothing queued.
    this.seq += ids.length;
    for (const id of ids) this.due.push(now, id);
    void this.storage.durable();
    this.schedule(0);
    return deliveries.length;
  }

  /** Deliveries not yet sent or given up on. */
  pending(): number {
    return this.due.size + this.inFlight.size;
  }

  /** Resolves when nothing is queued or in flight (tests). */
  idle(): Promise<void> {
    if (this.pending() === 0 && this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pump(), Math.max(0, Math.min(delayMs, MAX_DELAY_MS)));
    unrefTimer(this.timer);
  }

  private pump(): void {
    this.timer = null;
    // A stopped storage refuses reads; its outbox waits for the next start.
    if (this.closed || !this.storage.alive) return;
    const now = Date.now();
    while (this.inFlight.size < this.concurrency && this.due.size > 0 && this.due.nextAt <= now) {
      const id = this.due.pop();
      const value = this.storage.get<Pending>(this.key(id));
      if (value === undefined) continue;
      this.inFlight.add(id);
      void this.attempt(id, value);
    }
    // Due deliveries left behind a full `inFlight` go when an attempt ends (it pumps again).
    if (this.due.size > 0 && this.due.nextAt > now) this.schedule(this.due.nextAt - now);
    if (this.inFlight.size === 0 && this.due.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private async attempt(id: string, p: Pending): Promise<void> {
    const attempt = p.attempt + 1;
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'twinkit-webhooks/1', ...p.delivery.headers };
    const trace = continueTrace(p.traceparent);
    if (trace) headers['traceparent'] = trace;
    if (p.delivery.sign?.scheme === 'stripe') headers['Stripe-Signature'] = stripeSignature(p.delivery.sign.secret, p.delivery.body, Math.floor(Date.now() / 1000));
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const res = await this.send(p.delivery.url, {
        method: p.delivery.method ?? 'POST',
        headers,
        body: p.delivery.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      await res.arrayBuffer().catch(() => undefined);
    } catch (e) {
      error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    }
    const ok = status !== null && status >= 200 && status < 300;
    // Kept for a retry even when the deliverer has closed meanwhile: the next start sends it.
    const willRetry = !ok && attempt < this.maxAttempts;
    const nextAt = willRetry ? Date.now() + Math.min(this.baseDelayMs * 2 ** (attempt - 1), MAX_DELAY_MS) : null;
    const key = this.key(id);
    if (!this.storage.alive) return;
    this.storage.transact((w) => {
      if (willRetry) w.put(key, { ...p, attempt, nextAt });
      else w.remove(key);
    });
    this.inFlight.delete(id);
    if (nextAt !== null) this.due.push(nextAt, id);
    try {
      this.onResult?.(p.twin, {
        id: p.delivery.id ?? null,
        url: p.delivery.url,
        attempt,
        status,
        ok,
        error,
        durationMs: Math.round(performance.now() - started),
        willRetry,
        nextAttemptAt: nextAt === null ? null : new Date(nextAt).toISOString(),
      });
    } catch (e) {
      console.error('twinkit: recording a webhook result failed', e);
    }
    this.schedule(0);
  }
}

/**
 * Outbox ids by the instant they are next due (ties: the older id first), as a binary
 * min-heap: push and pop in O(log n).
 */
class DueQueue {
  private readonly at: number[] = [];
  private readonly ids: string[] = [];

  get size(): number {
    return this.ids.length;
  }

  /** When the first delivery is due; only with `size > 0`. */
  get nextAt(): number {
    return this.at[0] as number;
  }

  push(at: number, id: string): void {
    let i = this.ids.length;
    this.at.push(at);
    this.ids.push(id);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Takes the first delivery's id; only with `size > 0`. */
  pop(): string {
    const top = this.ids[0] as string;
    const lastAt = this.at.pop() as number;
    const lastId = this.ids.pop() as string;
    const n = this.ids.length;
    if (n === 0) return top;
    this.at[0] = lastAt;
    this.ids[0] = lastId;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const child = left + 1 < n && this.before(left + 1, left) ? left + 1 : left;
      if (!this.before(child, i)) break;
      this.swap(i, child);
      i = child;
    }
    return top;
  }

  private before(a: number, b: number): boolean {
    const atA = this.at[a] as number;
    const atB = this.at[b] as number;
    return atA < atB || (atA === atB && (this.ids[a] as string) < (this.ids[b] as string));
  }

  private swap(a: number, b: number): void {
    const at = this.at[a] as number;
    this.at[a] = this.at[b] as number;
    this.at[b] = at;
    const id = this.ids[a] as string;
    this.ids[a] = this.ids[b] as string;
    this.ids[b] = id;
  }
}
