/**
 * For tests only: a twin tree in memory, enough for git.ts (get, list by range, count, put,
 * delete), and a seeded random source so a failure reproduces. Not part of the twin's bundle.
 */
import type { ListOptions, ListPage, TwinContext } from '../../../../sdk/twin/types.js';
import { compareIds } from '../../../../sdk/twin/guest/runtime.js';

/** A tree in memory, enough for git.ts and the issue lists (get, list by range either way, put). */
export function memoryCtx(): TwinContext {
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
      if (o.reverse === true) ids.reverse();
      const page = ids.slice(0, o.limit ?? ids.length);
      return { items: page.map((id) => ({ id, value: JSON.parse(of(t).get(id) as string) as V })), hasMore: page.length < ids.length };
    },
    count: (t: string) => of(t).size,
    put: (t: string, id: string, v: unknown) => { of(t).set(id, JSON.stringify(v)); },
    delete: (t: string, id: string) => { of(t).delete(id); },
  };
  return { tree } as unknown as TwinContext;
}

/**
 * A deterministic pseudo-random source, so a failure reproduces: the tests' one (mulberry32).
 * An LCG here before drew nearly the same first numbers for every small seed.
 */
export { seededRandom as rng } from '../../../../test/helpers/random.js';
