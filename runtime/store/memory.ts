import { Packr } from 'msgpackr';
import { KitError } from '../errors.js';
import { KeyMap, assertKey, assertRangeBound, compareKeys } from './keys.js';
import { collectWrites, type PendingWrite } from './pending.js';
import type { Key, KeyValue, RangeOptions, Storage, StorageWriter } from './types.js';

interface Row {
  key: Key;
  /** msgpack bytes, so values are copied in and out exactly as lmdb would (no shared objects). */
  value: Uint8Array;
}

/**
 * Storage in a sorted array: the model for other implementations (the edge variant) and
 * a fast backend for unit tests. Same key order, same value semantics (msgpack round trip),
 * same transaction rules as the LMDB storage; `durable()` has nothing to flush.
 */
export class MemoryStorage implements Storage {
  /** Rows are replaced, never changed: a walk's snapshot of them stays as it was. */
  private rows: Row[] = [];
  /**
   * msgpack with records, as lmdb's codec (shared structures): a Map reads back as a Map, where
   * msgpackr's plain `unpack` makes it an object. Its shapes live in this instance alone.
   */
  private readonly codec = new Packr({ useRecords: true, structures: [] });
  private inTransaction = false;
  private closed = false;

  get alive(): boolean {
    return !this.closed;
  }

  get<V = unknown>(key: Key): V | undefined {
    this.check();
    assertKey(key);
    const i = this.find(key);
    const row = this.rows[i];
    if (row === undefined || compareKeys(row.key, key) !== 0) return undefined;
    return this.codec.unpack(row.value) as V;
  }

  range<V = unknown>(options: RangeOptions): Iterable<KeyValue<V>> {
    this.check();
    assertRangeBound(options.start);
    assertRangeBound(options.end);
    return walkRows<V>(this, options);
  }

  /**
   * A range's rows as they are when its walk asks for the first (`walkRows`), as lmdb's read
   * transaction gives: writes made while a caller iterates neither show nor shift what it sees.
   */
  rowsIn(options: RangeOptions): Row[] {
    this.check();
    const limit = options.limit ?? Infinity;
    const lo = this.find(options.start);
    const hi = Math.max(lo, this.find(options.end)); // first row >= end: excluded
    const n = Math.max(0, Math.min(hi - lo, limit));
    return options.reverse ? this.rows.slice(hi - n, hi).reverse() : this.rows.slice(lo, lo + n);
  }

  /** A row's value (for `walkRows`). */
  decode(bytes: Uint8Array): unknown {
    return this.codec.unpack(bytes);
  }

  transact<T>(fn: (writer: StorageWriter) => T): T {
    this.check();
    if (this.inTransaction) throw new TypeError('transact() does not nest');
    this.inTransaction = true;
    let result: T;
    let pending: PendingWrite[];
    try {
      ({ result, writes: pending } = collectWrites((key) => this.get(key), fn));
    } finally {
      this.inTransaction = false;
    }
    // Every value is encoded before any is applied: one msgpack cannot hold fails this transaction alone.
    const writes = pending.map((p) => ({ key: [...p.key], value: p.removed ? null : (this.codec.pack(p.value) as Uint8Array) }));
    for (const { key, value } of writes) this.apply(key, value);
    return result;
  }

  async durable(): Promise<void> {
    this.check();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.rows = [];
  }

  private apply(key: Key, value: Uint8Array | null): void {
    const i = this.find(key);
    const row = this.rows[i];
    const exists = row !== undefined && compareKeys(row.key, key) === 0;
    if (value === null) {
      if (exists) this.rows.splice(i, 1);
    } else if (exists) {
      this.rows[i] = { key: row.key, value };
    } else {
      this.rows.splice(i, 0, { key, value });
    }
  }

  /** Index of the first row whose key is >= key. */
  private find(key: Key): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys((this.rows[mid] as Row).key, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private check(): void {
    if (this.closed) throw new KitError('storage_closed', 'the storage is closed');
  }
}

/** Declared once, not per range(): see `storedPairs` in lmdb.ts. */
function* walkRows<V>(storage: MemoryStorage, options: RangeOptions): Generator<KeyValue<V>> {
  for (const row of storage.rowsIn(options)) yield { key: row.key, value: storage.decode(row.value) as V };
}
