/**
 * A write buffer over the twin's tree. A Stripe request either happens whole or not at
 * all: handlers write here, and the route wrapper applies the writes (and the events)
 * only when the request succeeds — or fails in a way Stripe records, such as a decline.
 */
import type { ListOptions, ListPage, PutOptions, Tree } from '../../../../sdk/twin/types.js';
import { clone } from './util.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Map } = globalThis;

const SEP = '\u0000';
const HAND_OVER: PutOptions = { handOver: true };

interface Pending {
  type: string;
  id: string;
  value: unknown; // undefined = deleted
  /** Put with `putShared`: the value is also held elsewhere, so reads get a copy. */
  shared?: true;
}

export class TxTree implements Tree {
  private readonly writes = new Map<string, Pending>();

  constructor(private readonly base: Tree) {}

  get<V = unknown>(type: string, id: string): V | undefined {
    const w = this.writes.get(type + SEP + id);
    if (w !== undefined) return (w.shared === true ? clone(w.value) : w.value) as V | undefined;
    return this.base.get<V>(type, id);
  }

  /**
   * The value as buffered or read, not a copy (a shared write included): for a caller that only
   * reads it, such as `save` looking up a record's sequence. Changing it changes the record.
   */
  peek<V = unknown>(type: string, id: string): V | undefined {
    const w = this.writes.get(type + SEP + id);
    if (w !== undefined) return w.value as V | undefined;
    return this.base.get<V>(type, id);
  }

  put(type: string, id: string, value: unknown): void {
    this.writes.set(type + SEP + id, { type, id, value });
  }

  /**
   * Puts a value its maker keeps and answers too (a new customer, its event): stored without a
   * copy, and a read in the same request gets a copy, so changing what was read cannot change
   * the answer or another record sharing the object.
   */
  putShared(type: string, id: string, value: unknown): void {
    this.writes.set(type + SEP + id, { type, id, value, shared: true });
  }

  delete(type: string, id: string): void {
    this.writes.set(type + SEP + id, { type, id, value: undefined });
  }

  count(type: string): number {
    let n = this.base.count(type);
    for (const w of this.writes.values()) {
      if (w.type !== type) continue;
      const existed = this.base.get(type, w.id) !== undefined;
      if (w.value === undefined && existed) n--;
      if (w.value !== undefined && !existed) n++;
    }
    return n;
  }

  list<V = unknown>(type: string, options: ListOptions = {}): ListPage<V> {
    const mine = [...this.writes.values()].filter((w) => w.type === type);
    if (mine.length === 0) return this.base.list<V>(type, options);
    const limit = options.limit ?? Infinity;
    const page = this.base.list<V>(type, { ...options, limit: limit + mine.length });
    const byId = new Map<string, V>();
    for (const item of page.items) byId.set(item.id, item.value);
    const inRange = (id: string): boolean =>
      (options.after === undefined || id > options.after) &&
      (options.before === undefined || id < options.before);
    for (const w of mine) {
      if (w.value === undefined) byId.delete(w.id);
      else if (inRange(w.id)) byId.set(w.id, (w.shared === true ? clone(w.value) : w.value) as V);
    }
    let ids = [...byId.keys()].sort();
    if (options.reverse) ids.reverse();
    // Items beyond what the base page covered may be out of order with unseen base items;
    // keep only ids within the span the base page saw when the base had more.
    if (page.hasMore && page.items.length > 0) {
      const edge = page.items[page.items.length - 1]?.id as string;
      ids = ids.filter((id) => (options.reverse ? id >= edge : id <= edge));
    }
    const items = ids.slice(0, limit).map((id) => ({ id, value: byId.get(id) as V }));
    return { items, hasMore: page.hasMore || ids.length > items.length };
  }

  /**
   * Applies every buffered write to the real tree, in order. The request is done with them, so
   * they are handed over: what `clone` made crosses to the host without another copy.
   */
  commit(): void {
    for (const w of this.writes.values()) {
      if (w.value === undefined) this.base.delete(w.type, w.id);
      else this.base.put(w.type, w.id, w.value, HAND_OVER);
    }
    this.writes.clear();
  }

  get dirty(): boolean {
    return this.writes.size > 0;
  }
}
