import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { parseGuestOutput } from '../protocol.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { idSource } from '../../../runtime/world/ids.js';
import { buildTwin } from '../build.js';
import { createGuestHarness } from '../testing.js';
import type { GuestHarness } from '../testing.js';
import { compareIds, dueKey } from './runtime.js';

const PROBE = fileURLToPath(new URL('./fixtures/probe.ts', import.meta.url));
const NOW = Date.parse('2026-03-04T05:06:07.089Z');
let source = '';

beforeAll(async () => {
  source = (await buildTwin(PROBE)).source;
});

function harness(world = 'w1', listCap?: number): GuestHarness {
  return createGuestHarness(source, { world, now: NOW, ...(listCap === undefined ? {} : { listCap }) });
}

type Op = Record<string, unknown>;
function ops(h: GuestHarness, list: Op[]): unknown[] {
  const r = h.request('POST', '/ops', { body: { ops: list } });
  expect(r.thrown).toBeUndefined();
  return (r.body as { results: unknown[] }).results;
}

describe('manifest', () => {
  it('answers the definition as plain data, with defaults filled in', () => {
    const h = harness();
    expect(h.manifest).toMatchObject({
      vendor: 'probe',
      version: '0.0.1',
      protocol: 'http',
      models: { hosts: ['probe.test'], resources: ['thing'] },
      requestScopes: ['read'],
      stores: ['things', 'writer'],
      moves: ['tick'],
      scenarios: false,
    });
    expect(h.manifest.routes[0]).toEqual({ name: 'clock', match: { method: 'GET', path: '/clock' } });
  });
});

