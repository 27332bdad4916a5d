/**
 * The storage the world engine stands on: small, synchronous and transactional, so that
 * the LMDB implementation and a Durable Object implementation can serve the same engine.
 *
 * Keys are arrays of strings and non-negative integers, compared element by element
 * (strings by UTF-8 bytes, numbers numerically, a shorter prefix first), as lmdb's
 * ordered-binary keys are. A stored string part holds no lone surrogate, and one of 63 or
 * more UTF-16 units no U+0000–U+0004 (sdk/twin/storable.ts); a range's bound "just after"
 * a part is `partAfter` / `prefixEnd` (keys.ts), not the part with U+0000 appended, which
 * lmdb misplaces past 63 units. Values are anything msgpack can hold (with records: a Map
 * reads back as a Map).
 */
export type KeyPart = string | number;
export type Key = readonly KeyPart[];

export interface RangeOptions {
  /** Inclusive lower bound. */
  start: Key;
  /** Exclusive upper bound. */
  end: Key;
  /** Newest (greatest key) first. `start` is still the lower bound. */
  reverse?: boolean;
  limit?: number;
}

export interface KeyValue<V = unknown> {
  key: Key;
  value: V;
}

/** Writes inside one transaction. */
export interface StorageWriter {
  /**
   * The key and value are the storage's until `transact` returns (it encodes them then): a
   * value changed before that is stored as changed.
   */
  put(key: Key, value: unknown): void;
  remove(key: Key): void;
  /** Reads inside the transaction see its own earlier writes (a value put: that same object). */
  get<V = unknown>(key: Key): V | undefined;
  /**
   * A stand-in for `value`, to place inside the values this transaction puts (at any depth,
   * any number of times): each reads back as if `value` itself were there. The storage may
   * encode `value` once for all of them (a log entry and the head keys hold the same record
   * values). Only for `put`: `get` inside the transaction hands the stand-in back as it was.
   */
  share(value: unknown): unknown;
}

export interface Storage {
  get<V = unknown>(key: Key): V | undefined;
  /**
   * The pairs in a range, as the storage is when the walk asks for the first: writes made while
   * it goes on neither show nor shift it, and a range asked for before a write and walked after
   * it shows the write. Walk it once.
   */
  range<V = unknown>(options: RangeOptions): Iterable<KeyValue<V>>;
  /**
   * Runs `fn` in one atomic write transaction. Its writes are visible to reads as soon
   * as it returns, but are durable only once `durable()` resolves. If `fn` throws,
   * nothing is written.
   */
  transact<T>(fn: (writer: StorageWriter) => T): T;
  /**
   * Resolves once every transaction committed before the call is on disk. Calls that
   * arrive while a flush is in flight share the next one (group commit).
   */
  durable(): Promise<void>;
  close(): Promise<void>;
  readonly alive: boolean;
}
