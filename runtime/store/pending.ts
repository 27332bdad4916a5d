/**
 * A transaction's writes held back until its function returns, for a storage that encodes and
 * applies them only then (memory.ts, and the edge's SQLite storage): a throw leaves nothing
 * behind, a value changed before the end is stored as it is then, and the function's own reads
 * see its writes. lmdb's storage has its own, over lmdb's write transaction.
 */
import { KeyMap, assertKey, assertSynchronous } from './keys.js';
import type { Key, StorageWriter } from './types.js';

/** A write waiting for its transaction to end (the last one per key). */
export interface PendingWrite {
  key: Key;
  value: unknown;
  removed: boolean;
}

/**
 * Runs `fn` with a writer whose writes wait, reads falling through to `read`; answers what `fn`
 * answered and the writes, one per key, in the order their keys were first written.
 */
export function collectWrites<T>(read: <V>(key: Key) => V | undefined, fn: (writer: StorageWriter) => T): { result: T; writes: PendingWrite[] } {
  const pending = new KeyMap<PendingWrite>();
  const writer: StorageWriter = {
    put: (key, value) => {
      assertKey(key);
      pending.set(key, { key, value, removed: false });
    },
    remove: (key) => {
      assertKey(key);
      pending.set(key, { key, value: undefined, removed: true });
    },
    get: <V>(key: Key): V | undefined => {
      assertKey(key);
      const p = pending.get(key);
      if (p !== undefined) return p.removed ? undefined : (p.value as V);
      return read<V>(key);
    },
    // Packed as itself wherever it is put: each value is encoded on its own.
    share: (value) => value,
  };
  const result = fn(writer);
  assertSynchronous(result);
  return { result, writes: [...pending.values()] };
}
