/**
 * A three-way merge of one record, field by field: what the world had when it last matched its
 * origin (`base`), what it has now (`ours`) and what the origin has now (`theirs`). A field
 * only one side changed takes that side's value; a field both changed to different values is a
 * conflict, named by its path (`metadata.tier`), unless a resolution says which side wins.
 * Plain objects are merged field by field at any depth; anything else (a list, a number, a
 * record that one side deleted) as one value.
 */
import { canonicalJson } from '../../world/canonical.js';

export interface Conflict {
  /** `<twin>/<type>/<id>#<field>` (`#` alone: the whole record). */
  key: string;
  twin: string;
  type: string;
  id: string;
  /** The field's path, null for the whole record (one side deleted it, or it is no object). */
  field: string | null;
  base: unknown;
  ours: unknown;
  theirs: unknown;
}

export type Side = 'ours' | 'theirs';

export interface RecordMerge {
  value: unknown;
  conflicts: Conflict[];
}

function same(a: unknown, b: unknown): boolean {
  return a === b || canonicalJson(a) === canonicalJson(b);
}

function plain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function conflictKey(twin: string, type: string, id: string, field: string | null): string {
  return `${twin}/${type}/${id}#${field ?? ''}`;
}

/**
 * Merges one record. `resolve` answers the side a conflict's key takes (undefined: left as a
 * conflict, and `ours` stands in the value until it is resolved).
 */
export function mergeRecord(
  where: { twin: string; type: string; id: string },
  base: unknown,
  ours: unknown,
  theirs: unknown,
  resolve: (key: string) => Side | undefined,
): RecordMerge {
  const conflicts: Conflict[] = [];
  const value = mergeValue(where, null, base ?? null, ours ?? null, theirs ?? null, resolve, conflicts);
  return { value, conflicts };
}

function mergeValue(
  where: { twin: string; type: string; id: string },
  path: string | null,
  base: unknown,
  ours: unknown,
  theirs: unknown,
  resolve: (key: string) => Side | undefined,
  conflicts: Conflict[],
): unknown {
  if (same(ours, theirs)) return ours;
  if (same(ours, base)) return theirs;
  if (same(theirs, base)) return ours;
  if (plain(ours) && plain(theirs) && plain(base)) {
    const out: Record<string, unknown> = {};
    const keys = new Set([...Object.keys(base), ...Object.keys(ours), ...Object.keys(theirs)]);
    for (const k of [...keys].sort()) {
      const merged = mergeValue(where, path === null ? k : `${path}.${k}`, base[k], ours[k], theirs[k], resolve, conflicts);
      if (merged !== undefined) out[k] = merged;
    }
    return out;
  }
  const key = conflictKey(where.twin, where.type, where.id, path);
  const side = resolve(key);
  if (side === 'theirs') return theirs;
  if (side === undefined) conflicts.push({ key, ...where, field: path, base: base ?? null, ours: ours ?? null, theirs: theirs ?? null });
  return ours;
}
