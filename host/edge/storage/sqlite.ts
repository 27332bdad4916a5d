/**
 * Storage on a Durable Object's SQLite (`ctx.storage.sql`, `ctx.storage.transactionSync`),
 * the edge variant's `Storage` (runtime/store/types.ts), with the semantics of the memory
 * storage, the model: same key order, values copied in and out as msgpack with records, same
 * transaction rules.
 *
 * One table, `<table>(key BLOB PRIMARY KEY, value BLOB, chunks INTEGER) WITHOUT ROWID`: keys
 * are `encodeKey` bytes (key-bytes.ts), whose memcmp order, SQLite's order for BLOBs, is
 * `compareKeys` order, so a range is one index walk. WITHOUT ROWID keeps one b-tree (a rowid
 * table with a unique key index would write two, and a Durable Object bills rows written per
 * index).
 *
 * A Durable Object's SQLite refuses a row or BLOB over 2 MB. A value packed larger than
 * CHUNK_BYTES keeps its first CHUNK_BYTES in its row (`chunks` says how many more) and the rest
 * in `<table>_chunks(key, n, bytes)`, and reads back whole. R2 would hold such a value without
 * limit, but R2 is asynchronous and this interface is not: a `get` inside a transaction must
 * answer at once.
 *
 * Values: msgpackr with records but without shared structures, so each row decodes alone
 * (after a restart, by another instance, or a row moved elsewhere); a Map reads back as a Map.
 * The shapes a value holds are defined in its own bytes: rows of many small objects of one shape
 * take more bytes than LMDB's shared structures would.
 *
 * `transact` keeps its writes in memory until `fn` returns, then packs them all and applies
 * them in one `transactionSync`: a throw from `fn`, a value msgpack cannot hold, or SQLite
 * refusing a write (the database full) writes nothing, and the storage stays usable (nobody
 * saw those writes). Reads inside see the transaction's own writes (the pending map first).
 *
 * `range` reads its rows eagerly, when its walk asks for the first pair, in one statement (plus
 * the chunks of any chunked row), and decodes each pair as the walk reaches it. Eager, because
 * the promise is a snapshot: SQLite gives one only to a read transaction, which would have to
 * stay open across the caller's own writes (a Durable Object refuses BEGIN, and a cursor left
 * open on the same connection may or may not see rows written after it started). The engine
 * asks for bounded ranges (pages with a `limit`, one world's keys); a walk of a huge range holds
 * its rows' bytes in memory at once.
 *
 * `durable()` resolves at once. On a Durable Object that is enough: its output gate holds every
 * response, message and fetch the object sends until the writes before it are confirmed
 * durable, so no client hears of a write that could still be lost (and if the write fails, the
 * object is reset and the answer is never sent).
 */
import { Packr } from 'msgpackr';
import { KitError } from '../../../runtime/errors.js';
import { assertKey, assertRangeBound } from '../../../runtime/store/keys.js';
import { collectWrites, type PendingWrite } from '../../../runtime/store/pending.js';
import type { Key, KeyValue, RangeOptions, Storage, StorageWriter } from '../../../runtime/store/types.js';
import { decodeKey, encodeKey } from './key-bytes.js';

/** A value SQL binds or answers: a Durable Object answers a BLOB as an ArrayBuffer. */
export type SqlValue = ArrayBuffer | ArrayBufferView | string | number | null;

/** The cursor `exec` answers: its rows as objects by column name. */
export interface SqlCursorLike<T> extends Iterable<T> {
  toArray(): T[];
  /** The single row; throws when there is not exactly one. */
  one(): T;
  readonly rowsWritten: number;
}

/**
 * What this storage needs of SQLite: a Durable Object's `ctx.storage.sql.exec` and
 * `ctx.storage.transactionSync` (see `sqlOfDurableObject`), or a stand-in for tests.
 */
export interface SqlLike {
  exec<T = Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]): SqlCursorLike<T>;
  /** Runs `fn` in one transaction: committed when it returns, rolled back when it throws. */
  transactionSync<T>(fn: () => T): T;
}

/** The part of a Durable Object's `ctx.storage` this storage uses. */
export interface DurableObjectSqlStorage {
  readonly sql: { exec(query: string, ...bindings: unknown[]): SqlCursorLike<Record<string, unknown>> };
  transactionSync<T>(fn: () => T): T;
}