describe('clock and ids', () => {
  it('gives the world clock to Date in every form, and leaves other dates alone', () => {
    const body = harness().request('GET', '/clock').body as Record<string, unknown>;
    expect(body['now']).toBe(NOW);
    expect(body['newDate']).toBe(NOW);
    expect(body['ctxNowMs']).toBe(NOW);
    expect(body['ctxNow']).toBe('2026-03-04T05:06:07.089Z');
    expect(body['called']).toBe(new Date(NOW).toString());
    expect(body['fixed']).toBe('1970-01-02T00:00:00.000Z');
    expect(body['parts']).toBe(2020);
    expect(body['parsed']).toBe(946684800000);
    expect(body['utc']).toBe(Date.UTC(2001, 0, 1));
    expect(body['isDate']).toBe(true);
  });

  it('draws Math.random, ctx.random and ctx.id from the generator seeded by (world, twin, position)', () => {
    const body = harness().request('GET', '/clock').body as { random: number[]; id: string; short: string };
    const expected = idSource('w1', 'probe', 1);
    expect(body.random).toEqual([expected.random(), expected.random(), expected.random()]);
    expect(body.id).toBe(expected.id('x_'));
    expect(body.short).toBe(expected.id('y_', 4));
    expect(body.short).toMatch(/^y_[0-9A-Za-z]{4}$/);
  });

  it('makes ctx.orderedId ids that sort in the order they were made, across calls and within one', () => {
    const h = harness();
    const made = (count: number): string[] => (h.request('POST', '/ordered', { body: { count } }).body as { ids: string[] }).ids;
    const ids = [...made(3), ...made(1), ...made(70)];
    expect(ids).toHaveLength(74);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(74);
    for (const id of ids) expect(id).toMatch(/^o_[0-9A-Za-z]{14}$/);
    // The entry's position, then the id's number in it, then the generator's characters.
    const expected = idSource('w1', 'probe', 1);
    expect(ids[0]).toBe(expected.orderedId('o_'));
    expect(ids[0]?.slice(2, 12)).toBe('0000001000');
    expect(ids[1]?.slice(2, 12)).toBe('0000001001');
    expect(ids[3]?.slice(2, 12)).toBe('0000002000');
    // The ids are the keys the twin listed by: id order is creation order.
    const listed = (h.request('POST', '/ops', { body: { ops: [{ op: 'list', type: 'thing', options: { limit: 100 } }] } }).body as { results: { items: { id: string }[] }[] }).results[0];
    expect(listed?.items.map((i) => i.id)).toEqual(ids);
  });

  it('refuses an ordered id too short to hold its order, or with a prefix that is not a string', () => {
    const h = harness();
    const refused = (b: Record<string, unknown>): unknown => h.request('POST', '/ordered', { body: { count: 1, ...b } }).body;
    expect(refused({ length: 9 })).toEqual({ error: 'ctx.orderedId: length must be an integer 10..128', made: 0 });
    expect(refused({ length: 10.5 })).toEqual({ error: 'ctx.orderedId: length must be an integer 10..128', made: 0 });
    expect(refused({ prefix: 7 })).toEqual({ error: 'ctx.orderedId: prefix must be a string', made: 0 });
    expect((h.request('POST', '/ordered', { body: { count: 1, length: 10 } }).body as { ids: string[] }).ids[0]).toBe('o_0000001000');
  });

  it('gives ctx.position as the position of the entry the call makes; a call that makes none leaves it to the next', () => {
    const h = harness();
    const positionNow = (): unknown => (h.request('GET', '/clock').body as { position: number }).position;
    expect(positionNow()).toBe(1);
    expect(positionNow()).toBe(1);
    const wrote = h.request('POST', '/ops', { body: { ops: [{ op: 'put', type: 'thing', id: 'a', value: 1 }] } });
    expect(wrote.position).toBe(1);
    expect(positionNow()).toBe(2);
  });

  it('answers byte for byte the same for the same inputs, and differently in another world', () => {
    const a = harness('w1');
    const b = harness('w1');
    const c = harness('w2');
    const run = (h: GuestHarness) => [h.request('GET', '/clock'), h.request('POST', '/ops', { body: { ops: [{ op: 'put', type: 't', id: 'x', value: 1 }] } }), h.request('GET', '/clock')].map((r) => JSON.stringify(r.body));
    const ra = run(a);
    expect(run(b)).toEqual(ra);
    expect(run(c)[0]).not.toBe(ra[0]);
    // The position seeds the generator: after an entry, the next request draws other ids.
    expect(ra[2]).not.toBe(ra[0]);
  });

  it("keeps each call's context functions on that call, taken off the context or around a nested call", () => {
    const r = harness().request('GET', '/detached');
    const body = r.body as { first: number; id: string; nowMs: number; nestedNow: number };
    const expected = idSource('w1', 'probe', 1);
    expect(body.first).toBe(expected.random());
    expect(body.id).toBe(expected.id('d_'));
    expect(body.nowMs).toBe(NOW);
    expect(body.nestedNow).toBe(1);
    expect(r.events).toEqual([{ type: 'detached', data: { first: body.first } }]);
  });

  it('leaves the world clock and generator out of reach between calls', () => {
    const context = vm.createContext({ __host_call: () => 'null' });
    vm.runInContext(source, context);
    const call = (nowMs: number): void => {
      vm.runInContext(`__kit_invoke(JSON.stringify({ kind: 'route', index: 0, request: { method: 'GET', path: '/clock', params: {}, query: {}, headers: {}, requestId: 'r', readOnly: false }, world: 'w', twin: 'probe', position: 1, nowMs: ${nowMs} }))`, context);
    };
    call(5);
    // Outside a call the clock reads 0 (as QuickJS's pinned Date does), not the last call's instant.
    expect(vm.runInContext('[Date.now(), new Date().getTime()]', context)).toEqual([0, 0]);
    // Math.random outside a call does not draw from the call's seeded sequence.
    const outside = vm.runInContext('Math.random()', context) as number;
    expect(outside).not.toBe(idSource('w', 'probe', 1).random());
    // A later call still gets its own clock and sequence.
    call(7);
    expect(vm.runInContext('Date.now()', context)).toBe(0);
  });
});

