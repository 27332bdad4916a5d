/**
 * Every storage key of the world engine is built here, and every part read back out of one.
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
 * Other layers keep their own keys beside these under their own `#` prefix (the runner's
 * `['#runner', world name, …]`); no world id starts with `#`.
 *
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
 */
import { partAfter, prefixEnd } from '../store/keys.js';
import type { Key } from '../store/types.js';

export { prefixEnd };

// ---- the directory and what spans worlds

/** The directory: a world's name → its storage id. */
export const directoryKey = (name: string): Key => ['#world', name];
export const directoryPrefix = (): Key => ['#world'];
export const nameInDirectoryKey = (key: Key): string => key[1] as string;

/** The last storage id allocated (a number, written in base 36 after `w`). */
export const seqKey = (): Key => ['#seq'];

/** A removed world whose keys are still being purged. */
export const trashKey = (id: string): Key => ['#trash', id];
export const trashPrefix = (): Key => ['#trash'];
export const idInTrashKey = (key: Key): string => key[1] as string;

/** A branch to sweep when its ttl has passed. */
export const ttlKey = (expiresAtMs: number, name: string): Key => ['#ttl', expiresAtMs, name];
export const ttlPrefix = (): Key => ['#ttl'];
/** The end of a range of ttl keys: those that expire at or before `ms`. */
export const ttlDueEnd = (ms: number): Key => ['#ttl', ms + 1];
export const nameInTtlKey = (key: Key): string => key[2] as string;

// ---- one world's keys

/** Every key of a world (what a purge deletes). */
export const worldPrefix = (id: string): Key => [id];

export const metaKey = (id: string): Key => [id, '#meta'];

/** One of this world's branches (its BranchRecord). */
export const branchKey = (id: string, name: string): Key => [id, '#branch', name];
export const branchPrefix = (id: string): Key => [id, '#branch'];

/** An entry of a twin's log with this W3C trace id. */
export const traceKey = (id: string, trace: string, twin: string, position: number): Key => [id, '#trace', trace, twin, position];
export const positionInTraceKey = (key: Key): number => key[4] as number;

export const logKey = (id: string, twin: string, position: number): Key => [id, twin, 'log', position];
export const logPrefix = (id: string, twin: string): Key => [id, twin, 'log'];
export const positionInLogKey = (key: Key): number => key[3] as number;

/** A version this world superseded, or (null) a deletion, at a position. */
export const versionKey = (id: string, twin: string, type: string, rid: string, position: number): Key => [id, twin, 'rec', type, rid, position];

/** A record's newest own version ([position, value]). */
export const headKey = (id: string, twin: string, type: string, rid: string): Key => [id, twin, 'head', type, rid];
/** The head keys of a twin, or of one type of its records. */
export const headPrefix = (id: string, twin: string, type?: string): Key => (type === undefined ? [id, twin, 'head'] : [id, twin, 'head', type]);

/** A record's deletion mark (the position of the world's last deletion of it). */
export const deletionKey = (id: string, twin: string, type: string, rid: string): Key => [id, twin, 'del', type, rid];
export const deletionPrefix = (id: string, twin: string, type?: string): Key => (type === undefined ? [id, twin, 'del'] : [id, twin, 'del', type]);

/** The record type and id in a head key or a deletion mark. */
export const typeInRecordKey = (key: Key): string => key[3] as string;
export const idInRecordKey = (key: Key): string => key[4] as string;

/** The live count of a type as of a position. */
export const countKey = (id: string, twin: string, type: string, position: number): Key => [id, twin, 'count', type, position];
export const countPrefix = (id: string, twin: string): Key => [id, twin, 'count'];
export const typeInCountKey = (key: Key): string => key[3] as string;

/** A twin's id bounds noted at a position. */
export const boundsKey = (id: string, twin: string, position: number): Key => [id, twin, 'bounds', position];
export const boundsPrefix = (id: string, twin: string): Key => [id, twin, 'bounds'];

// ---- bounds of ranges within a prefix

/** The key `[...prefix, part]`: a range bound at (or, as an end, just below) that part. */
export const under = (prefix: Key, part: string): Key => [...prefix, part];

/** A key above every key `[...prefix, part, …]` and below the next part's (store/keys.ts, `partAfter`). */
export const after = (prefix: Key, part: string): Key => [...prefix, partAfter(part)];
