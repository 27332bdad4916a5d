export type { Key, KeyPart, KeyValue, RangeOptions, Storage, StorageWriter } from './types.js';
export { compareKeys, MAX_KEY_BYTES } from './keys.js';
export { MemoryStorage } from './memory.js';
export { LmdbStorage, openLmdbStorage } from './lmdb.js';
