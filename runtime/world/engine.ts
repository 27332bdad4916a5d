/**
 * The engine's state: the directory of worlds and their lifecycle (create, remove, purge),
 * and the State kept in memory per world (metadata, heads, the counts at heads, id bounds).
 * One Engine per Storage (WorldStore's); it is the only writer, so what it caches stays true.
 */
import { KitError } from '../errors.js';
import type { Key, KeyValue, RangeOptions, Storage } from '../store/types.js';
import {
  boundsKey,
  boundsPrefix,
  branchKey,
  branchPrefix,
  directoryKey,
  metaKey,
  prefixEnd,
  seqKey,
  trashKey,
  ttlKey,
  worldPrefix,
} from './keys.js';
import type { BranchRecord } from './types.js';

export interface BaseMeta {
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

/** A branch records id bounds for a twin of at most this many types (branching stays cheap). */
export const MAX_BOUNDED_TYPES = 256;

/**
 * After this many record writes, appendBatch notes a twin's id bounds (`[w, t, 'bounds', pos]`),
 * so that a walk at a past position stops at the ids the world had by then, give or take this
 * many writes (or one entry's, when bigger): a checkpoint or list of an early position does not
 * step over every record made after it.
 */
export const BOUNDS_EVERY = 1024;

export interface WorldMeta {
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

export interface State {
  meta: WorldMeta;
  removed: boolean;
  /**
   * Dropped from memory by WorldStore.release: the world is read back into a new State when
   * next opened, so this one's caches may be stale and its World answers world_released.
   */
  released: boolean;
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
export type HeadVersion = [position: number, value: unknown];

export function first<V>(storage: Storage, options: RangeOptions): KeyValue<V> | undefined {
  for (const kv of storage.range<V>({ ...options, limit: 1 })) return kv;
  return undefined;
}

/** Bounds records the engine holds at most, over all worlds (then it forgets them all). */
const BOUNDS_RECORDS_HELD = 4096;

/** A twin's cut in a branch's base; 0 for a twin the base did not have (own properties only). */
export function cutOf(base: BaseMeta | null, twin: string): number {
  return base !== null && Object.hasOwn(base.positions, twin) ? (base.positions[twin] as number) : 0;
}

/**
 * The shared machinery behind WorldStore and its World objects (`W`: what `world()` hands out
 * for a State, one per State, made by `open`).
 */
export class Engine<W> {
  private readonly byId = new Map<string, State>();
  private readonly byName = new Map<string, State>();
  /** The States that have a World: the worlds someone opened (the others were read as a branch's base). */
  private readonly worlds = new Map<State, W>();
  readonly purges = new Set<Promise<void>>();
  /**
   * By world id, then `<twin>\0<position>`: the first bounds record at or after the position
   * (they never change once written); at most BOUNDS_RECORDS_HELD in all.
   */
  private readonly boundsRecords = new Map<string, Map<string, Map<string, string>>>();
  private boundsRecordsHeld = 0;

  constructor(
    readonly storage: Storage,
    readonly now: () => number,
    readonly boundsEvery: number,
    private readonly open: (state: State) => W,
  ) {}

  /**
   * The id bounds a world first noted at or after `position` (an id at or above every id it had
   * written by then, so by `position`); undefined when it has noted none since.
   */
  boundsRecordAt(worldId: string, twin: string, position: number): Map<string, string> | undefined {
    const at = `${twin}\u0000${position}`;
    let ofWorld = this.boundsRecords.get(worldId);
    let bounds = ofWorld?.get(at);
    if (bounds !== undefined) return bounds;
    const kv = first<[string, string][]>(this.storage, { start: boundsKey(worldId, twin, position), end: prefixEnd(boundsPrefix(worldId, twin)) });
    if (kv === undefined) return undefined;
    bounds = new Map(kv.value);
    if (this.boundsRecordsHeld >= BOUNDS_RECORDS_HELD) {
      this.boundsRecords.clear();
      this.boundsRecordsHeld = 0;
      ofWorld = undefined;
    }
    if (ofWorld === undefined) this.boundsRecords.set(worldId, (ofWorld = new Map()));
    ofWorld.set(at, bounds);
    this.boundsRecordsHeld++;
    return bounds;
  }

  state(name: string): State | undefined {
    const cached = this.byName.get(name);
    if (cached !== undefined) return cached;
    const id = this.storage.get<string>(directoryKey(name));
    return id === undefined ? undefined : this.stateById(id);
  }

