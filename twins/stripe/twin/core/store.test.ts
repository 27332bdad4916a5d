/**
 * Creation sequence numbers (`nextSeq` through `orderedId`): ids made later sort later, whether
 * an entry makes one object or many, and for an account numbered by a twin that stored its
 * counter on every create. Most entries store no counter.
 */
import { describe, expect, it } from 'vitest';
import type { Tree, TwinContext } from '../../../../sdk/twin/types.js';
import type { Call } from './call.js';
import { memoryTree } from './memory-tree.test-helper.js';
import { orderedId, type AccountState } from './store.js';

const ACCT = 'acct_seqTest';

/** A call at a log position: what orderedId reads of it (ctx.position, ctx.id, the tree, the account). */
function callAt(tree: Tree, position: number): Call {
  let drawn = 0;
  const ctx = { position, id: (prefix: string, length = 14) => prefix + String(drawn++ % 10).repeat(length) } as unknown as TwinContext;
  return { ctx, tree, acct: ACCT } as unknown as Call;
}

/** Makes `perEntry[i]` ids in the entry at position `first + i`; answers them in the order made. */
function make(tree: Tree, first: number, perEntry: number[]): string[] {
  const ids: string[] = [];
  perEntry.forEach((n, i) => {
    const c = callAt(tree, first + i);
    for (let k = 0; k < n; k++) ids.push(orderedId(c, 'cus_', 14));
  });
  return ids;
}

const account = (tree: Tree): AccountState | undefined => tree.get<AccountState>('account', ACCT);

describe('creation sequence numbers', () => {
  it('sort in the order made across entries, and an entry of a few stores no counter', () => {
    const tree = memoryTree();
    const ids = make(tree, 1, [1, 2, 1, 16, 3]);
    expect(ids).toHaveLength(23);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(account(tree)).toBeUndefined();
  });

  it('an entry that makes more than sixteen stores its last, and later entries start above it', () => {
    const tree = memoryTree();
    const ids = make(tree, 7, [40]);
    expect(account(tree)?.n).toBe(7 * 16 + 40);
    ids.push(...make(tree, 8, [1, 1]), ...make(tree, 10, [1]));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('an account numbered ahead of its position (a counter stored on every create) goes on above its counter', () => {
    const tree = memoryTree();
    tree.put('account', ACCT, { n: 5000, hooks: 2 });
    const ids = make(tree, 3, [1, 2]);
    expect(account(tree)).toEqual({ n: 5003, hooks: 2 });
    // Position 400 starts above 6400, past the stored 5003: numbering follows positions again.
    ids.push(...make(tree, 400, [1, 1]));
    expect(account(tree)).toEqual({ n: 5003, hooks: 2 });
    expect([...ids].sort()).toEqual(ids);
    expect(ids[0]?.slice(0, 10)).toBe('cus_0001If'); // 5001 in base 62
  });
});
