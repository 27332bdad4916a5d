/**
 * A world's reads: its heads, entries and records as of any position, falling through a
 * branch's cut to its base's keys (recursively), and the counts and id bounds the write path
 * relies on. Arguments are checked by World before they get here.
 */
import { KitError } from '../errors.js';
import { compareStrings, partAfter } from '../store/keys.js';
import type { Key, KeyValue, RangeOptions } from '../store/types.js';
import { canonicalJson } from './canonical.js';
import { type BaseMeta, cutOf, type Engine, first, type HeadVersion, MAX_BOUNDED_TYPES, type State } from './engine.js';
import {
  after,
  countKey,
  countPrefix,
  deletionKey,
  deletionPrefix,
  headKey,
  headPrefix,
  idInRecordKey,
  logKey,
  logPrefix,
  positionInLogKey,
  positionInTraceKey,
  prefixEnd,
  traceKey,
  typeInCountKey,
  typeInRecordKey,
  under,
  versionKey,
} from './keys.js';
import type { Entry, RecordPage } from './types.js';

/** Checkpoints larger than this are refused (spec: Limits). */
export const CHECKPOINT_LIMIT_BYTES = 24 * 1024 * 1024;

/** Part of a twin's history held in one world's own keys: positions in (lo, hi]. */
interface Layer {
  id: string;
  lo: number;
  hi: number;
  /** A base's layer: by type, the greatest id it can hold (BaseMeta.ids); undefined: unbounded. */
  ids: Map<string, string> | undefined;
  /** The world being read (its head index answers reads at its head). */
  top: boolean;
  /**
   * A world with no base: a record it deleted has no head key, only version keys. A branch
   * keeps a deletion in the head key (null value), which masks its base's record in one read.
   */
  root: boolean;
}

/** Ids bounding a list: strictly after `after`, strictly before `before`. */
export interface IdBounds {
  after?: string | undefined;
  before?: string | undefined;
}

export const msOf = (entry: Entry): number => Date.parse(entry.occurredAt);

/** BaseMeta.ids as maps, made once per meta. */
const baseIdMaps = new WeakMap<BaseMeta, Map<string, Map<string, string>>>();

/** A twin's id bounds in a branch's base (BaseMeta.ids); undefined: unbounded. */
function baseIdBounds(base: BaseMeta, twin: string): Map<string, string> | undefined {
  if (base.ids === undefined) return undefined;
  let byTwin = baseIdMaps.get(base);
  if (byTwin === undefined) baseIdMaps.set(base, (byTwin = new Map(base.ids.map(([t, bounds]) => [t, new Map(bounds)]))));
  return byTwin.get(twin);
}

/** Whether a base's layer with these id bounds can hold the record. */
function withinIds(ids: Map<string, string>, type: string, id: string): boolean {
  const bound = ids.get(type);
  return bound !== undefined && compareStrings(id, bound) <= 0;
}

/** Intersections of two bounds (types in both, the lower id), made once per pair. */
const intersections = new WeakMap<Map<string, string>, WeakMap<Map<string, string>, Map<string, string>>>();

function intersectBounds(a: Map<string, string>, b: Map<string, string>): Map<string, string> {
  let byB = intersections.get(a);
  if (byB === undefined) intersections.set(a, (byB = new WeakMap()));
  let both = byB.get(b);
  if (both === undefined) {
    both = new Map();
    for (const [type, id] of a) {
      const other = b.get(type);
      if (other !== undefined) both.set(type, compareStrings(id, other) <= 0 ? id : other);
    }
    byB.set(b, both);
  }
  return both;
}

/** One world's reads (its State's caches filled as they go). */
export class WorldReads {
  constructor(
    readonly e: Engine<unknown>,
    readonly s: State,
  ) {}

  /** The twin's last position, 0 when its log is empty. */
  head(twin: string): number {
    const cached = this.s.heads.get(twin);
    if (cached !== undefined) return cached;
    const prefix = logPrefix(this.s.meta.id, twin);
    const last = first(this.e.storage, { start: prefix, end: prefixEnd(prefix), reverse: true });
    const head = last !== undefined ? positionInLogKey(last.key) : cutOf(this.s.meta.base, twin);
    this.s.heads.set(twin, head);
    return head;
  }

  /** The set clock (ms), following the parent's for a live branch; null for the wall clock. */
  setClockMs(): number | null {
    let s = this.s;
    while (s.meta.live && s.meta.base !== null) s = this.e.stateById(s.meta.base.worldId);
    return s.meta.clock;
  }

