/**
 * Worlds, branches (as of now and at past instants, branches of branches), twins added later,
 * failed batches and new WorldStores over the same storage, driven at random and read back at
 * every position against a replay of their writes: lists both ways with cursors, and records.
 * Types and ids include `__proto__`, NUL characters and 62 to 66 UTF-16 units (lmdb writes a
 * key part of 64 or more bare); id bounds are noted every 1–4 writes, so walks at past positions
 * and of bases use them. Both storages, LMDB with commits between steps. (It found that an
 * entry deleting and re-creating a record lost its value as of that entry when a later entry of
 * the batch rewrote it; and, on LMDB alone, that a type of 63 or more units listed nothing once
 * committed and hung `counts()`.)
 */
import { setImmediate as turnEnd } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { storageBackends } from '../../test/helpers/storages.js';
import { seededRandom as random } from '../../test/helpers/random.js';
import { formatInstant } from './time.js';
import type { EntryDraft, RecordWrite } from './types.js';
import { type World, WorldStore } from './world.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const TYPES = ['customer', '__proto__', 'a\u0000b', 'z', 'T'.repeat(63), `${'U'.repeat(61)}\u0000`];
const cause: EntryDraft['cause'] = { kind: 'request', method: 'POST', route: 'POST /x', path: '/x', status: 200, requestId: 'r' };
const idOf = (k: number): string => {
  const n = String(k).padStart(3, '0');
  if (k % 17 === 5) return `id_${n}\u0000x`;
  if (k % 7 === 3) return `${'id_'.padEnd(59 + (k % 5), 'L')}${n}`;
  return `id_${n}`;
};

interface W { name: string; twins: string[]; states: Map<string, Map<string, unknown>[]>; times: Map<string, number[]> }

const { backends } = storageBackends('kit-fuzz-');

describe.each(backends)('worlds and branches driven at random read what a replay reads (%s)', (name, make) => {
  // LMDB runs fewer seeds: it reads the same way, and each costs about twice as long.
  for (let seed = 1; seed <= (name === 'memory' ? 6 : 2); seed++) {
    it(`seed ${seed}`, async () => {
      const rnd = random(seed);
      const storage = make();
      const clock = { now: T0 };
      const every = 1 + Math.floor(rnd() * 4);
      let store = new WorldStore(storage, { now: () => clock.now, boundsEvery: every });
      const root = store.createWorld('acme', { twins: ['s'] });
      const worlds: W[] = [{ name: 'acme', twins: ['s'], states: new Map([['s', [new Map()]]]), times: new Map([['s', [0]]]) }];
      let pool = 4;
      const open = (w: W): World => store.openWorld(w.name);
      for (let step = 0; step < 120; step++) {
        clock.now += 1000;
        // The turn ends now and then: LMDB commits what is staged, and reads go to its pages.
        if (rnd() < 0.3) await turnEnd();
        const r = rnd();
        const w = worlds[Math.floor(rnd() * worlds.length)] as W;
        const world = open(w);
        if (r < 0.6) {
          const twin = w.twins[Math.floor(rnd() * w.twins.length)] as string;
          const drafts: EntryDraft[] = [];
          const n = 1 + Math.floor(rnd() * 3);
          for (let i = 0; i < n; i++) {
            const writes: RecordWrite[] = [];
            const m = 1 + Math.floor(rnd() * 3);
            for (let j = 0; j < m; j++) {
              if (rnd() < 0.4) pool++;
              const id = idOf(rnd() < 0.5 ? pool : Math.floor(rnd() * pool));
              const type = TYPES[Math.floor(rnd() * TYPES.length)] as string;
              writes.push({ type, id, value: rnd() < 0.3 ? null : { v: Math.floor(rnd() * 100) } });
            }
            drafts.push({ cause, writes });
          }
          if (rnd() < 0.1) {
            drafts.push({ cause, occurredAt: '9999-12-31T00:00:00.000Z', writes: [{ type: 'z', id: idOf(pool + 70), value: 1 }] });
            drafts.push({ cause, occurredAt: '9999-12-30T00:00:00.000Z', writes: [{ type: 'customer', id: idOf(pool + 50), value: 1 }] });
            expect(() => world.appendBatch(twin, drafts)).toThrow();
            continue;
          }
          const made = world.appendBatch(twin, drafts);
          const states = w.states.get(twin) as Map<string, unknown>[];
          const times = w.times.get(twin) as number[];
          for (const [i, d] of drafts.entries()) {
            const live = new Map(states[states.length - 1]);
            for (const x of d.writes) {
              const k = `${x.type}\u0000${x.id}`;
              if (x.value === null) live.delete(k);
              else live.set(k, x.value);
            }
            states.push(live);
            times.push(Date.parse((made[i] as { occurredAt: string }).occurredAt));
          }
        } else if (r < 0.75 && worlds.length < 8) {
          const past = rnd() < 0.5;
          const times = w.times.get('s') as number[];
          const atMs = past ? (times[Math.floor(rnd() * times.length)] as number) : undefined;
          const { world: b } = world.branch(atMs === undefined ? {} : { at: formatInstant(atMs) });
          const pos = b.base()!.positions;
          const nw: W = { name: b.name, twins: [...w.twins], states: new Map(), times: new Map() };
          for (const t of w.twins) {
            nw.states.set(t, (w.states.get(t) as Map<string, unknown>[]).slice(0, (pos[t] as number) + 1));
            nw.times.set(t, (w.times.get(t) as number[]).slice(0, (pos[t] as number) + 1));
          }
          worlds.push(nw);
        } else if (r < 0.8) {
          const t = `t${Math.floor(rnd() * 3)}`;
          if (!w.twins.includes(t)) {
            world.addTwin(t);
            w.twins.push(t);
            w.states.set(t, [new Map()]);
            w.times.set(t, [0]);
          }
        } else if (r < 0.88) {
          store = new WorldStore(storage, { now: () => clock.now, boundsEvery: every });
        } else {
          check(world, w);
        }
      }
      for (const x of worlds) check(open(x), x);
      await storage.durable();
      await turnEnd();
      store = new WorldStore(storage, { now: () => clock.now, boundsEvery: every });
      for (const x of worlds) check(open(x), x, true);
      await storage.close();
    });
  }
});

