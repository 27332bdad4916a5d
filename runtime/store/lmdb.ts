/**
 * Storage on LMDB (npm `lmdb`), values as msgpack with shared structures, keys as
 * ordered-binary arrays.
 *
 * Durability trade-off (see runtime/README.md). The environment is opened with
 * `noSync`: a synchronous commit (`transactionSync`) costs microseconds instead of an
 * fsync each (measured on this machine: ~7 µs vs ~215 µs), and is visible to the next
 * read at once. It is also opened with `useWritemap`: a commit then changes pages in the
 * shared map instead of pwrite-ing each dirty page (for a 5-write, ~3 KB entry: commit-only
 * append 82 → 48 µs), and a sync is an msync (a lone append + `durable()` measured ~7%
 * slower: 190–230 → 207–245 µs). Copy-on-write and the meta-page switch work
 * the same way, so what survives which crash (below) does not change; LMDB's caveats are
 * nested transactions (not used) and processes opening one environment with and without
 * it (only this class opens it). Durability comes from `durable()`, a group commit: one
 * `mdb_env_sync(env, force)` on lmdb-js's background thread (`db.sync(cb)`) covers every
 * transaction committed before it started. At most one sync is in flight; callers that
 * arrive meanwhile share the next one. LMDB's copy-on-write pages and meta-page switch
 * keep every commit atomic, so a process crash (SIGKILL) loses nothing the kernel has
 * and never shows a half-written transaction; acknowledged (synced) commits survive a
 * power or kernel failure too. What a kernel crash can lose is a commit made after the
 * last sync, and no caller was told that one was durable.
 */
import { open, type RootDatabase } from 'lmdb';
import { KitError } from '../errors.js';
import { assertKey } from './keys.js';
import type { Key, KeyPart, KeyValue, RangeOptions, Storage, StorageWriter } from './types.js';

interface LmdbSync {
  sync(callback: (error?: unknown) => void): void;
}

export class LmdbStorage implements Storage {
  private db: RootDatabase<unknown, KeyPart[]>;
  private closed = false;
  private inTransaction = false;
  /** The sync running now, and the one queued behind it (shared by everyone waiting). */
  private flushing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(readonly dir: string) {
    this.db = open<unknown, KeyPart[]>({
      path: dir,
      encoding: 'msgpack',
      sharedStructuresKey: Symbol.for('structures'),
      noSync: true,
      useWritemap: true,
      // Values are fresh objects on every read: a caller mutating one cannot change another's.
      cache: false,
    });
  }

  get alive(): boolean {
    return !this.closed;
  }

  get<V = unknown>(key: Key): V | undefined {
    this.check();
    assertKey(key);
    return this.db.get(key as KeyPart[]) as V | undefined;
  }

  range<V = unknown>(options: RangeOptions): Iterable<KeyValue<V>> {
    this.check();
    assertKey(options.start);
    assertKey(options.end);
    const limit = options.limit;
    if (limit !== undefined && limit <= 0) return [];
    // lmdb walks a reverse range from `start` (its upper end) down to `end`; ours keeps
    // `start` as the inclusive lower bound and `end` as the exclusive upper bound.
    const iterable = options.reverse
      ? this.db.getRange({
          start: options.end as KeyPart[],
          end: options.start as KeyPart[],
          reverse: true,
          exclusiveStart: true,
          inclusiveEnd: true,
          ...(limit === undefined ? {} : { limit }),
        })
      : this.db.getRange({
          start: options.start as KeyPart[],
          end: options.end as KeyPart[],
          ...(limit === undefined ? {} : { limit }),
        });
    const self = this;
    return (function* () {
      for (const { key, value } of iterable) {
        self.check();
        // ordered-binary gives a one-part array back as the bare part.
        yield { key: Array.isArray(key) ? (key as Key) : [key as KeyPart], value: value as V };
      }
    })();
  }

  transact<T>(fn: (writer: StorageWriter) => T): T {
    this.check();
    if (this.inTransaction) throw new TypeError('transact() does not nest');
    const db = this.db;
    const writer: StorageWriter = {
      put: (key, value) => {
        assertKey(key);
        db.put(key as KeyPart[], value);
      },
      remove: (key) => {
        assertKey(key);
        db.remove(key as KeyPart[]);
      },
      get: <V>(key: Key): V | undefined => {
        assertKey(key);
        return db.get(key as KeyPart[]) as V | undefined;
      },
    };
    this.inTransaction = true;
    try {
      return db.transactionSync(() => {
        const result = fn(writer);
        // Throwing inside the callback aborts the transaction.
        if (isThenable(result)) throw new TypeError('transact() takes a synchronous function');
        return result;
      });
    } finally {
      this.inTransaction = false;
    }
  }

  durable(): Promise<void> {
    if (this.closed) return Promise.reject(new KitError('storage_closed', 'the storage is closed'));
    if (this.flushing === null) return this.startFlush();
    // A sync is running: it may have started before our caller's commit, so wait for the
    // next one, which every caller arriving now shares.
    if (this.queued === null) {
      this.queued = this.flushing.then(
        () => this.startQueued(),
        () => this.startQueued(),
      );
    }
    return this.queued;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Closed means durable: let syncs in flight finish, then one last sync.
    await this.durable().catch(() => undefined);
    this.closed = true;
    await this.db.close();
  }

  private startQueued(): Promise<void> {
    this.queued = null;
    if (this.closed) return Promise.reject(new KitError('storage_closed', 'the storage is closed'));
    return this.startFlush();
  }

  private startFlush(): Promise<void> {
    const flush = new Promise<void>((resolve, reject) => {
      // lmdb-js exposes sync(callback) (mdb_env_sync on a worker thread) but does not type it.
      (this.db as unknown as LmdbSync).sync((error?: unknown) => {
        if (error) reject(new KitError('internal', `sync failed: ${String(error)}`));
        else resolve();
      });
    });
    this.flushing = flush;
    const clear = (): void => {
      if (this.flushing === flush) this.flushing = null;
    };
    flush.then(clear, clear);
    return flush;
  }

  private check(): void {
    if (this.closed) throw new KitError('storage_closed', 'the storage is closed');
  }
}

/** Opens (creating when missing) an LMDB environment in `dir`. */
export function openLmdbStorage(dir: string): LmdbStorage {
  return new LmdbStorage(dir);
}

function isThenable(v: unknown): boolean {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