describe('the tree', () => {
  it('reads its own buffered writes: get, count and list', () => {
    const h = harness();
    ops(h, [
      { op: 'put', type: 'thing', id: 'a', value: { v: 'a' } },
      { op: 'put', type: 'thing', id: 'c', value: { v: 'c' } },
    ]);
    const results = ops(h, [
      { op: 'put', type: 'thing', id: 'b', value: { v: 'b' } },
      { op: 'delete', type: 'thing', id: 'a' },
      { op: 'put', type: 'thing', id: 'c', value: { v: 'c2' } },
      { op: 'get', type: 'thing', id: 'a' },
      { op: 'get', type: 'thing', id: 'b' },
      { op: 'get', type: 'thing', id: 'c' },
      { op: 'count', type: 'thing' },
      { op: 'list', type: 'thing' },
    ]);
    expect(results).toEqual([
      null,
      { v: 'b' },
      { v: 'c2' },
      2,
      { items: [{ id: 'b', value: { v: 'b' } }, { id: 'c', value: { v: 'c2' } }], hasMore: false },
    ]);
    expect(h.records('thing')).toEqual([
      { id: 'b', value: { v: 'b' } },
      { id: 'c', value: { v: 'c2' } },
    ]);
  });

  it('writes each record once, with its last value, in first-write order', () => {
    const h = harness();
    const r = h.request('POST', '/ops', {
      body: { ops: [
        { op: 'put', type: 'thing', id: 'x', value: 1 },
        { op: 'put', type: 'other', id: 'y', value: 2 },
        { op: 'put', type: 'thing', id: 'x', value: 3 },
        { op: 'delete', type: 'other', id: 'y' },
      ] },
    });
    expect(r.writes).toEqual([
      { type: 'thing', id: 'x', value: 3 },
      { type: 'other', id: 'y', value: null },
    ]);
    expect(r.status).toBe(201);
    expect(r.headers).toEqual({ 'x-probe': 'yes' });
  });

  it('keeps what was put, whatever the handler does to the object afterwards', () => {
    const r = harness().request('POST', '/mutate');
    expect(r.body).toEqual({ n: 1 });
    expect(r.writes).toEqual([{ type: 'thing', id: 'm', value: { n: 1 } }]);
  });

  it('asks the host once per record and keeps host calls few', () => {
    const h = harness();
    ops(h, [{ op: 'put', type: 'thing', id: 'a', value: 1 }]);
    const r = h.request('POST', '/ops', {
      body: { ops: [
        { op: 'get', type: 'thing', id: 'a' },
        { op: 'get', type: 'thing', id: 'a' },
        { op: 'get', type: 'thing', id: 'zz' },
        { op: 'get', type: 'thing', id: 'zz' },
        { op: 'count', type: 'thing' },
        { op: 'count', type: 'thing' },
      ] },
    });
    expect((r.body as { results: unknown[] }).results).toEqual([1, 1, null, null, 1, 1]);
    expect(r.hostCalls).toBe(3);
  });

  it('fills a page hidden by buffered deletes with one host read', () => {
    const h = harness();
    ops(h, ['a', 'b', 'c', 'd'].map((id) => ({ op: 'put', type: 'thing', id, value: id })));
    const r = h.request('POST', '/ops', {
      body: { ops: [
        { op: 'delete', type: 'thing', id: 'a' },
        { op: 'delete', type: 'thing', id: 'b' },
        { op: 'list', type: 'thing', options: { limit: 2 } },
      ] },
    });
    expect((r.body as { results: unknown[] }).results).toEqual([{ items: [{ id: 'c', value: 'c' }, { id: 'd', value: 'd' }], hasMore: false }]);
    expect(r.hostCalls).toBe(1);
  });

  // A model of the merged tree checked against the guest's paged reads, over many random cases:
  // the buffer can hide committed items, add new ones, and straddle page boundaries.
  it('pages correctly over committed records merged with buffered writes', () => {
    const gen = idSource('paging', 'test', 1);
    const rand = (n: number) => Math.floor(gen.random() * n);
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'é', '\u{1F600}', '\uFFFD'];
    for (let round = 0; round < 200; round++) {
      // Half the rounds against a host that caps every list at 3 items: a page may then be
      // short, but it must be a prefix of the truth, and hasMore must say when it is.
      const cap = round % 2 === 0 ? undefined : 3;
      const h = harness(`w${round}`, cap);
      const model = new Map<string, unknown>();
      const committed: Op[] = [];
      for (const id of ids) if (rand(2) === 0) { committed.push({ op: 'put', type: 'thing', id, value: id }); model.set(id, id); }
      if (committed.length > 0) ops(h, committed);
      const buffered: Op[] = [];
      const writes = rand(8);
      for (let i = 0; i < writes; i++) {
        const id = ids[rand(ids.length)]!;
        if (rand(2) === 0) { buffered.push({ op: 'delete', type: 'thing', id }); model.delete(id); }
        else { buffered.push({ op: 'put', type: 'thing', id, value: `${id}!` }); model.set(id, `${id}!`); }
      }
      const sorted = [...model.keys()].sort(compareIds);
      const queries: { options: Record<string, unknown> }[] = [];
      for (let q = 0; q < 6; q++) {
        const options: Record<string, unknown> = {};
        if (rand(3) === 0) options['after'] = ids[rand(ids.length)];
        if (rand(3) === 0) options['before'] = ids[rand(ids.length)];
        if (rand(4) !== 0) options['limit'] = rand(5);
        if (rand(2) === 0) options['reverse'] = true;
        queries.push({ options });
      }
      const results = ops(h, [...buffered, ...queries.map((q) => ({ op: 'list', type: 'thing', options: q.options })), { op: 'count', type: 'thing' }]);
      queries.forEach((q, i) => {
        const { after, before, limit, reverse } = q.options as { after?: string; before?: string; limit?: number; reverse?: boolean };
        let inRange = sorted.filter((id) => (after === undefined || compareIds(id, after) > 0) && (before === undefined || compareIds(id, before) < 0));
        if (reverse) inRange = inRange.reverse();
        const page = limit === undefined ? inRange : inRange.slice(0, limit);
        const expected = { items: page.map((id) => ({ id, value: model.get(id) })), hasMore: limit !== undefined && inRange.length > limit };
        const label = `round ${round} query ${JSON.stringify(q.options)}`;
        if (cap === undefined) {
          expect(results[i], label).toEqual(expected);
        } else {
          const got = results[i] as { items: { id: string; value: unknown }[]; hasMore: boolean };
          expect(got.items, label).toEqual(expected.items.slice(0, got.items.length));
          if (got.items.length < expected.items.length) expect(got.hasMore, label).toBe(true);
          else expect(got.hasMore, label).toBe(expected.hasMore);
        }
      });
      expect(results[queries.length]).toBe(model.size);
    }
  });

  it('orders ids by code point, as the store does', () => {
    expect(['\uFFFD', '\u{1F600}', 'b', 'a'].sort(compareIds)).toEqual(['a', 'b', '\uFFFD', '\u{1F600}']);
    expect(compareIds('ab', 'a')).toBeGreaterThan(0);
    expect(compareIds('a', 'a')).toBe(0);
  });
});