/** Lists, records and counts; with `whole`, every position's checkpoint too (the slowest read). */
function check(world: World, w: W, whole = false): void {
  for (const twin of w.twins) {
    const states = w.states.get(twin) as Map<string, unknown>[];
    for (let at = 0; at < states.length; at++) {
      const st = states[at] as Map<string, unknown>;
      // Maps, then objects made by fromEntries: `__proto__` is a type here, and an own key.
      const byType = new Map<string, Map<string, unknown>>();
      for (const [k, v] of st) {
        const type = TYPES.find((t) => k.startsWith(`${t}\u0000`)) as string;
        if (!byType.has(type)) byType.set(type, new Map());
        byType.get(type)?.set(k.slice(type.length + 1), v);
      }
      const records = Object.fromEntries([...byType].map(([type, ids]) => [type, Object.fromEntries(ids)]));
      for (const type of TYPES) {
        const want = [...st].filter(([k]) => k.startsWith(`${type}\u0000`)).map(([k, v]) => ({ id: k.slice(type.length + 1), value: v }));
        want.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const got = world.listRecords(twin, type, { at, limit: 1000 }).records;
        expect(got, `${w.name} ${twin} ${type} @${at}`).toEqual(want);
        expect(world.listRecords(twin, type, { at, limit: 1000, reverse: true }).records).toEqual([...want].reverse());
        for (const probe of [...want.slice(0, 3), ...want.filter((r) => r.id.length > 60).slice(0, 2)]) {
          expect(world.listRecords(twin, type, { at, limit: 2, after: probe.id }).records).toEqual(want.filter((r) => r.id > probe.id).slice(0, 2));
          expect(world.listRecords(twin, type, { at, limit: 2, before: probe.id, reverse: true }).records).toEqual(want.filter((r) => r.id < probe.id).reverse().slice(0, 2));
          expect(world.getRecord(twin, type, probe.id, at)).toEqual(probe.value);
        }
      }
      if (whole) expect(JSON.parse(new TextDecoder().decode(world.checkpoint(twin, at))).records, `${w.name} ${twin} checkpoint @${at}`).toEqual(records);
    }
    // After the lists: a walk that loops forever would hang here, where a wrong list fails.
    const last = states[states.length - 1] as Map<string, unknown>;
    const counts = TYPES.map((type) => ({ type, count: [...last.keys()].filter((k) => k.startsWith(`${type}\u0000`)).length }));
    expect(world.counts(twin), `${w.name} ${twin} counts`).toEqual(counts.filter((c) => c.count > 0).sort((a, b) => (a.type < b.type ? -1 : 1)));
  }
}
