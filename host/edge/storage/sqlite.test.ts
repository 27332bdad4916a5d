// The shared Storage cases run against SqliteStorage in runtime/store/storage.test.ts; these
// are what only this storage has: its key bytes, chunked values, SQLite refusing a write, and
// a database opened again.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../../test/helpers/random.js';
import { codeOf } from '../../../test/helpers/storages.js';
import { compareKeys, prefixEnd } from '../../../runtime/store/keys.js';
import type { Key, KeyPart } from '../../../runtime/store/types.js';
import { decodeKey, encodeKey } from './key-bytes.js';
import { SqlJsDatabase, loadSqlJs } from './sql-js.js';
import { CHUNK_BYTES, type SqlLike, SqliteStorage } from './sqlite.js';

const sqlJs = await loadSqlJs();
const databases: SqlJsDatabase[] = [];
afterEach(() => {
  for (const db of databases.splice(0)) db.close();
});

function database(bytes?: Uint8Array): SqlJsDatabase {
  const db = new SqlJsDatabase(sqlJs, bytes);
  databases.push(db);
  return db;
}

/** memcmp order, as SQLite compares BLOBs. */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}

const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

/** `n` bytes of a pattern of its own (`seed`). */
function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

/**
 * A value as text, its byte arrays as their SHA-256 (vitest's deep equality walks a
 * megabyte array element by element, for seconds): equal digests, equal values.
 */
function digest(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Uint8Array) return `bytes ${v.length} ${createHash('sha256').update(v).digest('hex')}`;
    if (v instanceof Map) return { map: [...v] };
    return v;
  });
}

/** Random keys made to collide: shared prefixes, parts that are prefixes of each other, the edges of each range of characters. */
function keyMaker(seed: number): () => Key {
  const next = seededRandom(seed);
  const rand = (n: number): number => Math.floor(next() * n);
  const chars = ['', 'a', 'b', '\u0000', '\u0001', '\u007f', '\u0080', 'é', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff',
    '\u{10000}', '\u{1F600}', '\u{10FFFF}', '\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00'];
  const numbers = [0, 1, 2, 255, 256, 0xffff_ffff, 0x1_0000_0000, 2 ** 40, Number.MAX_SAFE_INTEGER - 1, Number.MAX_SAFE_INTEGER];
  const text = (): string => Array.from({ length: rand(4) }, () => chars[rand(chars.length)] as string).join('');
  const part = (): KeyPart => (rand(3) === 0 ? (rand(2) === 0 ? (numbers[rand(numbers.length)] as number) : rand(1000)) : text());
  const pool: Key[] = [];
  return () => {
    // Half the time a key grown from, or cut from, an earlier one: prefixes and shared heads.
    const base = pool.length > 0 && rand(2) === 0 ? (pool[rand(pool.length)] as Key) : [];
    const key = rand(2) === 0 ? [...base, ...Array.from({ length: 1 + rand(2) }, part)] : [...base.slice(0, rand(base.length + 1)), part()];
    pool.push(key);
    return key;
  };
}

