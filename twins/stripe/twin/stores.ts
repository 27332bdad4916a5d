/**
 * Named projections of the Stripe twin's state (served at `/twin/store/<name>`), for tools
 * and the mirror: `accounts` (ids and object counts), `account_list` (ids only, paged) and
 * `objects?type=customer&account=…`.
 */
import type { ReadTree, Store } from '../../../sdk/twin/types.js';
import { DEFAULT_ACCOUNT, copiedAccount } from './lib/auth.js';

const TYPES = ['customer', 'product', 'price', 'coupon', 'payment_method', 'payment_intent', 'charge', 'refund',
  'setup_intent', 'balance_transaction', 'event', 'subscription', 'invoice', 'invoiceitem', 'checkout.session',
  'test_helpers.test_clock', 'webhook_endpoint'];

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

const accountOf = (id: string): string => id.slice(0, id.indexOf('/'));

export const accountsStore: Store = (tree: ReadTree) => {
  const accounts = new Map<string, Record<string, number>>();
  for (const type of TYPES) {
    // Ids are `<acct>/…`, so when a type's first and last ids share an account, every id
    // between does: its count is the type's, read without walking (a load test's one account
    // of 300k customers would otherwise be read whole on every call).
    const low = tree.list<unknown>(type, { limit: 1 }).items[0];
    if (low === undefined) continue;
    const high = tree.list<unknown>(type, { limit: 1, reverse: true }).items[0];
    if (high !== undefined && accountOf(low.id) === accountOf(high.id)) {
      const counts = accounts.get(accountOf(low.id)) ?? {};
      counts[type] = tree.count(type);
      accounts.set(accountOf(low.id), counts);
      continue;
    }
    let after: string | undefined;
    for (;;) {
      const page = tree.list<unknown>(type, after === undefined ? { limit: 500 } : { after, limit: 500 });
      for (const item of page.items) {
        const acct = accountOf(item.id);
        const counts = accounts.get(acct) ?? {};
        counts[type] = (counts[type] ?? 0) + 1;
        accounts.set(acct, counts);
      }
      if (!page.hasMore || page.items.length === 0) break;
      after = page.items[page.items.length - 1]?.id;
    }
  }
  return { accounts: [...accounts.entries()].map(([id, counts]) => ({ id, counts })) };
};

export const objectsStore: Store = (tree: ReadTree, query) => {
  const type = first(query.type) ?? 'customer';
  const account = first(query.account);
  const limit = Math.min(Math.max(Number(first(query.limit) ?? 100) || 100, 1), 1000);
  const prefix = account === undefined ? undefined : `${account}/`;
  const page = tree.list<{ o: unknown }>(type, prefix === undefined ? { limit } : { after: prefix, before: `${account as string}/\uffff`, limit });
  return { type, data: page.items.map((i) => i.value.o), has_more: page.hasMore };
};

/**
 * `account_list?after=acct_…&limit=`: the ids of the accounts the world holds, from their
 * account records (one read per page, however many objects they hold), the default account
 * (the one a browser session opens: the world's own, or the copied one of a twin with a root)
 * first whether or not it has a record.
 * For the mirror's account switcher: `accounts` counts objects, which walks every object of a
 * type that several accounts share.
 */
export const accountListStore: Store = (tree: ReadTree, query) => {
  const after = first(query.after);
  const limit = Math.min(Math.max(Number(first(query.limit) ?? 100) || 100, 1), 500);
  const page = tree.list<unknown>('account', after === undefined ? { limit } : { after, limit });
  const opened = copiedAccount(tree) ?? DEFAULT_ACCOUNT;
  const ids = page.items.map((i) => i.id).filter((id) => id !== opened);
  return { default: opened, data: after === undefined ? [opened, ...ids] : ids, has_more: page.hasMore };
};
