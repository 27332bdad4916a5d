import { describe, expect, it } from 'vitest';
import { codeOf, storageBackends } from '../../test/helpers/storages.js';
import type { Storage } from '../store/types.js';
import type { EntryDraft, RecordWrite } from './types.js';
import { type World, WorldStore } from './world.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const { backends, cleanups } = storageBackends('kit-release-');

const put = (type: string, id: string, value: unknown): RecordWrite => ({ type, id, value });
const draft = (trace: number, ...writes: RecordWrite[]): EntryDraft => ({
  cause: { kind: 'request', method: 'POST', route: 'POST /x', path: '/x', status: 200, requestId: 'r' },
  writes,
  traceparent: `00-${trace.toString(16).padStart(32, '0')}-00f067aa0ba902b7-01`,
  events: [{ type: 'x.changed', data: { trace } }],
});
const text = (b: Uint8Array): string => new TextDecoder().decode(b);

/** Every page of a paged read, following `next`. */
function allPages<P extends { next: unknown }>(read: (next: P['next'] | undefined) => P): P[] {
  const pages: P[] = [];
  let next: P['next'] | undefined;
  do {
    const page = read(next);
    pages.push(page);
    next = page.next ?? undefined;
  } while (next !== undefined);
  return pages;
}

/**
 * Everything a user can read of a world, as JSON: clock, twins, base, branches, map, history
 * cut, diff, timeline (and by trace), and per twin the log, every checkpoint, counts and lists
 * at head and at past positions (those read through the noted id bounds).
 */
function snapshot(w: World): string {
  const twins = w.twins();
  const perTwin = twins.map((twin) => {
    const head = w.head(twin);
    const positions = Array.from({ length: head }, (_, i) => i + 1);
    const types = w.counts(twin).map((c) => c.type);
    return {
      twin,
      head,
      log: allPages<ReturnType<World['log']>>((after) => w.log(twin, after === undefined || after === null ? { limit: 3 } : { after, limit: 3 })),
      checkpoints: positions.map((at) => text(w.checkpoint(twin, at))),
      counts: w.counts(twin),
      lists: types.map((type) => ({
        type,
        head: w.listRecords(twin, type, { limit: 2 }),
        reverse: w.listRecords(twin, type, { reverse: true }),
        past: positions.map((at) => [w.countRecords(twin, type, at), w.listRecords(twin, type, { at }).records]),
      })),
      record: w.getRecord(twin, 'customer', 'c1'),
      entry: w.entry(twin, head),
    };
  });
  return JSON.stringify({
    name: w.name,
    clock: w.clock(),
    twins,
    base: w.base(),
    branches: w.branches(),
    map: w.map(),
    cut: w.historyCut('2026-01-01T00:30:00Z'),
    diff: allPages<ReturnType<World['diff']>>((after) => w.diff({ limit: 2, ...(after === undefined || after === null ? {} : { after }) })),
    timeline: allPages<ReturnType<World['timeline']>>((before) => w.timeline({ limit: 2, ...(before === undefined || before === null ? {} : { before }) })),
    trace: w.timeline({ trace: (2).toString(16).padStart(32, '0') }),
    perTwin,
  });
}

