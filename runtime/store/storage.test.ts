import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isKitError } from '../errors.js';
import { compareKeys } from './keys.js';
import { openLmdbStorage } from './lmdb.js';
import { MemoryStorage } from './memory.js';
import type { Key, Storage } from './types.js';

const dirs: string[] = [];
const opened: Storage[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) if (s.alive) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const implementations: [string, () => Storage][] = [
  ['MemoryStorage', () => new MemoryStorage()],
  [
    'LmdbStorage',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
      dirs.push(dir);
      return openLmdbStorage(dir);
    },
  ],
];

function keys(s: Storage, start: Key, end: Key, reverse = false, limit?: number): Key[] {
  return [...s.range({ start, end, reverse, ...(limit === undefined ? {} : { limit }) })].map((kv) => kv.key);
}

// The same cases run against both implementations: the memory storage is the model.
describe.each(implementations)('%s', (_name, make) => {
  const storage = (): Storage => {
    const s = make();
    opened.push(s);
    return s;
  };

  it('orders keys numbers first, numerically, then strings by UTF-8 bytes, shorter prefix first', () => {
    const s = storage();
    const all: Key[] = [
      ['w', 'a', 10], ['w', 'a', 2], ['w', 'a'], ['w', 'a', 'b'], ['w', 'a', ''], ['w', 'b'],
      ['w', 'a', 0], ['w', 'é'], ['w', 'z'], ['w', '\u{1F600}'], ['w', '\uFFFF'], ['w', 'a\u0000'],
      ['w', 5], ['w', 'B'],
    ];
    s.transact((tx) => { for (const k of all) tx.put(k, k.join('/')); });
    const got = keys(s, ['w'], ['x']);
    expect(got).toEqual([
      ['w', 5], ['w', 'B'], ['w', 'a'], ['w', 'a', 0], ['w', 'a', 2], ['w', 'a', 10], ['w', 'a', ''],
      ['w', 'a', 'b'], ['w', 'a\u0000'], ['w', 'b'], ['w', 'z'], ['w', 'é'], ['w', '\uFFFF'], ['w', '\u{1F600}'],
    ]);
    // compareKeys (used by the memory storage) agrees with what the storage returned.
    const sorted = [...all].sort(compareKeys);
    expect(sorted).toEqual(got);
  });

  it('ranges are [start, end), reverse walks down from below end, limit caps', () => {
    const s = storage();
    s.transact((tx) => { for (let i = 1; i <= 20; i++) tx.put(['log', i], { i }); });
    expect(keys(s, ['log', 5], ['log', 8])).toEqual([['log', 5], ['log', 6], ['log', 7]]);
    expect(keys(s, ['log', 5], ['log', 8], true)).toEqual([['log', 7], ['log', 6], ['log', 5]]);
    expect(keys(s, ['log', 0], ['log', 100], true, 2)).toEqual([['log', 20], ['log', 19]]);
    expect(keys(s, ['log', 0], ['log', 100], false, 2)).toEqual([['log', 1], ['log', 2]]);
    expect(keys(s, ['log', 9], ['log', 9])).toEqual([]);
    expect(keys(s, ['log', 9], ['log', 3])).toEqual([]);
    expect(keys(s, ['log', 9], ['log', 3], true)).toEqual([]);
    const values = [...s.range<{ i: number }>({ start: ['log', 3], end: ['log', 5] })].map((kv) => kv.value.i);
    expect(values).toEqual([3, 4]);
  });

  it('a transaction that throws writes nothing', () => {
    const s = storage();
    s.transact((tx) => tx.put(['k', 1], 'one'));
    expect(() =>
      s.transact((tx) => {
        tx.put(['k', 1], 'changed');
        tx.put(['k', 2], 'two');
        tx.remove(['k', 1]);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(s.get(['k', 1])).toBe('one');
    expect(s.get(['k', 2])).toBeUndefined();
  });

  it('reads inside a transaction see its own writes; others see them once it returns', () => {
    const s = storage();
    const seen = s.transact((tx) => {
      tx.put(['a'], { n: 1 });
      const inside = tx.get<{ n: number }>(['a']);
      tx.remove(['a']);
      const afterRemove = tx.get(['a']);
      tx.put(['b'], 2);
      return { inside, afterRemove };
    });
    expect(seen).toEqual({ inside: { n: 1 }, afterRemove: undefined });
    expect(s.get(['a'])).toBeUndefined();
    expect(s.get(['b'])).toBe(2);
  });

  it('values come back as copies with msgpack semantics', () => {
    const s = storage();
    const value = { name: 'x', nested: { list: [1, 'two', null, true] }, bytes: new Uint8Array([1, 2]) };
    s.transact((tx) => tx.put(['v'], value));
    value.nested.list.push(99);
    const got = s.get<typeof value>(['v']);
    expect(got?.nested.list).toEqual([1, 'two', null, true]);
    expect([...(got?.bytes ?? [])]).toEqual([1, 2]);
    got!.name = 'mutated';
    expect(s.get<typeof value>(['v'])?.name).toBe('x');
  });

  it('refuses async transaction bodies and nested transactions, writing nothing', () => {
    const s = storage();
    expect(() => s.transact((tx) => { tx.put(['p'], 1); return Promise.resolve(1); })).toThrow(TypeError);
    expect(s.get(['p'])).toBeUndefined();
    expect(() => s.transact(() => s.transact(() => 1))).toThrow(TypeError);
  });

  it('refuses malformed keys with a TypeError', () => {
    const s = storage();
    expect(() => s.get([] as Key)).toThrow(TypeError);
    expect(() => s.get(['a', -1])).toThrow(TypeError);
    expect(() => s.get(['a', 1.5])).toThrow(TypeError);
    expect(() => s.transact((tx) => tx.put(['a', 'x'.repeat(3000)], 1))).toThrow(TypeError);
    // Near the limit: a key whose upper bound is over it but whose bytes are not.
    s.transact((tx) => tx.put(['a', 'x'.repeat(1900)], 1));
    expect(s.get(['a', 'x'.repeat(1900)])).toBe(1);
    expect(() => s.transact((tx) => tx.put(['a', 'é'.repeat(1000)], 1))).toThrow(TypeError);
  });

  it('durable() resolves, and concurrent callers all resolve', async () => {
    const s = storage();
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      s.transact((tx) => tx.put(['d', i], i));
      waits.push(s.durable());
    }
    await Promise.all(waits);
    expect(s.get(['d', 49])).toBe(49);
  });

  it('after close every use throws storage_closed', async () => {
    const s = storage();
    s.transact((tx) => tx.put(['a'], 1));
    await s.close();
    expect(s.alive).toBe(false);
    const code = (f: () => unknown): string | undefined => {
      try { f(); } catch (e) { return isKitError(e) ? e.code : 'not a KitError'; }
      return undefined;
    };
    expect(code(() => s.get(['a']))).toBe('storage_closed');
    expect(code(() => s.range({ start: ['a'], end: ['b'] }))).toBe('storage_closed');
    expect(code(() => s.transact(() => 1))).toBe('storage_closed');
    await expect(s.durable()).rejects.toMatchObject({ code: 'storage_closed' });
    await s.close(); // closing twice is harmless
  });
});

describe('LmdbStorage', () => {
  it('keeps what was committed across a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const a = openLmdbStorage(dir);
    a.transact((tx) => { tx.put(['x', 1], { hello: 'world' }); tx.put(['x', 2], { hello: 'again' }); });
    await a.durable();
    await a.close();
    const b = openLmdbStorage(dir);
    opened.push(b);
    expect([...b.range({ start: ['x'], end: ['y'] })].map((kv) => kv.value)).toEqual([{ hello: 'world' }, { hello: 'again' }]);
  });

  it('shares one sync among the callers of a turn, and queues a later caller behind a sync in flight', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const s = openLmdbStorage(dir);
    opened.push(s);
    s.transact((tx) => tx.put(['a'], 1));
    const first = s.durable();
    s.transact((tx) => tx.put(['b'], 2));
    // Both writes are in the turn's transaction: one commit, one sync for both callers.
    expect(s.durable()).toBe(first);
    await new Promise((resolve) => setImmediate(resolve));
    // The turn committed and its sync is in flight: a caller now waits for the next one,
    // which every caller arriving meanwhile shares.
    const second = s.durable();
    const third = s.durable();
    expect(second).toBe(third);
    expect(second).not.toBe(first);
    await Promise.all([first, second, third]);
    const fourth = s.durable();
    expect(fourth).not.toBe(second);
    await fourth;
  });

  it('commits a turn\'s transactions together; one that throws or holds a bad value writes nothing and the rest stand', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const a = openLmdbStorage(dir);
    a.transact((tx) => tx.put(['t', 1], 'one'));
    // A later transaction of the same turn reads the earlier one's write.
    a.transact((tx) => tx.put(['t', 2], `${tx.get<string>(['t', 1])} and two`));
    expect(() => a.transact((tx) => { tx.put(['t', 3], 'three'); throw new Error('boom'); })).toThrow('boom');
    expect(() => a.transact((tx) => { tx.put(['t', 4], 'four'); tx.put(['t', 5], { n: 2n ** 70n }); })).toThrow(/too large/);
    expect(() => a.transact((tx) => { tx.put(['t', 6], 'six'); tx.put(['t', 'x'.repeat(2000)], 1); })).toThrow(TypeError);
    a.transact((tx) => tx.remove(['t', 1]));
    expect(a.alive).toBe(true);
    await a.durable();
    await a.close();
    const b = openLmdbStorage(dir);
    opened.push(b);
    expect([...b.range({ start: ['t'], end: ['u'] })]).toEqual([{ key: ['t', 2], value: 'one and two' }]);
  });

  it('when LMDB refuses a write, rolls back the turn and stops with storage_failed; what was durable stays', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const a = openLmdbStorage(dir);
    a.transact((tx) => tx.put(['kept'], 1));
    await a.durable();
    a.transact((tx) => tx.put(['lost'], 1));
    const lostWait = a.durable();
    // Stand-in for a refusal inside LMDB (a full disk, an I/O error): the second write of a
    // transaction fails after its first went into the turn's shared transaction.
    const db = (a as unknown as { db: { put: (key: unknown, value: unknown) => unknown } }).db;
    const put = db.put.bind(db);
    db.put = (key, value) => {
      if (JSON.stringify(key) === '["refused"]') throw new Error('MDB_MAP_FULL: Environment mapsize limit reached');
      return put(key, value);
    };
    let code: string | undefined;
    try {
      a.transact((tx) => { tx.put(['also-lost'], 1); tx.put(['refused'], 1); });
    } catch (e) {
      code = isKitError(e) ? e.code : 'not a KitError';
    }
    expect(code).toBe('storage_failed');
    expect(a.alive).toBe(false);
    await expect(lostWait).rejects.toMatchObject({ code: 'storage_failed' });
    expect(() => a.get(['kept'])).toThrow(/storage stopped/);
    await expect(a.durable()).rejects.toMatchObject({ code: 'storage_failed' });
    await a.close();
    const b = openLmdbStorage(dir);
    opened.push(b);
    expect([...b.range({ start: [''], end: ['\u{10FFFF}'] })].map((kv) => kv.key)).toEqual([['kept']]);
  });
});
