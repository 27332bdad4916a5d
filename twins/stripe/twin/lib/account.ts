/**
 * The account record (`('account', <acct>)` → AccountState): the floor of creation sequence
 * numbers and how seqs are handed out (nextSeq), the webhook endpoint count, the flags of what the
 * account keeps (its index version, ordered ids, balance sums, events in order, a copy of a real
 * account), and the equality indexes its version keeps. Remembered for the call that read it.
 */
import type { TwinContext } from '../../../../sdk/twin/types.js';
import type { Call } from './request.js';
import { malformedRecord } from '../errors.js';
import { isObj } from './util.js';
import { type Index, INDEXES, INDEX_VERSION } from './indexes.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Math, Number } = globalThis;

/**
 * What the twin keeps per account in one record, read by every request that creates
 * something: a floor for creation sequence numbers, and how many webhook endpoints the
 * account has (so an event looks for endpoints only when there are some).
 */
export interface AccountState {
  /**
   * Seqs are above it. Written only when an entry hands out more than SEQS_PER_ENTRY (or by a
   * twin from before those): most seqs come from the entry's position (nextSeq).
   */
  n: number;
  /** Webhook endpoints the account has (enabled or not). */
  hooks: number;
  /**
   * The version of INDEXES whose equality indexes hold all the account's objects: filtered
   * lists and lookups read the indexes of that version (`Index.since`, `Index.until`).
   * Absent for an account a twin without indexes began: its filtered lists read every object.
   */
  ix?: number;
  /**
   * 1: the account orders the ids of KEYED_SINCE_K's types and lists them from their records.
   * Absent for an account a twin without that began: those types keep random ids and `ix.` copies.
   */
  k?: 1;
  /**
   * 1: the account's balance is kept as sums (resources/balance.ts) as its balance
   * transactions are made. Absent for an account a twin without them began: its balance is
   * summed from every balance transaction.
   */
  bal?: 1;
  /**
   * 1: the account's events, newest first, come in `created` order (never rising), save those
   * marked `a: 1` in their records, whose greatest `created` is `late`. So a list of events
   * created since an instant stops at the first older one (`listOf`). Absent for an account a
   * twin without it began: its lists by `created` read every event.
   */
  ev?: 1;
  /** The greatest `created` of the account's events marked `a: 1`; absent while there are none. */
  late?: number;
  /**
   * 1: the account is a copy of a real one (a root's, root/): its objects keep the vendor's ids,
   * so every type but events, customers too, is listed through `ix.` copies in the order of
   * their seqs, which the copy derives from `created` (root/seqs.ts).
   */
  copy?: 1;
}

/**
 * The account record as the call (its context) last read or wrote it. Every object made,
 * every event and every list reads it (a PaymentIntent confirmed with a card 18 times), each
 * a read from the host; calls run one at a time, so one slot is enough. Only
 * putAccount writes the record. A request whose writes are dropped (a refused request)
 * ends its context with them.
 */
let accountCall: TwinContext | undefined;

let accountOf = '';

let accountMemo: AccountState | undefined;

/** The remembered state is not stored yet: the account's first create stores it. */
let accountUnstored = false;

export function accountState(c: Call): AccountState {
  if (accountCall === c.ctx && accountOf === c.acct && accountMemo !== undefined) return accountMemo;
  const stored = c.tree.get<unknown>('account', c.acct);
  remember(c, stored === undefined ? unstoredAccount(c) : checkAccount(c.acct, stored), stored === undefined);
  return accountMemo as AccountState;
}

const isCount = (x: unknown): boolean => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/**
 * The stored account record, when it holds what the twin writes: new ids are numbered from
 * `n`, so a record that does not (a string, `n` missing) would make every id of the account
 * from `undefined`. Anything else answers 500 naming it.
 */
export function checkAccount(acct: string, v: unknown): AccountState {
  if (!isObj(v)) throw malformedRecord('account', acct, 'not an object');
  if (!isCount(v.n) || !isCount(v.hooks)) throw malformedRecord('account', acct, 'n and hooks must be whole numbers');
  if ((v.ix !== undefined && !isCount(v.ix)) || (v.late !== undefined && typeof v.late !== 'number')) {
    throw malformedRecord('account', acct, 'ix must be a whole number and late a number');
  }
  return v as unknown as AccountState;
}

