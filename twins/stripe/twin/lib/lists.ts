/**
 * Reading many objects: newest first (or oldest first) through the creation-order copies or the
 * ordered ids, filtered (`eq`, `is`, `isAny`, `matching`, `rangeFilter`, `boolEq`) and through an
 * equality index where one fits; `listOf` answers a Stripe list page with its cursors.
 */
import type { Call } from './request.js';
import { invalid, malformedRecord, missing } from '../errors.js';
import { isObj, type Obj } from './util.js';
import { pad, keyedPrefix, seqCode } from './ids.js';
import { accountState, keptIndexes } from './account.js';
import { type Index, INDEXES, MAX_INDEXED_CHARS, indexStem, computedIndex } from './indexes.js';
import { type Rec, loadRec, checkRec } from './store.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { Math, Number } = globalThis;

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
