/**
 * Account-scoped storage of Stripe objects.
 *
 * Tree layout (documented in the README):
 *   (<object type>, `<acct>/<id>`) → { s: seq, o: the Stripe object, u?: true when unlisted }
 *   (`ix.<object type>.<acct>`, seq as 12 digits) → the same object — creation order, for lists
 *     (not for keyed types: their ids begin with the seq, so their records are in order)
 *   (`by.<object type>.<index name>.<acct>`, `<value length>:<value>/<seq as 12 digits>`) → the id
 *     — an equality index (INDEXES) of a field a list, lookup or search filters on, newest last
 *     within a value
 *   ('account', `<acct>`) → { n: a seq floor, hooks: webhook endpoints, ix, k } (AccountState; nextSeq)
 * Ids the app may choose (products, coupons) and those of rarer objects are random like
 * Stripe's, so creation order needs its own index, which holds a copy of each object so a list
 * page is one read instead of one per object. The objects made most often (customers, events,
 * and in accounts with `k: 1` the payment flow's: KEYED_SINCE_K) skip the index and its copy:
 * their ids are ordered (`orderedId`, `newId`). Every write goes through this file.
 */
import { toStorableId } from '../../../../sdk/twin/storable.js';
import type { Tree, TwinContext } from '../../../../sdk/twin/types.js';
import type { Call } from './request.js';
import { invalid, malformedRecord, missing } from '../errors.js';
import { TxTree } from './tx.js';
import { billedSubscription, clone, isObj, type Obj } from './util.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Math, Number, String } = globalThis;