  stateById(id: string): State {
    const cached = this.byId.get(id);
    if (cached !== undefined) return cached;
    const meta = this.storage.get<WorldMeta>(metaKey(id));
    if (meta === undefined) throw new KitError('internal', `world ${id} has no metadata`);
    const state: State = { meta, removed: false, released: false, heads: new Map(), newest: new Map(), counts: new Map(), idBounds: new Map(), idBoundsRead: new Map(), writesSinceBounds: new Map() };
    this.byId.set(id, state);
    this.byName.set(meta.name, state);
    return state;
  }

  world(state: State): W {
    let w = this.worlds.get(state);
    if (w === undefined) {
      w = this.open(state);
      this.worlds.set(state, w);
    }
    return w;
  }

  /** Whether the directory has the world (without reading it into memory). */
  exists(name: string): boolean {
    return this.byName.has(name) || this.storage.get<string>(directoryKey(name)) !== undefined;
  }

  /**
   * Drops a world's State and World from memory (false when none was held), with the States
   * read only as the base of a branch no held world needs any more. The released World answers
   * world_released from then on; the world is read back from storage when next opened. A held
   * branch of it reads its base's keys by storage id, through a State read back when it needs one.
   */
  release(name: string): boolean {
    const state = this.byName.get(name);
    if (state === undefined) return false;
    state.released = true;
    this.forget(state);
    // A world opened keeps its bases' States (its reads go through them); the rest go.
    const needed = new Set<string>();
    for (const held of this.worlds.keys()) {
      for (let s: State | undefined = held; s !== undefined && !needed.has(s.meta.id); s = s.meta.base === null ? undefined : this.byId.get(s.meta.base.worldId)) {
        needed.add(s.meta.id);
      }
    }
    for (const [id, s] of this.byId) {
      if (!needed.has(id)) {
        s.released = true;
        this.forget(s);
      }
    }
    return true;
  }

  /** @internal What the engine holds in memory (tests: released worlds leave nothing). */
  held(): { states: number; names: number; worlds: number; boundsRecords: number } {
    return { states: this.byId.size, names: this.byName.size, worlds: this.worlds.size, boundsRecords: this.boundsRecordsHeld };
  }

  private forget(state: State): void {
    const { id, name } = state.meta;
    this.byId.delete(id);
    if (this.byName.get(name) === state) this.byName.delete(name);
    this.worlds.delete(state);
    const bounds = this.boundsRecords.get(id);
    if (bounds !== undefined) {
      this.boundsRecordsHeld -= bounds.size;
      this.boundsRecords.delete(id);
    }
  }

  create(name: string, twins: string[], extra: { clock: number | null; live: boolean; base: BaseMeta | null }, alsoWrite?: (put: (key: Key, value: unknown) => void) => void): State {
    const seq = (this.storage.get<number>(seqKey()) ?? 0) + 1;
    const meta: WorldMeta = { v: 1, id: `w${seq.toString(36)}`, name, twins, createdAt: this.now(), ...extra };
    this.storage.transact((tx) => {
      tx.put(seqKey(), seq);
      tx.put(directoryKey(name), meta.id);
      tx.put(metaKey(meta.id), meta);
      alsoWrite?.((key, value) => tx.put(key, value));
    });
    return this.stateById(meta.id);
  }

  hasBranches(state: State): boolean {
    const prefix = branchPrefix(state.meta.id);
    return first(this.storage, { start: prefix, end: prefixEnd(prefix) }) !== undefined;
  }

  branchRecords(state: State): BranchRecord[] {
    const prefix = branchPrefix(state.meta.id);
    return [...this.storage.range<BranchRecord>({ start: prefix, end: prefixEnd(prefix) })].map((kv) => kv.value);
  }

  /** Takes a world out of the directory at once (atomically); its keys are purged after. */
  remove(state: State): Promise<void> {
    if (this.hasBranches(state)) {
      throw new KitError('world_has_branches', `world ${state.meta.name} has branches; remove them first`);
    }
    const { id, name, base } = state.meta;
    const record = base === null ? undefined : this.storage.get<BranchRecord>(branchKey(base.worldId, name));
    this.storage.transact((tx) => {
      tx.remove(directoryKey(name));
      tx.put(trashKey(id), null);
      if (base !== null) tx.remove(branchKey(base.worldId, name));
      if (record?.expiresAt) tx.remove(ttlKey(Date.parse(record.expiresAt), name));
    });
    state.removed = true;
    this.forget(state);
    return this.purge(id);
  }

  /** Deletes a removed world's keys in batches, yielding between them; resumed on the next open. */
  purge(id: string): Promise<void> {
    const storage = this.storage;
    const run = async (): Promise<void> => {
      const start = worldPrefix(id);
      const end = prefixEnd(start);
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        if (!storage.alive) return;
        const keys = [...storage.range({ start, end, limit: 2000 })].map((kv) => kv.key);
        if (keys.length === 0) {
          storage.transact((tx) => tx.remove(trashKey(id)));
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