/** `SqlLike` over a Durable Object's storage: `new SqliteStorage(sqlOfDurableObject(ctx.storage))`. */
export function sqlOfDurableObject(storage: DurableObjectSqlStorage): SqlLike {
  return {
    exec: <T>(query: string, ...bindings: SqlValue[]) => storage.sql.exec(query, ...bindings) as unknown as SqlCursorLike<T>,
    transactionSync: (fn) => storage.transactionSync(fn),
  };
}

export interface SqliteStorageOptions {
  /**
   * The table (`[a-z][a-z0-9_]*`, at most 48 characters); `<table>_chunks` and `<table>_meta`
   * beside it. Default `kit_kv`. Two storages over one database need two names.
   */
  table?: string;
}

/** A Durable Object's SQLite refuses a row over 2 MB: a value is split into rows of at most this (key and all under the limit). */
export const CHUNK_BYTES = 1 << 20;

/** The layout of the tables and of the key bytes; a database of another is refused, not misread. */
const FORMAT = '1';

interface StoredRow {
  key: ArrayBuffer | Uint8Array;
  value: ArrayBuffer | Uint8Array;
  chunks: number;
}

/** A range's row, read when its walk began: the key and value still encoded. */
interface WalkRow {
  key: Uint8Array;
  value: Uint8Array;
}

export class SqliteStorage implements Storage {
  /** msgpack with records: a Map reads back as a Map. No `structures`: each row defines its own shapes. */
  private readonly codec = new Packr({ useRecords: true });
  private readonly q: Queries;
  private inTransaction = false;
  private closed = false;
  /**
   * Whether the chunks table may hold rows: while it does not (nearly always), a put or
   * remove skips deleting a key's old chunks. Checked at open and after deletions.
   */
  private chunksMayExist: boolean;

  constructor(
    private readonly sql: SqlLike,
    options: SqliteStorageOptions = {},
  ) {
    const table = options.table ?? 'kit_kv';
    if (!/^[a-z][a-z0-9_]{0,47}$/.test(table)) throw new TypeError(`a storage table name is [a-z][a-z0-9_]* of at most 48 characters, got ${JSON.stringify(table)}`);
    this.q = queries(table);
    sql.transactionSync(() => {
      for (const statement of this.q.schema) sql.exec(statement);
      const format = sql.exec<{ value: string }>(this.q.readFormat).toArray()[0]?.value;
      if (format === undefined) sql.exec(this.q.writeFormat, FORMAT);
      else if (format !== FORMAT) throw new KitError('storage_corrupt', `the table ${table} holds storage format ${format}; this twinkit reads format ${FORMAT}`);
    });
    this.chunksMayExist = this.anyChunks();
  }

  get alive(): boolean {
    return !this.closed;
  }

  get<V = unknown>(key: Key): V | undefined {
    this.check();
    assertKey(key);
    const keyBytes = encodeKey(key);
    const row = this.sql.exec<{ value: ArrayBuffer; chunks: number }>(this.q.get, keyBytes).toArray()[0];
    if (row === undefined) return undefined;
    const bytes = row.chunks > 0 ? this.whole(keyBytes, bytesOf(row.value)) : bytesOf(row.value);
    return this.codec.unpack(bytes) as V;
  }

  range<V = unknown>(options: RangeOptions): Iterable<KeyValue<V>> {
    this.check();
    assertRangeBound(options.start);
    assertRangeBound(options.end);
    return walkRows<V>(this, options);
  }

  /** A range's rows as they are now (for `walkRows`, when its walk asks for the first pair). */
  rowsIn(options: RangeOptions): WalkRow[] {
    this.check();
    const limit = options.limit === undefined || !Number.isFinite(options.limit) ? -1 : Math.floor(options.limit);
    if (limit === 0 || limit < -1) return [];
    const query = options.reverse === true ? this.q.rangeDown : this.q.rangeUp;
    const rows = this.sql.exec<StoredRow>(query, encodeKey(options.start), encodeKey(options.end), limit).toArray();
    return rows.map((row) => {
      const key = bytesOf(row.key);
      const value = bytesOf(row.value);
      return { key, value: row.chunks > 0 ? this.whole(key, value) : value };
    });
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
    if (pending.length === 0) return result;
    // Every value is packed before anything is written: one msgpack cannot hold fails this transaction alone.
    const writes = pending.map((p) => ({ key: encodeKey(p.key), value: p.removed ? null : (this.codec.pack(p.value) as Uint8Array) }));
    let deletedChunks = false;
    this.sql.transactionSync(() => {
      for (const { key, value } of writes) {
        if (this.chunksMayExist && this.sql.exec(this.q.deleteChunks, key).rowsWritten > 0) deletedChunks = true;
        if (value === null) this.sql.exec(this.q.remove, key);
        else if (value.length <= CHUNK_BYTES) this.sql.exec(this.q.put, key, value, 0);
        else this.putChunked(key, value);
      }
    });
    if (deletedChunks) this.chunksMayExist = this.anyChunks();
    return result;
  }

