/**
 * Where a world keeps its changesets, beside the engine's keys under `['#runner', <world>, …]`:
 * each changeset, the receipts of its deploys, the exchange (request and answer) behind each
 * entry its own requests wrote, the twin → real id maps learnt by deploys, and one record of
 * bookkeeping (what was cut through, the origin and how far the world matches it).
 *
 * A deploy keeps each receipt in a record of its own, durable before the next change is sent:
 * rewriting the whole changeset after each change made a deploy of n changes write n times its
 * body (3.9 MB for 1,000 customers: 147 s, bench/changesets/). A changeset read here carries its
 * receipts after the ones its record holds, and each change's state follows its last receipt.
 */
import type { SealedBox } from '../../roots/sealing.js';
import type { Key, Storage } from '../../store/index.js';
import { prefixEnd } from '../../store/keys.js';
import type { Receipt, StoredChangeset } from './types.js';

/** The request and answer behind an entry a vendor request wrote: what makes the change replayable. */
export interface Exchange {
  query: string;
  contentType: string | null;
  /** The vendor's own headers of the request (`replayedHeaders`). */
  headers?: Record<string, string>;
  body: string;
  /** The twin's answer body as JSON text (null: none, or not JSON). */
  answer: string | null;
}

/** Headers a deploy never replays: credentials, cookies, twinkit's, the connection's, and those it sets itself. */
const NOT_REPLAYED = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'content-length', 'content-type', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'accept-encoding', 'user-agent', 'idempotency-key', 'x-twins-key', 'x-request-id', 'traceparent', 'tracestate', 'origin', 'referer', 'expect', 'forwarded', 'via', 'dnt', 'priority']);
const MAX_REPLAYED = 20;
const MAX_REPLAYED_VALUE = 1024;

/**
 * The headers of a request a deploy sends again: the vendor's own (`stripe-version`,
 * `x-github-api-version`, `accept`), at most 20 of at most 1 KiB each; undefined when none.
 */
export function replayedHeaders(headers: Readonly<Record<string, string>>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  let n = 0;
  for (const name in headers) {
    if (NOT_REPLAYED.has(name) || name.startsWith('x-kit-') || name.startsWith('x-forwarded-') || name.startsWith('sec-') || name.startsWith('proxy-')) continue;
    const value = headers[name]!;
    if (value.length > MAX_REPLAYED_VALUE || ++n > MAX_REPLAYED) continue;
    (out ??= {})[name] = value;
  }
  return out;
}

export interface OriginState {
  /** `url`: named by `PUT …/origin`; `parent`: the world this branch was cut from, on the same host. */
  kind: 'url' | 'parent';
  url: string | null;
  api: string | null;
  world: string;
  token: SealedBox | null;
  since: string;
  /** Per twin: a position here and the origin's position there that held the same records. */
  synced: Record<string, { ours: number; theirs: number }>;
}

export interface Bookkeeping {
  seq: number;
  /** Per twin: the last position a cut took in (own changes are looked for after it). */
  cutThrough: Record<string, number>;
  origin: OriginState | null;
  /**
   * Per record with unpushed changes (`<twin>/<type>/<id>`): the origin's value it was last
   * merged with, the base of the next merge.
   */
  mergeBase: Record<string, unknown>;
}

export class ChangesetStore {
  constructor(
    private readonly storage: Storage,
    private readonly world: string,
  ) {}

  private key(...rest: (string | number)[]): Key {
    return ['#runner', this.world, ...rest];
  }

  signingKeyKey(): Key {
    return this.key('signing-key');
  }

  bookkeeping(initial: () => Bookkeeping): Bookkeeping {
    return this.storage.get<Bookkeeping>(this.key('changesets')) ?? initial();
  }

  saveBookkeeping(b: Bookkeeping): void {
    this.storage.transact((w) => w.put(this.key('changesets'), b));
  }

  get(name: string): StoredChangeset | undefined {
    const c = this.storage.get<StoredChangeset>(this.key('changeset', name));
    return c === undefined ? undefined : this.withReceipts(c);
  }

  /** Saves a changeset read here; its receipts kept in records of their own stay there. */
  save(c: StoredChangeset): void {
    const kept = this.receiptRecords(c.name).length;
    this.storage.transact((w) => w.put(this.key('changeset', c.name), { ...c, receipts: c.receipts.slice(0, Math.max(0, c.receipts.length - kept)) }));
  }

  /** Every changeset, in the order they were cut or landed. */
  all(): StoredChangeset[] {
    const prefix = this.key('changeset');
    const out = [...this.storage.range<StoredChangeset>({ start: prefix, end: prefixEnd(prefix) })].map((kv) => this.withReceipts(kv.value));
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** The receipts a changeset's deploys have kept so far, oldest first. */
  private receiptRecords(name: string): Receipt[] {
    const prefix = this.key('receipt', name);
    return [...this.storage.range<Receipt>({ start: prefix, end: prefixEnd(prefix) })].map((kv) => kv.value);
  }

  /** How many receipts a changeset's deploys have kept in records of their own (the next one's number). */
  receiptCount(name: string): number {
    return this.receiptRecords(name).length;
  }

  /** One receipt of a deploy, the `n`-th of the changeset (`receiptCount` before the first). */
  addReceipt(name: string, n: number, receipt: Receipt): void {
    this.storage.transact((w) => {
      w.put(this.key('receipt', name, n), receipt);
      // The twin's newest, for its status, read without opening every changeset.
      w.put(this.key('last-receipt', receipt.twin), receipt);
    });
  }

  /** The newest receipt of a change of the twin, or null. */
  lastReceipt(twin: string): Receipt | null {
    return this.storage.get<Receipt>(this.key('last-receipt', twin)) ?? null;
  }

  private withReceipts(c: StoredChangeset): StoredChangeset {
    const more = this.receiptRecords(c.name);
    if (more.length === 0) return c;
    const last = new Map<number, Receipt>();
    for (const r of more) last.set(r.change, r);
    const changes = c.changes.map((change) => {
      const r = last.get(change.index);
      return r === undefined ? change : { ...change, state: r.ok ? ('deployed' as const) : ('failed' as const) };
    });
    return { ...c, changes, receipts: [...c.receipts, ...more] };
  }

  exchange(twin: string, position: number): Exchange | undefined {
    return this.storage.get<Exchange>(this.key('exchange', twin, position));
  }

  static exchangeKey(world: string, twin: string, position: number): Key {
    return ['#runner', world, 'exchange', twin, position];
  }

  /** The twin → real ids a deploy learnt for one twin. */
  ids(twin: string): Map<string, string> {
    const prefix = this.key('idmap', twin);
    const out = new Map<string, string>();
    for (const { key, value } of this.storage.range<string>({ start: prefix, end: prefixEnd(prefix) })) out.set(String(key[key.length - 1]), value);
    return out;
  }

  saveIds(twin: string, ids: Record<string, string>): void {
    const entries = Object.entries(ids);
    if (entries.length === 0) return;
    this.storage.transact((w) => {
      for (const [mine, real] of entries) w.put(this.key('idmap', twin, mine), real);
    });
  }
}
