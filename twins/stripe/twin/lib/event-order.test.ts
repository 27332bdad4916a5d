/**
 * Events listed since an instant (`created[gte]`, `created[gt]`, `created=`): the account keeps
 * its events in `created` order, newest first, so a poll reads the newer events and stops at
 * the first older one, and events stamped at another instant than their request's (a test
 * clock's, a timed move's due time) are marked and still found. An account without a record
 * whose events came before that order was kept is walked whole.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ListOptions, Tree } from '../../../../sdk/twin/types.js';
import type { Call } from './request.js';
import { event } from './events.js';
import { memoryTree, stubContext } from './fakes.test-helper.js';
import { Params } from './params.js';
import { listOf } from './lists.js';
import type { AccountState } from './account.js';
import { orderedId } from './ids.js';
import type { Obj } from './util.js';

const ACCT = 'acct_eventOrder';
const draws = { n: 0 };
let position = 0;
beforeEach(() => {
  draws.n = 0;
  position = 0;
});

/** A tree that counts the records its lists hand out. */
function countingTree(): Tree & { read: number } {
  const inner = memoryTree();
  const tree = Object.create(inner) as Tree & { read: number };
  tree.read = 0;
  tree.list = <V>(type: string, options?: ListOptions) => {
    const page = inner.list<V>(type, options);
    tree.read += page.items.length;
    return page;
  };
  return tree;
}

/** One request's call, in the next entry, at world clock second `nowS`. */
function call(tree: Tree, nowS: number, raw: Obj = {}): Call {
  position++;
  return {
    ctx: stubContext(position, draws, nowS * 1000), tree, acct: ACCT, p: new Params(raw), requestId: 'req_test', idempotencyKey: null,
    now: nowS, nowMs: nowS * 1000, emits: [], schedules: [], endpoints: undefined,
  } as unknown as Call;
}

/** An event made by a request at `nowS`, stamped `createdS` (another instant: a test clock's). */
function emit(tree: Tree, nowS: number, createdS = nowS): string {
  const c = call(tree, nowS);
  const at = createdS === nowS ? c : { ...c, now: createdS, nowMs: createdS * 1000 };
  return event(at, 'thing.happened', { id: 'thing_1', object: 'thing' }).id as string;
}

/** Every event's id and `created`, newest first, as a list without a `created` filter walks them. */
function everything(tree: Tree): { id: string; created: number }[] {
  const page = listOf(call(tree, 0, { limit: '100' }), 'event', '/v1/events');
  return (page.data as Obj[]).map((e) => ({ id: e.id as string, created: e.created as number }));
}

function since(tree: Tree, created: Obj | string, limit = 100): string[] {
  return ((listOf(call(tree, 0, { created, limit: String(limit) }), 'event', '/v1/events').data) as Obj[]).map((e) => e.id as string);
}

describe('events listed since an instant', () => {
  it('a poll reads the events newer than its instant and stops at the first older one', () => {
    const tree = countingTree();
    for (let i = 0; i < 300; i++) emit(tree, 1000 + i);
    const all = everything(tree);
    tree.read = 0;
    expect(since(tree, { gte: '1295' }, 10)).toEqual(all.slice(0, 5).map((e) => e.id));
    // The first page of limit + 1 held them and the stop: not the 300 a walk reads.
    expect(tree.read).toBeLessThanOrEqual(12);
    tree.read = 0;
    expect(since(tree, { gt: '1289' }, 3)).toEqual(all.slice(0, 3).map((e) => e.id));
    expect(since(tree, '1290')).toEqual([all[9]?.id]);
    expect(tree.read).toBeLessThan(40);
    // Nothing since: the newest event is already older.
    tree.read = 0;
    expect(since(tree, { gte: '5000' })).toEqual([]);
    expect(tree.read).toBeLessThanOrEqual(11);
  });

  it('finds events stamped at another instant wherever they stand, for every bound', () => {
    const tree = countingTree();
    for (let i = 0; i < 40; i++) {
      emit(tree, 1000 + i * 10);
      if (i === 12) emit(tree, 1000 + i * 10, 400); // a test clock frozen in the past
      if (i === 20) emit(tree, 1000 + i * 10, 9000); // a test clock run ahead of the world
      if (i === 30) emit(tree, 1000 + i * 10, 1000 + i * 10 - 55); // a timed move performed late, at its due time
    }
    expect((tree.get<AccountState>('account', ACCT))?.late).toBe(9000);
    const all = everything(tree);
    expect(all).toHaveLength(43);
    for (const bound of [0, 399, 400, 401, 1000, 1005, 1200, 1245, 1250, 1251, 1300, 1390, 1391, 8999, 9000, 9001]) {
      for (const op of ['gte', 'gt'] as const) {
        const want = all.filter((e) => (op === 'gte' ? e.created >= bound : e.created > bound)).map((e) => e.id);
        expect(since(tree, { [op]: String(bound) }), `${op} ${bound}`).toEqual(want);
      }
      expect(since(tree, String(bound)), `= ${bound}`).toEqual(all.filter((e) => e.created === bound).map((e) => e.id));
    }
  });

  it('stops early again once the events stamped at other instants are all older than the bound', () => {
    const tree = countingTree();
    for (let i = 0; i < 200; i++) {
      emit(tree, 1000 + i);
      if (i === 50) emit(tree, 1000 + i, 600);
      if (i === 198) emit(tree, 1000 + i, 1000 + i - 30);
    }
    const all = everything(tree);
    tree.read = 0;
    const want = all.filter((e) => e.created >= 1192).map((e) => e.id);
    expect(since(tree, { gte: '1192' })).toEqual(want);
    expect(want).toHaveLength(8);
    // The late one (1168) among them is older than the bound: passed over by its mark, and the
    // walk ends at 1191, within the first page.
    expect(tree.read).toBeLessThanOrEqual(11);
  });
});

describe('an account whose events came before their order was kept', () => {
  it('has no record, and its lists by created read every event; its next create stores what it is', () => {
    const tree = countingTree();
    // Events an older twin stored for an account it kept no record of: one out of order, unmarked.
    for (let i = 0; i < 30; i++) {
      const c = call(tree, 0);
      const id = orderedId(c, 'evt_', 24);
      const created = i === 3 ? 5000 : 1000 + i;
      tree.put('event', `${ACCT}/${id}`, { s: 0, o: { id, object: 'event', created, type: 'thing.happened' } });
    }
    tree.delete('account', ACCT);
    const old = everything(tree).filter((e) => e.created >= 1020 || e.created === 5000).map((e) => e.id);
    expect(since(tree, { gte: '1020' })).toEqual(old);
    const id = emit(tree, 2000);
    expect(tree.get<AccountState>('account', ACCT)).toEqual({ n: expect.any(Number) as number, hooks: 0, ix: 2, k: 1, bal: 1 });
    expect(since(tree, { gte: '1020' })).toEqual([id, ...old]);
  });
});
