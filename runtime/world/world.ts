/**
 * The world engine: many worlds in one Storage, each with twins, a clock, one log per
 * twin, a versioned tree of records, history cuts and O(1) branches.
 *
 * Key layout (every key of a world starts with its storage id `w…`, never its name, so a
 * removed world's leftovers can be purged in the background without touching a new
 * world of the same name):
 *   ['#world', name]                  → id             the directory
 *   ['#seq']                          → n              last id allocated
 *   ['#trash', id]                    → null           a removed world still being purged
 *   ['#ttl', expiresAtMs, name]       → null           branches to sweep
 *   [id, '#meta']                     → WorldMeta      twins, clock, base
 *   [id, '#branch', name]             → BranchRecord   this world's branches
 *   [id, '#trace', traceId, twin, pos] → null          entries by W3C trace id (timeline filter)
 *   [id, twin, 'log', position]       → Entry
 *   [id, twin, 'rec', type, rid, pos] → value | null   a version this world has superseded, or
 *                                                      (null) a deletion at pos; a root world's
 *                                                      deletion key is written when it is made
 *   [id, twin, 'head', type, rid]     → [pos, value]   newest own version (null: a branch's deletion
 *                                                      of a record its base shows): reads at head and
 *                                                      checkpoints at head are one lookup, whatever
 *                                                      the log's length
 *   [id, twin, 'del', type, rid]      → pos            the world's last deletion of the record
 *   [id, twin, 'count', type, pos]    → n              count of live records of the type as of pos
 *   [id, twin, 'bounds', pos]         → [type, rid][]  by type, an id at or above every id the world
 *                                                      had written by pos: noted after every 1,024
 *                                                      writes, so walks at past positions stop there
 * A record's newest own version is in its head key alone, so a new record costs one key; its
 * version key is written when a later write supersedes it. Deleting a record removes its head
 * key and writes its deletion as a version key and a deletion mark, so the head keys of a type
 * are its live records: a list at head walks those, not every record the type ever had (a
 * queue whose items come and go, a twin's scheduled moves, stays as cheap to read as it is
 * short). Read as a branch's base, or at a past position, a record with no head key is looked
 * up among the version keys only when it has a mark, and a walk takes the marked ids beside
 * the head keys. The one exception: a branch deleting a record its base shows at the cut keeps
 * the deletion in the head key, with a null value, which masks the base's record in one
 * lookup. The version as of pos is the head's when the head's position is ≤ pos, else the
 * last version key ≤ pos; a world with no head key and no mark for the record never wrote it.
 * Worlds written before this kept deletions in head keys (branches every deletion, root worlds
 * before that too), and before that the newest version under 'rec' as well; the same reads
 * serve all of them.
 * Counts are versioned (one key per position that changed them), unlike the single
 * `[w, t, 'count', type]` first sketched in runtime/README.md: a count as of any position,
 * and a branch's count as of its cut, are then one ordered-key lookup.
 *
 * A branch has its own id and a base (parent id, cut position per twin). Its own keys hold
 * positions above the cut; reads at or below the cut fall through to the parent, recursively.
 *
 * One WorldStore per Storage: it caches world metadata, heads and the counts at heads, and is
 * the only writer.
 */
import { randomBytes } from 'node:crypto';
import { KitError } from '../errors.js';
import { compareStrings, partAfter, prefixEnd } from '../store/keys.js';
import type { Key, KeyValue, RangeOptions, Storage } from '../store/types.js';
import { canonicalJson } from './canonical.js';
import { idSource, type IdSource } from './ids.js';
import { formatInstant, MAX_INSTANT_MS, parseDuration, parseInstant } from './time.js';
import type {
  BranchOptions,
  BranchRecord,
  ClockState,
  DiffQuery,
  Entry,
  EntryDraft,
  HistoryCut,
  RecordListOptions,
  RecordPage,
  TimelinePage,
  TimelineQuery,
  WorldDiff,
  WorldMap,
} from './types.js';
import {
  checkDraft,
  checkLabel,
  checkLimit,
  checkPosition,
  checkRecordId,
  isRecordId,
  checkRecordType,
  checkTraceId,
  checkTtl,
  checkTwinName,
  checkWorldName,
  traceIdOf,
} from './validate.js';

/** Checkpoints larger than this are refused (spec: Limits). */
export const CHECKPOINT_LIMIT_BYTES = 24 * 1024 * 1024;

interface BaseMeta {
  world: string;
  worldId: string;
  at: number;
  positions: Record<string, number>;
  /**
   * By twin, then type: an id at or above every record id among the base's own keys (head
   * keys and deletion marks) when the branch was made. No id the base wrote at or below the
   * cut sorts above it, so a walk of the base's layer stops there, and never steps over the
   * records the base made after the cut (with ordered ids, every one of them). A type
   * missing from a twin's map: the base had none. A twin missing (branches made before this,
   * or a twin with more than MAX_BOUNDED_TYPES types): no bound. Pairs, not objects: a type
   * may be any string, `__proto__` included.
   */
  ids?: [twin: string, bounds: [type: string, id: string][]][];
}

/** BaseMeta.ids as maps, made once per meta. */
const baseIdMaps = new WeakMap<BaseMeta, Map<string, Map<string, string>>>();

/** A twin's id bounds in a branch's base (BaseMeta.ids); undefined: unbounded. */
function baseIdBounds(base: BaseMeta, twin: string): Map<string, string> | undefined {
  if (base.ids === undefined) return undefined;
  let byTwin = baseIdMaps.get(base);
  if (byTwin === undefined) baseIdMaps.set(base, (byTwin = new Map(base.ids.map(([t, bounds]) => [t, new Map(bounds)]))));
  return byTwin.get(twin);
}

/** A branch records id bounds for a twin of at most this many types (branching stays cheap). */
const MAX_BOUNDED_TYPES = 256;

