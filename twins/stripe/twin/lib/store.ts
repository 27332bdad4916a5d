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
 * their ids are ordered (`orderedId`, `newId`). Every write goes through this file; ids are made in
 * ids.ts, the account record kept in account.ts, the equality indexes declared in indexes.ts, and
 * lists read in lists.ts.
 */
import type { Tree } from '../../../../sdk/twin/types.js';
import type { Call } from './request.js';
import { malformedRecord, missing } from '../errors.js';
import { TxTree } from './tx.js';
import { clone, isObj, type Obj } from './util.js';
import { pad, keyedPrefix, seqOfId, orderedId } from './ids.js';
import { accountState, checkAccount, putAccount, fileLate, nextSeq, keptIndexes } from './account.js';
import { INDEX_VERSION, indexStem, filedValues } from './indexes.js';

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
export function checkRec(type: string, key: string, v: unknown): Rec | undefined {
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