describe('an answer with discardWrites', () => {
  it('is sent as answered, and keeps none of the call\'s writes and events', () => {
    const h = harness();
    const r = h.request('POST', '/refuse', { body: {} });
    expect([r.status, r.body, r.writes, r.events, r.thrown]).toEqual([422, { refused: true }, [], [], undefined]);
    expect(h.get('thing', 'before-refusal')).toBeUndefined();
    const kept = h.request('POST', '/refuse', { body: { keep: true } });
    expect(kept.status).toBe(422);
    expect(kept.writes).toEqual([{ type: 'thing', id: 'before-refusal', value: { x: 1 } }]);
    expect(kept.events).toHaveLength(1);
  });
});

describe('a throwing handler', () => {
  it('discards its writes and events, and answers the twin\'s error body with status 500', () => {
    const h = harness();
    const r = h.request('POST', '/throw', { body: { what: 'error' } });
    expect(r.status).toBe(500);
    expect(r.writes).toEqual([]);
    expect(r.events).toEqual([]);
    expect(r.thrown?.message).toBe('out of range');
    expect(r.thrown?.stack).toContain('out of range');
    expect(r.body).toEqual({ failure: { status: 500, code: 'handler_error', message: 'out of range' } });
    expect(h.head).toBe(0);
    expect(h.get('thing', 'before-throw')).toBeUndefined();
  });

  it('describes any thrown value, even one whose toString throws', () => {
    const h = harness();
    expect(h.request('POST', '/throw', { body: { what: 'string' } }).thrown).toEqual({ message: 'plain string' });
    expect(h.request('POST', '/throw', { body: { what: 'null' } }).thrown?.message).toBe('a non-Error value was thrown: null');
    expect(h.request('POST', '/throw', { body: { what: 'hostile' } }).thrown?.message).toBe('a value that cannot be described was thrown');
  });

  it('falls back to the generic body when the twin\'s errorBody throws too', () => {
    const r = harness().request('POST', '/throw', { body: { what: 'errorBody' } });
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: { code: 'handler_error', message: 'errorBody-boom' } });
  });

  it('treats API misuse as a throw: unknown move, reserved type, undefined and non-JSON values', () => {
    const h = harness();
    expect(h.request('POST', '/throw', { body: { what: 'schedule-unknown' } }).thrown?.message).toMatch(/no move 'nope'/);
    expect(h.request('POST', '/throw', { body: { what: 'reserved' } }).thrown?.message).toMatch(/belong to the SDK/);
    expect(h.request('POST', '/throw', { body: { what: 'undefined-value' } }).thrown?.message).toMatch(/use tree.delete/);
    expect(h.request('POST', '/throw', { body: { what: 'bigint' } }).thrown?.message).toMatch(/not JSON data/);
    expect(h.head).toBe(0);
  });

  it("refuses a twin's put and delete of the scenarios' scenario.* types, and keeps nothing of the call", () => {
    const h = harness();
    for (const op of [{ op: 'put', type: 'scenario.calls', id: 'n', value: { n: 1 } }, { op: 'delete', type: 'scenario.calls', id: 'n' }]) {
      const r = h.request('POST', '/ops', { body: { ops: [{ op: 'put', type: 'thing', id: 'a', value: { ok: true } }, op] } });
      expect(r.thrown?.message).toMatch(new RegExp(`tree.${op.op}: record types starting with 'scenario.' belong to the world's scenarios`));
    }
    expect(h.head).toBe(0);
    // A type that merely begins with the word is the twin's own.
    expect(ops(h, [{ op: 'put', type: 'scenarios', id: 'a', value: {} }])).toEqual([]);
  });

  it('treats a bad answer as a throw: none, a Promise, a bad status, a cycle', () => {
    const h = harness();
    for (const [what, pattern] of [['nothing', /not a response object/], ['promise', /handlers are synchronous/], ['status', /status 42/], ['cycle', /circular/i]] as const) {
      const r = h.request('POST', '/bad-return', { body: { what } });
      expect(r.status, what).toBe(500);
      expect(r.thrown?.message, what).toMatch(pattern);
      expect(r.writes, what).toEqual([]);
    }
    expect(h.head).toBe(0);
  });

  it('answers a malformed invoke input as a thrown error, not a crash', () => {
    const h = harness();
    for (const input of ['not json', '{}', '{"kind":"route","index":99,"world":"w","twin":"t","position":1,"nowMs":0}', '{"kind":"store","name":"nope","world":"w","twin":"t","position":1,"nowMs":0}', '{"kind":"what","world":"w","twin":"t","position":1,"nowMs":0}', '{"kind":"store","name":"toString","world":"w","twin":"t","position":1,"nowMs":0}', '{"kind":"move","move":"constructor","id":"x","dueAt":0,"world":"w","twin":"t","position":1,"nowMs":0}']) {
      const out = parseGuestOutput(h.call('__kit_invoke', input)) as { response: { status: number }; thrown?: { message: string } };
      expect(out.response.status, input).toBe(500);
      expect(out.thrown, input).toBeDefined();
    }
  });
});

