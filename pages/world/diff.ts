/**
 * A record's change as a person reads it: field by field, nested fields as `a.b.c` and array
 * items as `items[0]`, only the fields that differ, `(none)` where a field is absent. A record a
 * twin stores as `{ s, o }` (its order and the vendor's object: the Stripe twin's layout) is
 * read as its object, so a field is `name`, as the vendor names it, not `o.name`. Pure, so what
 * the page shows can be checked from Node against the same records.
 */

/** One field that differs; `undefined` on a side: the field is absent there. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

export interface RecordDiff {
  /** `created`: nothing before; `deleted`: nothing after. */
  kind: 'created' | 'deleted' | 'changed' | 'unchanged';
  fields: FieldChange[];
}

/** How deep fields are followed before a value is shown whole. */
const DEPTH = 8;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function joinPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

/** The leaves of a value: `{ a: { b: 1 } }` → `a.b` 1; an empty object or array is a leaf of its own. */
function leaves(value: unknown, path: string, depth: number, out: Map<string, unknown>): void {
  if (depth < DEPTH && isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(v, joinPath(path, k), depth + 1, out);
  } else if (depth < DEPTH && Array.isArray(value) && value.length > 0) {
    value.forEach((v, i) => leaves(v, joinPath(path, i), depth + 1, out));
  } else {
    out.set(path, value);
  }
}

function same(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** The vendor's object of a record stored as `{ s: <order>, o: <object> }`; the value itself otherwise. */
export function vendorObject(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const keys = Object.keys(value);
  return keys.length === 2 && typeof value['s'] === 'number' && isPlainObject(value['o']) ? value['o'] : value;
}

/** The fields that differ between two versions of a record (null: the record is absent on that side). */
export function recordDiff(storedBefore: unknown, storedAfter: unknown): RecordDiff {
  const before = vendorObject(storedBefore);
  const after = vendorObject(storedAfter);
  const kind = before === null || before === undefined ? (after === null || after === undefined ? 'unchanged' : 'created') : after === null || after === undefined ? 'deleted' : 'changed';
  const was = new Map<string, unknown>();
  const now = new Map<string, unknown>();
  // A record that is not an object (a counter, a string) is one field without a name.
  if (before !== null && before !== undefined) leaves(before, '', 0, was);
  if (after !== null && after !== undefined) leaves(after, '', 0, now);
  const fields: FieldChange[] = [];
  for (const field of new Set([...was.keys(), ...now.keys()])) {
    const b = was.has(field) ? was.get(field) : undefined;
    const a = now.has(field) ? now.get(field) : undefined;
    if (was.has(field) && now.has(field) && same(b, a)) continue;
    fields.push({ field, before: was.has(field) ? b : undefined, after: now.has(field) ? a : undefined });
  }
  return { kind: kind === 'changed' && fields.length === 0 ? 'unchanged' : kind, fields };
}

/** How long a shown value may be before it is cut (the whole is in the title). */
const SHOWN = 160;

/** A field's value as the diff writes it: JSON (`"Pro"`, `1999`, `null`), `(none)` when absent, cut when long. */
export function shownValue(value: unknown): { text: string; whole: string } {
  if (value === undefined) return { text: '(none)', whole: '(none)' };
  const whole = JSON.stringify(value) ?? String(value);
  return { text: whole.length > SHOWN ? `${whole.slice(0, SHOWN - 1)}…` : whole, whole };
}

/**
 * Records a twin keeps for itself, folded away below the records a vendor has: types beginning
 * `__` (`__due`) and its indexes, whose types hold a `.` (`ix.product.<acct>`, `by.price.product.<acct>`).
 */
export function isBookkeeping(type: string): boolean {
  return type.startsWith('__') || type.includes('.');
}

/** The record's own id as the vendor names it: its object's `id`, else the last part of its key. */
function ownId(write: { id: string; before: unknown; after: unknown }): string {
  const object = vendorObject(write.after ?? write.before);
  const id = isPlainObject(object) ? object['id'] : undefined;
  if (typeof id === 'string' || typeof id === 'number') return String(id);
  return write.id.slice(write.id.lastIndexOf('/') + 1);
}

/**
 * A change's records split for reading: first what the change is about (the records the twin's
 * answer names by its `id`: the product made, the label changed), then what it wrote beside them
 * (events, counters, and the twin's own records and indexes), folded. When the answer names none,
 * every record a vendor has comes first.
 */
export function splitWrites<W extends { type: string; id: string; before: unknown; after: unknown }>(writes: W[], answer: unknown): { subjects: W[]; others: W[] } {
  const named = isPlainObject(answer) && (typeof answer['id'] === 'string' || typeof answer['id'] === 'number') ? String(answer['id']) : null;
  const plain = writes.filter((w) => !isBookkeeping(w.type));
  const subjects = named === null ? [] : plain.filter((w) => ownId(w) === named);
  const first = subjects.length > 0 ? subjects : plain;
  return { subjects: first, others: writes.filter((w) => !first.includes(w)) };
}
