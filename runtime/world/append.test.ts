/**
 * What appendBatch keeps in memory and what it writes agree with what a fresh store reads
 * back from storage: counts at head, existence, values at head and at every earlier
 * position, in worlds and their branches, across batches, deletions, refused batches and
 * a restart; and worlds written in the key layouts of earlier versions.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seededRandom as random } from '../../test/helpers/random.js';
import { storageBackends } from '../../test/helpers/storages.js';
import { openLmdbStorage } from '../store/lmdb.js';
import type { Storage } from '../store/types.js';
import { canonicalJson } from './canonical.js';
import type { EntryDraft, RecordWrite } from './types.js';
import { type World, WorldStore } from './world.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
/** Id bounds noted every few positions (1,024 by default), so walks at past positions use them. */
const BOUNDS_EVERY = 3;
const { backends, cleanups } = storageBackends('kit-append-');
const TYPES = ['customer', 'price', 'ix.customer.acct_1'];
const cause: EntryDraft['cause'] = { kind: 'request', method: 'POST', route: 'POST /v1/x', path: '/v1/x', status: 200, requestId: 'r' };

/** The records of one twin as a replay of its writes sees them, position by position. */
class Model {
  live = new Map<string, unknown>();
  /** States after each position; index 0 is the empty tree. */
  states: Map<string, unknown>[] = [new Map()];

  constructor(from?: Model, cut?: number) {
    if (from !== undefined) {
      this.states = from.states.slice(0, (cut ?? from.states.length - 1) + 1);
      this.live = new Map(this.states[this.states.length - 1]);
    }
  }

  apply(writes: RecordWrite[]): void {
    for (const w of writes) {
      const k = `${w.type}\u0000${w.id}`;
      if (w.value === null) this.live.delete(k);
      else this.live.set(k, w.value);
    }
    this.states.push(new Map(this.live));
  }

  count(type: string, at = this.states.length - 1): number {
    let n = 0;
    for (const k of (this.states[at] as Map<string, unknown>).keys()) if (k.startsWith(`${type}\u0000`)) n++;
    return n;
  }

  value(type: string, id: string, at = this.states.length - 1): unknown {
    return (this.states[at] as Map<string, unknown>).get(`${type}\u0000${id}`);
  }
}

/** Record ids `id_000`, `id_001`, …: a pool that grows with time, so later writes make ids above every earlier one (as ordered ids do) beside updates and deletions of old ones. */
const idOf = (k: number): string => `id_${String(k).padStart(3, '0')}`;
const poolAt = (now: number): number => 6 + Math.floor((now - T0) / 8000);

function writesFor(rnd: () => number, n: number, now: number): RecordWrite[] {
  return Array.from({ length: n }, () => {
    const type = TYPES[Math.floor(rnd() * TYPES.length)] as string;
    const id = idOf(Math.floor(rnd() * poolAt(now)));
    return { type, id, value: rnd() < 0.3 ? null : { n: Math.floor(rnd() * 1000), tags: ['a', { b: rnd() < 0.5 }] } };
  });
}

/** Random appends and batches (some refused whole) on `w`, mirrored in `m`. */
function drive(w: World, m: Model, rnd: () => number, steps: number, clock: { now: number }): void {
  for (let i = 0; i < steps; i++) {
    clock.now += 1000;
    const r = rnd();
    if (r < 0.5) {
      const writes = writesFor(rnd, 1 + Math.floor(rnd() * 4), clock.now);
      w.append('stripe', { cause, writes });
      m.apply(writes);
    } else if (r < 0.85) {
      const drafts = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({ cause, writes: writesFor(rnd, 1 + Math.floor(rnd() * 3), clock.now) }));
      w.appendBatch('stripe', drafts);
      for (const d of drafts) m.apply(d.writes);
    } else {
      // A batch refused at its last draft leaves nothing behind, in storage or in memory.
      const drafts: EntryDraft[] = [{ cause, writes: writesFor(rnd, 2, clock.now) }, { cause, writes: [{ type: 'customer', id: '', value: 1 }] }];
      expect(() => w.appendBatch('stripe', drafts)).toThrow();
    }
    for (const type of TYPES) expect(w.countRecords('stripe', type)).toBe(m.count(type));
  }
}

