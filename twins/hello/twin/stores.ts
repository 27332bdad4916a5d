/**
 * Stores: named, deterministic projections of the tree, served at
 * `GET {world_url}/hello/twin/store/<name>`. A store only reads (its tree refuses writes) and
 * must answer the same for the same state: no clock, no random, a fixed order.
 */
import type { ReadTree, Store } from '../../../sdk/twin/index.js';
import { allGreetings, present } from './resources/greetings.js';

/** `greetings`: every greeting, oldest first, with counts by status. `?status=active|expired` filters. */
export const greetingsStore: Store = (tree: ReadTree, query) => {
  const status = typeof query['status'] === 'string' ? query['status'] : undefined;
  const all = allGreetings(tree).map(present);
  const greetings = status === undefined ? all : all.filter((g) => g.status === status);
  return {
    count: greetings.length,
    byStatus: {
      active: all.filter((g) => g.status === 'active').length,
      expired: all.filter((g) => g.status === 'expired').length,
    },
    greetings,
  };
};
