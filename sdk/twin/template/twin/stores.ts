/**
 * Stores: named, deterministic projections of the tree, served at
 * `GET {world_url}/kitvendor/twin/store/<name>`: how tools, UIs and tests read the twin's state.
 * A store only reads (its tree refuses writes) and answers the same for the same state: no
 * clock, no random, a fixed order.
 */
import type { Store } from 'twinkit/twin';
import { allWidgets } from './resources/widgets.js';

/** `widgets`: every widget, oldest first, with counts by status. `?status=pending|active` filters. */
export const widgetsStore: Store = (tree, query) => {
  const status = typeof query['status'] === 'string' ? query['status'] : undefined;
  const all = allWidgets(tree);
  const widgets = status === undefined ? all : all.filter((w) => w.status === status);
  return {
    count: widgets.length,
    byStatus: { pending: all.filter((w) => w.status === 'pending').length, active: all.filter((w) => w.status === 'active').length },
    widgets,
  };
};
