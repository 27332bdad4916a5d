import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeOf, storageBackends } from '../../test/helpers/storages.js';
import { openLmdbStorage } from '../store/lmdb.js';
import type { Key, KeyValue, RangeOptions, Storage } from '../store/types.js';
import type { EntryDraft, RecordWrite } from './types.js';
import { type World, WorldStore } from './world.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const { backends, cleanups } = storageBackends('kit-branch-');

const put = (type: string, id: string, value: unknown): RecordWrite => ({ type, id, value });
const draft = (...writes: RecordWrite[]): EntryDraft => ({
  cause: { kind: 'request', method: 'POST', route: 'POST /x', path: '/x', status: 200, requestId: 'r' },
  writes,
});
const ids = (w: World, twin: string, type: string, at?: number): string[] =>
  w.listRecords(twin, type, at === undefined ? {} : { at }).records.map((r) => r.id);
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

describe.each(backends)('branches on %s storage', (_name, makeStorage) => {
  function setup(): { store: WorldStore; storage: Storage; wall: { now: number }; root: World } {
    const storage = makeStorage();
    cleanups.push(async () => {
      if (storage.alive) await storage.close();
    });
    const wall = { now: T0 };
    const store = new WorldStore(storage, { now: () => wall.now });
    const root = store.createWorld('acme', { twins: ['stripe', 'github'] });
    root.setClock('2026-01-01T00:00:00Z');
    return { store, storage, wall, root };
  }

  it('copies nothing: a branch adds the same few keys whatever the history size', () => {
    const { storage, root } = setup();
    const keyCount = (): number => [...storage.range({ start: [''], end: ['\u{10FFFF}'] })].length;
    const added: number[] = [];
    for (const n of [10, 300]) {
      while (root.head('stripe') < n) root.append('stripe', draft(put('customer', `c${root.head('stripe')}`, { n })));
      const before = keyCount();
      root.branch();
      added.push(keyCount() - before);
    }
    expect(added[0]).toBe(added[1]);
    expect(added[0]).toBeLessThanOrEqual(4);
  });

  it('a list in a branch, or at a past position, reads what it answers, not the records made after the cut', () => {
    const raw = makeStorage();
    cleanups.push(async () => {
      if (raw.alive) await raw.close();
    });
    let reads = 0;
    const storage: Storage = {
      get: <V>(key: Key): V | undefined => {
        reads++;
        return raw.get<V>(key);
      },
      *range<V>(options: RangeOptions): Iterable<KeyValue<V>> {
        reads++;
        for (const kv of raw.range<V>(options)) {
          reads++;
          yield kv;
        }
      },
      transact: (fn) => raw.transact(fn),
      durable: () => raw.durable(),
      close: () => raw.close(),
      get alive() {
        return raw.alive;
      },
    };
    // Id bounds noted every 100 writes (1,024 by default).
    const store = new WorldStore(storage, { now: () => T0, boundsEvery: 100 });
    const root = store.createWorld('acme', { twins: ['stripe'] });
    const id = (n: number): string => `cus_${String(n).padStart(6, '0')}`;
    for (let n = 0; n < 5; n++) root.append('stripe', draft(put('customer', id(n), { n })));
    root.append('stripe', draft(put('customer', id(0), null)));
    const branch = root.branch().world;
    // The base goes on: 2,000 customers whose ids sort after every one at the cut, as ordered ids do.
    for (let n = 5; n < 2005; n += 100) {
      root.appendBatch('stripe', [{ ...draft(...Array.from({ length: 100 }, (_, i) => put('customer', id(n + i), { n: n + i }))) }]);
    }
    root.append('stripe', draft(put('customer', id(1), { n: 1, edited: true })));
    reads = 0;
    expect(branch.listRecords('stripe', 'customer', { reverse: true, limit: 3 }).records.map((r) => r.id)).toEqual([id(4), id(3), id(2)]);
    expect(branch.listRecords('stripe', 'customer').records).toEqual([1, 2, 3, 4].map((n) => ({ id: id(n), value: { n } })));
    expect(branch.getRecord('stripe', 'customer', id(1000))).toBeUndefined();
    expect(reads).toBeLessThan(100);
    // So does a walk of the base itself at the cut: it stops at the bounds noted after it (the
    // first batch's 100 records are stepped over, not 2,000).
    reads = 0;
    expect(root.listRecords('stripe', 'customer', { at: 6, reverse: true, limit: 3 }).records.map((r) => r.id)).toEqual([id(4), id(3), id(2)]);
    expect(JSON.parse(text(root.checkpoint('stripe', 6))).records.customer).toEqual({ [id(1)]: { n: 1 }, [id(2)]: { n: 2 }, [id(3)]: { n: 3 }, [id(4)]: { n: 4 } });
    expect(reads).toBeLessThan(1000);
    // The branch's own new records are read as usual, above the base's.
    branch.append('stripe', draft(put('customer', id(9000), { n: 9000 })));
    expect(ids(branch, 'stripe', 'customer')).toEqual([id(1), id(2), id(3), id(4), id(9000)]);
  });

  it('a branch made after a restart sees every record its base had at the cut, deleted since or of a type not written since', () => {
    const { storage, wall, root } = setup();
    root.append('stripe', draft(put('customer', 'c1', { n: 1 }), put('customer', 'c9', { n: 9 }), put('price', 'p1', { n: 1 })));
    root.advanceClock('1h');
    // The greatest customer id is left only as a deletion mark.
    root.append('stripe', draft(put('customer', 'c9', null)));
    const again = new WorldStore(storage, { now: () => wall.now }).openWorld('acme');
    again.append('stripe', draft(put('customer', 'c5', { n: 5 })));
    const past = again.branch({ at: '2026-01-01T00:30:00Z' }).world;
    expect(past.getRecord('stripe', 'customer', 'c9')).toEqual({ n: 9 });
    expect(ids(past, 'stripe', 'customer')).toEqual(['c1', 'c9']);
    expect(ids(past, 'stripe', 'price')).toEqual(['p1']);
    const now = again.branch().world;
    expect(ids(now, 'stripe', 'customer')).toEqual(['c1', 'c5']);
    expect(ids(now, 'stripe', 'price')).toEqual(['p1']);
  });

  it('reads through to the parent at the cut; writes stay on their side', () => {
    const { store, root } = setup();
    root.append('stripe', draft(put('customer', 'a', { v: 1 }), put('customer', 'b', { v: 1 })));
    root.append('github', draft(put('repo', 'r', { stars: 1 })));
    const { world: br, record } = root.branch({ label: 'try' });
    expect(record.name).toMatch(/^acme-try-[0-9a-f]{4}$/);
    expect(record).toMatchObject({ from: 'acme', at: '2026-01-01T00:00:00.000Z', expiresAt: null });
    expect(br.name).toBe(record.name);
    expect(store.openWorld(record.name)).toBe(br);
    expect(br.base()).toEqual({ world: 'acme', at: '2026-01-01T00:00:00.000Z', positions: { stripe: 1, github: 1 } });
    expect(br.head('stripe')).toBe(1);
    expect(br.entry('stripe', 1)).toEqual(root.entry('stripe', 1));
    expect(br.getRecord('stripe', 'customer', 'a')).toEqual({ v: 1 });
    expect(br.counts('stripe')).toEqual([{ type: 'customer', count: 2 }]);
    expect(text(br.checkpoint('stripe'))).toBe(text(root.checkpoint('stripe')));

    // The branch writes: position 2 in its own key space.
    const e = br.append('stripe', draft(put('customer', 'a', { v: 'branch' }), put('customer', 'b', null), put('customer', 'c', { v: 3 })));
    expect(e.position).toBe(2);
    // The parent writes too, after the cut.
    root.append('stripe', draft(put('customer', 'a', { v: 'parent' }), put('customer', 'p', { v: 9 })));
    root.append('stripe', draft(put('customer', 'zz', 1)));

    expect(root.getRecord('stripe', 'customer', 'a')).toEqual({ v: 'parent' });
    expect(root.getRecord('stripe', 'customer', 'c')).toBeUndefined();
    expect(ids(root, 'stripe', 'customer')).toEqual(['a', 'b', 'p', 'zz']);
    expect(root.countRecords('stripe', 'customer')).toBe(4);

    expect(br.getRecord('stripe', 'customer', 'a')).toEqual({ v: 'branch' });
    expect(br.getRecord('stripe', 'customer', 'a', 1)).toEqual({ v: 1 });
    expect(br.getRecord('stripe', 'customer', 'p')).toBeUndefined();
    expect(br.getRecord('stripe', 'customer', 'b')).toBeUndefined();
    expect(br.getRecord('stripe', 'customer', 'b', 1)).toEqual({ v: 1 });
    expect(ids(br, 'stripe', 'customer')).toEqual(['a', 'c']);
    expect(ids(br, 'stripe', 'customer', 1)).toEqual(['a', 'b']);
    expect(br.countRecords('stripe', 'customer')).toBe(2);
    expect(br.countRecords('stripe', 'customer', 1)).toBe(2);
    expect(br.head('stripe')).toBe(2);
    expect(root.head('stripe')).toBe(3);
    expect(br.entry('stripe', 2)?.writes).toHaveLength(3);
    expect(root.entry('stripe', 2)?.writes).toHaveLength(2);
    expect(br.log('stripe').entries.map((x) => x.writes.length)).toEqual([2, 3]);
    expect(JSON.parse(text(br.checkpoint('stripe')))).toEqual({
      twin: 'stripe', position: 2, records: { customer: { a: { v: 'branch' }, c: { v: 3 } } },
    });
    expect(codeOf(() => br.getRecord('stripe', 'customer', 'a', 3))).toBe('position_beyond_head');
    // The untouched twin still reads through.
    expect(br.getRecord('github', 'repo', 'r')).toEqual({ stars: 1 });
    expect(br.map().twins.map((t) => [t.twin, t.position, t.resources])).toEqual([
      ['stripe', 2, [{ type: 'customer', count: 2 }]],
      ['github', 1, [{ type: 'repo', count: 1 }]],
    ]);
  });

  it('branches at a past instant: the cut, a frozen clock, and nothing of the parent after it', () => {
    const { root } = setup();
    for (let i = 1; i <= 6; i++) {
      root.append('stripe', draft(put('customer', `c${i}`, { i })));
      root.advanceClock('1h');
    }
    // Entries at 00:00 .. 05:00; cut at 02:30 → positions 1..3.
    const { world: br } = root.branch({ at: '2026-01-01T02:30:00Z' });
    expect(br.name).toMatch(/^acme-[0-9a-f]{4}$/);
    expect(br.clock()).toEqual({ at: '2026-01-01T02:30:00.000Z', frozen: true });
    expect(br.base()?.positions).toEqual({ stripe: 3, github: 0 });
    expect(br.head('stripe')).toBe(3);
    expect(ids(br, 'stripe', 'customer')).toEqual(['c1', 'c2', 'c3']);
    expect(br.counts('stripe')).toEqual([{ type: 'customer', count: 3 }]);
    const e = br.append('stripe', draft(put('customer', 'c4', { mine: true })));
    expect(e).toMatchObject({ position: 4, occurredAt: '2026-01-01T02:30:00.000Z' });
    expect(br.getRecord('stripe', 'customer', 'c4')).toEqual({ mine: true });
    expect(root.getRecord('stripe', 'customer', 'c4')).toEqual({ i: 4 });
    expect(br.timeline().entries.map((x) => `${x.twin}:${x.position}`)).toEqual(['stripe:4', 'stripe:3', 'stripe:2', 'stripe:1']);
    expect(br.historyCut('2026-01-01T01:30:00Z').views.stripe).toEqual({ view: `${br.name}@stripe:2`, position: 2 });
    expect(br.historyCut('2026-01-01T02:30:00Z').views.stripe?.position).toBe(4);
    const diff = br.diff();
    expect(diff.base).toEqual({ id: 'acme', at: '2026-01-01T02:30:00.000Z' });
    expect(diff.changes.map((c) => `${c.twin}:${c.entry.position}`)).toEqual(['stripe:4']);
    // The branch's clock is its own: the parent's does not move it.
    root.advanceClock('1d');
    expect(br.clock().at).toBe('2026-01-01T02:30:00.000Z');
  });

  it('branches of branches, three levels deep, each seeing its own writes over its bases at their cuts', () => {
    const { root } = setup();
    root.append('stripe', draft(put('customer', 'a', 'root-a'), put('customer', 'b', 'root-b'), put('price', 'x', 'root-x')));
    root.append('stripe', draft(put('customer', 'c', 'root-c')));
    const l1 = root.branch({ label: 'one' }).world; // cut stripe 2
    root.append('stripe', draft(put('customer', 'a', 'root-a2'), put('customer', 'late', 1)));
    l1.append('stripe', draft(put('customer', 'b', null), put('customer', 'd', 'l1-d'))); // 3
    l1.append('stripe', draft(put('price', 'x', 'l1-x'))); // 4
    const l2 = l1.branch({ label: 'two' }).world; // cut stripe 4
    l1.append('stripe', draft(put('customer', 'l1late', 1))); // 5 in l1
    l2.append('stripe', draft(put('customer', 'a', 'l2-a'), put('customer', 'e', 'l2-e'))); // 5 in l2
    const l3 = l2.branch().world; // cut stripe 5
    l2.append('stripe', draft(put('customer', 'l2late', 1)));
    l3.append('stripe', draft(put('customer', 'c', null), put('customer', 'b', 'l3-b'))); // 6 in l3

    expect(l2.name).toMatch(/^acme-one-[0-9a-f]{4}-two-[0-9a-f]{4}$/);
    expect(ids(root, 'stripe', 'customer')).toEqual(['a', 'b', 'c', 'late']);
    expect(ids(l1, 'stripe', 'customer')).toEqual(['a', 'c', 'd', 'l1late']);
    expect(ids(l2, 'stripe', 'customer')).toEqual(['a', 'c', 'd', 'e', 'l2late']);
    expect(ids(l3, 'stripe', 'customer')).toEqual(['a', 'b', 'd', 'e']);
    expect(l3.getRecord('stripe', 'customer', 'a')).toBe('l2-a');
    expect(l3.getRecord('stripe', 'customer', 'b')).toBe('l3-b');
    expect(l3.getRecord('stripe', 'customer', 'd')).toBe('l1-d');
    expect(l3.getRecord('stripe', 'price', 'x')).toBe('l1-x');
    // Historical reads in l3 walk down the chain.
    expect(l3.getRecord('stripe', 'customer', 'a', 2)).toBe('root-a');
    expect(l3.getRecord('stripe', 'customer', 'b', 2)).toBe('root-b');
    expect(l3.getRecord('stripe', 'customer', 'b', 3)).toBeUndefined();
    expect(l3.getRecord('stripe', 'price', 'x', 3)).toBe('root-x');
    expect(ids(l3, 'stripe', 'customer', 3)).toEqual(['a', 'c', 'd']);
    expect(ids(l3, 'stripe', 'customer', 5)).toEqual(['a', 'c', 'd', 'e']);
    expect(l3.counts('stripe')).toEqual([{ type: 'customer', count: 4 }, { type: 'price', count: 1 }]);
    expect(l3.countRecords('stripe', 'customer', 3)).toBe(3);
    expect(l3.countRecords('stripe', 'customer', 2)).toBe(3);
    expect(l2.countRecords('stripe', 'customer')).toBe(5);
    expect(l1.countRecords('stripe', 'customer')).toBe(4);
    expect(root.countRecords('stripe', 'customer')).toBe(4);
    expect(l3.log('stripe').entries.map((e) => e.position)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(l3.log('stripe', { after: 3, limit: 2 })).toMatchObject({ next: 5 });
    expect(JSON.parse(text(l3.checkpoint('stripe')))).toEqual({
      twin: 'stripe',
      position: 6,
      records: { customer: { a: 'l2-a', b: 'l3-b', d: 'l1-d', e: 'l2-e' }, price: { x: 'l1-x' } },
    });
    expect(JSON.parse(text(l3.checkpoint('stripe', 4)))).toEqual(JSON.parse(text(l1.checkpoint('stripe', 4))));
    expect(l3.diff().changes.map((c) => c.entry.position)).toEqual([6]);
    expect(l2.diff().changes.map((c) => c.entry.position)).toEqual([5, 6]);
    // A page of a branch's diff starts past the cut and past the cursor.
    const firstPage = l2.diff({ limit: 1 });
    expect(firstPage.changes.map((c) => c.entry.position)).toEqual([5]);
    expect(l2.diff({ limit: 1, after: firstPage.next as string })).toMatchObject({ changes: [{ twin: 'stripe', entry: { position: 6 } }], next: null });
    // Reverse listing across layers.
    expect(l3.listRecords('stripe', 'customer', { reverse: true, limit: 3 }).records.map((r) => r.id)).toEqual(['e', 'd', 'b']);
    expect(l3.listRecords('stripe', 'customer', { after: 'a', limit: 2 })).toMatchObject({ hasMore: true });
  });

  it('filters the timeline by trace through the branch chain, up to each cut', () => {
    const { root } = setup();
    const trace = 'd'.repeat(32);
    const tp = (n: number): string => `00-${trace}-${String(n).padStart(16, '0')}-01`;
    root.append('stripe', { ...draft(), traceparent: tp(1) }); // stripe 1
    root.append('github', draft()); // github 1
    root.advanceClock('1m');
    root.append('github', { ...draft(), traceparent: tp(2) }); // github 2
    const br = root.branch({ label: 't' }).world;
    root.advanceClock('1m');
    root.append('stripe', { ...draft(), traceparent: tp(3) }); // parent-only, after the cut
    br.advanceClock('1m');
    br.append('stripe', { ...draft(), traceparent: tp(4) }); // stripe 2 in the branch
    br.append('stripe', draft());
    const sub = br.branch().world;
    sub.advanceClock('1m');
    sub.append('github', { ...draft(), traceparent: tp(5) }); // github 3 in sub
    const seen = (w: World): string[] => w.timeline({ trace }).entries.map((e) => `${e.twin}:${e.position}`);
    expect(seen(root)).toEqual(['stripe:2', 'github:2', 'stripe:1']);
    expect(root.entry('stripe', 2)?.traceparent).toBe(tp(3));
    expect(seen(br)).toEqual(['stripe:2', 'github:2', 'stripe:1']);
    expect(seen(sub)).toEqual(['github:3', 'stripe:2', 'github:2', 'stripe:1']);
    expect(br.timeline({ trace }).entries[0]?.entry.traceparent).toBe(tp(4));
    expect(sub.timeline({ trace, twin: 'github' }).entries.map((e) => e.position)).toEqual([3, 2]);
    const page = sub.timeline({ trace, limit: 2 });
    expect(page.entries).toHaveLength(2);
    expect(sub.timeline({ trace, limit: 2, before: page.next as string }).entries.map((e) => `${e.twin}:${e.position}`)).toEqual(['github:2', 'stripe:1']);
  });

  it('a twin added after the cut starts empty on either side (even one named like an Object member)', () => {
    const { root } = setup();
    root.append('stripe', draft(put('customer', 'a', 1)));
    const br = root.branch().world;
    br.addTwin('constructor');
    root.addTwin('slack');
    expect(br.head('constructor')).toBe(0);
    expect(br.append('constructor', draft(put('x', 'y', 1))).position).toBe(1);
    expect(br.getRecord('constructor', 'x', 'y')).toBe(1);
    expect(root.twins()).toEqual(['stripe', 'github', 'slack']);
    expect(codeOf(() => br.head('slack'))).toBe('unknown_twin');
    expect(codeOf(() => root.head('constructor'))).toBe('unknown_twin');
    expect(br.diff().changes.map((c) => c.twin)).toEqual(['constructor']);
  });

  it('validates label, ttl and live', () => {
    const { root } = setup();
    for (const label of ['', 'Has-Caps', '-lead', 'x'.repeat(41), 'sp ace', 7]) {
      expect(codeOf(() => root.branch({ label: label as string }))).toBe('invalid_label');
    }
    for (const ttl of [59, 2_592_001, 1.5, -60, '600']) {
      expect(codeOf(() => root.branch({ ttlSeconds: ttl as number }))).toBe('invalid_ttl');
    }
    expect(codeOf(() => root.branch({ live: true, at: '2026-01-01T00:00:00Z' }))).toBe('live_branch_needs_now');
    expect(codeOf(() => root.branch({ at: 'yesterday' }))).toBe('invalid_instant');
    expect(root.branches()).toEqual([]);
    expect(root.branch({ label: 'x'.repeat(40), ttlSeconds: 60 }).record.name).toMatch(/^acme-x{40}-[0-9a-f]{4}$/);
  });

  it('a live branch follows the parent clock until its own is set', () => {
    const { root } = setup();
    const { world: live } = root.branch({ live: true });
    expect(live.clock()).toEqual(root.clock());
    root.advanceClock('2h');
    expect(live.clock()).toEqual({ at: '2026-01-01T02:00:00.000Z', frozen: true });
    expect(live.append('stripe', draft()).occurredAt).toBe('2026-01-01T02:00:00.000Z');
    live.setClock('2026-01-02T00:00:00Z');
    root.advanceClock('1h');
    expect(live.clock().at).toBe('2026-01-02T00:00:00.000Z');
  });

  it('a world knows its branches; removal refuses a world with branches and purges the branch', async () => {
    const { store, storage, root, wall } = setup();
    root.append('stripe', draft(put('customer', 'a', 1)));
    const b1 = root.branch({ label: 'keep', ttlSeconds: 3600 });
    const b2 = root.branch({ label: 'drop' });
    expect(b1.record.expiresAt).toBe(new Date(wall.now + 3_600_000).toISOString());
    expect(root.branches().map((b) => b.name).sort()).toEqual([b1.record.name, b2.record.name].sort());
    b2.world.append('stripe', draft(put('customer', 'mine', 1)));
    const sub = b1.world.branch({ label: 'sub' });
    await expect(store.removeWorld('acme')).rejects.toMatchObject({ code: 'world_has_branches' });
    expect(codeOf(() => root.removeBranch(b1.record.name))).toBe('world_has_branches');
    expect(codeOf(() => root.removeBranch('acme-nope-0000'))).toBe('unknown_branch');
    expect(codeOf(() => root.removeBranch(sub.record.name))).toBe('unknown_branch');
    root.removeBranch(b2.record.name);
    expect(store.hasWorld(b2.record.name)).toBe(false);
    expect(codeOf(() => b2.world.head('stripe'))).toBe('unknown_world');
    expect(root.branches().map((b) => b.name)).toEqual([b1.record.name]);
    await store.idle();
    // The parent is untouched by the branch's removal.
    expect(root.getRecord('stripe', 'customer', 'a')).toBe(1);
    expect(root.getRecord('stripe', 'customer', 'mine')).toBeUndefined();
    expect(store.listWorlds().sort()).toEqual(['acme', b1.record.name, sub.record.name].sort());
    // ttl sweep by the wall clock, taking the branch's own branches with it.
    expect(store.sweepExpiredBranches()).toEqual([]);
    wall.now += 3_600_001;
    expect(store.sweepExpiredBranches()).toEqual([sub.record.name, b1.record.name]);
    expect(root.branches()).toEqual([]);
    await store.idle();
    await store.removeWorld('acme');
    await store.idle();
    // Nothing of any world is left: only the id counter.
    expect([...storage.range({ start: [''], end: ['\u{10FFFF}'] })].map((kv) => kv.key)).toEqual([['#seq']]);
  });
});

describe('purge resumes after a restart', () => {
  it('finishes removing a world whose purge was cut short', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-purge-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const real = openLmdbStorage(dir);
    cleanups.push(() => real.close());
    // The process "dies" after the removal and one purge batch: later transactions fail.
    let transactions = 0;
    let armed = false;
    const dying: Storage = {
      get: (key) => real.get(key),
      range: (options) => real.range(options),
      transact: (fn) => {
        if (armed && ++transactions > 2) throw new Error('process died');
        return real.transact(fn);
      },
      durable: () => real.durable(),
      close: () => real.close(),
      get alive() {
        return real.alive;
      },
    };
    const store = new WorldStore(dying);
    const w = store.createWorld('big', { twins: ['stripe'] });
    for (let i = 0; i < 20; i++) w.append('stripe', draft(...Array.from({ length: 200 }, (_, j) => put('customer', `c${i}_${j}`, j))));
    armed = true;
    await store.removeWorld('big');
    expect(store.hasWorld('big')).toBe(false);
    const left = [...real.range({ start: ['w1'], end: ['w1\u0000'] })].length;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(20 * 200 * 3);

    const store2 = new WorldStore(real);
    await store2.idle();
    expect([...real.range({ start: ['w1'], end: ['w1\u0000'] })].length).toBe(0);
    expect([...real.range({ start: ['#trash'], end: ['#trash\u0000'] })].length).toBe(0);
  });
});