export interface Rec {
  s: number;
  o: Obj;
  /** Unlisted (a deleted customer's stub): not in the index. */
  u?: true;
  /**
   * An event stamped at another instant than its request's (a test clock's time, a timed
   * move's due time): out of `created` order with the account's other events (`AccountState.ev`).
   */
  a?: 1;
}

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
function checkAccount(acct: string, v: unknown): AccountState {
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

function putAccount(c: Call, n: number, hooks: number, was: AccountState, late = was.late): void {
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
function fileLate(c: Call, created: number): void {
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

function nextSeq(c: Call): number {
  const st = accountState(c);
  const floor = c.ctx.position * SEQS_PER_ENTRY;
  const n = Math.max(st.n, seqCall === c.ctx ? seqLast : floor) + 1;
  seqCall = c.ctx;
  seqLast = n;
  // The next entry's seqs start above floor + SEQS_PER_ENTRY: past that, remember this one.
  if (n > floor + SEQS_PER_ENTRY || accountUnstored) putAccount(c, n, st.hooks, st);
  return n;
}

/**
 * An equality index: `(by.<type>.<name>.<acct>, <value length>:<value>/<seq as 12 digits>) →
 * the id` for each value an object is filed under, so a list or lookup filtered by its field
 * reads its matches, not every object of the type. The fields lists, lookups and searches
 * filter on that pick a few objects out of many: an app's "find the customer with this
 * email", "this customer's payment intents", "the price with this lookup key", "the order
 * with this metadata id".
 */
interface Index {
  /** The field a filter names (`Filter.field`). */
  field: string;
  /** Names its entries' tree; the field's name unless two indexes serve the field. */
  name: string;
  /**
   * The first index version (`AccountState.ix`) whose accounts keep it: an account begun
   * before never filed its objects in it, so its filters read every object instead.
   */
  since: number;
  /** The first version whose accounts no longer keep it: another index of the field took its place. */
  until?: number;
  /** What an object is filed under, when not the field as stored (or an expanded object's id). */
  values?(o: Obj): unknown[];
  /**
   * What a filter's value is filed as, when not itself. Such an index may hold more than a
   * filter's matches (every case of an email): what it reads is filtered again.
   */
  key?(value: string): string;
}

const fold = (v: string): string => v.toLowerCase();
const plain = (field: string, since = 1): Index => ({ field, name: field, since });

/**
 * A metadata entry as the metadata index files it: the key as it is, the value in lower case
 * (Stripe's search matches `metadata["key"]:"value"` ignoring the value's case).
 */
export function metadataEntry(key: string, value: string): string {
  return `${key.length}:${key}=${fold(value)}`;
}
const metadata: Index = {
  field: 'metadata', name: 'metadata', since: 3,
  values: (o) => (isObj(o.metadata) ? Object.entries(o.metadata).map(([k, v]) => (typeof v === 'string' ? metadataEntry(k, v) : undefined)) : []),
};

/**
 * Every type's indexes. Metadata is indexed for the searchable types whose search by a
 * metadata value an app might make often (core/search.ts reads it), at one more stored entry
 * per key on every object made with metadata: not for charges, which copy their payment
 * intent's metadata and would double that cost on every payment; their search walks.
 */
const INDEXES: Record<string, readonly Index[]> = {
  customer: [
    // Since version 3 filed in lower case, so a search (which ignores case) reads it too; the
    // `email` list filter, which does not, filters what it reads.
    { ...plain('email'), until: 3 },
    { field: 'email', name: 'email_folded', since: 3, values: (o) => [typeof o.email === 'string' ? fold(o.email) : undefined], key: fold },
    metadata,
  ],
  payment_intent: [plain('customer'), metadata],
  charge: [plain('customer'), plain('payment_intent')],
  refund: [plain('charge'), plain('payment_intent')],
  payment_method: [plain('customer')],
  setup_intent: [plain('customer')],
  subscription: [
    plain('customer'), plain('test_clock', 2),
    // A subscription by the ids of its items (they live inside it).
    { field: 'item', name: 'item', since: 2, values: (o) => (isObj(o.items) && Array.isArray(o.items.data) ? o.items.data.map((i) => (isObj(i) ? i.id : undefined)) : []) },
    metadata,
  ],
  invoice: [
    plain('customer'),
    // An invoice by the subscription that billed it (`invoices.list({ subscription })`).
    { field: 'subscription', name: 'subscription', since: 3, values: (o) => [billedSubscription(o)] },
    metadata,
  ],
  invoiceitem: [plain('customer'), plain('invoice', 2)],
  invoice_payment: [plain('invoice', 2)],
  'checkout.session': [plain('customer'), plain('payment_intent', 3), plain('subscription', 3)],
  product: [metadata],
  price: [plain('product'), plain('lookup_key', 2), metadata],
  card: [plain('customer', 2)],
  customer_balance_transaction: [plain('customer', 2)],
  // A promotion code by its code in any case: Stripe's `code` filter and uniqueness check ignore case.
  promotion_code: [{ field: 'code', name: 'code', since: 2, values: (o) => [typeof o.code === 'string' ? fold(o.code) : undefined], key: fold }],
};
/** What a new account gets: it keeps every index. */
const INDEX_VERSION = 3;
/** Longer values are not indexed (the index id must stay within the tree's id limit): lists by them read every object. */
const MAX_INDEXED_CHARS = 256;

/** keptIndexes' answers, by `<type>/<version>`: every write and filtered list asks. */
const keptByVersion = new Map<string, readonly Index[]>();

/** The indexes of `type` the account keeps. */
function keptIndexes(c: Call, type: string): readonly Index[] {
  const version = accountState(c).ix ?? 0;
  const at = `${type}/${version}`;
  let kept = keptByVersion.get(at);
  if (kept === undefined) {
    kept = (INDEXES[type] ?? []).filter((ix) => ix.since <= version && (ix.until === undefined || version < ix.until));
    keptByVersion.set(at, kept);
  }
  return kept;
}

/** What an equality index files a value under: a string field, or an expanded object's id. */
function indexValue(x: unknown): string | undefined {
  const v = isObj(x) ? x.id : x;
  return typeof v === 'string' && v.length <= MAX_INDEXED_CHARS ? v : undefined;
}

/**
 * The ids of one value's entries sort between `<len>:<value>/` and `<len>:<value>0`; `/` and 12
 * digits follow the stem. What an id that long may not hold is filed as U+FFFD
 * (sdk/twin/storable.ts): values that differ only there share entries, which every reader
 * tests against the object.
 */
function indexStem(value: string): string {
  const stem = `${value.length}:${value}`;
  return toStorableId(stem, stem.length + 13);
}

/**
 * What `index` files `o` under (nothing for undefined), each value once. A set: a subscription
 * of thousands of items filed each of its prices, and lists made that quadratic (5,000 items: 1.8 s).
 */
function filedValues(index: Index, o: Obj | undefined): Set<string> {
  const out = new Set<string>();
  if (o === undefined) return out;
  for (const x of index.values === undefined ? [o[index.field]] : index.values(o)) {
    const v = indexValue(x);
    if (v !== undefined) out.add(v);
  }
  return out;
}

/** Moves an object's equality index entries from what `before` holds to what `after` does (undefined: none). */
function reindex(c: Call, type: string, id: string, s: number, before: Obj | undefined, after: Obj | undefined): void {
  for (const index of keptIndexes(c, type)) {
    const tree = `by.${type}.${index.name}.${c.acct}`;
    const was = filedValues(index, before);
    const now = filedValues(index, after);
    for (const v of was) if (!now.has(v)) c.tree.delete(tree, `${indexStem(v)}/${pad(s)}`);
    for (const v of now) if (!was.has(v)) c.tree.put(tree, `${indexStem(v)}/${pad(s)}`, id);
  }
}

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
function keyedPrefix(c: Call, type: string): string | undefined {
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
function seqCode(s: number): string {
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
function seqOfId(id: string, prefix: string): number | undefined {
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

/**
 * A new id for an object of `type`: `prefix` and `length` characters, as Stripe's. Ordered
 * (`orderedId`) where the account lists the type from its records, else random.
 */
export function newId(c: Call, type: string, prefix: string, length: number): string {
  return keyedPrefix(c, type) === prefix ? orderedId(c, prefix, length) : c.ctx.id(prefix, length);
}

export function loadRec(c: Call, type: string, id: string): Rec | undefined {
  const key = `${c.acct}/${id}`;
  return checkRec(type, key, c.tree.get<unknown>(type, key));
}

/**
 * A stored record as the twin reads it, when it holds what the twin writes: `{ s, o }` with
 * `o` a Stripe object whose `id` is the record's (`<acct>/<id>`). Anything else answers 500
 * naming the record, never `200 null` or an object without an id. A few checks per read: every
 * retrieve, update and list goes through here.
 */
function checkRec(type: string, key: string, v: unknown): Rec | undefined {
  if (v === undefined) return undefined;
  if (!isObj(v)) throw malformedRecord(type, key, 'not an object');
  const o = v.o;
  if (typeof v.s !== 'number' || !isObj(o)) throw malformedRecord(type, key, 'not a { s, o } record');
  checkObject(type, key, o);
  return v as unknown as Rec;
}

/** A stored Stripe object (a record's `o`, or its `ix.` copy) filed under `key` (`<acct>/<id>`): its `id` and `object`. */
function checkObject(type: string, key: string, o: Obj): void {
  const id = o.id;
  if (typeof id !== 'string' || typeof o.object !== 'string' || key.length <= id.length || !key.endsWith(id) || key.charCodeAt(key.length - id.length - 1) !== 47 /* / */) {
    throw malformedRecord(type, key, "its object has no id and object, or another record's id");
  }
}

export function load(c: Call, type: string, id: string): Obj | undefined {
  return loadRec(c, type, id)?.o;
}

/** Loads or answers Stripe's `No such <noun>: '<id>'` (404, resource_missing). */
export function mustLoad(c: Call, type: string, id: string, noun: string, param = 'id'): Obj {
  const o = load(c, type, id);
  if (o === undefined || o.deleted === true) throw missing(noun, id, param);
  return o;
}

/** Stores a new object and indexes it for lists (a keyed type needs no index). */
export function insert(c: Call, type: string, obj: Obj): Obj {
  store(c, type, obj, clone(obj));
  return obj;
}

/**
 * Stores a new object its maker does not change again in this request (an event, a plain new
 * customer): kept as it is, without the copy `insert` makes (a read in the same request gets
 * a copy: TxTree.putShared).
 */
export function insertFresh(c: Call, type: string, obj: Obj): void {
  store(c, type, obj, obj);
}

/**
 * Stores a new event (as insertFresh). One whose `created` is not its request's instant
 * (`stampedNow`: a test clock's time, a timed move's due time) is filed out of order (`Rec.a`).
 */
export function insertEvent(c: Call, evt: Obj, stampedNow: boolean): void {
  store(c, 'event', evt, evt, !stampedNow);
  if (!stampedNow) fileLate(c, evt.created as number);
}

function store(c: Call, type: string, obj: Obj, copy: Obj, late = false): void {
  const id = obj.id as string;
  const prefix = keyedPrefix(c, type);
  const put = putFor(c, copy === obj);
  // A keyed type's id carries its seq; any other is listed through its `ix.` copy.
  const s = (prefix !== undefined ? seqOfId(id, prefix) : undefined) ?? nextSeq(c);
  put(type, `${c.acct}/${id}`, late ? { s, o: copy, a: 1 } : { s, o: copy });
  if (prefix === undefined) put(`ix.${type}.${c.acct}`, pad(s), copy);
  reindex(c, type, id, s, undefined, copy);
}

/** Replaces a stored object, keeping its place in lists. */
export function save(c: Call, type: string, obj: Obj): Obj {
  const rec = peekRec(c, type, obj.id as string);
  if (rec === undefined) return insert(c, type, obj);
  replace(c, type, rec, clone(obj), false);
  return obj;
}

/**
 * Replaces a stored object with `obj` itself, which its maker shares (with an event, say) and
 * does not change again in this request: as `save`, without the copy (reads of the record get
 * copies: TxTree.putShared).
 */
export function saveFresh(c: Call, type: string, obj: Obj): void {
  const rec = peekRec(c, type, obj.id as string);
  if (rec === undefined) insertFresh(c, type, obj);
  else replace(c, type, rec, obj, true);
}

function replace(c: Call, type: string, rec: Rec, copy: Obj, shared: boolean): void {
  const id = copy.id as string;
  const put = putFor(c, shared);
  if (rec.u === true) {
    put(type, `${c.acct}/${id}`, { s: rec.s, o: copy, u: true });
  } else {
    put(type, `${c.acct}/${id}`, { s: rec.s, o: copy });
    if (keyedPrefix(c, type) === undefined) put(`ix.${type}.${c.acct}`, pad(rec.s), copy);
    reindex(c, type, id, rec.s, rec.o, copy);
  }
}

/** How to write a value: shared (its maker keeps it; reads get copies: TxTree.putShared) or plainly. */
function putFor(c: Call, shared: boolean): Tree['put'] {
  return shared && c.tree instanceof TxTree ? c.tree.putShared.bind(c.tree) : c.tree.put.bind(c.tree);
}

/** A stored record to read and not change: no copy of one this request wrote shared. */
function peekRec(c: Call, type: string, id: string): Rec | undefined {
  if (!(c.tree instanceof TxTree)) return loadRec(c, type, id);
  const key = `${c.acct}/${id}`;
  return checkRec(type, key, c.tree.peek<unknown>(type, key));
}

/**
 * Files an object a root's refresh or ingest copied (root/) under seq `s`: its record, its `ix.`
 * copy and every index entry, each written whether stored already or not, since a refresh writes
 * all the root shows (the runner drops equal writes, and deletes after a complete refresh what
 * it wrote before and not this time). `was`, the object as stored (an ingest's update), loses
 * the index entries `obj` has not.
 */
export function fileCopy(c: Call, type: string, obj: Obj, s: number, was?: Obj): void {
  const id = obj.id as string;
  c.tree.put(type, `${c.acct}/${id}`, { s, o: obj });
  if (keyedPrefix(c, type) === undefined) c.tree.put(`ix.${type}.${c.acct}`, pad(s), obj);
  for (const index of keptIndexes(c, type)) {
    const tree = `by.${type}.${index.name}.${c.acct}`;
    const now = filedValues(index, obj);
    for (const v of filedValues(index, was)) if (!now.has(v)) c.tree.delete(tree, `${indexStem(v)}/${pad(s)}`);
    for (const v of now) c.tree.put(tree, `${indexStem(v)}/${pad(s)}`, id);
  }
}

/**
 * Keeps the call's account a copy (`AccountState.copy`), made so when new: every index, sums,
 * events in order. False for an account the twin's own keys began (its objects are in the
 * layout of the twin's ids, which a copy cannot share).
 */
export function keepCopyAccount(c: Call): boolean {
  const stored = c.tree.get<unknown>('account', c.acct);
  if (stored === undefined) {
    const some = (type: string): boolean => c.tree.list(type, { after: `${c.acct}/`, before: `${c.acct}0`, limit: 1 }).items.length > 0;
    if (some('event') || some('customer')) return false;
    putAccount(c, 0, 0, { n: 0, hooks: 0, ix: INDEX_VERSION, bal: 1, ev: 1, copy: 1 });
    return true;
  }
  const st = checkAccount(c.acct, stored);
  if (st.copy !== 1) return false;
  // Written by every refresh, or the runner's sweep would take it for a record the root dropped.
  putAccount(c, st.n, st.hooks, st);
  return true;
}

/** Raises the account's seq floor to `n`: the seqs the twin hands out next are above it. */
export function raiseSeqFloor(c: Call, n: number): void {
  const st = accountState(c);
  if (n > st.n) putAccount(c, n, st.hooks, st);
}

/** Drops an object from lists; with `keep` the record stays (deleted customers answer a stub). */
export function unlist(c: Call, type: string, id: string, stub?: Obj): void {
  const rec = loadRec(c, type, id);
  if (rec === undefined) return;
  if (keyedPrefix(c, type) === undefined) c.tree.delete(`ix.${type}.${c.acct}`, pad(rec.s));
  if (rec.u !== true) reindex(c, type, id, rec.s, rec.o, undefined);
  if (stub !== undefined) c.tree.put(type, `${c.acct}/${id}`, { s: rec.s, o: clone(stub), u: true });
  else c.tree.delete(type, `${c.acct}/${id}`);
}

/**
 * A list's filter; one made by `eq`, `is`, `isAny` or `matching` also names its field and the
 * values it keeps, for an equality index.
 */
export interface Filter {
  (o: Obj): boolean;
  field?: string;
  values?: readonly string[];
  /** The only index that can serve it (`matching`: the field's index with computed values). */
  index?: string;
  /** `rangeFilter`'s: the least value it keeps, when it has a lower bound. */
  least?: number;
}

/** Iterates an account's objects newest first, starting below `beforeSeq`, reading `pageSize` at a time. */
export function* newestFirst(c: Call, type: string, beforeSeq?: number, pageSize = 100): Generator<Rec> {
  const prefix = keyedPrefix(c, type);
  if (prefix !== undefined) {
    // The account's records are the ids between `<acct>/` and `<acct>0` ('0' follows '/').
    const after = `${c.acct}/`;
    let before = beforeSeq === undefined ? `${c.acct}0` : `${c.acct}/${prefix}${seqCode(beforeSeq)}`;
    for (;;) {
      const page = c.tree.list<unknown>(type, { reverse: true, after, before, limit: pageSize });
      // Unlisted records (deleted customers' stubs) are skipped.
      for (const item of page.items) {
        const rec = checkRec(type, item.id, item.value) as Rec;
        if (rec.u !== true) yield rec;
      }
      if (!page.hasMore || page.items.length === 0) return;
      before = page.items[page.items.length - 1]?.id as string;
      pageSize = 100;
    }
  }
  const ix = `ix.${type}.${c.acct}`;
  let before = beforeSeq === undefined ? undefined : pad(beforeSeq);
  for (;;) {
    const opts = before === undefined ? { reverse: true, limit: pageSize } : { reverse: true, limit: pageSize, before };
    const page = c.tree.list<unknown>(ix, opts);
    for (const item of page.items) yield copyRec(ix, item.id, item.value);
    if (!page.hasMore || page.items.length === 0) return;
    before = page.items[page.items.length - 1]?.id;
    pageSize = 100;
  }
}

/** An `ix.` copy (id: the seq as 12 digits) as the record it copies, when it holds a Stripe object. */
function copyRec(ix: string, seq: string, v: unknown): Rec {
  if (!isObj(v) || typeof v.id !== 'string' || typeof v.object !== 'string') throw malformedRecord(ix, seq, 'not a Stripe object with an id');
  return { s: Number(seq), o: v };
}

function* oldestFirst(c: Call, type: string, afterSeq: number, pageSize: number): Generator<Rec> {
  const prefix = keyedPrefix(c, type);
  if (prefix !== undefined) {
    // Every id of seq afterSeq + 1 and later sorts above this bound; those of afterSeq below it.
    let after = `${c.acct}/${prefix}${seqCode(afterSeq + 1)}`;
    const before = `${c.acct}0`;
    for (;;) {
      const page = c.tree.list<unknown>(type, { after, before, limit: pageSize });
      // Unlisted records (deleted customers' stubs) are skipped.
      for (const item of page.items) {
        const rec = checkRec(type, item.id, item.value) as Rec;
        if (rec.u !== true) yield rec;
      }
      if (!page.hasMore || page.items.length === 0) return;
      after = page.items[page.items.length - 1]?.id as string;
      pageSize = 100;
    }
  }
  const ix = `ix.${type}.${c.acct}`;
  let after = pad(afterSeq);
  for (;;) {
    const page = c.tree.list<unknown>(ix, { after, limit: pageSize });
    for (const item of page.items) yield copyRec(ix, item.id, item.value);
    if (!page.hasMore || page.items.length === 0) return;
    after = page.items[page.items.length - 1]?.id as string;
    pageSize = 100;
  }
}

/** `created` as a number or `{ gt, gte, lt, lte }`, as every Stripe list takes it. */
const RANGE_KEYS = ['gt', 'gte', 'lt', 'lte'];

export function rangeFilter(c: Call, key: string, field = key): Filter | undefined {
  const v = c.p.get(key);
  if (v === undefined) return undefined;
  if (!isObj(v)) {
    const n = c.p.int(key) as number;
    const exact: Filter = (o) => o[field] === n;
    exact.least = n;
    return exact;
  }
  const r = c.p.obj(key);
  if (r === null || r === undefined) return undefined;
  for (const k of Object.keys(r.raw)) {
    if (!RANGE_KEYS.includes(k)) throw invalid(`Received unknown parameter: ${r.name(k)}`, r.name(k), 'parameter_unknown');
  }
  const gt = r.int('gt'), gte = r.int('gte'), lt = r.int('lt'), lte = r.int('lte');
  const f: Filter = (o) => {
    const x = o[field];
    if (typeof x !== 'number') return false;
    return (gt === undefined || x > gt) && (gte === undefined || x >= gte) &&
      (lt === undefined || x < lt) && (lte === undefined || x <= lte);
  };
  if (gt !== undefined || gte !== undefined) f.least = Math.max(gt === undefined ? -Infinity : gt + 1, gte ?? -Infinity);
  return f;
}

/**
 * For a walk of the account's events newest first, kept from `least` on: whether the walk may
 * end at a record, every older event being older than `least` too. Only where the account keeps
 * its events in order (`AccountState.ev`) and none filed out of order is as recent.
 */
function eventsEndBelow(c: Call, least: number): ((r: Rec) => boolean) | undefined {
  const st = accountState(c);
  if (st.ev !== 1 || (st.late !== undefined && st.late >= least)) return undefined;
  return (r) => r.a !== 1 && (r.o.created as number) < least;
}

/**
 * Stripe's list: `{ object: 'list', data, has_more, url }`, newest first, with `limit`
 * (1–100, default 10), `starting_after` and `ending_before` cursors, and `created`.
 */
export function listOf(c: Call, type: string, url: string, filters: (Filter | undefined)[] = [], noun = type): Obj {
  const limit = c.p.int('limit', 1, 100) ?? 10;
  const after = c.p.str('starting_after');
  const before = c.p.str('ending_before');
  if (after !== undefined && before !== undefined && after !== '' && before !== '') {
    throw invalid('You may only specify one of these parameters: ending_before, starting_after.', 'ending_before');
  }
  const created = rangeFilter(c, 'created');
  const all = [...filters, created].filter((f): f is Filter => f !== undefined);
  const keep = (o: Obj): boolean => all.every((f) => f(o));
  const by = indexedFilter(c, type, all);
  // Events since an instant (a poll's): the walk newest first ends at the first older one, often
  // within a few events, so it reads a few first.
  const ends = type === 'event' && created?.least !== undefined ? eventsEndBelow(c, created.least) : undefined;
  // Unfiltered (or filtered by the index alone), one more than the page tells whether there is
  // more; filtered, read wider.
  const pageSize = ends !== undefined ? Math.min(limit + 1, 11) : all.length === 0 || (all.length === 1 && by !== undefined) ? limit + 1 : 100;
  const data: Obj[] = [];
  let hasMore = false;
  if (before !== undefined && before !== '') {
    const rec = loadRec(c, type, before);
    if (rec === undefined) throw missing(noun, before, 'ending_before');
    for (const r of by !== undefined ? fromIndex(c, type, by, false, rec.s, pageSize) : oldestFirst(c, type, rec.s, pageSize)) {
      if (!keep(r.o)) continue;
      if (data.length === limit) { hasMore = true; break; }
      data.push(r.o);
    }
    data.reverse();
  } else {
    let from: number | undefined;
    if (after !== undefined && after !== '') {
      const rec = loadRec(c, type, after);
      if (rec === undefined) throw missing(noun, after, 'starting_after');
      from = rec.s;
    }
    for (const r of by !== undefined ? fromIndex(c, type, by, true, from, pageSize) : newestFirst(c, type, from, pageSize)) {
      if (ends?.(r) === true) break;
      if (!keep(r.o)) continue;
      if (data.length === limit) { hasMore = true; break; }
      data.push(r.o);
    }
  }
  return { object: 'list', data, has_more: hasMore, url };
}

/** A filter on one field's equality, when the parameter is given. */
export function eq(c: Call, key: string, field = key): Filter | undefined {
  const v = c.p.str(key);
  return v === undefined ? undefined : is(field, v);
}

/** Objects whose `field` is `value` (an expanded object: its id), as an equality index files them. */
export function is(field: string, value: string): Filter {
  return isAny(field, [value]);
}

/**
 * Objects an index with computed values files under `value`: a promotion code by its code in
 * any case (`matching('promotion_code', 'code', 'SUMMER')`), a subscription by an item's id,
 * a customer by its email in any case, an object by a metadata entry (`metadataEntry`).
 */
export function matching(type: string, field: string, value: string): Filter {
  const index = computedIndex(type, field);
  if (index?.values === undefined) throw new Error(`no index of ${type}.${field} with computed values`);
  const values = index.values;
  const key = index.key === undefined ? value : index.key(value);
  // Compared whole: a value too long for the index is not filed, and a walk still finds it.
  const f: Filter = (o) => values(o).includes(key);
  f.field = field;
  f.values = [value];
  f.index = index.name;
  return f;
}

/** The index of `type` with computed values for `field`, if it has one (`matching` needs it). */
function computedIndex(type: string, field: string): Index | undefined {
  return INDEXES[type]?.find((ix) => ix.field === field && ix.values !== undefined);
}

/** Whether `matching(type, field, …)` can be made: `type` has an index with computed values for `field`. */
export function canMatch(type: string, field: string): boolean {
  return computedIndex(type, field) !== undefined;
}

/** Objects whose `field` is one of `values` (an expanded object: its id), as an equality index files them. */
export function isAny(field: string, values: readonly string[]): Filter {
  const f: Filter = (o) => {
    const x = o[field];
    return values.includes((isObj(x) ? x.id : x) as string);
  };
  f.field = field;
  f.values = values.length === 1 ? values : [...new Set(values)];
  return f;
}

/**
 * An account's objects that `f` keeps, newest first (below `beforeSeq` when given): read
 * from an equality index when one serves `f` (then only its entries are read), else filtered
 * from all of them.
 */
export function* newestWhere(c: Call, type: string, f: Filter, beforeSeq?: number): Generator<Rec> {
  const by = indexedFilter(c, type, [f]);
  for (const rec of by !== undefined ? fromIndex(c, type, by, true, beforeSeq, 100) : newestFirst(c, type, beforeSeq)) {
    if (f(rec.o)) yield rec;
  }
}

/** An index of the account's and the values to read from it: what serves a filter. */
interface IndexRead {
  index: Index;
  keys: string[];
}

/** An index the account keeps that can serve one of `filters`, and the values to read, if any. */
function indexedFilter(c: Call, type: string, filters: Filter[]): IndexRead | undefined {
  if (INDEXES[type] === undefined) return undefined;
  for (const f of filters) {
    if (f.field === undefined || f.values === undefined) continue;
    const index = keptIndexes(c, type).find((ix) => ix.field === f.field && (f.index === undefined || ix.name === f.index));
    if (index === undefined) continue;
    const keys = index.key === undefined ? [...f.values] : [...new Set(f.values.map(index.key))];
    if (keys.every((k) => k.length <= MAX_INDEXED_CHARS)) return { index, keys };
  }
  return undefined;
}

/**
 * An account's objects filed in `by.index` under one of `by.keys`: newest first below `seq`
 * (or oldest first above it). One value's entries are in creation order; several values'
 * are merged by seq.
 */
function* fromIndex(c: Call, type: string, by: IndexRead, newest: boolean, seq: number | undefined, pageSize: number): Generator<Rec> {
  const tree = `by.${type}.${by.index.name}.${c.acct}`;
  if (by.keys.length === 1) {
    yield* fromIndexValue(c, type, tree, by.keys[0] as string, newest, seq, pageSize);
    return;
  }
  const heads: [Rec, Generator<Rec>][] = [];
  for (const value of by.keys) {
    const gen = fromIndexValue(c, type, tree, value, newest, seq, pageSize);
    const first = gen.next();
    if (first.done !== true) heads.push([first.value, gen]);
  }
  while (heads.length > 0) {
    let at = 0;
    for (let i = 1; i < heads.length; i++) {
      const s = (heads[i] as [Rec, Generator<Rec>])[0].s;
      const best = (heads[at] as [Rec, Generator<Rec>])[0].s;
      if (newest ? s > best : s < best) at = i;
    }
    const head = heads[at] as [Rec, Generator<Rec>];
    yield head[0];
    const next = head[1].next();
    if (next.done === true) heads.splice(at, 1);
    else head[0] = next.value;
  }
}

/** As `fromIndex`, for one value. */
function* fromIndexValue(c: Call, type: string, ix: string, value: string, newest: boolean, seq: number | undefined, pageSize: number): Generator<Rec> {
  const stem = indexStem(value);
  let after = newest || seq === undefined ? `${stem}/` : `${stem}/${pad(seq)}`;
  let before = !newest || seq === undefined ? `${stem}0` : `${stem}/${pad(seq)}`;
  for (;;) {
    const page = c.tree.list<string>(ix, { reverse: newest, after, before, limit: pageSize });
    for (const item of page.items) {
      const rec = loadRec(c, type, item.value);
      if (rec !== undefined && rec.u !== true) yield rec;
    }
    const last = page.items[page.items.length - 1];
    if (!page.hasMore || last === undefined) return;
    if (newest) before = last.id;
    else after = last.id;
    pageSize = 100;
  }
}

export function boolEq(c: Call, key: string, field = key): Filter | undefined {
  const v = c.p.bool(key);
  if (v === undefined) return undefined;
  return (o) => o[field] === v;
}
