/**
 * Stripe ids: the prefix of each object type, and ids ordered by creation (a base-62 seq code
 * first) for the types the account keys so (KEYED, KEYED_SINCE_K). The storage layout is in store.ts.
 */
import type { Call } from './request.js';
import { accountState, nextSeq } from './account.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Math, Number, String } = globalThis;

/** Id prefix → object type, for `expand` and for errors that name a resource. */
export const PREFIXES: [string, string][] = [
  ['cus_', 'customer'],
  ['prod_', 'product'],
  ['price_', 'price'],
  ['pm_', 'payment_method'],
  ['pi_', 'payment_intent'],
  ['ch_', 'charge'],
  ['py_', 'charge'],
  ['re_', 'refund'],
  ['txn_', 'balance_transaction'],
  ['seti_', 'setup_intent'],
  ['setatt_', 'setup_attempt'],
  ['evt_', 'event'],
  ['in_', 'invoice'],
  ['ii_', 'invoiceitem'],
  ['sub_', 'subscription'],
  ['si_', 'subscription_item'],
  ['cs_', 'checkout.session'],
  ['clock_', 'test_helpers.test_clock'],
  ['we_', 'webhook_endpoint'],
  ['promo_', 'promotion_code'],
  ['di_', 'discount'],
  ['dp_', 'dispute'],
  ['card_', 'card'],
  ['po_', 'payout'],
  ['plink_', 'payment_link'],
  ['cbtxn_', 'customer_balance_transaction'],
  ['txr_', 'tax_rate'],
  ['tok_', 'token'],
];

export function typeOfId(id: string): string | undefined {
  for (const [prefix, type] of PREFIXES) if (id.startsWith(prefix)) return type;
  return undefined;
}

/** A whole number as 12 digits, so that ids order as numbers (seqs, instants). */
export const pad = (n: number): string => String(n).padStart(12, '0');

/**
 * Types whose records are listed straight from the tree, with no index: their ids begin with
 * the creation sequence (`orderedId`), so an account's records in id order are in creation
 * order. Only for types whose ids the twin always makes itself, with one prefix.
 */
const KEYED: Record<string, string> = { customer: 'cus_', event: 'evt_' };

/**
 * More types listed the same way, in accounts whose AccountState has `k: 1` (every account
 * begun since): the objects a payment flow makes, each of which otherwise also wrote a copy
 * of itself to `ix.` on every create and update (a PaymentIntent confirmed with a card wrote
 * four, a quarter of the entry's bytes). An account begun before keeps their random ids and
 * `ix.` copies, and lists them as it did.
 */
const KEYED_SINCE_K: Record<string, string> = {
  payment_intent: 'pi_', charge: 'ch_', refund: 're_', balance_transaction: 'txn_', payment_method: 'pm_',
  setup_intent: 'seti_', subscription: 'sub_', invoice: 'in_', invoiceitem: 'ii_', price: 'price_',
  'checkout.session': 'cs_test_',
};

/** The prefix of a type whose ids this account orders (and lists from its records), if it does. */
export function keyedPrefix(c: Call, type: string): string | undefined {
  const always = KEYED[type];
  // A copy's customers keep the vendor's ids, which carry no order.
  if (always !== undefined) return type === 'customer' && accountState(c).copy === 1 ? undefined : always;
  const since = KEYED_SINCE_K[type];
  return since !== undefined && accountState(c).k === 1 ? since : undefined;
}

const B62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Sequence digits at the front of an ordered id: 62^6 ≈ 5.7e10 objects per account. */
const SEQ_CHARS = 6;

/** `s` as SEQ_CHARS base-62 digits; ASCII order of the digits is numeric order. */
export function seqCode(s: number): string {
  // Never an id made of `undefined`s: accountState checks `n`, and this stays the last word.
  if (!Number.isSafeInteger(s) || s < 0) throw new Error(`no sequence number for a new id (got ${String(s)})`);
  let out = '';
  for (let i = 0; i < SEQ_CHARS; i++) {
    out = (B62[s % 62] as string) + out;
    s = Math.floor(s / 62);
  }
  if (s > 0) throw new Error('the account has run out of sequence numbers');
  return out;
}

/** The seq an ordered id begins with, or undefined for an id that is not one. */
export function seqOfId(id: string, prefix: string): number | undefined {
  if (!id.startsWith(prefix) || id.length < prefix.length + SEQ_CHARS) return undefined;
  let s = 0;
  for (let i = prefix.length; i < prefix.length + SEQ_CHARS; i++) {
    const d = B62.indexOf(id[i] as string);
    if (d < 0) return undefined;
    s = s * 62 + d;
  }
  return s;
}

/**
 * A new id for an object of a keyed type: the prefix, the account's next sequence number as
 * six base-62 digits, then random characters from the world's generator (`length` in all, as
 * `ctx.id` counts). `insert` reads the sequence back from the id.
 */
export function orderedId(c: Call, prefix: string, length: number): string {
  return c.ctx.id(prefix + seqCode(nextSeq(c)), length - SEQ_CHARS);
}
