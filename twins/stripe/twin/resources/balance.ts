/**
 * The account's balance, kept as sums while its balance transactions are made, so reading
 * it (`GET /v1/balance`, a payout's funds check) costs the same after a million charges as
 * after one.
 *
 * Tree layout (accounts with AccountState `bal: 1`):
 *   ('balance', `<acct>`) → { available: { <currency>: the net of its transactions already
 *     available } (every currency the account has seen, 0 when nothing in it is available
 *     yet), next: the earliest bucket's instant, null when there is none }
 *   (`bal.<acct>`, `<available_on as 12 digits>/<currency>`) → the net of the transactions
 *     in that currency that become available then, not yet folded into the record above
 * A transaction's net goes into its bucket, or straight into the available sums when it is
 * available already. A new transaction first folds the buckets the clock has passed (only
 * when `next` says there are some), so the buckets left are the pending ones and a few the
 * clock passed since: one per distinct `available_on`, not one per transaction. The clock
 * only moves forward, so what was folded stays available. Reads fold nothing (they write
 * nothing): a passed bucket counts as available. A pending charge costs a read of the two
 * records and a write of its bucket.
 *
 * An account a twin without these sums began sums every transaction instead.
 */
import type { Call } from '../lib/request.js';
import { newestFirst } from '../lib/lists.js';
import { accountState } from '../lib/account.js';
import { pad } from '../lib/ids.js';
import type { Obj } from '../lib/util.js';

const { Math, Number, Object } = globalThis;

/** Per currency: what is available now, and what is pending. Every currency seen is in both. */
export interface BalanceSums {
  available: Map<string, number>;
  pending: Map<string, number>;
}

interface Settled {
  available: Record<string, number>;
  next: number | null;
}

function* buckets(c: Call, before?: string): Generator<{ on: number; currency: string; net: number; id: string }> {
  let after: string | undefined;
  for (;;) {
    const opts: { after?: string; before?: string; limit: number } = { limit: 100 };
    if (after !== undefined) opts.after = after;
    if (before !== undefined) opts.before = before;
    const page = c.tree.list<number>(`bal.${c.acct}`, opts);
    for (const item of page.items) {
      const slash = item.id.indexOf('/');
      yield { on: Number(item.id.slice(0, slash)), currency: item.id.slice(slash + 1), net: item.value, id: item.id };
    }
    const last = page.items[page.items.length - 1];
    if (!page.hasMore || last === undefined) return;
    after = last.id;
  }
}

/** Adds a new balance transaction to the account's sums (nothing for an account without them). */
export function recordBalance(c: Call, txn: Obj): void {
  if (accountState(c).bal !== 1) return;
  const cur = txn.currency as string;
  const net = txn.net as number;
  const on = txn.available_on as number;
  // The world's clock, not the call's: a call on a test clock's time (billing) may run ahead.
  const now = Math.floor(c.ctx.nowMs() / 1000);
  const was = c.tree.get<Settled>('balance', c.acct);
  const st: Settled = was === undefined ? { available: {}, next: null } : { available: { ...was.available }, next: was.next };
  const available = st.available;
  let changed = was === undefined;
  if (st.next !== null && st.next <= now) {
    // Buckets the clock has passed: their ids sort below the next second's.
    for (const b of [...buckets(c, pad(now + 1))]) {
      available[b.currency] = (available[b.currency] ?? 0) + b.net;
      c.tree.delete(`bal.${c.acct}`, b.id);
    }
    const left = buckets(c).next();
    st.next = left.done === true ? null : left.value.on;
    changed = true;
  }
  if (on <= now) {
    available[cur] = (available[cur] ?? 0) + net;
    changed = true;
  } else {
    if (available[cur] === undefined) {
      available[cur] = 0;
      changed = true;
    }
    if (st.next === null || on < st.next) {
      st.next = on;
      changed = true;
    }
    const id = `${pad(on)}/${cur}`;
    c.tree.put(`bal.${c.acct}`, id, (c.tree.get<number>(`bal.${c.acct}`, id) ?? 0) + net);
  }
  if (changed) c.tree.put('balance', c.acct, st);
}

/** The account's available and pending sums per currency at the call's clock. */
export function balanceSums(c: Call): BalanceSums {
  const available = new Map<string, number>();
  const pending = new Map<string, number>();
  const add = (cur: string, net: number, isAvailable: boolean): void => {
    const bucket = isAvailable ? available : pending;
    bucket.set(cur, (bucket.get(cur) ?? 0) + net);
    const other = isAvailable ? pending : available;
    if (!other.has(cur)) other.set(cur, 0);
  };
  if (accountState(c).bal === 1) {
    const settled = c.tree.get<Settled>('balance', c.acct)?.available ?? {};
    for (const cur of Object.keys(settled)) add(cur, settled[cur] as number, true);
    for (const b of buckets(c)) add(b.currency, b.net, b.on <= c.now);
  } else {
    for (const rec of newestFirst(c, 'balance_transaction')) {
      add(rec.o.currency as string, rec.o.net as number, (rec.o.available_on as number) <= c.now);
    }
  }
  return { available, pending };
}
