import { setImmediate as turnEnd } from 'node:timers/promises';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { open as openLmdb } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { bundleForNode } from '../../test/helpers/bundle.js';
import { isKitError } from '../errors.js';
import { SqliteStorage } from '../../host/edge/storage/sqlite.js';
import { SqlJsDatabase, loadSqlJs } from '../../host/edge/storage/sql-js.js';
import { storableId } from '../../sdk/twin/storable.js';
import { compareKeys, partAfter, prefixEnd } from './keys.js';
import { openLmdbStorage } from './lmdb.js';
import { MemoryStorage } from './memory.js';
import type { Key, Storage } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const dirs: string[] = [];
const opened: Storage[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) if (s.alive) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// The edge variant's storage over sql.js, standing in for a Durable Object's SQLite.
const sqlJs = await loadSqlJs();

const implementations: [string, () => Storage][] = [
  ['MemoryStorage', () => new MemoryStorage()],
  ['SqliteStorage', () => new SqliteStorage(new SqlJsDatabase(sqlJs))],
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

  it('stores long key parts whole, and refuses the ones lmdb would mangle or misplace (U+0000–U+0004 or a lone surrogate in 63+ units) before any write', async () => {
    const s = storage();
    const long = 'x'.repeat(64);
    // Short parts with those characters are escaped and stay apart; long ones without them are stored whole.
    const fine: Key[] = [['k', 'a\u0000'], ['k', 'a', '\u0001'], ['k', `${long}\u0005y`], ['k', long, 'y'], ['k', `${long}\u{1F600}`]];
    s.transact((tx) => { for (const k of fine) tx.put(k, 1); });
    await s.durable();
    expect(keys(s, ['k'], ['l'])).toEqual([...fine].sort(compareKeys));
    for (const bad of [[`${long}\u0000y`], ['k', `${long}\u0004z`], ['k', `${long}\uD800`], ['k', `\uDC00${long}`], ['k', `${'x'.repeat(62)}\u0001`]] as Key[]) {
      expect(() => s.transact((tx) => { tx.put(['k', 'before'], 1); tx.put(bad, 2); }), JSON.stringify(bad)).toThrow(TypeError);
    }
    // Nearly 1,978 bytes once lmdb escapes each U+0000 of a short part twice: refused, not a failed commit.
    expect(() => s.transact((tx) => tx.put(['x'.repeat(1900), '\u0000'.repeat(40)], 1))).toThrow(TypeError);
    await s.durable();
    expect(keys(s, ['k'], ['l'])).toEqual([...fine].sort(compareKeys));
  });

  it('prefixEnd and partAfter bound the keys under a part of any length, after a commit as before it', async () => {
    const s = storage();
    // 62 units may hold U+0000 (lmdb escapes it); 63 and more may not, and a bound one unit
    // longer than a part of 63 is written bare by lmdb.
    for (const part of ['short', `${'p'.repeat(61)}\u0000`, 'q'.repeat(62), 'r'.repeat(63), 's'.repeat(70)]) {
      const under: Key[] = [['t', part], ['t', part, 0], ['t', part, 7], ['t', part, ''], ['t', part, 'deeper', 'still']];
      const beside: Key[] = [`${part}a`, `${part}\u{1F600}`, `${part}\u0005`, `${part}\u0001`].filter(storableId).map((p) => ['t', p]);
      const before: Key[] = [['t', part.slice(0, -1)]];
      s.transact((tx) => { for (const k of [...under, ...beside, ...before]) tx.put(k, k.length); });
      for (const when of ['staged', 'committed']) {
        const label = `${part.length} units, ${when}`;
        expect(keys(s, ['t', part], prefixEnd(['t', part])), label).toEqual([...under].sort(compareKeys));
        expect(keys(s, ['t', part], prefixEnd(['t', part]), true), label).toEqual([...under].sort(compareKeys).reverse());
        expect(keys(s, ['t', partAfter(part)], prefixEnd(['t'])).slice(0, beside.length), label).toEqual([...beside].sort(compareKeys));
        await s.durable();
        await turnEnd();
      }
      s.transact((tx) => { for (const k of [...under, ...beside, ...before]) tx.remove(k); });
    }
  });

  it('a walk sees the storage as it was when the walk began: not writes made during it, but those made before it, even after range()', async () => {
    const s = storage();
    s.transact((tx) => { for (let i = 1; i <= 4; i++) tx.put(['w', i], { v: i }); });
    await s.durable();
    for (const when of ['staged', 'committed']) {
      const seen: unknown[] = [];
      for (const { key, value } of s.range({ start: ['w'], end: ['x'] })) {
        seen.push(value);
        // Overwrite the next one, remove the last, add one past it.
        if (key[1] === 1) s.transact((tx) => { tx.put(['w', 2], { v: 'changed' }); tx.remove(['w', 4]); tx.put(['w', 5], { v: 5 }); });
      }
      expect(seen, when).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }, { v: 4 }]);
      if (when === 'committed') await s.durable();
      // Asked for now, walked after more writes (and, the second time, a commit): it shows them.
      const later = s.range({ start: ['w'], end: ['x'] });
      s.transact((tx) => tx.put(['w', 6], { v: 6 }));
      if (when === 'committed') {
        await s.durable();
        await turnEnd();
      }
      expect([...later].map((kv) => kv.key[1]), when).toEqual([1, 2, 3, 5, 6]);
      s.transact((tx) => { for (let i = 1; i <= 6; i++) tx.put(['w', i], { v: i }); tx.remove(['w', 5]); tx.remove(['w', 6]); });
      await s.durable();
    }
  });

  it('stores a value as it is when its transaction ends, and a transaction reads back what it put', () => {
    const s = storage();
    const value = { n: 1 };
    const inside = s.transact((tx) => {
      tx.put(['v'], value);
      value.n = 2;
      return tx.get<{ n: number }>(['v'])?.n;
    });
    expect(inside).toBe(2);
    expect(s.get(['v'])).toEqual({ n: 2 });
    value.n = 3;
    expect(s.get(['v'])).toEqual({ n: 2 });
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

  it('a shared value reads back wherever its stand-in was put, as a copy each time', () => {
    const s = storage();
    const customer = { id: 'cus_1', name: 'Ada', address: { city: 'Paris', lines: ['1 rue', null] }, balance: -0.5 };
    const event = { id: 'evt_1', data: { object: customer } };
    s.transact((tx) => {
      const c = tx.share(customer);
      const e = tx.share(event);
      tx.put(['log', 1], { position: 1, writes: [{ id: 'cus_1', value: c }, { id: 'evt_1', value: e }], again: [c], scalar: tx.share(7) });
      tx.put(['head', 'cus_1'], [1, c]);
      tx.put(['head', 'evt_1'], [1, e]);
    });
    expect(s.get(['log', 1])).toEqual({ position: 1, writes: [{ id: 'cus_1', value: customer }, { id: 'evt_1', value: event }], again: [customer], scalar: 7 });
    expect(s.get(['head', 'cus_1'])).toEqual([1, customer]);
    const read = s.get<[number, typeof customer]>(['head', 'cus_1']);
    read![1].address.city = 'Lyon';
    expect(s.get<[number, typeof customer]>(['head', 'cus_1'])![1].address.city).toBe('Paris');
    expect(() => s.transact((tx) => { tx.put(['head', 'x'], [2, tx.share(customer)]); throw new Error('boom'); })).toThrow('boom');
    expect(s.get(['head', 'x'])).toBeUndefined();
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
    // A Map stays a Map (msgpackr's plain unpack would make it an object); so do its keys.
    s.transact((tx) => tx.put(['m'], { m: new Map<unknown, unknown>([['a', 1], [2, 'b']]) }));
    const m = s.get<{ m: Map<unknown, unknown> }>(['m'])?.m;
    expect(m).toBeInstanceOf(Map);
    expect([...(m ?? [])]).toEqual([['a', 1], [2, 'b']]);
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

  // A value of its own shape per key: `{ s<i>_name, s<i>_nested: { s<i>_deep } }`.
  const shaped = (i: number): Record<string, unknown> => ({ [`s${i}_name`]: `v${i}`, [`s${i}_nested`]: { [`s${i}_deep`]: i } });

  it('keeps hundreds of object shapes as shared structures: a late shape is stored without its key names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const a = openLmdbStorage(dir);
    a.transact((tx) => { for (let i = 0; i < 300; i++) tx.put(['v', i], shaped(i)); });
    await a.durable();
    await a.close();
    const raw = openLmdb({ path: dir, encoding: 'binary', readOnly: true });
    const bytes = Buffer.from(raw.getBinary(['v', 250]) as Uint8Array);
    await raw.close();
    // msgpackr's default keeps 32 shapes; a later one carried its key list in every value.
    expect(bytes.includes('s250_name')).toBe(false);
    expect(bytes.length).toBeLessThan(16);
    const b = openLmdbStorage(dir);
    opened.push(b);
    expect([...b.range({ start: ['v'], end: ['w'] })].map((kv) => kv.value)).toEqual(Array.from({ length: 300 }, (_, i) => shaped(i)));
  });

  it('stores a shared value\'s bytes spliced in: the same bytes as a plain put, across a reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const a = openLmdbStorage(dir);
    const value = { id: 'pi_1', amount: 2000, metadata: { order: 'ord_7' }, charges: [{ id: 'ch_1', paid: true }] };
    // A head key's [position, record] is written without msgpackr: integers at each of its size boundaries, and others.
    const positions = [0, 1, 0x1f, 0x20, 0x3f, 0x40, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 2 ** 32 - 1, 2 ** 32, -1, 1.5];
    a.transact((tx) => {
      const v = tx.share(value);
      tx.put(['shared'], { position: 3, writes: [{ type: 'payment_intent', value: v }], head: [3, v] });
      tx.put(['plain'], { position: 3, writes: [{ type: 'payment_intent', value }], head: [3, value] });
      positions.forEach((n, i) => {
        tx.put(['shared-pair', i], [n, v]);
        tx.put(['plain-pair', i], [n, value]);
      });
    });
    await a.durable();
    await a.close();
    const raw = openLmdb({ path: dir, encoding: 'binary', readOnly: true });
    const bytes = (key: (string | number)[]): Buffer => Buffer.from(raw.getBinary(key) as Uint8Array);
    expect(bytes(['shared']).equals(bytes(['plain']))).toBe(true);
    positions.forEach((n, i) => expect(bytes(['shared-pair', i]).toString('hex'), `[${n}, value]`).toBe(bytes(['plain-pair', i]).toString('hex')));
    await raw.close();
    const b = openLmdbStorage(dir);
    opened.push(b);
    expect(b.get(['shared'])).toEqual({ position: 3, writes: [{ type: 'payment_intent', value }], head: [3, value] });
    positions.forEach((n, i) => expect(b.get(['shared-pair', i])).toEqual([n, value]));
  });

  it('shares a value of a new shape past the shared structures, where msgpackr defines shapes inside each value', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const a = openLmdbStorage(dir);
    // 4,096 shapes fill the shared structures; from then on a new shape is defined in the value that holds it.
    for (let from = 0; from < 4200; from += 600) a.transact((tx) => { for (let i = from; i < from + 600; i++) tx.put(['fill', i], { [`f${i}`]: i }); });
    const late = (i: number): Record<string, unknown> => ({ [`late${i}_a`]: i, [`late${i}_b`]: { [`late${i}_c`]: [i, { [`late${i}_d`]: 'x' }] } });
    // msgpackr numbers those shapes from 32 ids, in turn: 32 new shapes before the shared value
    // take every id once, so the value's own definitions, spliced in, would shadow some of them
    // for the same shapes used again after it.
    const many = Array.from({ length: 32 }, (_, i) => ({ [`many${i}`]: i }));
    const want = { before: many, value: late(1), after: many, again: late(1) };
    a.transact((tx) => {
      const v = tx.share(late(1));
      tx.put(['late', 1], { before: many, value: v, after: many, again: v });
      tx.put(['late', 2], [5, v, late(5)]);
    });
    expect(a.get(['late', 1])).toEqual(want);
    await a.durable();
    await a.close();
    const b = openLmdbStorage(dir);
    opened.push(b);
    expect(b.get(['late', 1])).toEqual(want);
    expect(b.get(['late', 2])).toEqual([5, late(1), late(5)]);
  });

  it('reads a store written with msgpackr\'s default of 32 shared shapes, and writes on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const old = openLmdb({ path: dir, encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') });
    old.transactionSync(() => { for (let i = 0; i < 60; i++) old.put(['v', i], { pair: [shaped(i), shaped(i + 1)] }); });
    await old.close();
    const want = (n: number): unknown[] => Array.from({ length: n }, (_, i) => ({ pair: [shaped(i), shaped(i + 1)] }));
    const a = openLmdbStorage(dir);
    expect([...a.range({ start: ['v'], end: ['w'] })].map((kv) => kv.value)).toEqual(want(60));
    a.transact((tx) => { for (let i = 60; i < 120; i++) tx.put(['v', i], { pair: [shaped(i), shaped(i + 1)] }); });
    await a.durable();
    await a.close();
    const b = openLmdbStorage(dir);
    opened.push(b);
    expect([...b.range({ start: ['v'], end: ['w'] })].map((kv) => kv.value)).toEqual(want(120));
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
    await turnEnd();
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

  it('when LMDB refuses a turn\'s write, stops with storage_failed; what was durable stays', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const a = openLmdbStorage(dir);
    a.transact((tx) => tx.put(['kept'], 1));
    await a.durable();
    // Stand-in for a refusal inside LMDB (a full disk, an I/O error) when the turn's writes go in.
    const db = (a as unknown as { db: { put: (key: unknown, value: unknown) => unknown } }).db;
    const put = db.put.bind(db);
    db.put = (key, value) => {
      if (JSON.stringify(key) === '["refused"]') throw new Error('MDB_MAP_FULL: Environment mapsize limit reached');
      return put(key, value);
    };
    a.transact((tx) => tx.put(['lost'], 1));
    a.transact((tx) => { tx.put(['also-lost'], 1); tx.put(['refused'], 1); });
    // Staged, so read at once; refused when the turn's transaction is written.
    expect(a.get(['also-lost'])).toBe(1);
    await expect(a.durable()).rejects.toMatchObject({ code: 'storage_failed' });
    expect(a.alive).toBe(false);
    expect(() => a.get(['kept'])).toThrow(/storage stopped/);
    expect(() => a.transact((tx) => tx.put(['after'], 1))).toThrow(/storage stopped/);
    await expect(a.durable()).rejects.toMatchObject({ code: 'storage_failed' });
    await a.close();
    const b = openLmdbStorage(dir);
    opened.push(b);
    expect([...b.range({ start: [''], end: ['\u{10FFFF}'] })].map((kv) => kv.key)).toEqual([['kept']]);
  });

  it('reads and ranges see a turn\'s staged writes over what is stored, in order, with limits and reverse', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const s = openLmdbStorage(dir);
    opened.push(s);
    s.transact((tx) => { for (const k of [1, 3, 5, 7]) tx.put(['r', k], `stored ${k}`); });
    await s.durable();
    // The turn's writes: a new key between stored ones, an overwrite, a removal, a key at each end.
    s.transact((tx) => { tx.put(['r', 4], 'staged 4'); tx.put(['r', 5], 'staged 5'); tx.remove(['r', 3]); tx.put(['r', 0], 'staged 0'); tx.put(['r', 9], 'staged 9'); });
    const walk = (reverse: boolean, limit?: number): string[] =>
      [...s.range<string>({ start: ['r'], end: ['r', 100], reverse, ...(limit === undefined ? {} : { limit }) })].map((kv) => `${String(kv.key[1])}=${kv.value}`);
    const forward = ['0=staged 0', '1=stored 1', '4=staged 4', '5=staged 5', '7=stored 7', '9=staged 9'];
    expect(walk(false)).toEqual(forward);
    expect(walk(true)).toEqual([...forward].reverse());
    expect(walk(false, 3)).toEqual(forward.slice(0, 3));
    expect(walk(true, 2)).toEqual(['9=staged 9', '7=stored 7']);
    expect(s.get(['r', 3])).toBeUndefined();
    expect(s.get(['r', 4])).toBe('staged 4');
    // A staged value comes back as a copy, like a stored one.
    const v = { n: 1 };
    s.transact((tx) => tx.put(['obj'], v));
    v.n = 2;
    const got = s.get<{ n: number }>(['obj']);
    expect(got).toEqual({ n: 1 });
    got!.n = 3;
    expect(s.get(['obj'])).toEqual({ n: 1 });
    // A string key part and a number part with the same text are different keys.
    s.transact((tx) => { tx.put(['k', '1'], 'string'); tx.put(['k', 1], 'number'); });
    expect([s.get(['k', '1']), s.get(['k', 1])]).toEqual(['string', 'number']);
    await s.durable();
    expect(walk(false)).toEqual(forward);
    expect([s.get(['k', '1']), s.get(['k', 1])]).toEqual(['string', 'number']);
  });

  it('a turn that stages thousands of keys commits part-way and reads stay whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    const s = openLmdbStorage(dir);
    opened.push(s);
    // Three transactions of 3,000 keys in one turn: more than one commit's worth.
    for (let t = 0; t < 3; t++) s.transact((tx) => { for (let i = 0; i < 3000; i++) tx.put(['bulk', t * 3000 + i], i); });
    s.transact((tx) => tx.remove(['bulk', 0]));
    expect([...s.range({ start: ['bulk'], end: ['bulk', 9000] })]).toHaveLength(8999);
    expect([...s.range({ start: ['bulk'], end: ['bulk', 9000], reverse: true, limit: 2 })].map((kv) => kv.key[1])).toEqual([8999, 8998]);
    expect(s.get(['bulk', 0])).toBeUndefined();
    expect(s.get(['bulk', 4500])).toBe(1500);
    await s.durable();
    await s.close();
    const again = openLmdbStorage(dir);
    opened.push(again);
    expect([...again.range({ start: ['bulk'], end: ['bulk', 9000] })]).toHaveLength(8999);
  });

  it('a worker thread ended in the middle of a turn holds no LMDB lock: the next one writes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-store-'));
    dirs.push(dir);
    // In the repository, so that the bundle's bare imports (lmdb) resolve.
    const file = join(here, '..', '..', 'dist', 'test-fixtures', 'runtime-store', `turn-worker-${process.pid}.mjs`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, await bundleForNode(join(here, 'turn-worker.child.ts')));
    const start = async (): Promise<Worker> => {
      const w = new Worker(file, { workerData: { dir: join(dir, 'db') } });
      await once(w, 'message');
      return w;
    };
    const first = await start();
    first.postMessage('write-and-hang');
    await once(first, 'message');
    // What the watchdog does to a runaway world.
    await first.terminate();
    const second = await start();
    second.postMessage('write');
    const [keys] = (await once(second, 'message')) as [Key[]];
    expect(keys).toEqual([['written']]);
    await second.terminate();
  }, 20_000);
});