/**
 * After this many record writes, appendBatch notes a twin's id bounds (`[w, t, 'bounds', pos]`),
 * so that a walk at a past position stops at the ids the world had by then, give or take this
 * many writes (or one entry's, when bigger): a checkpoint or list of an early position does not
 * step over every record made after it.
 */
const BOUNDS_EVERY = 1024;

interface WorldMeta {
  v: 1;
  id: string;
  name: string;
  twins: string[];
  /** Epoch ms when the clock is set; null: the wall clock. */
  clock: number | null;
  /** A live branch follows its parent's clock until its own is set. */
  live: boolean;
  base: BaseMeta | null;
  createdAt: number;
}

interface State {
  meta: WorldMeta;
  removed: boolean;
  heads: Map<string, number>;
  /** occurredAt (ms) of each twin's newest entry. */
  newest: Map<string, number>;
  /**
   * Live record counts at each twin's head, by type, filled as they are read. Only this
   * world's own appends move its head, so appendBatch keeps them right; a branch's or a
   * parent's appends touch neither the other's head nor its counts.
   */
  counts: Map<string, Map<string, number>>;
  /**
   * By twin, then type: an id at or after (key order) every own head key's id of the type,
   * read once and raised by each write. A write of an id beyond it (a create with an ordered
   * id) is of a record with no own version, so appendBatch need not look for its head key.
   * Once ownIdBounds has read a twin's deletion marks too (idBoundsRead), they bound every id
   * the world wrote, which a branch notes as its base's bounds (BaseMeta.ids). Only
   * appendBatch adds head keys and marks; a removal leaves this higher than need be, never lower.
   */
  idBounds: Map<string, Map<string, string>>;
  /** Twins whose every type is in idBounds (read once, for the first branch), or past MAX_BOUNDED_TYPES. */
  idBoundsRead: Map<string, 'all' | 'too many'>;
  /** By twin: record writes appended since its id bounds were last noted (or the world opened). */
  writesSinceBounds: Map<string, number>;
}

/** The head index's value: the newest own version's position and value (null: deleted). */
type HeadVersion = [position: number, value: unknown];

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

function first<V>(storage: Storage, options: RangeOptions): KeyValue<V> | undefined {
  for (const kv of storage.range<V>({ ...options, limit: 1 })) return kv;
  return undefined;
}

/** A key above every key `[...prefix, part, …]` and below the next part's (keys.ts, `partAfter`). */
function after(prefix: Key, part: string): Key {
  return [...prefix, partAfter(part)];
}

const msOf = (entry: Entry): number => Date.parse(entry.occurredAt);

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

/** A twin's cut in a branch's base; 0 for a twin the base did not have (own properties only). */
function cutOf(base: BaseMeta | null, twin: string): number {
  return base !== null && Object.hasOwn(base.positions, twin) ? (base.positions[twin] as number) : 0;
}

/** The shared machinery behind WorldStore and its World objects. */
class Engine {
  private readonly byId = new Map<string, State>();
  private readonly byName = new Map<string, State>();
  private readonly worlds = new Map<State, World>();
  readonly purges = new Set<Promise<void>>();
  /** By `<world id>\0<twin>\0<position>`: the first bounds record at or after the position (they never change once written). */
  private readonly boundsRecords = new Map<string, Map<string, string>>();

  constructor(
    readonly storage: Storage,
    readonly now: () => number,
    readonly boundsEvery: number,
  ) {}

  /**
   * The id bounds a world first noted at or after `position` (an id at or above every id it had
   * written by then, so by `position`); undefined when it has noted none since.
   */
  boundsRecordAt(worldId: string, twin: string, position: number): Map<string, string> | undefined {
    const at = `${worldId}\u0000${twin}\u0000${position}`;
    let bounds = this.boundsRecords.get(at);
    if (bounds !== undefined) return bounds;
    const prefix: Key = [worldId, twin, 'bounds'];
    const kv = first<[string, string][]>(this.storage, { start: [...prefix, position], end: prefixEnd(prefix) });
    if (kv === undefined) return undefined;
    bounds = new Map(kv.value);
    if (this.boundsRecords.size >= 4096) this.boundsRecords.clear();
    this.boundsRecords.set(at, bounds);
    return bounds;
  }

  state(name: string): State | undefined {
    const cached = this.byName.get(name);
    if (cached !== undefined) return cached;
    const id = this.storage.get<string>(['#world', name]);
    return id === undefined ? undefined : this.stateById(id);
  }

  stateById(id: string): State {
    const cached = this.byId.get(id);
    if (cached !== undefined) return cached;
    const meta = this.storage.get<WorldMeta>([id, '#meta']);
    if (meta === undefined) throw new KitError('internal', `world ${id} has no metadata`);
    const state: State = { meta, removed: false, heads: new Map(), newest: new Map(), counts: new Map(), idBounds: new Map(), idBoundsRead: new Map(), writesSinceBounds: new Map() };
    this.byId.set(id, state);
    this.byName.set(meta.name, state);
    return state;
  }

  world(state: State): World {
    let w = this.worlds.get(state);
    if (w === undefined) {
      w = new World(this, state);
      this.worlds.set(state, w);
    }
    return w;
  }

  exists(name: string): boolean {
    return this.state(name) !== undefined;
  }

  create(name: string, twins: string[], extra: { clock: number | null; live: boolean; base: BaseMeta | null }, alsoWrite?: (put: (key: Key, value: unknown) => void) => void): State {
    const seq = (this.storage.get<number>(['#seq']) ?? 0) + 1;
    const meta: WorldMeta = { v: 1, id: `w${seq.toString(36)}`, name, twins, createdAt: this.now(), ...extra };
    this.storage.transact((tx) => {
      tx.put(['#seq'], seq);
      tx.put(['#world', name], meta.id);
      tx.put([meta.id, '#meta'], meta);
      alsoWrite?.((key, value) => tx.put(key, value));
    });
    return this.stateById(meta.id);
  }

