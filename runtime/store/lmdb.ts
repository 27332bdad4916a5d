/**
 * Storage on LMDB (npm `lmdb`), values as msgpack with shared structures, keys as
 * ordered-binary arrays.
 *
 * One write transaction per event-loop turn. Every `transact()` of a turn goes into one
 * LMDB write transaction, opened by the first and committed at `setImmediate` (after the
 * turn's I/O callbacks); reads in the meantime read through it, so a transaction's writes
 * are visible as soon as it returns. A request's writes no longer cost a commit of their
 * own: under 32 concurrent Stripe creates the server's CPU per create went 112 → 76 µs,
 * most of it the kernel writing back fewer pages (system time 27 → 9 µs; each commit
 * copies the B-tree pages it touches, and consecutive creates touch the same pages).
 * `transact()` holds its writes until its function returns, so one that throws writes
 * nothing. If LMDB refuses a write or a commit, the whole turn's transaction is rolled
 * back and the storage stops (`storage_failed`): callers were told their transactions
 * returned, so nothing read afterwards could be trusted; reopening recovers the last commit.
 *
 * Durability (see runtime/README.md). The environment is opened with `noSync`: a commit
 * is visible to the next read at once but not flushed. `durable()` is the group commit: it
 * waits for the turn's transaction to commit, then one `mdb_env_sync(env, force)` on
 * lmdb-js's background thread (`db.sync(cb)`) covers every transaction committed before it
 * started. At most one sync is in flight; callers that arrive meanwhile share the next one.
 * LMDB's copy-on-write pages and meta-page switch keep every commit atomic, so a process
 * crash (SIGKILL) loses at most the turn's uncommitted transaction and never shows half of
 * one; acknowledged (synced) commits survive a power or kernel failure too. Nobody was told
 * that what is lost was durable: the runner answers a write only after `durable()`.
 *
 * Not `useWritemap`: it made a commit per request cheaper, which no longer matters, and
 * with a turn's transactions in one, lmdb 3.5.6 aborted the process in
 * `mdb_freelist_save` (assertion `x <= dl[0].mid`, the write-map branch) under our tests.
 */
import { asBinary, open, type RootDatabase } from 'lmdb';
import { KitError } from '../errors.js';
import { assertKey, compareKeys } from './keys.js';
import type { Key, KeyPart, KeyValue, RangeOptions, Storage, StorageWriter } from './types.js';

interface LmdbSync {
  sync(callback: (error?: unknown) => void): void;
}

interface PendingWrite {
  key: Key;
  value: unknown;
  remove: boolean;
}

interface Batch {
  /** Commits (no argument) or aborts lmdb-js's open transaction, synchronously. */
  finish: ((error?: unknown) => void) | null;
  /** The sync every durable() of the turn shares, made on the first call. */
  durable: Promise<void> | null;
  /** Told when the transaction committed (or failed), once durable() has been asked for. */
  committed: ((error?: unknown) => void) | null;
}

export class LmdbStorage implements Storage {
  private db: RootDatabase<unknown, KeyPart[]>;
  private closed = false;
  private inTransaction = false;
  /** The write transaction this event-loop turn's transactions share (null: none open). */
  private batch: Batch | null = null;
  /** Set when a write failed inside a shared transaction: the storage refuses everything. */
  private failed: KitError | null = null;
  /** The sync running now, and the one queued behind it (shared by everyone waiting). */
  private flushing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(readonly dir: string) {
    this.db = open<unknown, KeyPart[]>({
      path: dir,
      encoding: 'msgpack',
      sharedStructuresKey: Symbol.for('structures'),
      noSync: true,
      // Values are fresh objects on every read: a caller mutating one cannot change another's.
      cache: false,
    });
  }

