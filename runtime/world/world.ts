/**
 * The world engine's public face: many worlds in one Storage (WorldStore), each with twins, a
 * clock, one log per twin, a versioned tree of records, history cuts and O(1) branches (World).
 * What it stores where is written down in keys.ts; World checks every argument, then hands the
 * work to its reads (reads.ts), its pages (paging.ts) and its writes (writes.ts).
 *
 * One WorldStore per Storage: it caches world metadata, heads and the counts at heads, and is
 * the only writer.
 */
import { randomBytes } from 'node:crypto';
import { KitError } from '../errors.js';
import type { Storage } from '../store/types.js';
import { type BaseMeta, BOUNDS_EVERY, Engine, type State } from './engine.js';
import { idSource, type IdSource } from './ids.js';
import { branchKey, directoryPrefix, idInTrashKey, nameInDirectoryKey, nameInTtlKey, prefixEnd, trashPrefix, ttlDueEnd, ttlKey, ttlPrefix } from './keys.js';
import { decodeCursor, diffPage, logPage, timelinePage } from './paging.js';
import { CHECKPOINT_LIMIT_BYTES, WorldReads } from './reads.js';
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
} from './validate.js';
import { WorldWrites } from './writes.js';

export { CHECKPOINT_LIMIT_BYTES };

/** Many worlds in one Storage. */
export class WorldStore {
  private readonly engine: Engine<World>;

  /** `boundsEvery`: after how many record writes a twin's id bounds are noted (default 1,024; tests use fewer). */
  constructor(storage: Storage, options: { now?: () => number; boundsEvery?: number } = {}) {
    this.engine = new Engine<World>(storage, options.now ?? Date.now, options.boundsEvery ?? BOUNDS_EVERY, (state) => new World(this.engine, state));
    const trash = [...storage.range({ start: trashPrefix(), end: prefixEnd(trashPrefix()) })];
    for (const { key } of trash) this.engine.purge(idInTrashKey(key));
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
    const prefix = directoryPrefix();
    return [...this.engine.storage.range({ start: prefix, end: prefixEnd(prefix) })].map((kv) => nameInDirectoryKey(kv.key));
  }

  /**
   * Drops a world from memory (a host keeps many on disk and a bounded set in memory); false
   * when it held none, an unknown name included. Its World must not be used after: every call
   * answers world_released. `openWorld` reads it back from storage, as it was. Its branches and
   * its base stay usable, open or not: a branch reads its base's keys by storage id.
   */
  release(name: string): boolean {
    return typeof name === 'string' && this.engine.release(name);
  }