  hasBranches(state: State): boolean {
    const prefix: Key = [state.meta.id, '#branch'];
    return first(this.storage, { start: prefix, end: prefixEnd(prefix) }) !== undefined;
  }

  branchRecords(state: State): BranchRecord[] {
    const prefix: Key = [state.meta.id, '#branch'];
    return [...this.storage.range<BranchRecord>({ start: prefix, end: prefixEnd(prefix) })].map((kv) => kv.value);
  }

  /** Takes a world out of the directory at once (atomically); its keys are purged after. */
  remove(state: State): Promise<void> {
    if (this.hasBranches(state)) {
      throw new KitError('world_has_branches', `world ${state.meta.name} has branches; remove them first`);
    }
    const { id, name, base } = state.meta;
    const record = base === null ? undefined : this.storage.get<BranchRecord>([base.worldId, '#branch', name]);
    this.storage.transact((tx) => {
      tx.remove(['#world', name]);
      tx.put(['#trash', id], null);
      if (base !== null) tx.remove([base.worldId, '#branch', name]);
      if (record?.expiresAt) tx.remove(['#ttl', Date.parse(record.expiresAt), name]);
    });
    state.removed = true;
    this.byId.delete(id);
    this.byName.delete(name);
    this.worlds.delete(state);
    return this.purge(id);
  }

  /** Deletes a removed world's keys in batches, yielding between them; resumed on the next open. */
  purge(id: string): Promise<void> {
    const storage = this.storage;
    const run = async (): Promise<void> => {
      const start: Key = [id];
      const end = prefixEnd(start);
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        if (!storage.alive) return;
        const keys = [...storage.range({ start, end, limit: 2000 })].map((kv) => kv.key);
        if (keys.length === 0) {
          storage.transact((tx) => tx.remove(['#trash', id]));
          return;
        }
        storage.transact((tx) => {
          for (const key of keys) tx.remove(key);
        });
      }
    };
    // A storage closed mid-purge leaves the '#trash' marker: the next WorldStore resumes.
    const p = run().catch(() => undefined);
    this.purges.add(p);
    void p.finally(() => this.purges.delete(p));
    return p;
  }
}

/** Many worlds in one Storage. */
export class WorldStore {
  private readonly engine: Engine;

  /** `boundsEvery`: after how many record writes a twin's id bounds are noted (default 1,024; tests use fewer). */
  constructor(storage: Storage, options: { now?: () => number; boundsEvery?: number } = {}) {
    this.engine = new Engine(storage, options.now ?? Date.now, options.boundsEvery ?? BOUNDS_EVERY);
    const trash = [...storage.range({ start: ['#trash'], end: prefixEnd(['#trash']) })];
    for (const { key } of trash) this.engine.purge(key[1] as string);
  }

  createWorld(name: string, options: { twins: string[] }): World {
    checkWorldName(name);
    if (typeof options !== 'object' || options === null || !Array.isArray(options.twins)) {
      throw new KitError('bad_request', 'twins is an array of twin names', { param: 'twins' });
    }
    const twins = [...new Set(options.twins.map(checkTwinName))];
    if (this.engine.exists(name)) throw new KitError('world_exists', `world ${name} exists`);
    return this.engine.world(this.engine.create(name, twins, { clock: null, live: false, base: null }));
  }

  openWorld(name: string): World {
    const state = typeof name === 'string' ? this.engine.state(name) : undefined;
    if (state === undefined) throw new KitError('unknown_world', `no world ${String(name)}`);
    return this.engine.world(state);
  }

  hasWorld(name: string): boolean {
    return typeof name === 'string' && this.engine.exists(name);
  }

  listWorlds(): string[] {
    const prefix: Key = ['#world'];
    return [...this.engine.storage.range({ start: prefix, end: prefixEnd(prefix) })].map((kv) => kv.key[1] as string);
  }