  get alive(): boolean {
    return !this.closed && this.failed === null;
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
    // The writes wait in `ops` until `fn` returns, so a throwing `fn` leaves the turn's
    // shared transaction untouched: nothing of it is written.
    const ops: PendingWrite[] = [];
    const writer: StorageWriter = {
      put: (key, value) => {
        assertKey(key);
        ops.push({ key, value, remove: false });
      },
      remove: (key) => {
        assertKey(key);
        ops.push({ key, value: undefined, remove: true });
      },
      get: <V>(key: Key): V | undefined => {
        assertKey(key);
        for (let i = ops.length - 1; i >= 0; i--) {
          const op = ops[i] as PendingWrite;
          if (compareKeys(op.key, key) === 0) return op.remove ? undefined : (op.value as V);
        }
        return db.get(key as KeyPart[]) as V | undefined;
      },
    };
    this.inTransaction = true;
    let result: T;
    try {
      result = fn(writer);
      if (isThenable(result)) throw new TypeError('transact() takes a synchronous function');
    } finally {
      this.inTransaction = false;
    }
    if (ops.length === 0) return result;
    // Every value is encoded before the first write: one msgpack cannot hold fails this
    // transaction alone, with nothing of it in the shared one.
    const encoder = (db as unknown as { encoder: { encode(value: unknown): Uint8Array } }).encoder;
    for (const op of ops) if (!op.remove) op.value = asBinary(encoder.encode(op.value));
    const batch = this.batch ?? this.openBatch();
    try {
      for (const op of ops) {
        if (op.remove) db.remove(op.key as KeyPart[]);
        else db.put(op.key as KeyPart[], op.value);
      }
    } catch (e) {
      // Part of this transaction is in the shared one and cannot be taken out alone: the
      // whole turn's transaction is rolled back and the storage stops (see failBatch).
      this.failBatch(batch, e);
      throw this.failed;
    }
    return result;
  }

  durable(): Promise<void> {
    if (this.failed !== null) return Promise.reject(this.failed);
    if (this.closed) return Promise.reject(new KitError('storage_closed', 'the storage is closed'));
    const batch = this.batch;
    if (batch === null) return this.syncCommitted();
    // Everyone who asks during the turn shares one sync, started once the turn's
    // transaction has committed.
    batch.durable ??= new Promise<void>((resolve, reject) => {
      batch.committed = (error) => (error === undefined ? this.syncCommitted().then(resolve, reject) : reject(error));
    });
    return batch.durable;
  }

  /**
   * Opens the turn's write transaction: lmdb-js keeps a `transactionSync` open while its
   * callback's thenable is pending, and every put meanwhile goes into it. It commits at
   * `setImmediate`, after the I/O callbacks of this event-loop turn, or when the storage
   * closes.
   */
  private openBatch(): Batch {
    const batch: Batch = { finish: null, durable: null, committed: null };
    const pending = {
      then: (onCommit: (result?: unknown) => unknown, onAbort: (error: unknown) => unknown): void => {
        batch.finish = (error) => (error === undefined ? onCommit() : onAbort(error));
      },
    };
    this.db.transactionSync(() => pending);
    if (batch.finish === null) throw new Error('lmdb did not keep the write transaction open');
    this.batch = batch;
    setImmediate(() => this.commitBatch(batch));
    return batch;
  }

  private commitBatch(batch: Batch): void {
    if (this.batch !== batch) return;
    this.batch = null;
    let error: unknown;
    try {
      batch.finish?.(undefined);
    } catch (e) {
      error = e;
      this.stop(e);
    }
    batch.committed?.(error === undefined ? undefined : this.failed);
  }

  /** Rolls back the turn's transaction and stops the storage. */
  private failBatch(batch: Batch, cause: unknown): void {
    this.batch = null;
    try {
      batch.finish?.(cause);
    } catch {
      // The abort rethrows `cause`.
    }
    this.stop(cause);
    batch.committed?.(this.failed);
  }

  /**
   * After a write or commit failed inside the turn's transaction, every transaction of that
   * turn is gone while its callers (and the world's in-memory heads) believe it written; no
   * later read may be trusted, so the storage refuses everything until it is reopened.
   * What was acknowledged (durable() resolved) is on disk.
   */
  private stop(cause: unknown): void {
    console.error(`twinkit: storage ${this.dir} stopped: a write failed: ${String(cause)}`);
    this.failed = new KitError('storage_failed', `a write failed and the storage stopped; reopen it (${String(cause)})`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Closed means durable: commit the turn's transaction, let syncs in flight finish, then one last sync.
    if (this.batch !== null) this.commitBatch(this.batch);
    await this.durable().catch(() => undefined);
    this.closed = true;
    await this.db.close();
  }

  /** Resolves once every transaction committed so far is on disk. */
  private syncCommitted(): Promise<void> {
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
    if (this.failed !== null) throw this.failed;
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