describe('timed moves', () => {
  it('schedules as __due and __due_id records, and rescheduling replaces the old one', () => {
    const h = harness();
    h.request('POST', '/schedule', { body: { id: 's1', dueAt: '2026-03-05T00:00:00.000Z', data: { n: 1 } } });
    const key1 = dueKey(Date.parse('2026-03-05T00:00:00.000Z'), 's1');
    expect(key1).toBe('001772668800000:s1');
    expect(h.records('__due')).toEqual([{ id: key1, value: { id: 's1', move: 'tick', dueAt: '2026-03-05T00:00:00.000Z', data: { n: 1 } } }]);
    expect(h.get('__due_id', 's1')).toEqual({ key: key1 });

    h.request('POST', '/schedule', { body: { id: 's1', dueAt: '2026-03-06T00:00:00.000Z' } });
    const key2 = dueKey(Date.parse('2026-03-06T00:00:00.000Z'), 's1');
    expect(h.records('__due').map((r) => r.id)).toEqual([key2]);
    expect(h.get('__due_id', 's1')).toEqual({ key: key2 });

    h.request('POST', '/schedule', { body: { id: 's1', cancel: true } });
    expect(h.records('__due')).toEqual([]);
    expect(h.get('__due_id', 's1')).toBeUndefined();
  });

  it('performs a due move at its instant, removing its schedule, and lets it schedule again', () => {
    const h = harness();
    h.request('POST', '/schedule', { body: { id: 's1', dueAt: '2026-03-05T00:00:00.000Z', data: { again: '2026-03-07T00:00:00.000Z' } } });
    h.setNow('2026-03-10T00:00:00.000Z');
    const done = h.runDue();
    expect(done).toHaveLength(2);
    expect(h.get('tick', '2026-03-05T00:00:00.000Z')).toEqual({
      data: { again: '2026-03-07T00:00:00.000Z' },
      dueAt: '2026-03-05T00:00:00.000Z',
      now: '2026-03-05T00:00:00.000Z',
      dateNow: Date.parse('2026-03-05T00:00:00.000Z'),
    });
    expect(h.get('tick', '2026-03-07T00:00:00.000Z')).toMatchObject({ data: { n: 2 } });
    expect(h.records('__due')).toEqual([]);
    expect(h.records('__due_id')).toEqual([]);
    expect(h.log.map((e) => [e.occurredAt, e.cause.kind])).toEqual([
      ['2026-03-04T05:06:07.089Z', 'request'],
      ['2026-03-05T00:00:00.000Z', 'move'],
      ['2026-03-07T00:00:00.000Z', 'move'],
    ]);
  });

  it('a throwing move keeps none of its own writes but still removes its schedule', () => {
    const h = harness();
    h.request('POST', '/schedule', { body: { id: 's1', dueAt: '2026-03-05T00:00:00.000Z', data: { fail: true } } });
    h.setNow('2026-03-06T00:00:00.000Z');
    const [r] = h.runDue();
    expect(r?.thrown?.message).toBe('tick failed');
    expect(r?.writes).toEqual([
      { type: '__due', id: '001772668800000:s1', value: null },
      { type: '__due_id', id: 's1', value: null },
    ]);
    expect(h.records('tick')).toEqual([]);
    expect(h.records('__due')).toEqual([]);
  });
});

describe('events and stores', () => {
  it('records emitted events in order', () => {
    const r = harness().request('POST', '/emit');
    expect(r.events).toEqual([
      { type: 'a.happened', data: { n: 1 } },
      { type: 'b.happened', data: null },
    ]);
  });

  it('answers a store from the committed tree, and a store that writes fails', () => {
    const h = harness();
    ops(h, [{ op: 'put', type: 'thing', id: 'a', value: 1 }]);
    const r = h.store('things');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ items: [{ id: 'a', value: 1 }], hasMore: false });
    const w = h.store('writer');
    expect(w.status).toBe(500);
    expect(w.thrown?.message).toMatch(/read-only/);
    expect(w.writes).toEqual([]);
  });
});
