export { CHUNK_BYTES, SqliteStorage, sqlOfDurableObject } from './sqlite.js';
export type { DurableObjectSqlStorage, SqlCursorLike, SqlLike, SqliteStorageOptions, SqlValue } from './sqlite.js';
export { decodeKey, encodeKey } from './key-bytes.js';
