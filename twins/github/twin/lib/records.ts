/** Range reads over the twin's tree. */
import type { ReadTree } from '../../../../sdk/twin/index.js';

/** Every record of `type` with an id strictly between `after` and `before`, in id order, read 100 at a time. */
export function listRange<V>(tree: ReadTree, type: string, after: string, before: string): { id: string; value: V }[] {
  const out: { id: string; value: V }[] = [];
  let cursor = after;
  for (;;) {
    const page = tree.list<V>(type, { after: cursor, before, limit: 100 });
    for (const item of page.items) out.push(item);
    const last = page.items[page.items.length - 1];
    if (!page.hasMore || last === undefined) break;
    cursor = last.id;
  }
  return out;
}