/** World `acme` in `store`, driven `steps` random appends, with its model. */
function grownWorld(store: WorldStore, rnd: () => number, steps: number, clock: { now: number }): { root: World; rm: Model } {
  const root = store.createWorld('acme', { twins: ['stripe'] });
  const rm = new Model();
  drive(root, rm, rnd, steps, clock);
  return { root, rm };
}

/** Branch `b` of `root` as of now, driven `steps` random appends, with its model. */
function grownBranch(root: World, rm: Model, rnd: () => number, steps: number, clock: { now: number }): { br: World; bm: Model } {
  const br = root.branch({ label: 'b' }).world;
  const bm = new Model(rm);
  drive(br, bm, rnd, steps, clock);
  return { br, bm };
}

/** Everything the model knows, read through `w` (a fresh store reads only storage). */
function check(w: World, m: Model): void {
  const head = m.states.length - 1;
  // One past the highest id ever written: never-written ids are read too.
  const ids = 1 + Math.max(0, ...m.states.flatMap((st) => [...st.keys()].map((k) => Number(k.slice(k.indexOf('\u0000') + 4)))));
  expect(w.head('stripe')).toBe(head);
  expect(w.counts('stripe')).toEqual(TYPES.map((type) => ({ type, count: m.count(type) })).filter((c) => c.count > 0).sort((a, b) => (a.type < b.type ? -1 : 1)));
  for (let at = 0; at <= head; at++) {
    for (const type of TYPES) {
      expect(w.countRecords('stripe', type, at)).toBe(m.count(type, at));
      for (let i = 0; i <= ids; i++) expect(w.getRecord('stripe', type, idOf(i), at)).toEqual(m.value(type, idOf(i), at));
    }
  }
  for (let at = 0; at <= head; at++) {
    const records: Record<string, Record<string, unknown>> = {};
    for (const type of TYPES) {
      const want = [...(m.states[at] as Map<string, unknown>)]
        .filter(([k]) => k.startsWith(`${type}\u0000`))
        .map(([k, value]) => ({ id: k.slice(type.length + 1), value }))
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      expect(w.listRecords('stripe', type, { limit: 1000, at }).records).toEqual(want);
      expect(w.listRecords('stripe', type, { limit: 1000, at, reverse: true }).records).toEqual([...want].reverse());
      const page = w.listRecords('stripe', type, { limit: 2, at, after: 'id_001' });
      expect(page.records).toEqual(want.filter((r) => r.id > 'id_001').slice(0, 2));
      const back = w.listRecords('stripe', type, { limit: 2, at, before: 'id_004', reverse: true });
      expect(back.records).toEqual(want.filter((r) => r.id < 'id_004').reverse().slice(0, 2));
      expect(back.hasMore).toBe(want.filter((r) => r.id < 'id_004').length > 2);
      if (want.length > 0) records[type] = Object.fromEntries(want.map((r) => [r.id, r.value]));
    }
    expect(Buffer.from(w.checkpoint('stripe', at)).toString()).toBe(canonicalJson({ position: at, records, twin: 'stripe' }));
  }
  for (let p = 1; p <= head; p++) {
    const entry = w.entry('stripe', p);
    expect(entry?.position).toBe(p);
  }
}

