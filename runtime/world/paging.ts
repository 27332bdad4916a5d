/**
 * Pages of entries: a twin's log, the timeline (the twins' logs merged, newest first) and the
 * diff (a world's own entries since its base, oldest first), each cut at a limit and at about
 * PAGE_BYTES, with the cursors that resume them. Arguments are checked by World.
 */
import { KitError } from '../errors.js';
import { cutOf } from './engine.js';
import { msOf, type WorldReads } from './reads.js';
import { MAX_INSTANT_MS, formatInstant } from './time.js';
import type { Entry, TimelinePage, WorldDiff } from './types.js';
import { traceIdOf } from './validate.js';

/**
 * About how many bytes of entries one page of the log, timeline or diff holds. A page stops
 * before the entry that would take it past this (a first entry always fits), so a page of
 * GitHub pushes, each up to 8 MiB of objects, is not a limit's worth of them in one answer.
 */
export const PAGE_BYTES = 8 * 1024 * 1024;

type TimelineCursor = [ms: number, twin: string, position: number];

/** One twin's entries in a merge of several logs, with the next one read ahead. */
class EntryReader {
  private top: Entry | undefined;
  private done = false;
  constructor(
    readonly twin: string,
    private readonly entries: Iterator<Entry>,
  ) {}
  peek(): Entry | undefined {
    if (this.top === undefined && !this.done) {
      const r = this.entries.next();
      if (r.done === true) this.done = true;
      else this.top = r.value;
    }
    return this.top;
  }
  take(): Entry {
    const entry = this.peek() as Entry;
    this.top = undefined;
    return entry;
  }
}

/** Counts a page's entries against PAGE_BYTES, each as about the bytes its JSON takes. */
class PageBudget {
  private used = 0;
  private empty = true;
  admits(entry: Entry): boolean {
    const room = PAGE_BYTES - this.used;
    const size = jsonBytesUpTo(entry, room + 1);
    if (size > room && !this.empty) return false;
    this.used += size;
    this.empty = false;
    return true;
  }
}

/**
 * Roughly the length of `value` as JSON (strings and keys by their length), counted no further
 * than `cap`: the walk stops there, so sizing a large entry costs at most `cap` characters.
 */
function jsonBytesUpTo(value: unknown, cap: number): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && total < cap) {
    const v = stack.pop();
    if (typeof v === 'string') total += v.length + 2;
    else if (v === null || typeof v !== 'object') total += 8;
    else if (ArrayBuffer.isView(v)) total += v.byteLength * 2;
    else if (Array.isArray(v)) {
      total += 2 + v.length;
      for (const item of v) stack.push(item);
    } else {
      for (const key in v) {
        total += key.length + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return total;
}

function encodeCursor(c: TimelineCursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

/** A timeline's `before` or a diff's `after`, as its previous page's `next` wrote it. */
export function decodeCursor(s: unknown, param: 'before' | 'after'): TimelineCursor {
  const bad = (): KitError => new KitError('invalid_cursor', `${param} is a cursor from a previous page’s next`, { param });
  if (typeof s !== 'string' || s.length === 0 || s.length > 512 || !/^[A-Za-z0-9_-]+$/.test(s)) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 3) throw bad();
  const [ms, twin, position] = v as unknown[];
  if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0 || ms > MAX_INSTANT_MS) throw bad();
  if (typeof twin !== 'string' || twin.length > 64) throw bad();
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1) throw bad();
  return [ms, twin, position];
}

/** A page of a twin's log after `from` (≤ head); `next` is the `after` of the next page. */
export function logPage(reads: WorldReads, twin: string, from: number, limit: number, head: number): { entries: Entry[]; next: number | null } {
  const to = Math.min(head, from + limit);
  const entries: Entry[] = [];
  const page = new PageBudget();
  let last = from;
  for (const entry of reads.entriesForward(twin, from + 1, to, head)) {
    if (!page.admits(entry)) break;
    entries.push(entry);
    last = entry.position;
  }
  return { entries, next: last < head ? last : null };
}

