/**
 * A changeset as a person reads it in a terminal (`kit world changeset show`): per change the
 * vendor request and the twin's answer status, then per record what changed, field by field
 * (`product prod_x (created)  name: (none) → "Pro"`, nested fields as `a.b.c`, list items as
 * `a[0]`), long values cut; the deploy receipts, the verification and the approvals.
 *
 * Pure: it takes what the world answered and answers lines. Everything it reads came over the
 * wire and may be anything (a record id a client chose, a body of a million fields), so every
 * field is read loosely, every value passes through `printable`, and nothing grows without bound.
 */
import { printable } from './format.js';

/** A record a change wrote (the world's `RecordChange`); `null` is absent (created, or deleted). */
export interface WireRecordChange {
  type?: unknown;
  id?: unknown;
  before?: unknown;
  after?: unknown;
}

export interface WireChangeRequest {
  method?: unknown;
  path?: unknown;
  query?: unknown;
  contentType?: unknown;
  body?: unknown;
}

export interface WireChange {
  index?: unknown;
  twin?: unknown;
  request?: WireChangeRequest | null;
  status?: unknown;
  answer?: unknown;
  writes?: unknown;
  occurredAt?: unknown;
  state?: unknown;
}

export interface WireReceipt {
  change?: unknown;
  twin?: unknown;
  at?: unknown;
  ok?: unknown;
  status?: unknown;
  request?: { method?: unknown; url?: unknown } | null;
  ids?: unknown;
  error?: unknown;
  idempotencyKey?: unknown;
}

export interface WireVerification {
  hash?: unknown;
  at?: unknown;
  pass?: unknown;
  /** How many checks ran (on each change). */
  checks?: unknown;
  /** Over how many changes. */
  changes?: unknown;
  current?: unknown;
  /** The failing verdicts: `{ change, twin, check, failures: string[] }`. */
  failures?: unknown;
}

export interface WireApproval {
  as?: unknown;
  note?: unknown;
  hash?: unknown;
  at?: unknown;
  keyId?: unknown;
  current?: unknown;
}

export interface WireChangeset {
  name?: unknown;
  message?: unknown;
  cutAt?: unknown;
  from?: unknown;
  base?: unknown;
  changes?: unknown;
  contentHash?: unknown;
  currentHash?: unknown;
  pushed?: { to?: unknown; at?: unknown } | null;
  landedAt?: unknown;
  verification?: WireVerification | null;
  verifications?: unknown;
  approvals?: unknown;
  receipts?: unknown;
  deployed?: unknown;
  /** Cut in this world (false: pushed here from another). */
  cut?: unknown;
  /** In a list's rows, instead of `changes`: how many, and how many are in each state. */
  changeCount?: unknown;
  states?: unknown;
}

/** What a rendering shows at most: a changeset of ten thousand fields stays readable, and finite. */
export interface DiffLimits {
  /** Characters of one value before it is cut (`"a very long…" (1204 chars)`). */
  valueChars: number;
  /** Field lines of one record; the rest are counted. */
  fieldsPerRecord: number;
  /** Records of one change; the rest are counted. */
  recordsPerChange: number;
  /** Show the records of types beginning `__` (the twin's own bookkeeping), else count them. */
  internal: boolean;
  /** Show only the records of these types (`--type product`), the others counted; null: every type. */
  types: readonly string[] | null;
}

export const DEFAULT_LIMITS: DiffLimits = { valueChars: 60, fieldsPerRecord: 40, recordsPerChange: 50, internal: false, types: null };

/** How deep a value is walked into: a deeper part is shown as one value. */
const MAX_DEPTH = 12;
/** How many leaves of one record are compared at most: a hostile record of a million fields is not walked whole. */
const MAX_LEAVES = 5_000;
/** A field name written after a dot as it is; another is quoted (`metadata["plan.tier"]`). */
const PLAIN_FIELD = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

const ABSENT = Symbol('absent');
type Leaf = unknown | typeof ABSENT;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Text cut to about `max` characters on a code point, printable: `a very long…`, with its length when cut. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return printable(text);
  const kept = Array.from(text.slice(0, max * 2)).slice(0, Math.max(1, max - 1)).join('');
  return `${printable(kept)}… (${text.length} chars)`;
}

/** A value cut to `max` characters: JSON for a person (`"Pro"`, `2000`, `{}`), `(none)` for absent. */
export function shownValue(value: Leaf, max = DEFAULT_LIMITS.valueChars): string {
  if (value === ABSENT || value === undefined) return '(none)';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return cut(text, max);
}

