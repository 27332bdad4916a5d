/**
 * Named projections of the Stripe twin's state (served at `/twin/store/<name>`), for tools
 * and the mirror: `accounts` (ids and object counts) and `objects?type=customer&account=…`.
 */
import type { ReadTree, Store } from '../../../sdk/twin/types.js';

const TYPES = ['customer', 'product', 'price', 'coupon', 'payment_method', 'payment_intent', 'charge', 'refund',
  'setup_intent', 'balance_transaction', 'event', 'subscription', 'invoice', 'invoiceitem', 'checkout.session',
  'test_helpers.test_clock', 'webhook_endpoint'];

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export const accountsStore: Store = (tree: ReadTree) => {
  const accounts = new Map<string, Record<string, number>>();
  for (const type of TYPES) {
    let after: string | undefined;
    for (;;) {
      const page = tree.list<unknown>(type, after === undefined ? { limit: 500 } : { after, limit: 500 });
      for (const item of page.items) {
        const acct = item.id.slice(0, item.id.indexOf('/'));
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
