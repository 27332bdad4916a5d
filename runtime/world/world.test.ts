import { describe, expect, it } from 'vitest';
import { codeOf, storageBackends } from '../../test/helpers/storages.js';
import type { Storage } from '../store/types.js';
import type { EntryDraft, RecordWrite } from './types.js';
import { WorldStore } from './world.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const { backends, cleanups } = storageBackends('kit-world-');

const req = (route = 'POST /v1/customers'): EntryDraft['cause'] => ({
  kind: 'request', method: 'POST', route, path: '/v1/customers', status: 200, requestId: 'req_1',
});
const put = (type: string, id: string, value: unknown): RecordWrite => ({ type, id, value });
const draft = (...writes: RecordWrite[]): EntryDraft => ({ cause: req(), writes });

describe.each(backends)('world engine on %s storage', (_name, makeStorage) => {
  function setup(): { store: WorldStore; storage: Storage; wall: { now: number } } {
    const storage = makeStorage();
    cleanups.push(async () => {
      if (storage.alive) await storage.close();
    });
    const wall = { now: T0 };
    const store = new WorldStore(storage, { now: () => wall.now });
    return { store, storage, wall };
  }

  describe('worlds', () => {
    it('creates, opens, lists and refuses duplicates and unknown names', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe', 'github', 'stripe'] });
      expect(w.twins()).toEqual(['stripe', 'github']);
      expect(store.hasWorld('acme')).toBe(true);
      expect(store.openWorld('acme')).toBe(w);
      expect(store.listWorlds()).toEqual(['acme']);
      expect(codeOf(() => store.createWorld('acme', { twins: [] }))).toBe('world_exists');
      expect(codeOf(() => store.openWorld('nope'))).toBe('unknown_world');
      expect(codeOf(() => store.createWorld('bad name!', { twins: [] }))).toBe('bad_request');
      expect(codeOf(() => store.createWorld('ok', { twins: ['Bad Twin'] }))).toBe('invalid_twin');
      expect(codeOf(() => store.createWorld('ok', { twins: ['#meta'] }))).toBe('invalid_twin');
      expect(codeOf(() => store.createWorld('ok', undefined as unknown as { twins: string[] }))).toBe('bad_request');
      expect(store.hasWorld('ok')).toBe(false);
    });

    it('adds a twin with an empty log', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      w.addTwin('github');
      w.addTwin('github');
      expect(w.twins()).toEqual(['stripe', 'github']);
      expect(w.head('github')).toBe(0);
      expect(codeOf(() => w.head('slack'))).toBe('unknown_twin');
    });

    it('removes a world and purges its records; a new world of that name starts empty', async () => {
      const { store, storage } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      for (let i = 0; i < 30; i++) w.append('stripe', draft(put('customer', `cus_${i}`, { i })));
      const other = store.createWorld('other', { twins: ['stripe'] });
      other.append('stripe', draft(put('customer', 'cus_x', { x: 1 })));
      await store.removeWorld('acme');
      expect(store.hasWorld('acme')).toBe(false);
      expect(codeOf(() => w.head('stripe'))).toBe('unknown_world');
      await expect(store.removeWorld('acme')).rejects.toMatchObject({ code: 'unknown_world' });
      // Only the other world's keys and the directory remain.
      const leftovers = [...storage.range({ start: ['w1'], end: ['w1\u0000'] })];
      expect(leftovers).toEqual([]);
      const again = store.createWorld('acme', { twins: ['stripe'] });
      expect(again.head('stripe')).toBe(0);
      expect(again.getRecord('stripe', 'customer', 'cus_1')).toBeUndefined();
      expect(other.getRecord('stripe', 'customer', 'cus_x')).toEqual({ x: 1 });
    });
  });

  describe('log', () => {
    it('appends at positions 1, 2, 3 stamped from the clock, and reads them back', () => {
      const { store, wall } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      expect(w.head('stripe')).toBe(0);
      const e1 = w.append('stripe', { ...draft(put('customer', 'cus_1', { name: 'a' })), traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` });
      wall.now += 1000;
      const e2 = w.append('stripe', { cause: { kind: 'move', move: 'renew', dueAt: '2026-01-01T00:00:01.000Z' }, writes: [], events: [{ type: 'invoice.paid', data: { id: 'in_1' } }] });
      expect(e1).toMatchObject({ position: 1, occurredAt: '2026-01-01T00:00:00.000Z', traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` });
      expect(e2).toMatchObject({ position: 2, occurredAt: '2026-01-01T00:00:01.000Z', events: [{ type: 'invoice.paid', data: { id: 'in_1' } }] });
      expect(w.head('stripe')).toBe(2);
      expect(w.entry('stripe', 1)).toEqual(e1);
      expect(w.entry('stripe', 3)).toBeUndefined();
      expect(w.entry('stripe', 0)).toBeUndefined();
      expect(codeOf(() => w.entry('stripe', -1))).toBe('invalid_position');
      expect(codeOf(() => w.entry('stripe', 1.5))).toBe('invalid_position');
    });

    it('pages the log with after and limit', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      for (let i = 1; i <= 25; i++) w.append('stripe', draft(put('customer', `cus_${i}`, { i })));
      const p1 = w.log('stripe', { limit: 10 });
      expect(p1.entries.map((e) => e.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(p1.next).toBe(10);
      const p3 = w.log('stripe', { after: 20, limit: 10 });
      expect(p3.entries.map((e) => e.position)).toEqual([21, 22, 23, 24, 25]);
      expect(p3.next).toBeNull();
      expect(w.log('stripe', { after: 25 })).toEqual({ entries: [], next: null });
      expect(w.log('stripe').entries).toHaveLength(25);
      expect(w.log('stripe', null as never).entries).toHaveLength(25);
      expect(w.timeline(null as never).entries).toHaveLength(25);
      expect(codeOf(() => w.log('stripe', { after: 26 }))).toBe('position_beyond_head');
      expect(codeOf(() => w.log('stripe', { after: -1 }))).toBe('invalid_position');
      expect(codeOf(() => w.log('stripe', { limit: 0 }))).toBe('invalid_limit');
      expect(codeOf(() => w.log('stripe', { limit: 1001 }))).toBe('invalid_limit');
      expect(codeOf(() => w.log('nope'))).toBe('unknown_twin');
    });

    it('appends a batch in one transaction: all entries or none', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      w.append('stripe', draft(put('customer', 'a', 1)));
      const entries = w.appendBatch('stripe', [
        draft(put('customer', 'b', 2)),
        draft(put('customer', 'a', null), put('customer', 'c', 3)),
        draft(put('customer', 'b', 20)),
      ]);
      expect(entries.map((e) => e.position)).toEqual([2, 3, 4]);
      expect(w.head('stripe')).toBe(4);
      expect(w.countRecords('stripe', 'customer', 2)).toBe(2);
      expect(w.countRecords('stripe', 'customer', 3)).toBe(2);
      expect(w.listRecords('stripe', 'customer').records).toEqual([{ id: 'b', value: 20 }, { id: 'c', value: 3 }]);
      expect(w.getRecord('stripe', 'customer', 'b', 3)).toBe(2);
      // One bad draft anywhere: nothing of the batch is written.
      expect(codeOf(() => w.appendBatch('stripe', [draft(put('customer', 'd', 4)), { cause: req(), writes: [{ type: 'x' }] } as unknown as EntryDraft]))).toBe('bad_request');
      expect(() => w.appendBatch('stripe', [{ ...draft(put('customer', 'd', 4)), occurredAt: '2026-02-01T00:00:00Z' }, { ...draft(), occurredAt: '2026-01-15T00:00:00Z' }])).toThrow(TypeError);
      expect(w.head('stripe')).toBe(4);
      expect(w.getRecord('stripe', 'customer', 'd')).toBeUndefined();
      expect(w.counts('stripe')).toEqual([{ type: 'customer', count: 2 }]);
      expect(w.appendBatch('stripe', [])).toEqual([]);
    });

    it('finds no record under an id no record can have, and refuses to write one', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      w.append('stripe', draft(put('customer', 'a', 1)));
      const long = 'a'.repeat(1025);
      expect(w.getRecord('stripe', 'customer', long)).toBeUndefined();
      expect(w.getRecord('stripe', 'customer', 'é'.repeat(513))).toBeUndefined();
      expect(w.getRecord('stripe', 'customer', '')).toBeUndefined();
      expect(w.getRecord('stripe', 'customer', 'a'.repeat(1024))).toBeUndefined();
      expect(codeOf(() => w.getRecord('stripe', 'customer', 7 as unknown as string))).toBe('bad_request');
      expect(codeOf(() => w.append('stripe', draft(put('customer', long, 1))))).toBe('bad_request');
      expect(codeOf(() => w.listRecords('stripe', 'customer', { after: long }))).toBe('invalid_cursor');
      expect(w.getRecord('stripe', 'customer', 'a')).toBe(1);
    });

    it('keeps types and ids of 62 to 70 UTF-16 units apart from their neighbours once committed, and refuses the ones no storage keeps in order', async () => {
      const { store, storage } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      // From 63 units on lmdb writes a bound "just after" a part bare; a type that long once
      // listed nothing after its commit, and counts() never returned.
      const types = ['t'.repeat(62), 't'.repeat(63), 't'.repeat(70), `${'u'.repeat(61)}\u0000`];
      for (const type of types) w.append('stripe', draft(put(type, 'i'.repeat(63), 1), put(type, 'i'.repeat(64), 2), put(type, `${'i'.repeat(63)}x`, 3), put(type, 'j', 4)));
      await storage.durable();
      await new Promise((r) => setImmediate(r));
      for (const type of types) {
        expect(w.listRecords('stripe', type).records.map((r) => r.value), type.length.toString()).toEqual([1, 2, 3, 4]);
        expect(w.listRecords('stripe', type, { after: 'i'.repeat(63) }).records.map((r) => r.value)).toEqual([2, 3, 4]);
        expect(w.listRecords('stripe', type, { before: 'j', reverse: true, limit: 1 }).records.map((r) => r.value)).toEqual([3]);
      }
      expect(w.counts('stripe')).toEqual([...types].sort().map((type) => ({ type, count: 4 })));
      const { world: b } = w.branch();
      expect(b.listRecords('stripe', 't'.repeat(63), { at: 0 }).records).toEqual([]);
      expect(b.listRecords('stripe', 't'.repeat(63)).records).toHaveLength(4);
      const refused = [`${'t'.repeat(62)}\u0000`, `${'t'.repeat(70)}\u0004`, 'a\uD800', '\uDC00', `x\uDBFF\uDBFF\uDC00`];
      for (const bad of refused) {
        expect(codeOf(() => w.append('stripe', draft(put(bad, 'a', 1)))), JSON.stringify(bad)).toBe('bad_request');
        expect(codeOf(() => w.append('stripe', draft(put('customer', bad, 1)))), JSON.stringify(bad)).toBe('bad_request');
        expect(codeOf(() => w.listRecords('stripe', 'customer', { after: bad })), JSON.stringify(bad)).toBe('invalid_cursor');
      }
      expect(w.head('stripe')).toBe(4);
    });

    it('refuses malformed drafts with bad_request and writes nothing', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      const bad: unknown[] = [
        null,
        { writes: [] },
        { cause: { kind: 'teleport' }, writes: [] },
        { cause: req(), writes: 'x' },
        { cause: req(), writes: [{ type: 1, id: 'a', value: 1 }] },
        { cause: req(), writes: [{ type: 'customer', id: '', value: 1 }] },
        { cause: req(), writes: [{ type: 'customer', id: 'x'.repeat(2000), value: 1 }] },
        { cause: req(), writes: [{ type: 'customer', id: 'a' }] },
        { cause: req(), writes: [], traceparent: 'not-a-traceparent' },
        { cause: req(), writes: [], events: [{ data: 1 }] },
      ];
      for (const d of bad) expect(codeOf(() => w.append('stripe', d as EntryDraft)), JSON.stringify(d)?.slice(0, 80)).toBe('bad_request');
      expect(codeOf(() => w.append('stripe', { cause: req(), writes: [], occurredAt: 'yesterday' }))).toBe('invalid_instant');
      expect(codeOf(() => w.append('nope', draft()))).toBe('unknown_twin');
      expect(w.head('stripe')).toBe(0);
      expect(w.counts('stripe')).toEqual([]);
    });

    it('stamps draft.occurredAt for catching up, and refuses one earlier than the newest entry (TypeError)', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      w.setClock('2026-03-01T00:00:00Z');
      const late = w.append('stripe', { cause: { kind: 'move', move: 'renew', dueAt: '2026-02-01T00:00:00.000Z' }, writes: [], occurredAt: '2026-02-01T00:00:00Z' });
      expect(late.occurredAt).toBe('2026-02-01T00:00:00.000Z');
      expect(() => w.append('stripe', { ...draft(), occurredAt: '2026-01-15T00:00:00Z' })).toThrow(TypeError);
      expect(w.head('stripe')).toBe(1);
    });

    it('never stamps an entry before the newest one, even when the wall clock steps back', () => {
      const { store, wall } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      w.append('stripe', draft());
      wall.now -= 60_000;
      const e = w.append('stripe', draft());
      expect(e.occurredAt).toBe('2026-01-01T00:00:00.000Z');
      // What the twin is handed as its now stands still with its log, for that twin only.
      expect(w.stampMs('stripe')).toBe(Date.parse('2026-01-01T00:00:00.000Z'));
      expect(w.nowMs()).toBe(Date.parse('2026-01-01T00:00:00.000Z') - 60_000);
      wall.now += 120_000;
      expect(w.stampMs('stripe')).toBe(Date.parse('2026-01-01T00:01:00.000Z'));
    });
  });

  describe('clock', () => {
    it('is the wall clock while unset, frozen once set, advances by durations', () => {
      const { store, wall } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      expect(w.clock()).toEqual({ at: '2026-01-01T00:00:00.000Z', frozen: false });
      expect(codeOf(() => w.advanceClock('1d'))).toBe('clock_unset');
      expect(w.setClock('2026-06-01T02:00:00+02:00')).toEqual({ at: '2026-06-01T00:00:00.000Z', frozen: true });
      wall.now += 3_600_000;
      expect(w.clock().at).toBe('2026-06-01T00:00:00.000Z');
      expect(w.append('stripe', draft()).occurredAt).toBe('2026-06-01T00:00:00.000Z');
      expect(w.advanceClock('36h')).toEqual({ at: '2026-06-02T12:00:00.000Z', frozen: true });
      expect(w.nowMs()).toBe(Date.parse('2026-06-02T12:00:00.000Z'));
      expect(codeOf(() => w.advanceClock('1w'))).toBe('invalid_duration');
      expect(codeOf(() => w.advanceClock('0s'))).toBe('invalid_duration');
      expect(codeOf(() => w.setClock('2026-06-01T00:00:00Z'))).toBe('clock_backward');
      expect(codeOf(() => w.setClock('garbage'))).toBe('invalid_instant');
      expect(w.clock().at).toBe('2026-06-02T12:00:00.000Z');
      // The clock survives a new WorldStore over the same storage.
    });

    it('unset, refuses an instant earlier than the newest entry of any twin', () => {
      const { store, wall } = setup();
      const w = store.createWorld('acme', { twins: ['stripe', 'github'] });
      wall.now = Date.parse('2026-05-01T00:00:00Z');
      w.append('github', draft());
      wall.now = Date.parse('2026-04-01T00:00:00Z');
      expect(codeOf(() => w.setClock('2026-04-15T00:00:00Z'))).toBe('clock_backward');
      // Earlier than the wall clock is fine as long as no entry is later.
      expect(w.setClock('2026-05-01T00:00:00Z').frozen).toBe(true);
    });
  });

  describe('tree', () => {
    it('reads a record at head and as of any position', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      w.append('stripe', draft(put('customer', 'cus_1', { v: 1 })));
      w.append('stripe', draft(put('customer', 'cus_2', { v: 'other' })));
      w.append('stripe', draft(put('customer', 'cus_1', { v: 2 })));
      w.append('stripe', draft(put('customer', 'cus_1', null)));
      expect(w.getRecord('stripe', 'customer', 'cus_1')).toBeUndefined();
      expect(w.getRecord('stripe', 'customer', 'cus_1', 0)).toBeUndefined();
      expect(w.getRecord('stripe', 'customer', 'cus_1', 1)).toEqual({ v: 1 });
      expect(w.getRecord('stripe', 'customer', 'cus_1', 2)).toEqual({ v: 1 });
      expect(w.getRecord('stripe', 'customer', 'cus_1', 3)).toEqual({ v: 2 });
      expect(w.getRecord('stripe', 'customer', 'cus_1', 4)).toBeUndefined();
      expect(w.getRecord('stripe', 'customer', 'cus_2')).toEqual({ v: 'other' });
      expect(codeOf(() => w.getRecord('stripe', 'customer', 'cus_1', 5))).toBe('position_beyond_head');
      expect(codeOf(() => w.getRecord('stripe', 'customer', 'cus_1', -2))).toBe('invalid_position');
      expect(codeOf(() => w.getRecord('stripe', '', 'cus_1'))).toBe('bad_request');
    });

    it('counts live records by type, at head and as of a position', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      w.append('stripe', draft(put('customer', 'a', 1), put('customer', 'b', 2), put('price', 'p', 3)));
      w.append('stripe', draft(put('customer', 'a', 10))); // update: no count change
      w.append('stripe', draft(put('customer', 'b', null), put('customer', 'ghost', null))); // delete + delete of nothing
      w.append('stripe', draft(put('price', 'q', 1), put('price', 'q', null), put('price', 'q', 2))); // one entry, net +1
      w.append('stripe', draft(put('invoice', 'i', 1), put('invoice', 'i', null))); // net 0
      expect(w.counts('stripe')).toEqual([{ type: 'customer', count: 1 }, { type: 'price', count: 2 }]);
      expect(w.countRecords('stripe', 'customer', 1)).toBe(2);
      expect(w.countRecords('stripe', 'customer', 3)).toBe(1);
      expect(w.countRecords('stripe', 'price', 3)).toBe(1);
      expect(w.countRecords('stripe', 'nothing')).toBe(0);
      expect(w.getRecord('stripe', 'price', 'q')).toBe(2);
      expect(w.map()).toEqual({
        twins: [{ twin: 'stripe', position: 5, mirror: null, root: null, resources: [{ type: 'customer', count: 1 }, { type: 'price', count: 2 }] }],
      });
    });

    it('lists records in id order with cursors both ways, at head and in the past, skipping deleted ones', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      const ids = Array.from({ length: 12 }, (_, i) => `cus_${String(i).padStart(2, '0')}`);
      w.append('stripe', draft(...ids.map((id) => put('customer', id, { id }))));
      w.append('stripe', draft(put('customer', 'cus_03', null), put('customer', 'cus_04', { id: 'cus_04', v: 2 }), put('other', 'zzz', 1)));
      const page1 = w.listRecords('stripe', 'customer', { limit: 5 });
      expect(page1.records.map((r) => r.id)).toEqual(['cus_00', 'cus_01', 'cus_02', 'cus_04', 'cus_05']);
      expect(page1.records[3]?.value).toEqual({ id: 'cus_04', v: 2 });
      expect(page1.hasMore).toBe(true);
      const page2 = w.listRecords('stripe', 'customer', { after: 'cus_05', limit: 10 });
      expect(page2.records.map((r) => r.id)).toEqual(['cus_06', 'cus_07', 'cus_08', 'cus_09', 'cus_10', 'cus_11']);
      expect(page2.hasMore).toBe(false);
      const down = w.listRecords('stripe', 'customer', { reverse: true, before: 'cus_05', limit: 3 });
      expect(down.records.map((r) => r.id)).toEqual(['cus_04', 'cus_02', 'cus_01']);
      expect(down.hasMore).toBe(true);
      const between = w.listRecords('stripe', 'customer', { after: 'cus_01', before: 'cus_06' });
      expect(between.records.map((r) => r.id)).toEqual(['cus_02', 'cus_04', 'cus_05']);
      expect(w.listRecords('stripe', 'customer', { after: 'cus_09', before: 'cus_02' })).toEqual({ records: [], hasMore: false });
      expect(w.listRecords('stripe', 'customer', { after: 'cus_09', before: 'cus_02', reverse: true, at: 1 })).toEqual({ records: [], hasMore: false });
      // As of position 1: cus_03 still there, cus_04 at its first version.
      const past = w.listRecords('stripe', 'customer', { at: 1, after: 'cus_02', limit: 2 });
      expect(past.records).toEqual([{ id: 'cus_03', value: { id: 'cus_03' } }, { id: 'cus_04', value: { id: 'cus_04' } }]);
      expect(w.listRecords('stripe', 'customer', { at: 0 })).toEqual({ records: [], hasMore: false });
      expect(codeOf(() => w.listRecords('stripe', 'customer', { limit: 5000 }))).toBe('invalid_limit');
      expect(codeOf(() => w.listRecords('stripe', 'customer', { after: 5 as unknown as string }))).toBe('invalid_cursor');
      expect(codeOf(() => w.listRecords('stripe', 'customer', { at: 3 }))).toBe('position_beyond_head');
    });

    it('orders ids with astral characters the same at head and in the past', () => {
      const { store } = setup();
      const w = store.createWorld('acme', { twins: ['stripe'] });
      w.append('stripe', draft(put('t', '\u{1F600}', 1), put('t', '\uFFFF', 2), put('t', 'a', 3)));
      w.append('stripe', draft(put('t', 'b', 4)));
      expect(w.listRecords('stripe', 't').records.map((r) => r.id)).toEqual(['a', 'b', '\uFFFF', '\u{1F600}']);
      expect(w.listRecords('stripe', 't', { at: 1 }).records.map((r) => r.id)).toEqual(['a', '\uFFFF', '\u{1F600}']);
      // The checkpoint's JSON keys follow code-unit order, as every other level does.
      const keys = (at?: number): string[] => Object.keys((JSON.parse(new TextDecoder().decode(w.checkpoint('stripe', at))) as { records: { t: object } }).records.t);
      expect(keys()).toEqual(['a', 'b', '\u{1F600}', '\uFFFF']);
      expect(new TextDecoder().decode(w.checkpoint('stripe'))).toContain('"b":4,"\u{1F600}":1,"\uFFFF":2}');
      expect(keys(1)).toEqual(['a', '\u{1F600}', '\uFFFF']);
    });
  });

  describe('checkpoint', () => {
    it('serialises the tree deterministically with sorted keys at every level', () => {
      const { store } = setup();
      const a = store.createWorld('a', { twins: ['stripe'] });
      const b = store.createWorld('b', { twins: ['stripe'] });
      // The same state reached by different histories and write orders.
      a.append('stripe', draft(put('price', 'p1', { z: 1, a: { y: 2, b: [3, { d: 4, c: 5 }] } }), put('customer', 'c2', { n: 2 })));
      a.append('stripe', draft(put('customer', 'c1', { n: 1 }), put('customer', 'gone', { n: 0 })));
      a.append('stripe', draft(put('customer', 'gone', null)));
      b.append('stripe', draft(put('customer', 'c1', { n: 1 })));
      b.append('stripe', draft(put('customer', 'c2', { n: 2 }), put('price', 'p1', { a: { b: [3, { c: 5, d: 4 }], y: 2 }, z: 1 })));
      b.append('stripe', draft());
      const text = new TextDecoder().decode(a.checkpoint('stripe'));
      expect(text).toBe(
        '{"position":3,"records":{"customer":{"c1":{"n":1},"c2":{"n":2}},"price":{"p1":{"a":{"b":[3,{"c":5,"d":4}],"y":2},"z":1}}},"twin":"stripe"}',
      );
      expect(new TextDecoder().decode(b.checkpoint('stripe'))).toBe(text.replace('"position":3', '"position":3'));
      // In the past: position 2 still has the record deleted at 3.
      const past = JSON.parse(new TextDecoder().decode(a.checkpoint('stripe', 2))) as { records: { customer: Record<string, unknown> } };
      expect(Object.keys(past.records.customer)).toEqual(['c1', 'c2', 'gone']);
      expect(new TextDecoder().decode(a.checkpoint('stripe', 0))).toBe('{"position":0,"records":{},"twin":"stripe"}');
      expect(codeOf(() => a.checkpoint('stripe', 4))).toBe('position_beyond_head');
    });

    it('refuses a checkpoint past 24 MB with checkpoint_too_large', () => {
      const { store } = setup();
      const w = store.createWorld('big', { twins: ['s3'] });
      const blob = 'x'.repeat(1024 * 1024);
      for (let i = 0; i < 25; i++) w.append('s3', draft(put('object', `o${i}`, { blob })));
      expect(codeOf(() => w.checkpoint('s3'))).toBe('checkpoint_too_large');
      expect(codeOf(() => w.checkpoint('s3', 20))).toBe('no error');
      // Fewer than 24 M characters but more than 24 MB of UTF-8.
      const euro = store.createWorld('euro', { twins: ['s3'] });
      for (let i = 0; i < 9; i++) euro.append('s3', draft(put('object', `o${i}`, '€'.repeat(1024 * 1024))));
      expect(codeOf(() => euro.checkpoint('s3'))).toBe('checkpoint_too_large');
      expect(euro.checkpoint('s3', 7).byteLength).toBeGreaterThan(7 * 3 * 1024 * 1024);
    });
  });

  describe('timeline and history', () => {
    function world3(): ReturnType<typeof setup> & { w: ReturnType<WorldStore['createWorld']> } {
      const env = setup();
      const w = env.store.createWorld('acme', { twins: ['stripe', 'github', 'slack'] });
      w.setClock('2026-01-01T00:00:00Z');
      return { ...env, w };
    }

    it('merges the logs newest first by occurredAt, then twin, then position, pages with next', () => {
      const { w } = world3();
      const trace = 'c'.repeat(32);
      w.append('stripe', draft()); // s1 @0
      w.append('github', draft()); // g1 @0
      w.advanceClock('1s');
      w.append('stripe', { ...draft(), traceparent: `00-${trace}-${'1'.repeat(16)}-01` }); // s2 @1
      w.append('slack', draft()); // k1 @1
      w.append('stripe', draft()); // s3 @1
      w.advanceClock('1s');
      w.append('github', { ...draft(), traceparent: `00-${trace}-${'2'.repeat(16)}-01` }); // g2 @2
      const all = w.timeline();
      const order = all.entries.map((e) => `${e.twin}:${e.position}`);
      expect(order).toEqual(['github:2', 'slack:1', 'stripe:3', 'stripe:2', 'github:1', 'stripe:1']);
      expect(all.next).toBeNull();
      // Paging two at a time gives the same sequence.
      const seen: string[] = [];
      let before: string | undefined;
      for (let i = 0; i < 10; i++) {
        const page = w.timeline({ limit: 2, ...(before === undefined ? {} : { before }) });
        seen.push(...page.entries.map((e) => `${e.twin}:${e.position}`));
        if (page.next === null) break;
        before = page.next;
      }
      expect(seen).toEqual(order);
      expect(w.timeline({ twin: 'stripe' }).entries.map((e) => e.position)).toEqual([3, 2, 1]);
      expect(w.timeline({ trace }).entries.map((e) => `${e.twin}:${e.position}`)).toEqual(['github:2', 'stripe:2']);
      const tp = w.timeline({ trace, limit: 1 });
      expect(tp.entries).toHaveLength(1);
      expect(w.timeline({ trace, limit: 1, before: tp.next as string }).entries.map((e) => e.twin)).toEqual(['stripe']);
      expect(codeOf(() => w.timeline({ before: 'garbage!' }))).toBe('invalid_cursor');
      expect(codeOf(() => w.timeline({ before: Buffer.from('[1,2]').toString('base64url') }))).toBe('invalid_cursor');
      expect(codeOf(() => w.timeline({ limit: 501 }))).toBe('invalid_limit');
      expect(codeOf(() => w.timeline({ twin: 'nope' }))).toBe('unknown_twin');
      expect(codeOf(() => w.timeline({ trace: 'XYZ' }))).toBe('bad_request');
    });

    it('cuts history at an instant per twin', () => {
      const { w } = world3();
      for (let i = 0; i < 10; i++) {
        w.append('stripe', draft());
        if (i % 2 === 0) w.append('github', draft());
        w.advanceClock('1m');
      }
      // stripe i at minute i (positions 1..10); github at minutes 0,2,4,6,8 (positions 1..5).
      const cut = w.historyCut('2026-01-01T00:04:30Z');
      expect(cut.views).toEqual({
        stripe: { view: 'acme@stripe:5', position: 5 },
        github: { view: 'acme@github:3', position: 3 },
        slack: { view: 'acme@slack:0', position: 0 },
      });
      expect(w.historyCut('2025-12-31T23:59:59Z').views.stripe?.position).toBe(0);
      expect(w.historyCut('2027-01-01T00:00:00Z').views.stripe?.position).toBe(10);
      expect(w.historyCut('2026-01-01T00:09:00Z').views.stripe?.position).toBe(10);
      expect(codeOf(() => w.historyCut('later'))).toBe('invalid_instant');
    });

    it('diff of a root world is every entry, oldest first', () => {
      const { w } = world3();
      w.append('stripe', draft());
      w.advanceClock('1s');
      w.append('github', draft());
      w.append('stripe', draft());
      const d = w.diff();
      expect(d.base).toEqual({ id: null, at: null });
      expect(d.changes.map((c) => `${c.twin}:${c.entry.position}`)).toEqual(['stripe:1', 'github:1', 'stripe:2']);
      expect(d.next).toBeNull();
    });

    it('diff pages: every page size walks the same changes in the same order, ties at one instant included', () => {
      const { w } = world3();
      // Three twins, several entries at each instant, so pages end inside a run of ties.
      for (let i = 0; i < 7; i++) {
        w.append('stripe', draft());
        w.append('github', draft());
        if (i % 2 === 0) w.append('slack', draft());
        w.append('stripe', draft());
        if (i % 3 !== 2) w.advanceClock('1s');
      }
      const label = (c: { twin: string; entry: { position: number } }): string => `${c.twin}:${c.entry.position}`;
      const whole = w.diff({ limit: 1000 });
      expect(whole.changes).toHaveLength(7 * 3 + 4);
      expect(whole.next).toBeNull();
      for (const limit of [1, 2, 3, 5, 8]) {
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = w.diff({ limit, ...(after === undefined ? {} : { after }) });
          expect(page.changes.length).toBeLessThanOrEqual(limit);
          seen.push(...page.changes.map(label));
          if (page.next === null) break;
          after = page.next;
        }
        expect(seen).toEqual(whole.changes.map(label));
      }
      expect(codeOf(() => w.diff({ after: 'garbage!' }))).toBe('invalid_cursor');
      expect(codeOf(() => w.diff({ limit: 1001 }))).toBe('invalid_limit');
      expect(codeOf(() => w.diff({ limit: 0 }))).toBe('invalid_limit');
    });

    it('a page of the log, timeline or diff stops at about 8 MiB of entries; a bigger entry comes alone', () => {
      const { w } = world3();
      const mb = (n: number): string => 'x'.repeat(n * 1024 * 1024);
      for (const size of [3, 3, 3, 9, 1]) w.append('github', draft(put('obj', `o${size}`, { b64: mb(size) })));
      const positions = (entries: { position: number }[]): number[] => entries.map((e) => e.position);
      const log1 = w.log('github');
      expect(positions(log1.entries)).toEqual([1, 2]);
      const log2 = w.log('github', { after: log1.next as number });
      expect(positions(log2.entries)).toEqual([3]);
      const log3 = w.log('github', { after: log2.next as number });
      expect(positions(log3.entries)).toEqual([4]);
      expect(w.log('github', { after: log3.next as number })).toMatchObject({ next: null });
      expect(positions(w.log('github', { after: 4 }).entries)).toEqual([5]);

      const pages: number[][] = [];
      for (let before: string | null | undefined; before !== null; ) {
        const page = w.timeline(before === undefined ? {} : { before });
        pages.push(positions(page.entries));
        before = page.next;
      }
      expect(pages).toEqual([[5], [4], [3, 2], [1]]);
      const d1 = w.diff();
      expect(d1.changes.map((c) => c.entry.position)).toEqual([1, 2]);
      expect(w.diff({ after: d1.next as string }).changes.map((c) => c.entry.position)).toEqual([3]);
    });
  });

  it('gives deterministic ids per (world, twin, position)', () => {
    const { store } = setup();
    const w = store.createWorld('acme', { twins: ['stripe'] });
    expect(w.ids('stripe', 3).id('cus_')).toBe(w.ids('stripe', 3).id('cus_'));
    expect(w.ids('stripe', 3).id('cus_')).not.toBe(w.ids('stripe', 4).id('cus_'));
    expect(codeOf(() => w.ids('nope', 1))).toBe('unknown_twin');
  });

  it('a new WorldStore over the same storage sees the same worlds, clock and heads', () => {
    const { store, storage } = setup();
    const w = store.createWorld('acme', { twins: ['stripe'] });
    w.setClock('2026-02-01T00:00:00Z');
    w.append('stripe', draft(put('customer', 'c', 1)));
    const again = new WorldStore(storage).openWorld('acme');
    expect(again.clock()).toEqual({ at: '2026-02-01T00:00:00.000Z', frozen: true });
    expect(again.head('stripe')).toBe(1);
    expect(again.getRecord('stripe', 'customer', 'c')).toBe(1);
  });
});