describe.each(backends)('releasing worlds on %s storage', (_name, makeStorage) => {
  function setup(): { store: WorldStore; storage: Storage } {
    const storage = makeStorage();
    cleanups.push(async () => {
      if (storage.alive) await storage.close();
    });
    // Bounds noted every 4 writes: reads at past positions go through the engine's bounds cache.
    return { store: new WorldStore(storage, { now: () => T0, boundsEvery: 4 }), storage };
  }

  /**
   * A root world with records made, changed and deleted on two twins, then a frozen branch that
   * changes, deletes and adds records, a live branch, and a branch of the branch. Returns the
   * names, root first.
   */
  function family(store: WorldStore, name: string): string[] {
    const root = store.createWorld(name, { twins: ['stripe', 'github'] });
    root.setClock('2026-01-01T00:00:00Z');
    for (let i = 1; i <= 6; i++) root.append('stripe', draft(i, put('customer', `c${i}`, { n: i, name }), put('charge', `ch${i}`, { amount: i * 100 })));
    root.append('stripe', draft(7, put('customer', 'c2', null), put('customer', 'c1', { n: 1, renamed: true })));
    root.append('github', draft(2, put('repo', 'r1', { stars: 1 })));
    root.advanceClock('1h');
    const frozen = root.branch({ label: 'b' }).world;
    frozen.append('stripe', draft(8, put('customer', 'c3', null), put('customer', 'c4', { n: 40 }), put('customer', 'c9', { n: 9 })));
    frozen.append('github', draft(9, put('repo', 'r2', { stars: 2 })));
    root.append('stripe', draft(10, put('customer', 'c10', { n: 10 }), put('customer', 'c5', null)));
    const live = root.branch({ live: true }).world;
    live.append('stripe', draft(11, put('charge', 'ch1', null)));
    const grandchild = frozen.branch({ label: 'g' }).world;
    grandchild.append('stripe', draft(12, put('customer', 'c4', null), put('customer', 'c11', { n: 11 })));
    root.advanceClock('30m');
    return [root.name, frozen.name, live.name, grandchild.name];
  }

  it('a released world reads back from storage as it was, and the engine keeps nothing of it', () => {
    const { store } = setup();
    const names = ['acme', 'globex', 'initech', 'umbrella', 'hooli'].flatMap((n) => family(store, n));
    const before = new Map(names.map((n) => [n, snapshot(store.openWorld(n))]));
    const held = store.heldInMemory();
    expect(held).toMatchObject({ states: names.length, names: names.length, worlds: names.length });
    expect(held.boundsRecords).toBeGreaterThan(0);

    const old = names.map((n) => store.openWorld(n));
    for (const n of names) expect(store.release(n)).toBe(true);
    expect(store.heldInMemory()).toEqual({ states: 0, names: 0, worlds: 0, boundsRecords: 0 });

    for (const n of names) {
      const again = store.openWorld(n);
      expect(again).not.toBe(old[names.indexOf(n)]);
      expect(snapshot(again)).toBe(before.get(n));
    }
    expect(store.listWorlds().sort()).toEqual([...names].sort());
  });

  it('a released World answers world_released to every call instead of reading or writing through stale caches', () => {
    const { store } = setup();
    const [rootName] = family(store, 'acme');
    const root = store.openWorld(rootName as string);
    const head = root.head('stripe');
    expect(store.release('acme')).toBe(true);

    const calls: [string, () => unknown][] = [
      ['append', () => root.append('stripe', draft(1, put('customer', 'c1', { stale: true })))],
      ['head', () => root.head('stripe')],
      ['getRecord', () => root.getRecord('stripe', 'customer', 'c1')],
      ['listRecords', () => root.listRecords('stripe', 'customer')],
      ['checkpoint', () => root.checkpoint('stripe')],
      ['clock', () => root.clock()],
      ['setClock', () => root.setClock('2027-01-01T00:00:00Z')],
      ['branch', () => root.branch()],
      ['log', () => root.log('stripe')],
      ['timeline', () => root.timeline()],
      ['diff', () => root.diff()],
      ['addTwin', () => root.addTwin('slack')],
    ];
    for (const [what, call] of calls) expect([what, codeOf(call)]).toEqual([what, 'world_released']);

    // Nothing of those calls reached storage: the world reopened is as it was.
    const again = store.openWorld('acme');
    expect(again.head('stripe')).toBe(head);
    expect(again.getRecord('stripe', 'customer', 'c1')).toEqual({ n: 1, renamed: true });
    expect(again.clock().at).toBe('2026-01-01T01:30:00.000Z');
    expect(again.twins()).toEqual(['stripe', 'github']);
  });

  it('releasing a base leaves its open branches working, and the base reopened writes on from storage', () => {
    const { store } = setup();
    const [rootName, frozenName, liveName] = family(store, 'acme') as [string, string, string, string];
    const root = store.openWorld(rootName);
    const frozen = store.openWorld(frozenName);
    const live = store.openWorld(liveName);
    const frozenBefore = snapshot(frozen);
    const rootHead = root.head('stripe');

    expect(store.release(rootName)).toBe(true);
    // The branches read through the base's keys as before, and write their own.
    expect(snapshot(frozen)).toBe(frozenBefore);
    expect(frozen.getRecord('stripe', 'customer', 'c6')).toEqual({ n: 6, name: 'acme' });
    frozen.append('stripe', draft(20, put('customer', 'c6', { n: 60 })));
    expect(frozen.listRecords('stripe', 'customer').records.map((r) => r.id)).toEqual(['c1', 'c4', 'c5', 'c6', 'c9']);
    expect(live.clock().at).toBe('2026-01-01T01:30:00.000Z');

    // The base reopened: its head from storage (the released World wrote nothing), its writes
    // seen by itself and not by the branch cut before them; the live branch follows its clock.
    expect(codeOf(() => root.append('stripe', draft(21, put('customer', 'c1', null))))).toBe('world_released');
    const reopened = store.openWorld(rootName);
    expect(reopened.head('stripe')).toBe(rootHead);
    const entry = reopened.append('stripe', draft(22, put('customer', 'c1', { n: 100 })));
    expect(entry.position).toBe(rootHead + 1);
    expect(reopened.getRecord('stripe', 'customer', 'c1')).toEqual({ n: 100 });
    expect(reopened.countRecords('stripe', 'customer')).toBe(5);
    expect(frozen.getRecord('stripe', 'customer', 'c1')).toEqual({ n: 1, renamed: true });
    reopened.setClock('2026-06-01T00:00:00Z');
    expect(live.clock().at).toBe('2026-06-01T00:00:00.000Z');

    // Releasing the branch leaves the base as it is; the branch reopened has its own writes.
    expect(store.release(frozenName)).toBe(true);
    expect(reopened.getRecord('stripe', 'customer', 'c1')).toEqual({ n: 100 });
    expect(reopened.branches().map((b) => b.name).sort()).toEqual([frozenName, liveName].sort());
    expect(store.openWorld(frozenName).getRecord('stripe', 'customer', 'c6')).toEqual({ n: 60 });
  });

  it('a branch opened alone holds its bases only while it is held: releasing it leaves nothing', () => {
    const { store } = setup();
    const names = family(store, 'acme');
    for (const n of names) store.release(n);
    const grandchild = store.openWorld(names[3] as string);
    // c6 comes from the root, through the frozen branch: both read into memory, neither opened.
    expect(grandchild.getRecord('stripe', 'customer', 'c6')).toEqual({ n: 6, name: 'acme' });
    expect(grandchild.checkpoint('stripe', 3).byteLength).toBeGreaterThan(0);
    expect(store.heldInMemory()).toMatchObject({ states: 3, worlds: 1 });

    expect(store.release(names[3] as string)).toBe(true);
    expect(store.heldInMemory()).toEqual({ states: 0, names: 0, worlds: 0, boundsRecords: 0 });
  });

  it('a world opened keeps the bases its reads go through when another world is released', () => {
    const { store } = setup();
    const names = family(store, 'acme');
    const other = family(store, 'globex');
    for (const n of [...names, ...other]) store.release(n);
    const grandchild = store.openWorld(names[3] as string);
    grandchild.getRecord('stripe', 'customer', 'c6');
    store.openWorld(other[0] as string);
    expect(store.release(other[0] as string)).toBe(true);
    expect(store.heldInMemory()).toMatchObject({ states: 3, worlds: 1 });
    expect(grandchild.listRecords('stripe', 'customer').records.map((r) => r.id)).toEqual(['c1', 'c11', 'c5', 'c6', 'c9']);
  });

  it('release answers false for a world it does not hold, and hasWorld reads nothing into memory', () => {
    const { store } = setup();
    family(store, 'acme');
    expect(store.release('acme')).toBe(true);
    expect(store.release('acme')).toBe(false);
    expect(store.release('nobody')).toBe(false);
    expect(store.release(42 as unknown as string)).toBe(false);
    const before = store.heldInMemory();
    expect(store.hasWorld('acme')).toBe(true);
    expect(store.hasWorld('nobody')).toBe(false);
    expect(store.heldInMemory()).toEqual(before);
    expect(codeOf(() => store.createWorld('acme', { twins: ['stripe'] }))).toBe('world_exists');
  });
});