  async durable(): Promise<void> {
    this.check();
  }

  async close(): Promise<void> {
    // The database is the Durable Object's: nothing to flush or release.
    this.closed = true;
  }

  /** A value over CHUNK_BYTES: its first chunk in its row, the rest numbered from 1 in the chunks table. */
  private putChunked(key: Uint8Array, value: Uint8Array): void {
    const extra = Math.ceil(value.length / CHUNK_BYTES) - 1;
    this.chunksMayExist = true;
    this.sql.exec(this.q.put, key, value.subarray(0, CHUNK_BYTES), extra);
    for (let n = 1; n <= extra; n++) this.sql.exec(this.q.putChunk, key, n, value.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES));
  }

  /** A chunked value whole: its row's first chunk and the rest, in order. */
  private whole(key: Uint8Array, first: Uint8Array): Uint8Array {
    const rest = this.sql.exec<{ bytes: ArrayBuffer }>(this.q.getChunks, key).toArray().map((row) => bytesOf(row.bytes));
    const out = new Uint8Array(rest.reduce((n, b) => n + b.length, first.length));
    out.set(first, 0);
    let at = first.length;
    for (const b of rest) {
      out.set(b, at);
      at += b.length;
    }
    return out;
  }

  private anyChunks(): boolean {
    return this.sql.exec(this.q.anyChunk).toArray().length > 0;
  }

  private check(): void {
    if (this.closed) throw new KitError('storage_closed', 'the storage is closed');
  }
}

interface Queries {
  schema: string[];
  readFormat: string;
  writeFormat: string;
  get: string;
  getChunks: string;
  rangeUp: string;
  rangeDown: string;
  put: string;
  putChunk: string;
  remove: string;
  deleteChunks: string;
  anyChunk: string;
}

/** The statements, one per query text (a Durable Object caches a prepared statement per text). */
function queries(table: string): Queries {
  const chunks = `${table}_chunks`;
  const meta = `${table}_meta`;
  return {
    schema: [
      `CREATE TABLE IF NOT EXISTS ${table} (key BLOB PRIMARY KEY, value BLOB NOT NULL, chunks INTEGER NOT NULL) WITHOUT ROWID`,
      `CREATE TABLE IF NOT EXISTS ${chunks} (key BLOB NOT NULL, n INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (key, n)) WITHOUT ROWID`,
      `CREATE TABLE IF NOT EXISTS ${meta} (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
    ],
    readFormat: `SELECT value FROM ${meta} WHERE name = 'format'`,
    writeFormat: `INSERT INTO ${meta} (name, value) VALUES ('format', ?)`,
    get: `SELECT value, chunks FROM ${table} WHERE key = ?`,
    getChunks: `SELECT bytes FROM ${chunks} WHERE key = ? ORDER BY n`,
    rangeUp: `SELECT key, value, chunks FROM ${table} WHERE key >= ? AND key < ? ORDER BY key LIMIT ?`,
    rangeDown: `SELECT key, value, chunks FROM ${table} WHERE key >= ? AND key < ? ORDER BY key DESC LIMIT ?`,
    put: `INSERT INTO ${table} (key, value, chunks) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, chunks = excluded.chunks`,
    putChunk: `INSERT INTO ${chunks} (key, n, bytes) VALUES (?, ?, ?)`,
    remove: `DELETE FROM ${table} WHERE key = ?`,
    deleteChunks: `DELETE FROM ${chunks} WHERE key = ?`,
    anyChunk: `SELECT 1 AS one FROM ${chunks} LIMIT 1`,
  };
}

/** A BLOB as bytes: a Durable Object answers an ArrayBuffer, other SQLite bindings a Uint8Array. */
function bytesOf(value: SqlValue | undefined): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new KitError('storage_corrupt', `a stored key or value is not a BLOB (${value === null ? 'null' : typeof value})`);
}

/** Declared once, not per range() (see `storedPairs` in runtime/store/lmdb.ts). */
function* walkRows<V>(storage: SqliteStorage, options: RangeOptions): Generator<KeyValue<V>> {
  for (const row of storage.rowsIn(options)) yield { key: decodeKey(row.key), value: storage.decode(row.value) as V };
}