  /** Removes a world and, in the background, its records. world_has_branches if it has any. */
  removeWorld(name: string): Promise<void> {
    const state = typeof name === 'string' ? this.engine.state(name) : undefined;
    if (state === undefined) return Promise.reject(new KitError('unknown_world', `no world ${String(name)}`));
    try {
      return this.engine.remove(state);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Removes every branch whose ttl has passed (by the wall clock), with the branches made
   * from it (they cannot outlive their base). Returns the names removed, children first.
   */
  sweepExpiredBranches(): string[] {
    const e = this.engine;
    const prefix: Key = ['#ttl'];
    const due = [...e.storage.range({ start: prefix, end: [prefix[0] as string, e.now() + 1] })];
    const removed: string[] = [];
    const removeTree = (state: State): void => {
      for (const child of e.branchRecords(state)) {
        const cs = e.state(child.name);
        if (cs !== undefined) removeTree(cs);
      }
      void e.remove(state);
      removed.push(state.meta.name);
    };
    for (const { key } of due) {
      const state = e.state(key[2] as string);
      if (state === undefined) e.storage.transact((tx) => tx.remove(key));
      else removeTree(state);
    }
    return removed;
  }

  /** Resolves when background purges of removed worlds have finished. */
  async idle(): Promise<void> {
    while (this.engine.purges.size > 0) await Promise.all([...this.engine.purges]);
  }
}

/** A world: twins, one clock, one log per twin, the tree, history and branches. */
export class World {
  /** @internal Worlds come from WorldStore. */
  constructor(
    private readonly e: Engine,
    private readonly s: State,
  ) {}

  get name(): string {
    return this.s.meta.name;
  }

  twins(): string[] {
    this.alive();
    return [...this.s.meta.twins];
  }

  /** Adds a twin with an empty log (no-op when the world has it). */
  addTwin(twin: string): void {
    this.alive();
    checkTwinName(twin);
    if (this.s.meta.twins.includes(twin)) return;
    this.saveMeta({ ...this.s.meta, twins: [...this.s.meta.twins, twin] });
  }

  // ---- clock

  clock(): ClockState {
    this.alive();
    const set = this.setClockMs();
    return { at: formatInstant(set ?? this.e.now()), frozen: set !== null };
  }

  /** The instant entries are stamped with now. */
  nowMs(): number {
    this.alive();
    return this.setClockMs() ?? this.e.now();
  }

  /**
   * The instant a twin's next entry is stamped with: now, or its newest entry's instant if the
   * wall clock has stepped back since. A twin handed this sees time stand still rather than
   * run back, as its log does (the Stripe twin lists events from the newest `created` down).
   */
  stampMs(twin: string): number {
    return Math.max(this.nowMs(), this.newestMs(twin));
  }

  setClock(at: string): ClockState {
    this.alive();
    const ms = parseInstant(at);
    const current = this.setClockMs();
    if (current !== null && ms < current) {
      throw new KitError('clock_backward', `the clock is at ${formatInstant(current)}; it does not move back`, { param: 'at' });
    }
    const newest = Math.max(0, ...this.s.meta.twins.map((t) => this.newestMs(t)));
    if (ms < newest) {
      throw new KitError('clock_backward', `the newest entry is at ${formatInstant(newest)}; the clock does not move before it`, { param: 'at' });
    }
    this.saveMeta({ ...this.s.meta, clock: ms, live: false });
    return this.clock();
  }

  advanceClock(by: string): ClockState {
    this.alive();
    const ms = parseDuration(by);
    const current = this.setClockMs();
    if (current === null) throw new KitError('clock_unset', 'the clock is unset (wall clock); set it before advancing');
    if (current + ms > MAX_INSTANT_MS) throw new KitError('invalid_duration', 'that moves the clock past 9999-12-31', { param: 'by' });
    this.saveMeta({ ...this.s.meta, clock: current + ms, live: false });
    return this.clock();
  }

  // ---- log

  /** Appends one entry to a twin's log in one transaction: entry, record versions, head index, counts. */
  append(twin: string, draft: EntryDraft): Entry {
    return this.appendBatch(twin, [draft])[0] as Entry;
  }

  /**
   * Appends several entries to one twin's log in one transaction: all or none (a pushed
   * changeset, or a bulk load). Each gets its own position and stamp, as `append` would.
   */
  appendBatch(twin: string, drafts: EntryDraft[]): Entry[] {
    this.alive();
    this.twinOf(twin);
    if (!Array.isArray(drafts)) throw new KitError('bad_request', 'drafts is an array', { param: 'drafts' });
    const checked = drafts.map(checkDraft);
    const head = this.head(twin);
    let newest = this.newestMs(twin);
    const now = this.nowMs();
    // Everything is computed from committed state before the transaction (this store is the
    // only writer), with the batch's own earlier writes layered on top.
    const id = this.s.meta.id;
    const storage = this.e.storage;
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
        if (own === undefined) own = this.beyondOwnHeads(twin, w.type, w.id) ? null : (storage.get<HeadVersion>([id, twin, 'head', w.type, w.id]) ?? null);
        // Without an own version, a branch's record is its base's as of the cut.
        const before = own !== null ? own[1] !== null : this.s.meta.base !== null && this.recordAt(twin, w.type, w.id, head, head) !== undefined;
        if (own !== null && own[0] < position) superseded.push([w.type, w.id, own[0], own[1]]);
        ofType.set(w.id, [position, w.value]);
        const after = w.value !== null;
        if (before !== after) delta.set(w.type, (delta.get(w.type) ?? 0) + (after ? 1 : -1));
      }
      for (const [type, n] of delta) {
        if (n === 0) continue;
        const count = (counts.get(type) ?? this.countAt(twin, type, head)) + n;
        counts.set(type, count);
        countWrites.push([type, position, count]);
      }
    });

