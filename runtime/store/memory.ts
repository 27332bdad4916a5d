import { pack, unpack } from 'msgpackr';
import { KitError } from '../errors.js';
import { KeyMap, assertKey, assertRangeBound, assertSynchronous, compareKeys } from './keys.js';
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
  private rows: Row[] = [];
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
    return unpack(row.value) as V;
  }

  range<V = unknown>(options: RangeOptions): Iterable<KeyValue<V>> {
    this.check();
    assertRangeBound(options.start);
    assertRangeBound(options.end);
    const limit = options.limit ?? Infinity;
    const lo = this.find(options.start);
    const hi = Math.max(lo, this.find(options.end)); // first row >= end: excluded
    // A snapshot of the rows in range, as lmdb's read transaction gives: writes made while
    // a caller iterates do not shift what it sees.
    const n = Math.max(0, Math.min(hi - lo, limit));
    const rows = options.reverse ? this.rows.slice(hi - n, hi).reverse() : this.rows.slice(lo, lo + n);
    return unpackedRows<V>(rows);
  }

  transact<T>(fn: (writer: StorageWriter) => T): T {
    this.check();
    if (this.inTransaction) throw new TypeError('transact() does not nest');
    // Pending writes, applied only when fn returns: a throw leaves nothing behind.
    const pending = new KeyMap<{ key: Key; value: Uint8Array | null }>();
    const stage = (key: Key, value: Uint8Array | null): void => {
      const copy = [...key];
      pending.set(copy, { key: copy, value });
    };
    const writer: StorageWriter = {
      put: (key, value) => {
        assertKey(key);
        stage(key, pack(value));
      },
      remove: (key) => {
        assertKey(key);
        stage(key, null);
      },
      get: <V>(key: Key): V | undefined => {
        assertKey(key);
        const p = pending.get(key);
        if (p !== undefined) return p.value === null ? undefined : (unpack(p.value) as V);
        return this.get<V>(key);
      },
      // Packed as itself wherever it is put.
      share: (value) => value,
    };
    this.inTransaction = true;
    let result: T;
    try {
      result = fn(writer);
      assertSynchronous(result);
    } finally {
      this.inTransaction = false;
    }
    for (const { key, value } of pending.values()) this.apply(key, value);
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
      row.value = value;
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
function* unpackedRows<V>(rows: Row[]): Generator<KeyValue<V>> {
  for (const row of rows) yield { key: row.key, value: unpack(row.value) as V };
}