describe.each(backends)('appendBatch bookkeeping on %s storage', (_name, makeStorage) => {
  function setup(): { storage: Storage; store: WorldStore; clock: { now: number } } {
    const storage = makeStorage();
    cleanups.push(async () => {
      if (storage.alive) await storage.close();
    });
    const clock = { now: T0 };
    return { storage, clock, store: new WorldStore(storage, { now: () => clock.now, boundsEvery: BOUNDS_EVERY }) };
  }

  it('counts and records agree with a replay, in a world, a branch as of now and a branch at a past instant', () => {
    const { storage, store, clock } = setup();
    const rnd = random(7);
    const { root, rm } = grownWorld(store, rnd, 60, clock);
    // Counts read at head before the branches are made, so memory holds them.
    for (const type of TYPES) root.countRecords('stripe', type);

    const now = root.branch({ label: 'now' }).world;
    const nm = new Model(rm);
    const cut = 25;
    const pastAt = root.entry('stripe', cut)?.occurredAt as string;
    const past = root.branch({ at: pastAt, label: 'past' }).world;
    const pm = new Model(rm, root.historyCut(pastAt).views.stripe?.position);
    drive(root, rm, rnd, 30, clock);
    drive(now, nm, rnd, 30, clock);
    drive(past, pm, rnd, 30, clock);
    const sub = now.branch({ label: 'sub' }).world;
    const sm = new Model(nm);
    drive(sub, sm, rnd, 20, clock);
    drive(now, nm, rnd, 10, clock);

    for (const [w, m] of [[root, rm], [now, nm], [past, pm], [sub, sm]] as const) check(w, m);
    // A fresh store knows only what storage holds. The past branch's meta loses its base's id
    // bounds, as a branch made before they were recorded: it reads the same without them.
    const pastId = storage.get<string>(['#world', past.name]) as string;
    const { ids, ...base } = (storage.get<{ base: { ids?: unknown } }>([pastId, '#meta']) as { base: { ids?: unknown } }).base;
    expect(ids).toBeDefined();
    storage.transact((tx) => tx.put([pastId, '#meta'], { ...(storage.get([pastId, '#meta']) as object), base }));
    const fresh = new WorldStore(storage, { now: () => clock.now, boundsEvery: BOUNDS_EVERY });
    for (const [w, m] of [[root, rm], [now, nm], [past, pm], [sub, sm]] as const) check(fresh.openWorld(w.name), m);
  });

  /**
   * A world and its branch grown by this version, rewritten by `rewrite` into the key layout an
   * earlier version wrote, then read by a fresh store and appended on.
   */
  function readsOlderLayout(seed: number, rewrite: (storage: Storage) => void): void {
    const { storage, store, clock } = setup();
    const rnd = random(seed);
    const { root, rm } = grownWorld(store, rnd, 40, clock);
    const { br, bm } = grownBranch(root, rm, rnd, 20, clock);
    drive(root, rm, rnd, 10, clock);
    rewrite(storage);
    reopenAndAppendOn(new WorldStore(storage, { now: () => clock.now, boundsEvery: BOUNDS_EVERY }), br.name, rm, bm, rnd, clock);
  }

  it('reads worlds written before newest versions lived only in their head keys, and appends on', () => {
    readsOlderLayout(23, (storage) => {
      // Earlier versions also wrote each record's newest version under its version key.
      const heads = [...storage.range<[number, unknown]>({ start: ['w'], end: ['w\uffff'] })].filter((kv) => kv.key[2] === 'head');
      expect(heads.length).toBeGreaterThan(0);
      storage.transact((tx) => {
        for (const { key, value } of heads) tx.put([key[0]!, key[1]!, 'rec', key[3]!, key[4]!, value[0]], value[1]);
      });
    });
  });

  it('deleting a record in a root world removes its head key, and a list at head walks only live records', () => {
    const { storage, store } = setup();
    const w = store.createWorld('queue', { twins: ['stripe'] });
    for (let i = 0; i < 50; i++) {
      w.append('stripe', { cause, writes: [{ type: 'due', id: `m_${String(i).padStart(3, '0')}`, value: { i } }] });
      if (i < 49) w.append('stripe', { cause, writes: [{ type: 'due', id: `m_${String(i).padStart(3, '0')}`, value: null }] });
    }
    const heads = [...storage.range({ start: ['w'], end: ['w\uffff'] })].filter((kv) => kv.key[2] === 'head' && kv.key[3] === 'due');
    expect(heads.map((kv) => kv.key[4])).toEqual(['m_049']);
    expect(w.listRecords('stripe', 'due', { limit: 1 }).records).toEqual([{ id: 'm_049', value: { i: 49 } }]);
    // The deleted ones are still there as of any position they were live at.
    expect(w.getRecord('stripe', 'due', 'm_010', 21)).toEqual({ i: 10 });
    expect(w.getRecord('stripe', 'due', 'm_010', 22)).toBeUndefined();
    expect(w.listRecords('stripe', 'due', { at: 21 }).records).toEqual([{ id: 'm_010', value: { i: 10 } }]);
  });

  it('a branch drops the head key of its own record it deletes, and masks one its base shows with a null head key', () => {
    const { storage, store } = setup();
    const root = store.createWorld('queue', { twins: ['stripe'] });
    root.append('stripe', { cause, writes: [{ type: 'due', id: 'base_1', value: { base: true } }] });
    const br = root.branch({ label: 'load' }).world;
    const id = (i: number): string => `m_${String(i).padStart(3, '0')}`;
    for (let i = 0; i < 50; i++) {
      br.append('stripe', { cause, writes: [{ type: 'due', id: id(i), value: { i } }] });
      if (i < 49) br.append('stripe', { cause, writes: [{ type: 'due', id: id(i), value: null }] });
    }
    br.append('stripe', { cause, writes: [{ type: 'due', id: 'base_1', value: null }] });
    const branchId = storage.get<string>(['#world', br.name]) as string;
    const heads = [...storage.range({ start: [branchId], end: [`${branchId}\uffff`] })].filter((kv) => kv.key[2] === 'head' && kv.key[3] === 'due');
    // The base's record is masked by a null head key; of the branch's own 50, only the live one has a head key.
    expect(heads.map((kv) => [kv.key[4], (kv.value as [number, unknown])[1]])).toEqual([['base_1', null], ['m_049', { i: 49 }]]);
    expect(br.listRecords('stripe', 'due', { limit: 10 }).records).toEqual([{ id: 'm_049', value: { i: 49 } }]);
    expect(root.listRecords('stripe', 'due').records).toEqual([{ id: 'base_1', value: { base: true } }]);
    // Past positions still see each record while it was live, in the branch and in a branch of it.
    const sub = br.branch({ label: 'sub' }).world;
    for (const w of [br, sub]) {
      expect(w.getRecord('stripe', 'due', 'm_010', 22)).toEqual({ i: 10 });
      expect(w.getRecord('stripe', 'due', 'm_010', 23)).toBeUndefined();
      expect(w.listRecords('stripe', 'due', { at: 22 }).records).toEqual([{ id: 'base_1', value: { base: true } }, { id: 'm_010', value: { i: 10 } }]);
    }
    expect(sub.listRecords('stripe', 'due').records).toEqual([{ id: 'm_049', value: { i: 49 } }]);
    expect(sub.getRecord('stripe', 'due', 'base_1')).toBeUndefined();
  });

  it('reads worlds written when deletions stayed in head keys (with a null value), and appends on', () => {
    readsOlderLayout(29, (storage) => {
      // Then, a root world's newest deletion of a record was its head key [pos, null], with no
      // version key and no deletion mark.
      const all = [...storage.range<unknown>({ start: ['w'], end: ['w\uffff'] })];
      const record = (key: readonly unknown[]): string => [key[0], key[1], key[3], key[4]].join('\u0000');
      const live = new Set(all.filter((kv) => kv.key[2] === 'head').map((kv) => record(kv.key)));
      const newest = new Map<string, { key: (string | number)[]; value: unknown }>();
      for (const kv of all) if (kv.key[2] === 'rec') newest.set(record(kv.key), kv as { key: (string | number)[]; value: unknown });
      const moved = [...newest].filter(([r, kv]) => !live.has(r) && kv.value === null);
      expect(moved.length).toBeGreaterThan(0);
      const marks = all.filter((kv) => kv.key[2] === 'del');
      expect(marks.length).toBeGreaterThan(0);
      storage.transact((tx) => {
        for (const [, { key }] of moved) {
          tx.remove(key);
          tx.put([key[0]!, key[1]!, 'head', key[3]!, key[4]!], [key[5]!, null]);
        }
        for (const { key } of marks) tx.remove(key);
      });
    });
  });

  it('a batch that writes, deletes and re-creates one record counts it once', () => {
    const { store } = setup();
    const w = store.createWorld('acme', { twins: ['stripe'] });
    w.append('stripe', { cause, writes: [{ type: 'customer', id: 'a', value: 1 }] });
    expect(w.countRecords('stripe', 'customer')).toBe(1);
    w.appendBatch('stripe', [
      { cause, writes: [{ type: 'customer', id: 'a', value: null }, { type: 'customer', id: 'b', value: 2 }, { type: 'customer', id: 'b', value: null }] },
      { cause, writes: [{ type: 'customer', id: 'a', value: 3 }, { type: 'customer', id: 'a', value: null }, { type: 'customer', id: 'a', value: 4 }] },
      { cause, writes: [] },
    ]);
    expect(w.countRecords('stripe', 'customer')).toBe(1);
    expect(w.countRecords('stripe', 'customer', 2)).toBe(0);
    expect(w.countRecords('stripe', 'customer', 3)).toBe(1);
    expect(w.getRecord('stripe', 'customer', 'a')).toBe(4);
    expect(w.getRecord('stripe', 'customer', 'a', 2)).toBeUndefined();
    expect(w.entry('stripe', 3)?.writes.map((x) => x.value)).toEqual([3, null, 4]);
  });

  it('an entry that deletes and re-creates a record keeps its value as of that entry when a later entry of the batch rewrites it', () => {
    const { store } = setup();
    const w = store.createWorld('acme', { twins: ['stripe'] });
    w.append('stripe', { cause, writes: [{ type: 'customer', id: 'x', value: 1 }] });
    w.appendBatch('stripe', [
      { cause, writes: [{ type: 'customer', id: 'x', value: null }, { type: 'customer', id: 'x', value: 2 }] },
      { cause, writes: [{ type: 'customer', id: 'x', value: 3 }] },
    ]);
    expect([1, 2, 3].map((at) => w.getRecord('stripe', 'customer', 'x', at))).toEqual([1, 2, 3]);
    expect(w.listRecords('stripe', 'customer', { at: 2 }).records).toEqual([{ id: 'x', value: 2 }]);
    expect(w.countRecords('stripe', 'customer', 2)).toBe(1);
  });

  it('an update after a restart finds the record, whatever order its id has in UTF-16 against the newest id', () => {
    const { storage, store, clock } = setup();
    const w = store.createWorld('acme', { twins: ['stripe'] });
    // U+1F600 sorts after U+E000 in key (code point) order and before it in UTF-16 code units.
    w.append('stripe', { cause, writes: [{ type: 'customer', id: '\uE000', value: 1 }, { type: 'customer', id: '\u{1F600}', value: 2 }] });
    w.append('stripe', { cause, writes: [{ type: 'customer', id: 'a', value: 1 }] });
    const again = new WorldStore(storage, { now: () => clock.now, boundsEvery: BOUNDS_EVERY }).openWorld('acme');
    again.append('stripe', { cause, writes: [{ type: 'customer', id: '\uE000', value: 3 }, { type: 'customer', id: 'a', value: 2 }] });
    expect(again.countRecords('stripe', 'customer')).toBe(3);
    expect(again.getRecord('stripe', 'customer', '\uE000', 2)).toBe(1);
    expect(again.getRecord('stripe', 'customer', '\uE000')).toBe(3);
    expect(again.getRecord('stripe', 'customer', 'a', 2)).toBe(1);
  });
});