    // A deletion drops the head key (a version key and a mark keep it for past reads) unless it
    // must mask a record the base shows at the cut: then a branch keeps a null head key. So a
    // branch's own records that come and go (its scheduled moves) leave no head keys to step over.
    const masks = this.s.meta.base === null ? undefined : new Set<string>();
    if (masks !== undefined) {
      const baseLayers = this.layers(twin, head).filter((l) => !l.top);
      for (const entry of entries) {
        for (const w of entry.writes) {
          if (w.value === null && this.valueIn(baseLayers, twin, w.type, w.id, head, head) !== undefined) masks.add(`${w.type}\u0000${w.id}`);
        }
      }
    }
    // After boundsEvery writes since the last note: the bounds as of this batch's last position
    // (the appends above raised them).
    let writes = this.s.writesSinceBounds.get(twin) ?? 0;
    for (const entry of entries) writes += entry.writes.length;
    const noted = head + entries.length;
    const bounds = writes >= this.e.boundsEvery ? this.ownIdBounds(twin) : undefined;
    storage.transact((tx) => {
      if (bounds !== undefined) tx.put([id, twin, 'bounds', noted], [...bounds]);
      for (const entry of entries) {
        // The entry and the head keys hold the same values: the storage may encode each once.
        const writes = entry.writes.map((w) => (w.value === null ? w : { type: w.type, id: w.id, value: tx.share(w.value) }));
        tx.put([id, twin, 'log', entry.position], { ...entry, writes });
        for (const w of writes) {
          if (w.value !== null || masks?.has(`${w.type}\u0000${w.id}`) === true) tx.put([id, twin, 'head', w.type, w.id], [entry.position, w.value]);
          else {
            tx.remove([id, twin, 'head', w.type, w.id]);
            tx.put([id, twin, 'rec', w.type, w.id, entry.position], null);
            tx.put([id, twin, 'del', w.type, w.id], entry.position);
          }
        }
        const trace = traceIdOf(entry.traceparent);
        if (trace !== undefined) tx.put([id, '#trace', trace, twin, entry.position], null);
      }
      // After the entries: an entry that deletes a record and writes it again leaves a deletion's
      // null version key at its position, and a later entry of the batch supersedes the value it
      // ended with, which is the version as of that position.
      for (const [type, rid, position, value] of superseded) tx.put([id, twin, 'rec', type, rid, position], value);
      for (const [type, position, n] of countWrites) tx.put([id, twin, 'count', type, position], n);
    });
    this.s.writesSinceBounds.set(twin, writes >= this.e.boundsEvery ? 0 : writes);
    if (entries.length > 0) {
      this.s.heads.set(twin, head + entries.length);
      this.s.newest.set(twin, newest);
      const memo = this.headCounts(twin);
      for (const [type, n] of counts) memo.set(type, n);
    }
    return entries;
  }

  /** Resolves once every entry appended so far is on disk (shared group commit). */
  durable(): Promise<void> {
    return this.e.storage.durable();
  }

  /** The twin's last position, 0 when its log is empty. */
  head(twin: string): number {
    this.alive();
    this.twinOf(twin);
    const cached = this.s.heads.get(twin);
    if (cached !== undefined) return cached;
    const prefix: Key = [this.s.meta.id, twin, 'log'];
    const last = first(this.e.storage, { start: prefix, end: prefixEnd(prefix), reverse: true });
    const head = last !== undefined ? (last.key[3] as number) : cutOf(this.s.meta.base, twin);
    this.s.heads.set(twin, head);
    return head;
  }

  /** The entry at a position; undefined at 0 or beyond the head. */
  entry(twin: string, position: number): Entry | undefined {
    const head = this.head(twin);
    checkPosition(position, 'position');
    if (position === 0 || position > head) return undefined;
    return this.entryAt(twin, position, this.layers(twin, head));
  }

  /** A page of the twin's log after a position; `next` is the `after` of the next page. */
  log(twin: string, options: { after?: number; limit?: number } = {}): { entries: Entry[]; next: number | null } {
    options = options ?? {};
    const head = this.head(twin);
    const from = options.after === undefined ? 0 : checkPosition(options.after, 'after');
    const limit = checkLimit(options.limit, 100, 1000);
    this.notBeyond(from, head);
    const to = Math.min(head, from + limit);
    const entries: Entry[] = [];
    const page = new PageBudget();
    let last = from;
    for (const entry of this.entriesForward(twin, from + 1, to, head)) {
      if (!page.admits(entry)) break;
      entries.push(entry);
      last = entry.position;
    }
    return { entries, next: last < head ? last : null };
  }

  /** The twins' logs merged, newest first by occurredAt, then twin, then position (newest first). */
  timeline(query: TimelineQuery = {}): TimelinePage {
    this.alive();
    query = query ?? {};
    const limit = checkLimit(query.limit, 50, 500);
    const trace = query.trace === undefined ? undefined : checkTraceId(query.trace);
    const twins = query.twin === undefined ? [...this.s.meta.twins].sort() : [this.twinOf(query.twin)];
    const cursor = query.before === undefined ? undefined : decodeCursor(query.before, 'before');

    // One descending reader per twin, starting just past the cursor.
    const readers = twins.map((twin) => {
      const head = this.head(twin);
      const layers = this.layers(twin, head);
      let next = head;
      if (cursor !== undefined) {
        const [ms, ctwin, cpos] = cursor;
        if (twin === ctwin) next = Math.min(head, cpos - 1);
        else if (twin > ctwin) next = this.lastAtOrBefore(twin, ms, head, layers);
        else next = this.lastAtOrBefore(twin, ms - 1, head, layers);
      }
      return new EntryReader(twin, trace === undefined ? this.entriesBackward(twin, next) : this.traceEntriesBackward(twin, trace, next));
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

  // ---- tree

  getRecord<V>(twin: string, type: string, id: string, at?: number): V | undefined {
    const head = this.head(twin);
    checkRecordType(type);
    // An id no record can have (empty, or over MAX_ID_BYTES) is simply not there: it usually
    // comes from a request (a path, a `starting_after`), and the twin answers its own 404.
    if (typeof id === 'string' && !isRecordId(id)) return undefined;
    checkRecordId(id);
    const pos = this.positionArg(at, head);
    return this.recordAt(twin, type, id, pos, head) as V | undefined;
  }

  /** Records of a type in id order (descending with `reverse`), between the `after` and `before` ids. */
  listRecords<V>(twin: string, type: string, options: RecordListOptions & { reverse?: boolean } = {}): RecordPage<V> {
    options = options ?? {};
    const head = this.head(twin);
    checkRecordType(type);
    const pos = this.positionArg(options.at, head);
    const limit = checkLimit(options.limit, 100, 1000);
    const bounds = {
      after: options.after === undefined ? undefined : cursorId(options.after, 'after'),
      before: options.before === undefined ? undefined : cursorId(options.before, 'before'),
    };
    const records: { id: string; value: V }[] = [];
    const layers = this.layers(twin, pos);
    const only = layers[0];
    if (layers.length === 1 && only !== undefined && only.top && pos === head) {
      // The common case, a root world at head: one ordered pass over the type's head keys,
      // which hold each record's newest value (a deleted one's is null), instead of a seek and
      // a read per record.
      const prefix: Key = [only.id, twin, 'head', type];
      const range: RangeOptions = {
        start: bounds.after === undefined ? prefix : after(prefix, bounds.after),
        end: bounds.before === undefined ? prefixEnd(prefix) : [...prefix, bounds.before],
        reverse: options.reverse === true,
      };
      for (const { key, value } of this.e.storage.range<HeadVersion>(range)) {
        const v = value[1];
        if (v === null || v === undefined) continue;
        records.push({ id: key[4] as string, value: v as V });
        if (records.length > limit) break;
      }
      return { records: records.slice(0, limit), hasMore: records.length > limit };
    }
    const hasMore = this.scanRecords(twin, type, pos, head, bounds, options.reverse === true, limit + 1, (id, value) => {
      records.push({ id, value: value as V });
    });
    return { records: records.slice(0, limit), hasMore: hasMore || records.length > limit };
  }

  countRecords(twin: string, type: string, at?: number): number {
    const head = this.head(twin);
    checkRecordType(type);
    return this.countAt(twin, type, this.positionArg(at, head));
  }

  /** Live record counts by type at head, types sorted. */
  counts(twin: string): { type: string; count: number }[] {
    const head = this.head(twin);
    const out: { type: string; count: number }[] = [];
    for (const type of this.typesAt(twin, head)) {
      const count = this.countAt(twin, type, head);
      if (count > 0) out.push({ type, count });
    }
    return out;
  }

  /**
   * The twin's tree at a position (head by default) as deterministic JSON bytes:
   * `{"position":…,"records":{type:{id:value}},"twin":…}`, keys sorted at every level.
   * Costs what the state costs, not what the log's length costs. `redact` may replace a
   * record's value (runner/secrets.ts: a read-only caller's view).
   */
  checkpoint(twin: string, at?: number, redact?: (type: string, value: unknown) => unknown): Uint8Array {
    const head = this.head(twin);
    const pos = this.positionArg(at, head);
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
      const prefix: Key = [only.id, twin, 'head'];
      for (const { key, value } of this.e.storage.range<HeadVersion>({ start: prefix, end: prefixEnd(prefix) })) {
        const v = value[1];
        if (v !== null && v !== undefined) add(key[3] as string, key[4] as string, v);
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

  // ---- history

  /** For each twin, the last position whose occurredAt ≤ the instant (binary search). */
  historyCut(instant: string): HistoryCut {
    this.alive();
    const ms = parseInstant(instant);
    const views: HistoryCut['views'] = {};
    for (const twin of this.s.meta.twins) {
      const head = this.head(twin);
      const position = this.lastAtOrBefore(twin, ms, head, this.layers(twin, head));
      views[twin] = { view: `${this.name}@${twin}:${position}`, position };
    }
    return { views };
  }

  /** A new world on this world's history cut; copies nothing. */
  branch(options: BranchOptions = {}): { world: World; record: BranchRecord } {
    this.alive();
    if (typeof options !== 'object' || options === null) throw new KitError('bad_request', 'branch options are an object');
    const label = options.label === undefined ? undefined : checkLabel(options.label);
    const ttl = options.ttlSeconds === undefined ? undefined : checkTtl(options.ttlSeconds);
    if (options.live !== undefined && typeof options.live !== 'boolean') {
      throw new KitError('bad_request', 'live is true or false', { param: 'live' });
    }
    const live = options.live === true;
    if (live && options.at !== undefined) {
      throw new KitError('live_branch_needs_now', 'a live branch is a branch as of now: leave out at', { param: 'live' });
    }
    let atMs: number;
    const positions: Record<string, number> = {};
    if (options.at === undefined) {
      atMs = this.nowMs();
      for (const twin of this.s.meta.twins) positions[twin] = this.head(twin);
    } else {
      atMs = parseInstant(options.at);
      for (const [twin, v] of Object.entries(this.historyCut(options.at).views)) positions[twin] = v.position;
    }
    const name = this.branchName(label);
    const createdAt = this.e.now();
    const record: BranchRecord = {
      name,
      from: this.name,
      at: formatInstant(atMs),
      createdAt: formatInstant(createdAt),
      expiresAt: ttl === undefined ? null : formatInstant(createdAt + ttl * 1000),
    };
    const parentId = this.s.meta.id;
    const ids: NonNullable<BaseMeta['ids']> = [];
    for (const twin of this.s.meta.twins) {
      const bounds = this.ownIdBounds(twin);
      if (bounds !== undefined) ids.push([twin, [...bounds]]);
    }
    const state = this.e.create(
      name,
      [...this.s.meta.twins],
      { clock: live ? null : atMs, live, base: { world: this.name, worldId: parentId, at: atMs, positions, ids } },
      (put) => {
        put([parentId, '#branch', name], record);
        if (ttl !== undefined) put(['#ttl', createdAt + ttl * 1000, name], null);
      },
    );
    return { world: this.e.world(state), record };
  }

  branches(): BranchRecord[] {
    this.alive();
    return this.e.branchRecords(this.s);
  }

  /** Removes one of this world's branches (its records are purged in the background). */
  removeBranch(name: string): void {
    this.alive();
    const record = typeof name === 'string' ? this.e.storage.get<BranchRecord>([this.s.meta.id, '#branch', name]) : undefined;
    const state = record === undefined ? undefined : this.e.state(name);
    if (state === undefined) throw new KitError('unknown_branch', `${this.name} has no branch ${String(name)}`);
    void this.e.remove(state);
  }

  /** For a branch: the world and instant it was cut from, and the cut position per twin. */
  base(): { world: string; at: string; positions: Record<string, number> } | null {
    this.alive();
    const b = this.s.meta.base;
    return b === null ? null : { world: b.world, at: formatInstant(b.at), positions: { ...b.positions } };
  }

  /**
   * The world's own entries since its base (every entry of a world with none): oldest first by
   * occurredAt, then twin, then position, a page at a time; `next` is the `after` of the next.
   */
  diff(query: DiffQuery = {}): WorldDiff {
    this.alive();
    query = query ?? {};
    const limit = checkLimit(query.limit, 500, 1000);
    const cursor = query.after === undefined ? undefined : decodeCursor(query.after, 'after');
    const b = this.s.meta.base;
    // One ascending reader per twin, from its cut (or just past the cursor) to its head.
    const readers = [...this.s.meta.twins].sort().map((twin) => {
      const head = this.head(twin);
      let next = cutOf(b, twin) + 1;
      if (cursor !== undefined) {
        const [ms, ctwin, cpos] = cursor;
        // Past the cursor: at its instant, only the twins after its twin (and its own later positions).
        const layers = this.layers(twin, head);
        const through = twin === ctwin ? cpos : this.lastAtOrBefore(twin, twin < ctwin ? ms : ms - 1, head, layers);
        next = Math.max(next, through + 1);
      }
      return new EntryReader(twin, this.entriesForward(twin, next, head, head));
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

  map(): WorldMap {
    this.alive();
    return {
      twins: this.s.meta.twins.map((twin) => ({
        twin,
        position: this.head(twin),
        mirror: null,
        root: null,
        resources: this.counts(twin),
      })),
    };
  }

  /** The deterministic id source of the entry at (twin, position) in this world. */
  ids(twin: string, position: number): IdSource {
    this.alive();
    this.twinOf(twin);
    checkPosition(position, 'position');
    return idSource(this.name, twin, position);
  }

  // ---- internals

  private alive(): void {
    if (this.s.removed) throw new KitError('unknown_world', `world ${this.s.meta.name} was removed`);
  }

  private twinOf(twin: unknown): string {
    if (typeof twin !== 'string' || !this.s.meta.twins.includes(twin)) {
      throw new KitError('unknown_twin', `world ${this.name} has no twin ${typeof twin === 'string' ? twin : String(twin)}`, { param: 'twin' });
    }
    return twin;
  }

  private positionArg(at: unknown, head: number): number {
    if (at === undefined) return head;
    const pos = checkPosition(at);
    this.notBeyond(pos, head);
    return pos;
  }

  private notBeyond(pos: number, head: number): void {
    if (pos > head) throw new KitError('position_beyond_head', `position ${pos} is beyond the head (${head})`, { head });
  }

  private saveMeta(meta: WorldMeta): void {
    this.e.storage.transact((tx) => tx.put([meta.id, '#meta'], meta));
    this.s.meta = meta;
  }

  /** The set clock (ms), following the parent's for a live branch; null for the wall clock. */
  private setClockMs(): number | null {
    let s = this.s;
    while (s.meta.live && s.meta.base !== null) s = this.e.stateById(s.meta.base.worldId);
    return s.meta.clock;
  }

  private newestMs(twin: string): number {
    const cached = this.s.newest.get(twin);
    if (cached !== undefined) return cached;
    const head = this.head(twin);
    const entry = head === 0 ? undefined : this.entryAt(twin, head, this.layers(twin, head));
    const ms = entry === undefined ? 0 : msOf(entry);
    this.s.newest.set(twin, ms);
    return ms;
  }

  /** Where positions 1..at of a twin live: this world's keys, then its bases' (newest first). */
  private layers(twin: string, at: number): Layer[] {
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

  private entryAt(twin: string, position: number, layers: Layer[]): Entry | undefined {
    for (const l of layers) {
      if (position > l.lo && position <= l.hi) return this.e.storage.get<Entry>([l.id, twin, 'log', position]);
    }
    return undefined;
  }

  /** The last position ≤ head whose occurredAt ≤ ms, 0 when none: binary search. */
  private lastAtOrBefore(twin: string, ms: number, head: number, layers: Layer[]): number {
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
  private *entriesForward(twin: string, from: number, to: number, head: number): Generator<Entry> {
    if (from > to) return;
    for (const l of this.layers(twin, head).reverse()) {
      const lo = Math.max(l.lo + 1, from);
      const hi = Math.min(l.hi, to);
      if (lo > hi) continue;
      for (const kv of this.e.storage.range<Entry>({ start: [l.id, twin, 'log', lo], end: [l.id, twin, 'log', hi + 1] })) yield kv.value;
    }
  }

  /** Entries at positions from, from-1, …, descending, each read when asked for. */
  private *entriesBackward(twin: string, from: number): Generator<Entry> {
    for (const l of this.layers(twin, this.head(twin))) {
      const hi = Math.min(l.hi, from);
      if (hi <= l.lo) continue;
      for (const kv of this.e.storage.range<Entry>({ start: [l.id, twin, 'log', l.lo + 1], end: [l.id, twin, 'log', hi + 1], reverse: true })) yield kv.value;
    }
  }

  /** Entries of one trace at positions ≤ from, descending, from the trace index. */
  private *traceEntriesBackward(twin: string, trace: string, from: number): Generator<Entry> {
    const storage = this.e.storage;
    for (const l of this.layers(twin, this.head(twin))) {
      const hi = Math.min(l.hi, from);
      if (hi <= l.lo) continue;
      const prefix = [l.id, '#trace', trace, twin];
      for (const { key } of storage.range({ start: [...prefix, l.lo + 1], end: [...prefix, hi + 1], reverse: true })) {
        const entry = storage.get<Entry>([l.id, twin, 'log', key[4] as number]);
        if (entry !== undefined) yield entry;
      }
    }
  }

  /** A record's value as of `at` (undefined when absent or deleted). */
  private recordAt(twin: string, type: string, id: string, at: number, head: number): unknown {
    return this.valueIn(this.layers(twin, at), twin, type, id, at, head);
  }

  /** A record's value in `layers` (those of `at`, or the base's part of them). */
  private valueIn(layers: Layer[], twin: string, type: string, id: string, at: number, head: number): unknown {
    const storage = this.e.storage;
    for (const l of layers) {
      if (l.ids !== undefined && !withinIds(l.ids, type, id)) continue;
      // The layer's newest own version (a branch's masking deletion included: null).
      const version = storage.get<HeadVersion>([l.id, twin, 'head', type, id]);
      if (version !== undefined && version[0] <= l.hi) return version[1] ?? undefined;
      if (version === undefined) {
        // The world never wrote the record, or deleted it. At a world's own head that answers
        // the same: a root world has nothing below it, and a branch's deletion with no head key
        // is of a record its base does not show. Elsewhere the deletion mark tells.
        if (l.top && at === head) {
          if (l.root) return undefined;
          continue;
        }
        if (storage.get<number>([l.id, twin, 'del', type, id]) === undefined) continue;
      }
      const kv = first(storage, { start: [l.id, twin, 'rec', type, id, l.lo + 1], end: [l.id, twin, 'rec', type, id, l.hi + 1], reverse: true });
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
  private ownIdBounds(twin: string): Map<string, string> | undefined {
    const read = this.s.idBoundsRead.get(twin);
    if (read === 'too many') return undefined;
    const bounds = this.idBoundsOf(twin);
    if (read === undefined) {
      const found = new Map<string, string>();
      for (const kind of ['head', 'del']) {
        const prefix: Key = [this.s.meta.id, twin, kind];
        let end = prefixEnd(prefix);
        for (;;) {
          const kv = first(this.e.storage, { start: prefix, end, reverse: true });
          if (kv === undefined) break;
          const type = kv.key[3] as string;
          const id = kv.key[4] as string;
          const known = found.get(type);
          if (known === undefined || compareStrings(id, known) > 0) found.set(type, id);
          if (found.size > MAX_BOUNDED_TYPES) {
            this.s.idBoundsRead.set(twin, 'too many');
            return undefined;
          }
          end = [...prefix, type];
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

  private idBoundsOf(twin: string): Map<string, string> {
    let bounds = this.s.idBounds.get(twin);
    if (bounds === undefined) this.s.idBounds.set(twin, (bounds = new Map()));
    return bounds;
  }

  /** Whether `rid` sorts after every own head key of the type (then it has none); raises the bound to it. */
  private beyondOwnHeads(twin: string, type: string, rid: string): boolean {
    const bounds = this.idBoundsOf(twin);
    let bound = bounds.get(type);
    if (bound === undefined) {
      const prefix: Key = [this.s.meta.id, twin, 'head', type];
      const last = first(this.e.storage, { start: prefix, end: prefixEnd(prefix), reverse: true });
      bound = last === undefined ? '' : (last.key[4] as string);
    }
    const beyond = compareStrings(rid, bound) > 0;
    if (beyond) bounds.set(type, rid);
    else if (!bounds.has(type)) bounds.set(type, bound);
    return beyond;
  }

  private headCounts(twin: string): Map<string, number> {
    let memo = this.s.counts.get(twin);
    if (memo === undefined) this.s.counts.set(twin, (memo = new Map()));
    return memo;
  }

  private countAt(twin: string, type: string, at: number): number {
    if (at !== this.head(twin)) return this.storedCountAt(twin, type, at);
    const memo = this.headCounts(twin);
    let n = memo.get(type);
    if (n === undefined) memo.set(type, (n = this.storedCountAt(twin, type, at)));
    return n;
  }

  private storedCountAt(twin: string, type: string, at: number): number {
    for (const l of this.layers(twin, at)) {
      const kv = first<number>(this.e.storage, { start: [l.id, twin, 'count', type, l.lo + 1], end: [l.id, twin, 'count', type, l.hi + 1], reverse: true });
      if (kv !== undefined) return kv.value;
    }
    return 0;
  }

  /** Types that have (or had) records as of `at`, sorted. */
  private typesAt(twin: string, at: number): string[] {
    const types = new Set<string>();
    for (const l of this.layers(twin, at)) {
      const prefix: Key = [l.id, twin, 'count'];
      const end = prefixEnd(prefix);
      let start: Key = prefix;
      for (;;) {
        const kv = first(this.e.storage, { start, end });
        if (kv === undefined) break;
        const type = kv.key[3] as string;
        types.add(type);
        start = after(prefix, type);
      }
    }
    return [...types].sort(compareStrings);
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
    bounds: { after?: string | undefined; before?: string | undefined },
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
      return upper === undefined ? prefixEnd(prefix) : [...prefix, upper];
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
      const next = nextKey([l.id, twin, 'del', type], cursor, l.ids?.get(type))?.key[4] as string | undefined;
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
      const heads: Key = [l.id, twin, 'head', type];
      // Read at a world's own head, a record deleted without a head key is gone: only a read
      // of a past position or of the world as a base looks for them.
      const seekMarks = !(l.top && at === head);
      let cursor = from;
      for (;;) {
        const hk = nextKey<HeadVersion>(heads, cursor, cap);
        const h = hk?.key[4] as string | undefined;
        const m = seekMarks ? nextMarked(l, cursor) : undefined;
        if (h === undefined && m === undefined) return undefined;
        const id = h === undefined ? (m as string) : m === undefined || better(h, m) || h === m ? h : m;
        if (id === h && (hk as KeyValue<HeadVersion>).value[0] <= l.hi) return id;
        const older = first(storage, { start: [l.id, twin, 'rec', type, id, l.lo + 1], end: [l.id, twin, 'rec', type, id, l.hi + 1] });
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

  private branchName(label: string | undefined): string {
    const prefix = label === undefined ? `${this.name}-` : `${this.name}-${label}-`;
    checkWorldName(`${prefix}0000`);
    for (let i = 0; i < 32; i++) {
      const name = prefix + randomBytes(2).toString('hex');
      if (!this.e.exists(name)) return name;
    }
    for (let n = 0; n < 0x10000; n++) {
      const name = prefix + n.toString(16).padStart(4, '0');
      if (!this.e.exists(name)) return name;
    }
    throw new KitError('world_exists', `every name ${prefix}<4 hex> is taken`);
  }
}

function cursorId(v: unknown, param: string): string {
  if (typeof v !== 'string' || !isRecordId(v)) {
    throw new KitError('invalid_cursor', `${param} is a record id`, { param });
  }
  return v;
}

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

/**
 * About how many bytes of entries one page of the log, timeline or diff holds. A page stops
 * before the entry that would take it past this (a first entry always fits), so a page of
 * GitHub pushes, each up to 8 MiB of objects, is not a limit's worth of them in one answer.
 */
export const PAGE_BYTES = 8 * 1024 * 1024;

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

function decodeCursor(s: unknown, param: 'before' | 'after'): TimelineCursor {
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
