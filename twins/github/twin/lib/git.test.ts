import { describe, expect, it } from 'vitest';
import type { ListOptions, ListPage, TwinContext } from '../../../../sdk/twin/types.js';
import { compareIds } from '../../../../sdk/twin/guest/runtime.js';
import { buildTree, flatten, lineDiff, mergeFlat, paint, putBlob, putObject, walk, type CommitObject, type FileEntry } from './git.js';
import { utf8Encode } from './bytes.js';

/** A tree in memory, enough for git.ts (get, list by range, put). */
function memoryCtx(): TwinContext {
  const data = new Map<string, Map<string, string>>();
  const of = (t: string): Map<string, string> => {
    let m = data.get(t);
    if (m === undefined) data.set(t, (m = new Map()));
    return m;
  };
  const tree = {
    get: <V>(t: string, id: string): V | undefined => { const v = of(t).get(id); return v === undefined ? undefined : (JSON.parse(v) as V); },
    list: <V>(t: string, o: ListOptions = {}): ListPage<V> => {
      const ids = [...of(t).keys()].filter((id) => (o.after === undefined || compareIds(id, o.after) > 0) && (o.before === undefined || compareIds(id, o.before) < 0)).sort(compareIds);
      const page = ids.slice(0, o.limit ?? ids.length);
      return { items: page.map((id) => ({ id, value: JSON.parse(of(t).get(id) as string) as V })), hasMore: page.length < ids.length };
    },
    count: (t: string) => of(t).size,
    put: (t: string, id: string, v: unknown) => { of(t).set(id, JSON.stringify(v)); },
    delete: (t: string, id: string) => { of(t).delete(id); },
  };
  return { tree } as unknown as TwinContext;
}

/** A deterministic pseudo-random source, so a failure reproduces. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function ancestors(ctx: TwinContext, sha: string): Set<string> {
  return new Set(walk(ctx.tree, 1, [sha]).map((c) => c.sha));
}

describe('paint (merge base, ahead, behind)', () => {
  it('agrees with brute-force ancestor sets on random histories with merges, equal clocks and skewed clocks', () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const next = rng(seed);
      const ctx = memoryCtx();
      const tree = buildTree(ctx, 1, new Map());
      const shas: string[] = [];
      for (let i = 0; i < 40; i++) {
        const parents: string[] = [];
        if (shas.length > 0 && next() > 0.08) parents.push(shas[Math.floor(next() * shas.length)] as string);
        if (shas.length > 2 && next() > 0.7) parents.push(shas[Math.floor(next() * shas.length)] as string);
        // Seeds 1–3: every commit at the same instant (a frozen world clock); 4–6: clocks that go backwards.
        const date = seed <= 3 ? '2026-01-01T00:00:00Z' : new Date(Date.UTC(2026, 0, 1) + Math.floor(next() * 1e6) * 1000).toISOString().replace('.000', '');
        const who = { name: 'a', email: 'a@x', date };
        shas.push(putObject(ctx, 1, { t: 'commit', tree, parents: [...new Set(parents)], author: who, committer: who, message: `c${i}` }));
      }
      for (let k = 0; k < 60; k++) {
        const a = shas[Math.floor(next() * shas.length)] as string;
        const b = shas[Math.floor(next() * shas.length)] as string;
        const A = ancestors(ctx, a), B = ancestors(ctx, b);
        const p = paint(ctx.tree, 1, a, b);
        expect(p.ahead.map((c) => c.sha).sort()).toEqual([...B].filter((x) => !A.has(x)).sort());
        expect(p.behind).toBe([...A].filter((x) => !B.has(x)).length);
        const common = [...A].filter((x) => B.has(x));
        if (common.length === 0) expect(p.mergeBase).toBeUndefined();
        else {
          // A best common ancestor: common, and no other common commit descends from it.
          expect(common).toContain(p.mergeBase);
          expect(common.some((c) => c !== p.mergeBase && ancestors(ctx, c).has(p.mergeBase as string))).toBe(false);
        }
        // Parents before children in `ahead`.
        const pos = new Map(p.ahead.map((c, i) => [c.sha, i]));
        for (const c of p.ahead) for (const parent of (c.commit as CommitObject).parents) if (pos.has(parent)) expect(pos.get(parent)).toBeLessThan(pos.get(c.sha) as number);
      }
    }
  });
});

describe('trees and merges', () => {
  it('buildTree and flatten round-trip nested paths', () => {
    const ctx = memoryCtx();
    const blob = putBlob(ctx, 1, utf8Encode('x\n'));
    const files = new Map<string, FileEntry>([['a/b/c.txt', { mode: '100644', type: 'blob', sha: blob }], ['a/d.txt', { mode: '100755', type: 'blob', sha: blob }], ['e', { mode: '100644', type: 'blob', sha: blob }]]);
    const root = buildTree(ctx, 1, files);
    expect([...flatten(ctx.tree, 1, root)].sort()).toEqual([...files].sort());
  });

  it('mergeFlat takes one-sided changes and reports two-sided ones as a conflict', () => {
    const f = (sha: string): FileEntry => ({ mode: '100644', type: 'blob', sha });
    const base = new Map([['a', f('1')], ['b', f('2')]]);
    const ours = new Map([['a', f('9')], ['b', f('2')]]);
    const theirs = new Map([['a', f('1')], ['b', f('2')], ['c', f('3')]]);
    expect(mergeFlat(base, ours, theirs)).toEqual(new Map([['a', f('9')], ['b', f('2')], ['c', f('3')]]));
    expect(mergeFlat(base, ours, new Map([['a', f('8')], ['b', f('2')]]))).toBe('conflict');
    // Deleted on one side, unchanged on the other: deleted.
    expect(mergeFlat(base, new Map([['b', f('2')]]), base)).toEqual(new Map([['b', f('2')]]));
  });

  it('lineDiff counts and prints a hunk', () => {
    const ctx = memoryCtx();
    const a = putBlob(ctx, 1, utf8Encode('one\ntwo\nthree\n'));
    const b = putBlob(ctx, 1, utf8Encode('one\n2\nthree\nfour\n'));
    const d = lineDiff(ctx.tree, 1, a, b);
    expect(d).toMatchObject({ additions: 2, deletions: 1 });
    expect(d.patch).toBe('@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four');
    const bin = putBlob(ctx, 1, Uint8Array.from([0, 1, 2]));
    expect(lineDiff(ctx.tree, 1, a, bin)).toEqual({ additions: 0, deletions: 0 });
  });
});