/** The twins' logs merged, newest first by occurredAt, then twin, then position (newest first). */
export function timelinePage(reads: WorldReads, twins: string[], limit: number, trace: string | undefined, cursor: TimelineCursor | undefined): TimelinePage {
  // One descending reader per twin, starting just past the cursor.
  const readers = twins.map((twin) => {
    const head = reads.head(twin);
    const layers = reads.layers(twin, head);
    let next = head;
    if (cursor !== undefined) {
      const [ms, ctwin, cpos] = cursor;
      if (twin === ctwin) next = Math.min(head, cpos - 1);
      else if (twin > ctwin) next = reads.lastAtOrBefore(twin, ms, head, layers);
      else next = reads.lastAtOrBefore(twin, ms - 1, head, layers);
    }
    return new EntryReader(twin, trace === undefined ? reads.entriesBackward(twin, next) : reads.traceEntriesBackward(twin, trace, next));
  });

  const entries: TimelinePage['entries'] = [];
  const page = new PageBudget();
  let more = false;
  for (;;) {
    let best: EntryReader | undefined;
    let bestMs = -1;
    for (const r of readers) {
      const top = r.peek();
      if (top === undefined) continue;
      const ms = msOf(top);
      // Readers are in twin order, so on a tie the first (smaller twin) is kept.
      if (ms > bestMs) {
        best = r;
        bestMs = ms;
      }
    }
    if (best === undefined) break;
    const entry = best.take();
    if (trace !== undefined && traceIdOf(entry.traceparent) !== trace) continue;
    if (entries.length === limit || !page.admits(entry)) {
      more = true;
      break;
    }
    entries.push({ twin: best.twin, position: entry.position, entry });
  }
  const last = entries[entries.length - 1];
  return { entries, next: more && last !== undefined ? encodeCursor([msOf(last.entry), last.twin, last.position]) : null };
}

/**
 * The world's own entries since its base (every entry of a world with none): oldest first by
 * occurredAt, then twin, then position, a page at a time; `next` is the `after` of the next.
 */
export function diffPage(reads: WorldReads, limit: number, cursor: TimelineCursor | undefined): WorldDiff {
  const b = reads.s.meta.base;
  // One ascending reader per twin, from its cut (or just past the cursor) to its head.
  const readers = [...reads.s.meta.twins].sort().map((twin) => {
    const head = reads.head(twin);
    let next = cutOf(b, twin) + 1;
    if (cursor !== undefined) {
      const [ms, ctwin, cpos] = cursor;
      // Past the cursor: at its instant, only the twins after its twin (and its own later positions).
      const layers = reads.layers(twin, head);
      const through = twin === ctwin ? cpos : reads.lastAtOrBefore(twin, twin < ctwin ? ms : ms - 1, head, layers);
      next = Math.max(next, through + 1);
    }
    return new EntryReader(twin, reads.entriesForward(twin, next, head, head));
  });
  const changes: WorldDiff['changes'] = [];
  const page = new PageBudget();
  let more = false;
  for (;;) {
    let best: EntryReader | undefined;
    let bestMs = Infinity;
    for (const r of readers) {
      const top = r.peek();
      // Readers are in twin order, so on a tie the first (smaller twin) is kept.
      if (top !== undefined && msOf(top) < bestMs) {
        best = r;
        bestMs = msOf(top);
      }
    }
    if (best === undefined) break;
    const entry = best.take();
    if (changes.length === limit || !page.admits(entry)) {
      more = true;
      break;
    }
    changes.push({ twin: best.twin, entry });
  }
  const last = changes[changes.length - 1];
  return {
    base: b === null ? { id: null, at: null } : { id: b.world, at: formatInstant(b.at) },
    changes,
    next: more && last !== undefined ? encodeCursor([msOf(last.entry), last.twin, last.entry.position]) : null,
  };
}