/**
 * The state of an account without a record. A new one is indexed, orders its ids, sums its
 * balance and keeps its events in order from its first object on, and its first create stores
 * that. One with events was begun by a twin that stored no record until it needed one (from
 * ordered ids up to keeping events in order): it has ordered ids and sums, and index version
 * 2 or 3 (`filedAt3`).
 */
function unstoredAccount(c: Call): AccountState {
  const anyEvent = c.tree.list('event', { after: `${c.acct}/`, before: `${c.acct}0`, limit: 1 }).items.length > 0;
  if (!anyEvent) return { n: 0, hooks: 0, ix: INDEX_VERSION, k: 1, bal: 1, ev: 1 };
  return { n: 0, hooks: 0, ix: filedAt3(c) ? 3 : 2, k: 1, bal: 1 };
}

/**
 * Whether the account filed anything in an index only version 3 keeps. One that did not holds
 * nothing such an index would (no customer with an email, no metadata), so version 2's read
 * all it has, whichever it began with.
 */
function filedAt3(c: Call): boolean {
  for (const type of Object.keys(INDEXES)) {
    for (const index of INDEXES[type] ?? []) {
      if (index.since === 3 && c.tree.list(`by.${type}.${index.name}.${c.acct}`, { limit: 1 }).items.length > 0) return true;
    }
  }
  return false;
}

function remember(c: Call, st: AccountState, unstored: boolean): void {
  accountCall = c.ctx;
  accountOf = c.acct;
  accountMemo = st;
  accountUnstored = unstored;
}

export function putAccount(c: Call, n: number, hooks: number, was: AccountState, late = was.late): void {
  const st: AccountState = { n, hooks };
  if (was.ix !== undefined) st.ix = was.ix;
  if (was.k === 1) st.k = 1;
  if (was.bal === 1) st.bal = 1;
  if (was.ev === 1) st.ev = 1;
  if (late !== undefined) st.late = late;
  if (was.copy === 1) st.copy = 1;
  c.tree.put('account', c.acct, st);
  remember(c, st, false);
}

/**
 * Files an event stamped at another instant than its request's (`Rec.a`): the account's
 * `late` rises to its `created`.
 */
export function fileLate(c: Call, created: number): void {
  const st = accountState(c);
  if (st.ev === 1 && !(st.late !== undefined && st.late >= created)) putAccount(c, st.n, st.hooks, st, created);
}

/** Changes the account's webhook endpoint count (endpoint created: +1, deleted: -1). */
export function countHooks(c: Call, delta: number): void {
  const st = accountState(c);
  putAccount(c, st.n, Math.max(0, st.hooks + delta), st);
}

/**
 * Sequence numbers an entry may hand out without the account storing its last one. The seqs
 * of the entry at position p start above p × SEQS_PER_ENTRY, so every later entry's are
 * larger, and a create writes no counter: the account record, its superseded version and its
 * place in the entry were three of a customer create's nine stored records. An entry that
 * hands out more, or an account whose stored `n` is ahead of its position (numbered before
 * this), stores its last seq, and later entries start above it. Seq codes (six base-62
 * digits) then last 3.5 billion entries per twin.
 */
export const SEQS_PER_ENTRY = 16;

/**
 * The call (its context, shared by every Call a move may make) that handed out a seq last, and
 * that seq. Calls run one at a time, so one slot is enough (a WeakMap's write barrier cost more).
 */
let seqCall: TwinContext | undefined;

let seqLast = 0;

export function nextSeq(c: Call): number {
  const st = accountState(c);
  const floor = c.ctx.position * SEQS_PER_ENTRY;
  const n = Math.max(st.n, seqCall === c.ctx ? seqLast : floor) + 1;
  seqCall = c.ctx;
  seqLast = n;
  // The next entry's seqs start above floor + SEQS_PER_ENTRY: past that, remember this one.
  if (n > floor + SEQS_PER_ENTRY || accountUnstored) putAccount(c, n, st.hooks, st);
  return n;
}

/** keptIndexes' answers, by `<type>/<version>`: every write and filtered list asks. */
const keptByVersion = new Map<string, readonly Index[]>();

/** The indexes of `type` the account keeps. */
export function keptIndexes(c: Call, type: string): readonly Index[] {
  const version = accountState(c).ix ?? 0;
  const at = `${type}/${version}`;
  let kept = keptByVersion.get(at);
  if (kept === undefined) {
    kept = (INDEXES[type] ?? []).filter((ix) => ix.since <= version && (ix.until === undefined || version < ix.until));
    keptByVersion.set(at, kept);
  }
  return kept;
}
