/**
 * A world's write path: entries appended to a twin's log with their record versions, head
 * keys, deletion marks, counts, trace index and id bounds in one transaction, and the world's
 * metadata saved. Arguments are checked by World before they get here.
 */
import { compareStrings } from '../store/keys.js';
import { first, type HeadVersion, type WorldMeta } from './engine.js';
import { boundsKey, countKey, deletionKey, headKey, headPrefix, idInRecordKey, logKey, metaKey, prefixEnd, traceKey, versionKey } from './keys.js';
import type { WorldReads } from './reads.js';
import { formatInstant, parseInstant } from './time.js';
import type { Entry, EntryDraft } from './types.js';
import { traceIdOf } from './validate.js';

/** One world's writes (the reads of the same world answer what they need to know). */
export class WorldWrites {
  constructor(private readonly r: WorldReads) {}

  /**
   * Appends checked drafts to a twin's log in one transaction: all or none. Each gets its own
   * position and stamp (its `occurredAt`, or now, never before the twin's newest entry).
   */
  appendBatch(twin: string, checked: EntryDraft[]): Entry[] {
    const { e, s } = this.r;
    const head = this.r.head(twin);
    let newest = this.r.newestMs(twin);
    const now = this.r.nowMs();
    // Everything is computed from committed state before the transaction (this store is the
    // only writer), with the batch's own earlier writes layered on top.
    const id = s.meta.id;
    const storage = e.storage;
    // Each record written so far in the batch: its newest own version (null: none), by type, then id.
    const latest = new Map<string, Map<string, HeadVersion | null>>();
    // Versions the batch supersedes: their version keys are written now (see the key layout).
    const superseded: [type: string, rid: string, position: number, value: unknown][] = [];
    const counts = new Map<string, number>();
    const entries: Entry[] = [];
    const countWrites: [string, number, number][] = [];
    checked.forEach((d, i) => {
      const position = head + 1 + i;
      let at: number;
      if (d.occurredAt !== undefined) {
        at = parseInstant(d.occurredAt);
        if (at < newest) {
          throw new TypeError(`occurredAt ${d.occurredAt} is earlier than ${twin}'s newest entry (${formatInstant(newest)})`);
        }
      } else {
        // Never stamp before the newest entry: positions stay monotone in time even if the
        // wall clock steps back, which is what history cuts' binary search relies on.
        at = Math.max(now, newest);
      }
      newest = at;
      const entry: Entry = { position, occurredAt: formatInstant(at), cause: d.cause, writes: d.writes };
      if (d.events !== undefined) entry.events = d.events;
      if (d.traceparent !== undefined) entry.traceparent = d.traceparent;
      entries.push(entry);
      const delta = new Map<string, number>();
      for (const w of d.writes) {
        let ofType = latest.get(w.type);
        if (ofType === undefined) latest.set(w.type, (ofType = new Map()));
        let own = ofType.get(w.id);
        if (own === undefined) own = this.beyondOwnHeads(twin, w.type, w.id) ? null : (storage.get<HeadVersion>(headKey(id, twin, w.type, w.id)) ?? null);
        // Without an own version, a branch's record is its base's as of the cut.
        const before = own !== null ? own[1] !== null : s.meta.base !== null && this.r.recordAt(twin, w.type, w.id, head, head) !== undefined;
        if (own !== null && own[0] < position) superseded.push([w.type, w.id, own[0], own[1]]);
        ofType.set(w.id, [position, w.value]);
        const after = w.value !== null;
        if (before !== after) delta.set(w.type, (delta.get(w.type) ?? 0) + (after ? 1 : -1));
      }
      for (const [type, n] of delta) {
        if (n === 0) continue;
        const count = (counts.get(type) ?? this.r.countAt(twin, type, head)) + n;
        counts.set(type, count);
        countWrites.push([type, position, count]);
      }
    });

    // A deletion drops the head key (a version key and a mark keep it for past reads) unless it
    // must mask a record the base shows at the cut: then a branch keeps a null head key. So a
    // branch's own records that come and go (its scheduled moves) leave no head keys to step over.
    const masks = s.meta.base === null ? undefined : new Set<string>();
    if (masks !== undefined) {
      const baseLayers = this.r.layers(twin, head).filter((l) => !l.top);
      for (const entry of entries) {
        for (const w of entry.writes) {
          if (w.value === null && this.r.valueIn(baseLayers, twin, w.type, w.id, head, head) !== undefined) masks.add(`${w.type}\u0000${w.id}`);
        }
      }
    }
    // After boundsEvery writes since the last note: the bounds as of this batch's last position
    // (the appends above raised them).
    let writes = s.writesSinceBounds.get(twin) ?? 0;
    for (const entry of entries) writes += entry.writes.length;
    const noted = head + entries.length;
    const bounds = writes >= e.boundsEvery ? this.r.ownIdBounds(twin) : undefined;
    storage.transact((tx) => {
      if (bounds !== undefined) tx.put(boundsKey(id, twin, noted), [...bounds]);
      for (const entry of entries) {
        // The entry and the head keys hold the same values: the storage may encode each once.
        const writes = entry.writes.map((w) => (w.value === null ? w : { type: w.type, id: w.id, value: tx.share(w.value) }));
        tx.put(logKey(id, twin, entry.position), { ...entry, writes });
        for (const w of writes) {
          if (w.value !== null || masks?.has(`${w.type}\u0000${w.id}`) === true) tx.put(headKey(id, twin, w.type, w.id), [entry.position, w.value]);
          else {
            tx.remove(headKey(id, twin, w.type, w.id));
            tx.put(versionKey(id, twin, w.type, w.id, entry.position), null);
            tx.put(deletionKey(id, twin, w.type, w.id), entry.position);
          }
        }
        const trace = traceIdOf(entry.traceparent);
        if (trace !== undefined) tx.put(traceKey(id, trace, twin, entry.position), null);
      }
      // After the entries: an entry that deletes a record and writes it again leaves a deletion's
      // null version key at its position, and a later entry of the batch supersedes the value it
      // ended with, which is the version as of that position.
      for (const [type, rid, position, value] of superseded) tx.put(versionKey(id, twin, type, rid, position), value);
      for (const [type, position, n] of countWrites) tx.put(countKey(id, twin, type, position), n);
    });
    s.writesSinceBounds.set(twin, writes >= e.boundsEvery ? 0 : writes);
    if (entries.length > 0) {
      s.heads.set(twin, head + entries.length);
      s.newest.set(twin, newest);
      const memo = this.r.headCounts(twin);
      for (const [type, n] of counts) memo.set(type, n);
    }
    return entries;
  }

  saveMeta(meta: WorldMeta): void {
    this.r.e.storage.transact((tx) => tx.put(metaKey(meta.id), meta));
    this.r.s.meta = meta;
  }

  /** Whether `rid` sorts after every own head key of the type (then it has none); raises the bound to it. */
  private beyondOwnHeads(twin: string, type: string, rid: string): boolean {
    const bounds = this.r.idBoundsOf(twin);
    let bound = bounds.get(type);
    if (bound === undefined) {
      const prefix = headPrefix(this.r.s.meta.id, twin, type);
      const last = first(this.r.e.storage, { start: prefix, end: prefixEnd(prefix), reverse: true });
      bound = last === undefined ? '' : idInRecordKey(last.key);
    }
    const beyond = compareStrings(rid, bound) > 0;
    if (beyond) bounds.set(type, rid);
    else if (!bounds.has(type)) bounds.set(type, bound);
    return beyond;
  }
}