  /** The instant entries are stamped with now. */
  nowMs(): number {
    return this.setClockMs() ?? this.e.now();
  }

  newestMs(twin: string): number {
    const cached = this.s.newest.get(twin);
    if (cached !== undefined) return cached;
    const head = this.head(twin);
    const entry = head === 0 ? undefined : this.entryAt(twin, head, this.layers(twin, head));
    const ms = entry === undefined ? 0 : msOf(entry);
    this.s.newest.set(twin, ms);
    return ms;
  }

  /** Where positions 1..at of a twin live: this world's keys, then its bases' (newest first). */
  layers(twin: string, at: number): Layer[] {
    const out: Layer[] = [];
    let s: State = this.s;
    let hi = at;
    let top = true;
    let ids: Map<string, string> | undefined;
    for (;;) {
      const base = s.meta.base;
      const cut = cutOf(base, twin);
      if (hi > cut) out.push({ id: s.meta.id, lo: cut, hi, ids, top, root: base === null });
      if (base === null || cut === 0) return out;
      hi = Math.min(hi, cut);
      top = false;
      ids = baseIdBounds(base, twin);
      s = this.e.stateById(base.worldId);
    }
  }

  entryAt(twin: string, position: number, layers: Layer[]): Entry | undefined {
    for (const l of layers) {
      if (position > l.lo && position <= l.hi) return this.e.storage.get<Entry>(logKey(l.id, twin, position));
    }
    return undefined;
  }