  /** @internal What the engine holds in memory (tests: released worlds leave nothing). */
  heldInMemory(): { states: number; names: number; worlds: number; boundsRecords: number } {
    return this.engine.held();
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
    const due = [...e.storage.range({ start: ttlPrefix(), end: ttlDueEnd(e.now()) })];
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
      const state = e.state(nameInTtlKey(key));
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

function cursorId(v: unknown, param: string): string {
  if (typeof v !== 'string' || !isRecordId(v)) {
    throw new KitError('invalid_cursor', `${param} is a record id`, { param });
  }
  return v;
}

/** A world: twins, one clock, one log per twin, the tree, history and branches. */
export class World {
  private readonly reads: WorldReads;
  private readonly writes: WorldWrites;

  /** @internal Worlds come from WorldStore. */
  constructor(
    private readonly e: Engine<World>,
    private readonly s: State,
  ) {
    this.reads = new WorldReads(e, s);
    this.writes = new WorldWrites(this.reads);
  }

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
    this.writes.saveMeta({ ...this.s.meta, twins: [...this.s.meta.twins, twin] });
  }

  // ---- clock

  clock(): ClockState {
    this.alive();
    const set = this.reads.setClockMs();
    return { at: formatInstant(set ?? this.e.now()), frozen: set !== null };
  }

  /** The instant entries are stamped with now. */
  nowMs(): number {
    this.alive();
    return this.reads.nowMs();
  }

  /**
   * The instant a twin's next entry is stamped with: now, or its newest entry's instant if the
   * wall clock has stepped back since. A twin handed this sees time stand still rather than
   * run back, as its log does (the Stripe twin lists events from the newest `created` down).
   */
  stampMs(twin: string): number {
    const now = this.nowMs();
    this.twinOf(twin);
    return Math.max(now, this.reads.newestMs(twin));
  }

  setClock(at: string): ClockState {
    this.alive();
    const ms = parseInstant(at);
    const current = this.reads.setClockMs();
    if (current !== null && ms < current) {
      throw new KitError('clock_backward', `the clock is at ${formatInstant(current)}; it does not move back`, { param: 'at' });
    }
    const newest = Math.max(0, ...this.s.meta.twins.map((t) => this.reads.newestMs(t)));
    if (ms < newest) {
      throw new KitError('clock_backward', `the newest entry is at ${formatInstant(newest)}; the clock does not move before it`, { param: 'at' });
    }
    this.writes.saveMeta({ ...this.s.meta, clock: ms, live: false });
    return this.clock();
  }

  advanceClock(by: string): ClockState {
    this.alive();
    const ms = parseDuration(by);
    const current = this.reads.setClockMs();
    if (current === null) throw new KitError('clock_unset', 'the clock is unset (wall clock); set it before advancing');
    if (current + ms > MAX_INSTANT_MS) throw new KitError('invalid_duration', 'that moves the clock past 9999-12-31', { param: 'by' });
    this.writes.saveMeta({ ...this.s.meta, clock: current + ms, live: false });
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
    return this.writes.appendBatch(twin, drafts.map(checkDraft));
  }

  /** Resolves once every entry appended so far is on disk (shared group commit). */
  durable(): Promise<void> {
    return this.e.storage.durable();
  }

  /** The twin's last position, 0 when its log is empty. */
  head(twin: string): number {
    this.alive();
    this.twinOf(twin);
    return this.reads.head(twin);
  }

  /** The entry at a position; undefined at 0 or beyond the head. */
  entry(twin: string, position: number): Entry | undefined {
    const head = this.head(twin);
    checkPosition(position, 'position');
    if (position === 0 || position > head) return undefined;
    return this.reads.entryAt(twin, position, this.reads.layers(twin, head));
  }

  /** A page of the twin's log after a position; `next` is the `after` of the next page. */
  log(twin: string, options: { after?: number; limit?: number } = {}): { entries: Entry[]; next: number | null } {
    options = options ?? {};
    const head = this.head(twin);
    const from = options.after === undefined ? 0 : checkPosition(options.after, 'after');
    const limit = checkLimit(options.limit, 100, 1000);
    this.notBeyond(from, head);
    return logPage(this.reads, twin, from, limit, head);
  }

  /** The twins' logs merged, newest first by occurredAt, then twin, then position (newest first). */
  timeline(query: TimelineQuery = {}): TimelinePage {
    this.alive();
    query = query ?? {};
    const limit = checkLimit(query.limit, 50, 500);
    const trace = query.trace === undefined ? undefined : checkTraceId(query.trace);
    const twins = query.twin === undefined ? [...this.s.meta.twins].sort() : [this.twinOf(query.twin)];
    const cursor = query.before === undefined ? undefined : decodeCursor(query.before, 'before');
    return timelinePage(this.reads, twins, limit, trace, cursor);
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
    return this.reads.recordAt(twin, type, id, pos, head) as V | undefined;
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
    return this.reads.listRecords<V>(twin, type, pos, head, bounds, options.reverse === true, limit);
  }

  countRecords(twin: string, type: string, at?: number): number {
    const head = this.head(twin);
    checkRecordType(type);
    return this.reads.countAt(twin, type, this.positionArg(at, head));
  }

  /** Live record counts by type at head, types sorted. */
  counts(twin: string): { type: string; count: number }[] {
    const head = this.head(twin);
    const out: { type: string; count: number }[] = [];
    for (const type of this.reads.typesAt(twin, head)) {
      const count = this.reads.countAt(twin, type, head);
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
    return this.reads.checkpoint(twin, pos, head, redact);
  }

  // ---- history

  /** For each twin, the last position whose occurredAt ≤ the instant (binary search). */
  historyCut(instant: string): HistoryCut {
    this.alive();
    const ms = parseInstant(instant);
    const views: HistoryCut['views'] = {};
    for (const twin of this.s.meta.twins) {
      const head = this.reads.head(twin);
      const position = this.reads.lastAtOrBefore(twin, ms, head, this.reads.layers(twin, head));
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
      for (const twin of this.s.meta.twins) positions[twin] = this.reads.head(twin);
    } else {
      atMs = parseInstant(options.at);
      for (const [twin, v] of Object.entries(this.historyCut(options.at).views)) positions[twin] = v.position;
    }
    const name = options.name === undefined ? this.branchName(label) : this.givenBranchName(options.name, label);
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
      const bounds = this.reads.ownIdBounds(twin);
      if (bounds !== undefined) ids.push([twin, [...bounds]]);
    }
    const state = this.e.create(
      name,
      [...this.s.meta.twins],
      { clock: live ? null : atMs, live, base: { world: this.name, worldId: parentId, at: atMs, positions, ids } },
      (put) => {
        put(branchKey(parentId, name), record);
        if (ttl !== undefined) put(ttlKey(createdAt + ttl * 1000, name), null);
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
    const record = typeof name === 'string' ? this.e.storage.get<BranchRecord>(branchKey(this.s.meta.id, name)) : undefined;
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
    return diffPage(this.reads, limit, cursor);
  }

  map(): WorldMap {
    this.alive();
    return {
      twins: this.s.meta.twins.map((twin) => ({
        twin,
        position: this.reads.head(twin),
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
    if (this.s.released) throw new KitError('world_released', `world ${this.s.meta.name} was released from memory; open it again`);
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

  /** A name the caller chose (a host's `from`), checked and free. */
  private givenBranchName(name: unknown, label: string | undefined): string {
    if (label !== undefined) throw new KitError('bad_request', 'a branch is given a name or a label, not both', { param: 'label' });
    if (typeof name !== 'string') throw new KitError('bad_request', 'a branch name is a string', { param: 'name' });
    checkWorldName(name);
    if (this.e.exists(name)) throw new KitError('world_exists', `the world ${name} exists; pick another name`);
    return name;
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