/** Opens world `acme` and its branch from `store`, checks both, appends on to both, and checks again. */
function reopenAndAppendOn(store: WorldStore, branch: string, rm: Model, bm: Model, rnd: () => number, clock: { now: number }): void {
  const root = store.openWorld('acme');
  const br = store.openWorld(branch);
  check(root, rm);
  check(br, bm);
  drive(root, rm, rnd, 20, clock);
  drive(br, bm, rnd, 20, clock);
  check(root, rm);
  check(br, bm);
}

describe('appendBatch bookkeeping after a restart', () => {
  it('a reopened LMDB storage reads what the first process wrote, and appends on from there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-append-restart-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const clock = { now: T0 };
    const rnd = random(11);
    const first = openLmdbStorage(dir);
    const { root, rm } = grownWorld(new WorldStore(first, { now: () => clock.now, boundsEvery: BOUNDS_EVERY }), rnd, 40, clock);
    const { br, bm } = grownBranch(root, rm, rnd, 20, clock);
    await first.close();

    const second = openLmdbStorage(dir);
    cleanups.push(() => second.close());
    const again = new WorldStore(second, { now: () => clock.now, boundsEvery: BOUNDS_EVERY });
    reopenAndAppendOn(again, br.name, rm, bm, rnd, clock);
  });
});
