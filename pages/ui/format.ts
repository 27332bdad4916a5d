/**
 * How pages write instants, amounts, sizes and counts. The host's instants are UTC and shown
 * as UTC (a world's clock is not the reader's clock); vendors' amounts are in minor units.
 */

/** Epoch seconds below this are taken as seconds (Stripe's `created`), above it as milliseconds. */
const SECONDS_UNTIL = 1e11;

/** A Date from an ISO string, epoch seconds (Stripe) or epoch milliseconds (JavaScript); null when it reads as none. */
export function toDate(value: string | number | Date | null | undefined): Date | null {
  if (value === null || value === undefined || value === '') return null;
  const d = value instanceof Date ? value : typeof value === 'number' ? new Date(Math.abs(value) < SECONDS_UNTIL ? value * 1000 : value) : new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * An instant as `2026-05-01 09:00:00 UTC`; milliseconds only when not zero. Takes an ISO string,
 * epoch seconds or milliseconds (see `toDate`); `—` for none, the text itself when it is no instant.
 */
export function instant(value: string | number | Date | null | undefined): string {
  const d = toDate(value);
  if (d === null) return value === null || value === undefined || value === '' ? '—' : String(value);
  return d.toISOString().replace('T', ' ').replace(/(\.000)?Z$/, ' UTC');
}

/** An instant to the minute, `2026-05-01 09:00 UTC`, for lists where seconds are noise. */
export function minute(value: string | number | Date | null | undefined): string {
  const d = toDate(value);
  if (d === null) return instant(value);
  return d.toISOString().replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
}

/** How long before `now` (ms, the world's clock where the page has it): `just now`, `5 min ago`, `3 days ago`; in the future `in 2 h`. */
export function ago(value: string | number | Date | null | undefined, now: number = Date.now()): string {
  const d = toDate(value);
  if (d === null) return '—';
  const seconds = Math.round((now - d.getTime()) / 1000);
  const future = seconds < 0;
  const s = Math.abs(seconds);
  let span: string;
  if (s < 45) return future ? 'in a moment' : 'just now';
  if (s < 3600) span = `${Math.round(s / 60)} min`;
  else if (s < 86_400) span = `${Math.round(s / 3600)} h`;
  else if (s < 86_400 * 60) span = `${Math.round(s / 86_400)} days`.replace(/^1 days/, '1 day');
  else return minute(d);
  return future ? `in ${span}` : `${span} ago`;
}

/** Currencies whose amounts have no minor unit (Stripe's list of zero-decimal currencies). */
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
/** Currencies with three decimals. */
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);

/** The number of minor units in one unit of `currency` (100 for usd, 1 for jpy, 1000 for kwd). */
export function minorUnits(currency: string): number {
  const c = currency.toLowerCase();
  return ZERO_DECIMAL.has(c) ? 1 : THREE_DECIMAL.has(c) ? 1000 : 100;
}

/**
 * An amount in minor units as money: `money(1999, 'usd')` → `$19.99`, `money(500, 'jpy')` →
 * `¥500`. A currency `Intl` does not know is written `19.99 XYZ`. Null amounts give `—`.
 */
export function money(minor: number | null | undefined, currency: string | null | undefined): string {
  if (minor === null || minor === undefined || !Number.isFinite(minor)) return '—';
  const code = (currency ?? '').toUpperCase();
  const major = minor / minorUnits(code);
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: code, currencyDisplay: 'narrowSymbol' }).format(major);
  } catch {
    const digits = Math.round(Math.log10(minorUnits(code)));
    return `${major.toFixed(digits)}${code === '' ? '' : ` ${code}`}`;
  }
}

/** A whole number with thousands separators: `12,345`. */
export function count(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return new Intl.NumberFormat('en-US').format(n);
}

/** A size in bytes as a person reads it: `512 B`, `1.2 kB`, `3.4 MB` (powers of 1000). */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let unit = 'B';
  for (const u of units) {
    if (v < 1000) break;
    v /= 1000;
    unit = u;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${unit}`;
}

/** A record id as a vendor shows it: the last segment of a twin's composite id (`acct_…/cus_…` → `cus_…`). */
export function shortId(id: string): string {
  return id.slice(id.lastIndexOf('/') + 1);
}