describe('key bytes', () => {
  it('order byte by byte as compareKeys orders keys, and decode to the same key (random keys)', () => {
    const makeKey = keyMaker(32);
    const keys = Array.from({ length: 3000 }, makeKey);
    for (const key of keys) expect(decodeKey(encodeKey(key)), JSON.stringify(key)).toEqual(key);
    const encoded = keys.map(encodeKey);
    for (let i = 0; i < 20_000; i++) {
      const a = (i * 7919) % keys.length;
      const b = (i * 104_729 + 13) % keys.length;
      const want = sign(compareKeys(keys[a] as Key, keys[b] as Key));
      expect(sign(compareBytes(encoded[a] as Uint8Array, encoded[b] as Uint8Array)), `${JSON.stringify(keys[a])} vs ${JSON.stringify(keys[b])}`).toBe(want);
    }
    // And sorted whole: the same order either way.
    const byKeys = [...keys.keys()].sort((a, b) => compareKeys(keys[a] as Key, keys[b] as Key));
    const byBytes = [...keys.keys()].sort((a, b) => compareBytes(encoded[a] as Uint8Array, encoded[b] as Uint8Array));
    expect(byBytes.map((i) => keys[i])).toEqual(byKeys.map((i) => keys[i]));
  });

  it('keep the edges apart: a key and its extensions, "" and U+0000, a number and the same digits as text', () => {
    const ordered: Key[] = [
      [0], [1], [Number.MAX_SAFE_INTEGER], [''], ['', 0], ['', ''], ['\u0000'], ['\u0000', 0], ['\u0000\u0000'], ['\u0001'], ['0'],
      ['a'], ['a', 0], ['a', 'b'], ['a\u0000'], ['a\u0000b'], ['ab'], ['\uffff'], ['\ud800'], ['\ud800', 'x'], ['\ud800\ud800'],
      ['\u{10000}'], ['\u{103ff}'], ['\ud801'], ['\u{10400}'], ['\u{10FFFF}'], ['\udc00'], ['\udfff'],
    ];
    expect([...ordered].sort(compareKeys)).toEqual(ordered);
    const bytes = ordered.map(encodeKey);
    for (let i = 1; i < bytes.length; i++) expect(compareBytes(bytes[i - 1] as Uint8Array, bytes[i] as Uint8Array), JSON.stringify(ordered[i])).toBeLessThan(0);
    for (const key of ordered) expect(decodeKey(encodeKey(key))).toEqual(key);
  });

  it('refuses bytes it never writes as storage_corrupt', () => {
    const bad = [[], [0x03], [0x01, 0, 0], [0x02, 0x61], [0x02, 0xc0, 0x80, 0x00], [0x02, 0xed, 0xa0, 0x80, 0x00], [0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
      [0x02, 0xf0, 0x90, 0x80], [0x02, 0xf8, 0x80]].map((b) => new Uint8Array(b));
    for (const b of bad) expect(codeOf(() => decodeKey(b)), [...b].join(',')).toBe('storage_corrupt');
    // A lone high surrogate is written only at its block's first code point.
    expect(codeOf(() => decodeKey(new Uint8Array([0x02, 0xf0, 0x90, 0x81, 0x7f, 0x00])))).toBe('storage_corrupt');
  });
});

describe('SqliteStorage', () => {
  it('walks random keys in compareKeys order, SQLite comparing their bytes, bounded by prefixEnd', () => {
    const s = new SqliteStorage(database());
    const makeKey = keyMaker(7);
    const keys = new Map<string, Key>();
    for (let i = 0; i < 1500; i++) {
      const key = ['t', ...makeKey()];
      keys.set(JSON.stringify(key), key);
    }
    s.transact((tx) => { for (const key of keys.values()) tx.put(key, key.length); });
    const all = [...keys.values()].sort(compareKeys);
    expect([...s.range({ start: ['t'], end: ['u'] })].map((kv) => kv.key)).toEqual(all);
    expect([...s.range({ start: ['t'], end: ['u'], reverse: true, limit: 50 })].map((kv) => kv.key)).toEqual(all.slice(-50).reverse());
    // Every key under a prefix, and nothing else, for prefixes taken from the keys themselves.
    for (const key of all.filter((_, i) => i % 37 === 0)) {
      const prefix = key.slice(0, 2);
      const under = all.filter((k) => k.length >= prefix.length && compareKeys(k.slice(0, prefix.length), prefix) === 0);
      expect([...s.range({ start: prefix, end: prefixEnd(prefix) })].map((kv) => kv.key), JSON.stringify(prefix)).toEqual(under);
    }
  });

  it('splits a value over CHUNK_BYTES across rows and reads it back whole, in get and range, and an overwrite or remove leaves no chunk behind', () => {
    const db = database();
    const s = new SqliteStorage(db);
    const chunkRows = (): number => db.exec<{ n: number }>('SELECT count(*) AS n FROM kit_kv_chunks').one().n;
    // Bytes pack as themselves plus a 5-byte header: one at the limit, one just over, one of three chunks and a bit.
    const atLimit = bytes(CHUNK_BYTES - 5, 1);
    const justOver = bytes(CHUNK_BYTES - 4, 2);
    const large = { name: 'large', parts: [bytes(CHUNK_BYTES, 3), bytes(CHUNK_BYTES, 4), bytes(CHUNK_BYTES + 17, 5)], map: new Map([['k', 1]]) };
    s.transact((tx) => {
      tx.put(['v', 1], atLimit);
      tx.put(['v', 2], justOver);
      tx.put(['v', 3], large);
      tx.put(['v', 4], 'small');
    });
    expect(chunkRows()).toBe(1 + 3);
    expect(digest(s.get(['v', 1]))).toBe(digest(atLimit));
    expect(digest(s.get(['v', 2]))).toBe(digest(justOver));
    const read = s.get<typeof large>(['v', 3]);
    expect(digest(read)).toBe(digest(large));
    expect(read?.map).toBeInstanceOf(Map);
    expect([...s.range({ start: ['v'], end: ['w'], reverse: true })].map((kv) => digest(kv.value))).toEqual(['small', large, justOver, atLimit].map(digest));
    // A walk begun before an overwrite sees the value as it was, whole.
    const seen: string[] = [];
    for (const { key, value } of s.range({ start: ['v', 2], end: ['v', 4] })) {
      if (key[1] === 2) s.transact((tx) => { tx.put(['v', 3], 'now small'); tx.put(['v', 2], 'also small'); });
      seen.push(digest(value));
    }
    expect(seen).toEqual([justOver, large].map(digest));
    expect(chunkRows()).toBe(0);
    s.transact((tx) => tx.put(['v', 5], large));
    expect(chunkRows()).toBe(3);
    s.transact((tx) => tx.remove(['v', 5]));
    expect(chunkRows()).toBe(0);
    expect(s.get(['v', 5])).toBeUndefined();
    expect([...s.range({ start: ['v'], end: ['w'] })].map((kv) => digest(kv.value))).toEqual([atLimit, 'also small', 'now small', 'small'].map(digest));
  });

  it('a transaction that throws after putting a large value, or whose write SQLite refuses part-way, writes nothing and the storage goes on', () => {
    const db = database();
    let refuseChunks = false;
    // SQLite refusing a statement in the middle of the transaction (a full database, a row too big).
    const failing: SqlLike = {
      exec: (query, ...bindings) => {
        if (refuseChunks && query.startsWith('INSERT INTO kit_kv_chunks')) throw new Error('database or disk is full: SQLITE_FULL');
        return db.exec(query, ...bindings);
      },
      transactionSync: (fn) => db.transactionSync(fn),
    };
    const s = new SqliteStorage(failing);
    s.transact((tx) => { tx.put(['k', 1], 'one'); tx.put(['k', 2], 'two'); });
    const large = bytes(CHUNK_BYTES * 2, 7);
    expect(() => s.transact((tx) => { tx.put(['k', 1], large); tx.put(['k', 3], 'three'); throw new Error('boom'); })).toThrow('boom');
    refuseChunks = true;
    expect(() => s.transact((tx) => { tx.put(['k', 0], 'zero'); tx.remove(['k', 2]); tx.put(['k', 1], large); tx.put(['k', 3], 'three'); })).toThrow('SQLITE_FULL');
    expect(s.alive).toBe(true);
    expect([...s.range({ start: ['k'], end: ['l'] })]).toEqual([{ key: ['k', 1], value: 'one' }, { key: ['k', 2], value: 'two' }]);
    expect(db.exec<{ n: number }>('SELECT count(*) AS n FROM kit_kv_chunks').one().n).toBe(0);
    refuseChunks = false;
    s.transact((tx) => tx.put(['k', 1], large));
    expect(digest(s.get(['k', 1]))).toBe(digest(large));
  });

  it('opened again over the same database (a Durable Object woken after eviction, or the bytes of a restart), has what was committed', async () => {
    const db = database();
    const a = new SqliteStorage(db);
    const large = { blob: bytes(CHUNK_BYTES + 100, 3) };
    a.transact((tx) => {
      tx.put(['x', 1], { hello: 'world', m: new Map<unknown, unknown>([['a', 1], [2, 'b']]) });
      tx.put(['x', 2], large);
      tx.put(['x', '\u{1F600}'], [1, 2]);
    });
    expect(() => a.transact((tx) => { tx.put(['x', 3], 'never'); throw new Error('boom'); })).toThrow('boom');
    await a.durable();
    await a.close();
    expect(codeOf(() => a.get(['x', 1]))).toBe('storage_closed');
    const want = [
      { key: ['x', 1], value: { hello: 'world', m: new Map<unknown, unknown>([['a', 1], [2, 'b']]) } },
      { key: ['x', 2], value: large },
      { key: ['x', '\u{1F600}'], value: [1, 2] },
    ];
    const b = new SqliteStorage(db);
    expect(digest([...b.range({ start: ['x'], end: ['y'] })])).toBe(digest(want));
    const c = new SqliteStorage(database(db.snapshot()));
    expect(digest([...c.range({ start: ['x'], end: ['y'] })])).toBe(digest(want));
    expect(c.get<{ m: unknown }>(['x', 1])?.m).toBeInstanceOf(Map);
    // It writes on where it was.
    c.transact((tx) => tx.put(['x', 0], 'first'));
    expect([...c.range({ start: ['x'], end: ['y'], limit: 1 })]).toEqual([{ key: ['x', 0], value: 'first' }]);
  });

  it('keeps two tables in one database apart, refuses a bad table name, and a table of another format', () => {
    const db = database();
    const a = new SqliteStorage(db);
    const b = new SqliteStorage(db, { table: 'other_kv' });
    a.transact((tx) => tx.put(['k'], 'a'));
    b.transact((tx) => tx.put(['k'], 'b'));
    expect([a.get(['k']), b.get(['k'])]).toEqual(['a', 'b']);
    for (const table of ['', 'Kit', 'kit kv', 'kit;drop', '1kv', 'x'.repeat(49)]) expect(() => new SqliteStorage(db, { table })).toThrow(TypeError);
    db.exec("UPDATE other_kv_meta SET value = '2' WHERE name = 'format'");
    expect(codeOf(() => new SqliteStorage(db, { table: 'other_kv' }))).toBe('storage_corrupt');
    expect(a.get(['k'])).toBe('a');
  });
});
