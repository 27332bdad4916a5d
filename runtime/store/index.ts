export type { Key, KeyPart, KeyValue, RangeOptions, Storage, StorageWriter } from './types.js';
export { compareKeys } from './keys.js';
export { MemoryStorage, MAX_KEY_BYTES } from './memory.js';
export { LmdbStorage, openLmdbStorage } from './lmdb.js';
