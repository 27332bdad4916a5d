import { KitError } from '../errors.js';

/** The latest instant the engine accepts: 9999-12-31T23:59:59.999Z (ISO strings stay sortable). */
export const MAX_INSTANT_MS = 253402300799999;

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)$/;

/**
 * Epoch milliseconds of an ISO 8601 instant with a zone (`Z` or an offset), e.g.
 * `2026-01-01T00:00:00Z`, `2026-01-01T01:00:00.5+01:00`. Anything else is invalid_instant.
 */
export function parseInstant(s: unknown): number {
  if (typeof s !== 'string' || s.length > 64) throw invalidInstant(s);
  const m = INSTANT.exec(s);
  if (m === null) throw invalidInstant(s);
  const [, y, mo, d, h, mi, sec, frac, zone] = m as unknown as string[];
  const year = Number(y), month = Number(mo), day = Number(d);
  const hour = Number(h), minute = Number(mi), second = sec === undefined ? 0 : Number(sec);
  const ms = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) throw invalidInstant(s);
  const local = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  // Date.UTC rolls 31 February over into March; a real date survives the round trip.
  const check = new Date(local);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) {
    throw invalidInstant(s);
  }
  let offset = 0;
  if (zone !== 'Z' && zone !== 'z' && zone !== undefined) {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) throw invalidInstant(s);
    offset = sign * (oh * 60 + om) * 60_000;
  }
  const at = local - offset;
  if (!Number.isFinite(at) || at < 0 || at > MAX_INSTANT_MS) throw invalidInstant(s);
  return at;
}

/** The one output form of an instant: `toISOString()`. */
export function formatInstant(ms: number): string {
  if (!Number.isFinite(ms)) throw new TypeError(`not an instant: ${ms}`);
  return new Date(ms).toISOString();
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of `<N><unit>`, N a positive integer and unit one of s, m, h, d (e.g. `30d`). */
export function parseDuration(s: unknown): number {
  if (typeof s !== 'string') throw invalidDuration(s);
  const m = /^([1-9]\d{0,12})([smhd])$/.exec(s);
  if (m === null) throw invalidDuration(s);
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  if (ms > MAX_INSTANT_MS) throw invalidDuration(s);
  return ms;
}

function invalidInstant(s: unknown): KitError {
  return new KitError('invalid_instant', `not an ISO 8601 instant with a zone: ${describe(s)}`, { param: 'at' });
}

function invalidDuration(s: unknown): KitError {
  return new KitError('invalid_duration', `not a duration like 30s, 15m, 2h or 7d: ${describe(s)}`, { param: 'by' });
}

function describe(s: unknown): string {
  return typeof s === 'string' ? JSON.stringify(s.slice(0, 80)) : typeof s;
}