  /** The last position ≤ head whose occurredAt ≤ ms, 0 when none: binary search. */
  lastAtOrBefore(twin: string, ms: number, head: number, layers: Layer[]): number {
    let lo = 0; // invariant: position lo qualifies (0 always does)
    let hi = head;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const entry = this.entryAt(twin, mid, layers);
      if (entry !== undefined && msOf(entry) <= ms) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Entries at positions from..to, ascending, each read when asked for. */
  *entriesForward(twin: string, from: number, to: number, head: number): Generator<Entry> {
    if (from > to) return;
    for (const l of this.layers(twin, head).reverse()) {
      const lo = Math.max(l.lo + 1, from);
      const hi = Math.min(l.hi, to);
      if (lo > hi) continue;
      for (const kv of this.e.storage.range<Entry>({ start: logKey(l.id, twin, lo), end: logKey(l.id, twin, hi + 1) })) yield kv.value;
    }
  }

  /** Entries at positions from, from-1, …, descending, each read when asked for. */
  *entriesBackward(twin: string, from: number): Generator<Entry> {
    for (const l of this.layers(twin, this.head(twin))) {
      const hi = Math.min(l.hi, from);
      if (hi <= l.lo) continue;
      for (const kv of this.e.storage.range<Entry>({ start: logKey(l.id, twin, l.lo + 1), end: logKey(l.id, twin, hi + 1), reverse: true })) yield kv.value;
    }
  }

  /** Entries of one trace at positions ≤ from, descending, from the trace index. */
  *traceEntriesBackward(twin: string, trace: string, from: number): Generator<Entry> {
    const storage = this.e.storage;
    for (const l of this.layers(twin, this.head(twin))) {
      const hi = Math.min(l.hi, from);
      if (hi <= l.lo) continue;
      for (const { key } of storage.range({ start: traceKey(l.id, trace, twin, l.lo + 1), end: traceKey(l.id, trace, twin, hi + 1), reverse: true })) {
        const entry = storage.get<Entry>(logKey(l.id, twin, positionInTraceKey(key)));
        if (entry !== undefined) yield entry;
      }
    }
  }

  /** A record's value as of `at` (undefined when absent or deleted). */
  recordAt(twin: string, type: string, id: string, at: number, head: number): unknown {
    return this.valueIn(this.layers(twin, at), twin, type, id, at, head);
  }

  /** A record's value in `layers` (those of `at`, or the base's part of them). */
  valueIn(layers: Layer[], twin: string, type: string, id: string, at: number, head: number): unknown {
    const storage = this.e.storage;
    for (const l of layers) {
      if (l.ids !== undefined && !withinIds(l.ids, type, id)) continue;
      // The layer's newest own version (a branch's masking deletion included: null).
      const version = storage.get<HeadVersion>(headKey(l.id, twin, type, id));
      if (version !== undefined && version[0] <= l.hi) return version[1] ?? undefined;
      if (version === undefined) {
        // The world never wrote the record, or deleted it. At a world's own head that answers
        // the same: a root world has nothing below it, and a branch's deletion with no head key
        // is of a record its base does not show. Elsewhere the deletion mark tells.
        if (l.top && at === head) {
          if (l.root) return undefined;
          continue;
        }
        if (storage.get<number>(deletionKey(l.id, twin, type, id)) === undefined) continue;
      }
      const kv = first(storage, { start: versionKey(l.id, twin, type, id, l.lo + 1), end: versionKey(l.id, twin, type, id, l.hi + 1), reverse: true });
      if (kv !== undefined) return kv.value ?? undefined;
    }
    return undefined;
  }

  /**
   * By type, an id at or after every id among this world's own head keys and deletion marks
   * of a twin's records (every record it wrote has one or the other, as valueIn relies on).
   * The first call reads them (one seek per type and kind, walking down from the last type);
   * appendBatch keeps them since. Undefined past MAX_BOUNDED_TYPES types.
   */
  ownIdBounds(twin: string): Map<string, string> | undefined {
    const read = this.s.idBoundsRead.get(twin);
    if (read === 'too many') return undefined;
    const bounds = this.idBoundsOf(twin);
    if (read === undefined) {
      const found = new Map<string, string>();
      for (const prefixOf of [headPrefix, deletionPrefix]) {
        const prefix = prefixOf(this.s.meta.id, twin);
        let end = prefixEnd(prefix);
        for (;;) {
          const kv = first(this.e.storage, { start: prefix, end, reverse: true });
          if (kv === undefined) break;
          const type = typeInRecordKey(kv.key);
          const id = idInRecordKey(kv.key);
          const known = found.get(type);
          if (known === undefined || compareStrings(id, known) > 0) found.set(type, id);
          if (found.size > MAX_BOUNDED_TYPES) {
            this.s.idBoundsRead.set(twin, 'too many');
            return undefined;
          }
          end = under(prefix, type);
        }
      }
      // A type appendBatch has read since the world opened holds its newest head key, maybe
      // not the greatest of its deletion marks: the greater one stays.
      for (const [type, id] of found) {
        const known = bounds.get(type);
        if (known === undefined || compareStrings(id, known) > 0) bounds.set(type, id);
      }
      this.s.idBoundsRead.set(twin, 'all');
    }
    if (bounds.size > MAX_BOUNDED_TYPES) {
      this.s.idBoundsRead.set(twin, 'too many');
      return undefined;
    }
    return bounds;
  }

  idBoundsOf(twin: string): Map<string, string> {
    let bounds = this.s.idBounds.get(twin);
    if (bounds === undefined) this.s.idBounds.set(twin, (bounds = new Map()));
    return bounds;
  }

  headCounts(twin: string): Map<string, number> {
    let memo = this.s.counts.get(twin);
    if (memo === undefined) this.s.counts.set(twin, (memo = new Map()));
    return memo;
  }

  countAt(twin: string, type: string, at: number): number {
    if (at !== this.head(twin)) return this.storedCountAt(twin, type, at);
    const memo = this.headCounts(twin);
    let n = memo.get(type);
    if (n === undefined) memo.set(type, (n = this.storedCountAt(twin, type, at)));
    return n;
  }

  private storedCountAt(twin: string, type: string, at: number): number {
    for (const l of this.layers(twin, at)) {
      const kv = first<number>(this.e.storage, { start: countKey(l.id, twin, type, l.lo + 1), end: countKey(l.id, twin, type, l.hi + 1), reverse: true });
      if (kv !== undefined) return kv.value;
    }
    return 0;
  }

  /** Types that have (or had) records as of `at`, sorted. */
  typesAt(twin: string, at: number): string[] {
    const types = new Set<string>();
    for (const l of this.layers(twin, at)) {
      const prefix = countPrefix(l.id, twin);
      const end = prefixEnd(prefix);
      let start: Key = prefix;
      for (;;) {
        const kv = first(this.e.storage, { start, end });
        if (kv === undefined) break;
        const type = typeInCountKey(kv.key);
        types.add(type);
        start = after(prefix, type);
      }
    }
    return [...types].sort(compareStrings);
  }

  /** Records of a type as of `pos`, in id order (descending with `reverse`), within the bounds. */
  listRecords<V>(twin: string, type: string, pos: number, head: number, bounds: IdBounds, reverse: boolean, limit: number): RecordPage<V> {
    const records: { id: string; value: V }[] = [];
    const layers = this.layers(twin, pos);
    const only = layers[0];
    if (layers.length === 1 && only !== undefined && only.top && pos === head) {
      // The common case, a root world at head: one ordered pass over the type's head keys,
      // which hold each record's newest value (a deleted one's is null), instead of a seek and
      // a read per record.
      const prefix = headPrefix(only.id, twin, type);
      const range: RangeOptions = {
        start: bounds.after === undefined ? prefix : after(prefix, bounds.after),
        end: bounds.before === undefined ? prefixEnd(prefix) : under(prefix, bounds.before),
        reverse,
      };
      for (const { key, value } of this.e.storage.range<HeadVersion>(range)) {
        const v = value[1];
        if (v === null || v === undefined) continue;
        records.push({ id: idInRecordKey(key), value: v as V });
        if (records.length > limit) break;
      }
      return { records: records.slice(0, limit), hasMore: records.length > limit };
    }
    const hasMore = this.scanRecords(twin, type, pos, head, bounds, reverse, limit + 1, (id, value) => {
      records.push({ id, value: value as V });
    });
    return { records: records.slice(0, limit), hasMore: hasMore || records.length > limit };
  }

  /**
   * The twin's tree as of `pos` as deterministic JSON bytes (see World.checkpoint), `redact`
   * replacing record values; checkpoint_too_large past CHECKPOINT_LIMIT_BYTES.
   */
  checkpoint(twin: string, pos: number, head: number, redact?: (type: string, value: unknown) => unknown): Uint8Array {
    const layers = this.layers(twin, pos);
    const byType = new Map<string, [string, string][]>();
    let chars = 0;
    const tooLarge = (): KitError =>
      new KitError('checkpoint_too_large', `the checkpoint of ${twin} at ${pos} is larger than 24 MB`, { limit: CHECKPOINT_LIMIT_BYTES });
    const add = (type: string, id: string, value: unknown): void => {
      if (redact !== undefined) value = redact(type, value);
      let piece: string;
      try {
        piece = `${JSON.stringify(id)}:${canonicalJson(value)}`;
      } catch (err) {
        throw new KitError('internal', `record ${type}/${id} cannot be serialised: ${String(err)}`);
      }
      // Characters are a lower bound of UTF-8 bytes: stop early once they alone pass the
      // limit; the exact size is checked on the final bytes.
      chars += piece.length + 1;
      if (chars > CHECKPOINT_LIMIT_BYTES) throw tooLarge();
      let list = byType.get(type);
      if (list === undefined) byType.set(type, (list = []));
      list.push([id, piece]);
    };
    const only = layers[0];
    if (layers.length === 1 && only !== undefined && only.top && pos === head) {
      // The common case, a root world at head: one pass over the head index.
      const prefix = headPrefix(only.id, twin);
      for (const { key, value } of this.e.storage.range<HeadVersion>({ start: prefix, end: prefixEnd(prefix) })) {
        const v = value[1];
        if (v !== null && v !== undefined) add(typeInRecordKey(key), idInRecordKey(key), v);
      }
    } else {
      for (const type of this.typesAt(twin, pos)) {
        this.scanRecords(twin, type, pos, head, {}, false, Infinity, (id, v) => add(type, id, v));
      }
    }
    const out: string[] = [`{"position":${pos},"records":{`];
    const types = [...byType.keys()].sort();
    types.forEach((type, i) => {
      const list = byType.get(type) as [string, string][];
      // Storage gives ids in code-point order; JSON key order is code-unit order. They differ
      // only around astral characters, so sort only when the list is not already in order.
      let sorted = true;
      for (let j = 1; j < list.length && sorted; j++) sorted = (list[j - 1] as [string, string])[0] < (list[j] as [string, string])[0];
      if (!sorted) list.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      out.push(`${i > 0 ? ',' : ''}${JSON.stringify(type)}:{${list.map((r) => r[1]).join(',')}}`);
    });
    out.push(`},"twin":${JSON.stringify(twin)}}`);
    const bytes = Buffer.from(out.join(''), 'utf8');
    if (bytes.byteLength > CHECKPOINT_LIMIT_BYTES) throw tooLarge();
    return new Uint8Array(bytes);
  }

  /**
   * Walks the live records of a type as of `at` in id order, merging this world's versions
   * with its bases' (the newest layer that has a version of an id decides). Stops after
   * `max` records; returns true if it stopped with records left.
   */
  private scanRecords(
    twin: string,
    type: string,
    at: number,
    head: number,
    bounds: IdBounds,
    reverse: boolean,
    max: number,
    visit: (id: string, value: unknown) => void,
  ): boolean {
    const storage = this.e.storage;
    // A layer read below its world's head also stops at the bounds its world noted at or after
    // the layer's top position: a walk of an early position, or of a base cut at a past instant,
    // does not step over the records made after it.
    const layers = this.layers(twin, at).map((l) => {
      if (l.top && at === head) return l;
      const noted = this.e.boundsRecordAt(l.id, twin, l.hi);
      if (noted === undefined) return l;
      return { ...l, ids: l.ids === undefined ? noted : intersectBounds(l.ids, noted) };
    });
    const better = (a: string, b: string): boolean => (reverse ? compareStrings(a, b) > 0 : compareStrings(a, b) < 0);
    // The end of a range under `prefix`: below `upper` (exclusive) and at or below `cap` (a
    // base layer's greatest id, inclusive), whichever is lower.
    const endOf = (prefix: Key, upper: string | undefined, cap: string | undefined): Key => {
      if (cap !== undefined && (upper === undefined || compareStrings(partAfter(cap), upper) < 0)) return after(prefix, cap);
      return upper === undefined ? prefixEnd(prefix) : under(prefix, upper);
    };
    // The first key beyond `cursor` (in walking order) under `prefix`, within the bounds.
    const nextKey = <V>(prefix: Key, cursor: string | undefined, cap: string | undefined): KeyValue<V> | undefined => {
      let range: RangeOptions;
      if (!reverse) {
        const lower = cursor ?? bounds.after;
        range = { start: lower === undefined ? prefix : after(prefix, lower), end: endOf(prefix, bounds.before, cap) };
      } else {
        range = {
          start: bounds.after === undefined ? prefix : after(prefix, bounds.after),
          end: endOf(prefix, cursor ?? bounds.before, cap),
          reverse: true,
        };
      }
      return first<V>(storage, range);
    };
    // Per layer, the next id with a deletion mark (a root world's; undefined: none left),
    // sought again only once the walk passes it: cursors only move forward.
    const marks = new Map<Layer, { next: string | undefined }>();
    const nextMarked = (l: Layer, cursor: string | undefined): string | undefined => {
      const known = marks.get(l);
      if (known !== undefined && cursor !== undefined && (known.next === undefined || better(cursor, known.next))) return known.next;
      const kv = nextKey(deletionPrefix(l.id, twin, type), cursor, l.ids?.get(type));
      const next = kv === undefined ? undefined : idInRecordKey(kv.key);
      marks.set(l, { next });
      return next;
    };
    // Next id beyond `from` (in walking order) that has a version in the layer's window. A
    // record the layer wrote has a head key (live, or a branch's deletion) or, deleted by a
    // root world, a deletion mark; its older versions are version keys.
    const seek = (l: Layer, from: string | undefined): string | undefined => {
      // A base's layer holds no id above its bound: the records it made after the cut are
      // never stepped over (with ordered ids they all sort above it).
      const cap = l.ids?.get(type);
      if (l.ids !== undefined && cap === undefined) return undefined;
      const heads = headPrefix(l.id, twin, type);
      // Read at a world's own head, a record deleted without a head key is gone: only a read
      // of a past position or of the world as a base looks for them.
      const seekMarks = !(l.top && at === head);
      let cursor = from;
      for (;;) {
        const hk = nextKey<HeadVersion>(heads, cursor, cap);
        const h = hk === undefined ? undefined : idInRecordKey(hk.key);
        const m = seekMarks ? nextMarked(l, cursor) : undefined;
        if (h === undefined && m === undefined) return undefined;
        const id = h === undefined ? (m as string) : m === undefined || better(h, m) || h === m ? h : m;
        if (id === h && (hk as KeyValue<HeadVersion>).value[0] <= l.hi) return id;
        const older = first(storage, { start: versionKey(l.id, twin, type, id, l.lo + 1), end: versionKey(l.id, twin, type, id, l.hi + 1) });
        if (older !== undefined) return id;
        cursor = id;
      }
    };
    const candidates = layers.map((l) => seek(l, undefined));
    let seen = 0;
    for (;;) {
      let best: string | undefined;
      for (const c of candidates) if (c !== undefined && (best === undefined || better(c, best))) best = c;
      if (best === undefined) return false;
      if (seen === max) return true;
      const value = this.recordAt(twin, type, best, at, head);
      if (value !== undefined) {
        visit(best, value);
        seen++;
      }
      candidates.forEach((c, i) => {
        if (c === best) candidates[i] = seek(layers[i] as Layer, best);
      });
    }
  }
}
