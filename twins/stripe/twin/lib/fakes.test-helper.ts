/** Stand-ins for the twin's unit tests only (nothing in the twin imports this file). */
import type { ListOptions, ListPage, Tree, TwinContext } from '../../../../sdk/twin/types.js';

/**
 * A context at a log position and world clock instant with a stand-in id generator: each id is
 * the prefix and one digit repeated (0…, 1…, 2…), counted in `draws`, which calls may share.
 */
export function stubContext(position: number, draws = { n: 0 }, nowMs = 0): TwinContext {
  return { position, nowMs: () => nowMs, id: (prefix: string, length = 14) => prefix + String(draws.n++ % 10).repeat(length) } as unknown as TwinContext;
}

/** A plain in-memory tree with the SDK's list semantics. */
export function memoryTree(): Tree & { data: Map<string, Map<string, unknown>> } {
  const data = new Map<string, Map<string, unknown>>();
  const of = (t: string): Map<string, unknown> => data.get(t) ?? data.set(t, new Map()).get(t)!;
  return {
    data,
    get: <V>(t: string, id: string) => of(t).get(id) as V | undefined,
    put: (t, id, v) => void of(t).set(id, v),
    delete: (t, id) => void of(t).delete(id),
    count: (t) => of(t).size,
    list<V>(t: string, o: ListOptions = {}): ListPage<V> {
      let ids = [...of(t).keys()].filter((id) => (o.after === undefined || id > o.after) && (o.before === undefined || id < o.before)).sort();
      if (o.reverse) ids.reverse();
      const limit = o.limit ?? ids.length;
      return { items: ids.slice(0, limit).map((id) => ({ id, value: of(t).get(id) as V })), hasMore: ids.length > limit };
    },
  };
}