/** `a.b.c`, `items[0].price`, `metadata["plan.tier"]`; the empty path is the record's whole value. */
export function fieldPath(path: readonly (string | number)[]): string {
  if (path.length === 0) return '(value)';
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (PLAIN_FIELD.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return printable(out);
}

/** Every leaf of a value by its path: objects and lists are walked into; an empty one, a scalar or what lies deeper than MAX_DEPTH is a leaf. */
function leaves(value: unknown, into: Map<string, unknown>, path: (string | number)[] = []): void {
  if (into.size >= MAX_LEAVES) return;
  const walk = path.length < MAX_DEPTH;
  if (walk && isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [key, child] of Object.entries(value)) leaves(child, into, [...path, key]);
    return;
  }
  if (walk && Array.isArray(value) && value.length > 0) {
    value.forEach((child, i) => leaves(child, into, [...path, i]));
    return;
  }
  into.set(fieldPath(path), value);
}

function sameLeaf(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  // Leaves that are objects are empty ones, or cut off at MAX_DEPTH: compare them as JSON.
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

export interface FieldChange {
  field: string;
  before: Leaf;
  after: Leaf;
}

/**
 * The fields that differ between two versions of a record, in the order the new version has
 * them, then those only the old one had. `null` for a version is the record absent: every field
 * of the other is then a change from or to `(none)`.
 */
export function fieldChanges(storedBefore: unknown, storedAfter: unknown): FieldChange[] {
  const before = vendorObject(storedBefore);
  const after = vendorObject(storedAfter);
  const old = new Map<string, unknown>();
  const now = new Map<string, unknown>();
  if (before !== null && before !== undefined) leaves(before, old);
  if (after !== null && after !== undefined) leaves(after, now);
  const changes: FieldChange[] = [];
  for (const [field, value] of now) {
    const was: Leaf = old.has(field) ? old.get(field) : ABSENT;
    if (!sameLeaf(was, value)) changes.push({ field, before: was, after: value });
  }
  for (const [field, value] of old) if (!now.has(field)) changes.push({ field, before: value, after: ABSENT });
  return changes;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The vendor's object of a record a twin stores as `{ s: <order>, o: <object> }` (the Stripe
 * twin's layout), so that a field reads `name` as the vendor names it; the value itself
 * otherwise. The world page reads records the same way (pages/world/diff.ts).
 */
export function vendorObject(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const keys = Object.keys(value);
  return keys.length === 2 && typeof value['s'] === 'number' && isPlainObject(value['o']) ? value['o'] : value;
}

/** The twin's own bookkeeping: its `__` records and its indexes (types with a dot), as the page folds them. */
export function isBookkeeping(type: unknown): boolean {
  return typeof type === 'string' && (type.startsWith('__') || type.includes('.'));
}

/** The records a change is about: those whose object the twin's answer names by id (else every record but the bookkeeping). */
function subjectsOf(writes: WireRecordChange[], answer: unknown): WireRecordChange[] {
  const named = isPlainObject(answer) && (typeof answer['id'] === 'string' || typeof answer['id'] === 'number') ? String(answer['id']) : null;
  const plain = writes.filter((w) => !isBookkeeping(w.type));
  const ownId = (w: WireRecordChange): string => {
    const object = vendorObject(w.after ?? w.before);
    const id = isPlainObject(object) ? object['id'] : undefined;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : String(w.id).slice(String(w.id).lastIndexOf('/') + 1);
  };
  const subjects = named === null ? [] : plain.filter((w) => ownId(w) === named);
  return subjects.length > 0 ? subjects : plain;
}

/** What a record change is: created, deleted, changed (or, oddly, neither version). */
function recordKind(w: WireRecordChange): 'created' | 'deleted' | 'changed' | 'absent' {
  const had = w.before !== null && w.before !== undefined;
  const has = w.after !== null && w.after !== undefined;
  if (!had && !has) return 'absent';
  return had ? (has ? 'changed' : 'deleted') : 'created';
}

/**
 * One record's lines: the record, then its fields, the record named on the first line and the
 * others aligned under it.
 *
 *     product prod_x (created)  name: (none) → "Pro"
 *                               active: (none) → true
 */
export function recordLines(w: WireRecordChange, limits: DiffLimits = DEFAULT_LIMITS, indent = '  '): string[] {
  const kind = recordKind(w);
  const label = `${printable(w.type)} ${printable(w.id)}${kind === 'changed' ? '' : ` (${kind === 'absent' ? 'absent before and after' : kind})`}`;
  const changes = fieldChanges(w.before ?? null, w.after ?? null);
  if (changes.length === 0) return [`${indent}${label}${kind === 'changed' ? ' (unchanged)' : ''}`];
  const pad = ' '.repeat(label.length);
  const shown = changes.slice(0, limits.fieldsPerRecord);
  const lines = shown.map((c, i) => `${indent}${i === 0 ? label : pad}  ${c.field}: ${shownValue(c.before, limits.valueChars)} → ${shownValue(c.after, limits.valueChars)}`);
  const rest = changes.length - shown.length;
  if (rest > 0) lines.push(`${indent}${pad}  … ${plural(rest, 'more field')} (--json shows them all)`);
  return lines;
}

/** `POST /v1/products?expand[]=x`: the vendor request of a change, its query cut. */
export function requestLine(request: WireChangeRequest | null | undefined, limits: DiffLimits = DEFAULT_LIMITS): string {
  const method = printable(request?.method ?? '?');
  const path = printable(request?.path ?? '?');
  const query = typeof request?.query === 'string' && request.query !== '' ? `?${request.query}` : '';
  return `${method} ${path}${cut(query, limits.valueChars)}`;
}

/** A receipt in one line: `deployed at …: 200 POST https://api.stripe.com/v1/products; prod_x → prod_Real`. */
export function receiptLine(r: WireReceipt, limits: DiffLimits = DEFAULT_LIMITS): string {
  const sent = `${printable(r.request?.method ?? '?')} ${printable(r.request?.url ?? '?')}`;
  const status = typeof r.status === 'number' ? `${r.status} ` : '';
  const ids = isPlainObject(r.ids) ? Object.entries(r.ids).map(([twin, real]) => `${printable(twin)} → ${printable(real)}`) : [];
  const idText = ids.length === 0 ? '' : `; ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ` (+${ids.length - 5} more)` : ''}`;
  if (r.ok === true) return `deployed at ${printable(r.at)}: ${status}${sent}${idText}`;
  const error = typeof r.error === 'string' && r.error !== '' ? `: ${cut(r.error, limits.valueChars * 2)}` : '';
  return `FAILED at ${printable(r.at)}: ${status}${sent}${error}`;
}

/** The records a change wrote, read loosely. */
function writesOf(change: WireChange): WireRecordChange[] {
  return Array.isArray(change.writes) ? (change.writes as unknown[]).filter(isPlainObject) : [];
}

/** The receipts of one change, newest last. */
function receiptsOf(receipts: readonly WireReceipt[], index: unknown): WireReceipt[] {
  return receipts.filter((r) => r.change === index);
}

/**
 * One change's lines: a header (`change 1 of 2  stripe  POST /v1/products  201  landed`), its
 * records, its receipts. The records the change is about come first (those the twin's answer
 * names by id); the rest it wrote (events, counters, indexes) are counted, unless `limits.internal`.
 */
export function changeLines(change: WireChange, total: number, receipts: readonly WireReceipt[] = [], limits: DiffLimits = DEFAULT_LIMITS): string[] {
  const position = typeof change.index === 'number' ? `${change.index + 1} of ${total}` : `? of ${total}`;
  const status = typeof change.status === 'number' ? String(change.status) : '?';
  const lines = [`change ${position}  ${printable(change.twin)}  ${requestLine(change.request, limits)}  ${status}  ${printable(change.state)}`];
  const writes = writesOf(change);
  const subjects = subjectsOf(writes, change.answer);
  const pool = limits.internal || limits.types !== null ? writes : subjects;
  const shown = limits.types === null ? pool : pool.filter((w) => typeof w.type === 'string' && limits.types!.includes(w.type));
  for (const w of shown.slice(0, limits.recordsPerChange)) lines.push(...recordLines(w, limits));
  if (shown.length > limits.recordsPerChange) lines.push(`  … ${plural(shown.length - limits.recordsPerChange, 'more record')} (--json shows them all)`);
  if (writes.length === 0) lines.push('  (wrote no record)');
  const names = (ws: WireRecordChange[]): string => [...new Set(ws.map((w) => printable(w.type)))].slice(0, 3).join(', ') + (new Set(ws.map((w) => w.type)).size > 3 ? ', …' : '');
  const rest = writes.filter((w) => !shown.includes(w));
  if (rest.length > 0 && limits.types !== null) lines.push(`  + ${plural(rest.length, 'record')} of other types (${names(rest)})`);
  else if (rest.length > 0) lines.push(`  + ${plural(rest.length, 'more record')} it wrote (${names(rest)}${limits.internal ? '' : '; --internal shows them'})`);
  for (const r of receiptsOf(receipts, change.index)) lines.push(`  ${receiptLine(r, limits)}`);
  return lines;
}

/** The failing verdicts of a verification, read loosely. */
function failingOf(v: WireVerification): Record<string, unknown>[] {
  return Array.isArray(v.failures) ? (v.failures as unknown[]).filter(isPlainObject) : [];
}

/** The verification in a few words: `pass: 2 checks over 3 changes at … `, marked when made on an earlier version. */
export function verificationText(v: WireVerification | null | undefined, name = '<name>'): string {
  if (v === null || v === undefined) return `not yet (kit world changeset verify ${printable(name)})`;
  const checks = typeof v.checks === 'number' ? plural(v.checks, 'check') : '? checks';
  const over = typeof v.changes === 'number' ? ` over ${plural(v.changes, 'change')}` : '';
  const failing = failingOf(v).length;
  const verdict = v.pass === true ? `pass: ${checks}${over}` : `FAIL: ${plural(failing, 'failing verdict')}, ${checks}${over}`;
  return `${verdict} at ${printable(v.at)}${v.current === true ? '' : ' (an earlier version: verify again)'}`;
}

/** The failing verdicts of a verification, one line each: `change 1  stripe  prices-positive: unit_amount is -5`. */
export function verificationFailures(v: WireVerification | null | undefined, limits: DiffLimits = DEFAULT_LIMITS): string[] {
  if (v === null || v === undefined) return [];
  const failing = failingOf(v);
  const lines: string[] = [];
  for (const r of failing.slice(0, 50)) {
    const change = typeof r['change'] === 'number' ? `change ${r['change'] + 1}` : 'change ?';
    const failures = Array.isArray(r['failures']) ? (r['failures'] as unknown[]).map((f) => (typeof f === 'string' ? cut(f, limits.valueChars * 2) : shownValue(f, limits.valueChars * 2))) : [];
    lines.push(`${change}  ${printable(r['twin'])}  ${printable(r['check'])}${failures.length === 0 ? '' : `: ${failures.slice(0, 3).join('; ')}`}${failures.length > 3 ? ` (+${failures.length - 3} more)` : ''}`);
  }
  if (failing.length > 50) lines.push(`… ${plural(failing.length - 50, 'more failing verdict')} (--json shows them all)`);
  return lines;
}

/** An approval in one line: `alice at …  "looks right"` (marked when it was made on an earlier version). */
export function approvalLine(a: WireApproval, limits: DiffLimits = DEFAULT_LIMITS): string {
  const note = typeof a.note === 'string' && a.note !== '' ? `  "${cut(a.note, limits.valueChars)}"` : '';
  return `${printable(a.as)} at ${printable(a.at)}${a.current === true ? '' : ' (an earlier version)'}${note}`;
}

/** `stripe 12, github 4`: the positions a changeset applies on, or the entries it appended. */
export function perTwin(value: unknown, show: (v: unknown) => string = (v) => printable(v)): string {
  if (!isPlainObject(value)) return '-';
  const parts = Object.entries(value).map(([twin, v]) => `${printable(twin)} ${show(v)}`);
  return parts.length === 0 ? '-' : parts.join(', ');
}

/** The changes of a changeset, read loosely. */
export function changesOf(cs: WireChangeset): WireChange[] {
  return Array.isArray(cs.changes) ? (cs.changes as unknown[]).filter(isPlainObject) : [];
}

/** A list of objects, read loosely. */
export function objectsOf<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as unknown[]).filter(isPlainObject) as T[] : [];
}

/** The changes of a changeset as a diff, a blank line between changes. */
export function changesetDiff(cs: WireChangeset, limits: DiffLimits = DEFAULT_LIMITS): string[] {
  const changes = changesOf(cs);
  const receipts = objectsOf<WireReceipt>(cs.receipts);
  const lines: string[] = [];
  for (const change of changes) {
    if (lines.length > 0) lines.push('');
    lines.push(...changeLines(change, changes.length, receipts, limits));
  }
  return lines;
}
