/**
 * What `kit world …` and `kit host …` print for a person: aligned tables and `name  value`
 * lines. Everything shown comes from a server and may hold anything (a record id a client
 * chose): control characters are escaped so no answer can move a terminal's cursor or
 * rewrite what was printed before it.
 */

/** A value as one printable line: control characters (ANSI escapes, newlines) shown as `\xNN`. */
export function printable(value: unknown): string {
  const text = value === null || value === undefined ? '-' : typeof value === 'string' ? value : String(value);
  return text.replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Columns aligned two spaces apart, a header row in capitals; the last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string[] {
  const cells = [headers.map((h) => h.toUpperCase()), ...rows.map((r) => headers.map((_, i) => printable(r[i])))];
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] as string).length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] as number))).join('  ').trimEnd());
}

/** `name  value` lines, the values aligned. */
export function keyValues(pairs: readonly (readonly [string, unknown])[]): string[] {
  const width = Math.max(0, ...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${printable(v)}`);
}

/** A byte count for a person: `512 bytes`, `1.5 KiB`, `12.3 MiB`. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} byte${n === 1 ? '' : 's'}`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A log entry as the world answers it (runtime/world/types.ts `Entry`), read loosely: it came over the wire. */
export interface WireEntry {
  position?: unknown;
  occurredAt?: unknown;
  cause?: { kind?: unknown; method?: unknown; path?: unknown; route?: unknown; status?: unknown; move?: unknown; source?: unknown; reason?: unknown; changeset?: unknown; change?: unknown; origin?: unknown; merged?: unknown } | null;
  writes?: unknown;
  events?: unknown;
  traceparent?: unknown;
}

/** What caused an entry, in a few words: `POST /v1/customers 200`, `move renewal`, `ingest stripe`. */
export function describeCause(entry: WireEntry): string {
  const cause = entry.cause;
  if (typeof cause !== 'object' || cause === null) return '-';
  switch (cause.kind) {
    case 'request':
      return `${String(cause.method)} ${String(cause.path)} ${String(cause.status)}`;
    case 'move':
      return `move ${String(cause.move)}`;
    case 'ingest':
      return `ingest ${String(cause.source)}`;
    case 'refresh':
      return 'refresh';
    case 'push':
      return `push ${String(cause.changeset)}#${String(cause.change)} ${String(cause.method)} ${String(cause.path)}`;
    case 'pull':
      return `pull ${String(cause.origin)}${cause.merged === true ? ' (merged)' : ''}`;
    case 'system':
      return `system ${String(cause.reason)}`;
    default:
      return String(cause.kind);
  }
}

/** The records an entry wrote: `customer acct_1/cus_2, invoice … (+3 more)`; a deletion is marked. */
export function describeWrites(entry: WireEntry, shownAtMost = 3): string {
  const writes = Array.isArray(entry.writes) ? (entry.writes as { type?: unknown; id?: unknown; value?: unknown }[]) : [];
  if (writes.length === 0) return '-';
  const shown = writes.slice(0, shownAtMost).map((w) => `${String(w.type)} ${String(w.id)}${w.value === null ? ' (deleted)' : ''}`);
  return writes.length > shownAtMost ? `${shown.join(', ')} (+${writes.length - shownAtMost} more)` : shown.join(', ');
}

/** The W3C trace id of an entry's `traceparent`, or `-`. */
export function traceId(entry: WireEntry): string {
  const t = entry.traceparent;
  if (typeof t !== 'string') return '-';
  const parts = t.split('-');
  return parts[1] ?? '-';
}
