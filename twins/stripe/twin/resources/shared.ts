/** Shapes several resources share. */
import { invalid } from '../errors.js';
import type { Params } from '../lib/params.js';
import type { Obj } from '../lib/util.js';

export function address(p: Params | null | undefined, current?: unknown): Obj | null {
  if (p === undefined) return (current as Obj | null | undefined) ?? null;
  if (p === null) return null;
  const cur = (current ?? {}) as Obj;
  const field = (k: string): string | null => {
    if (!p.has(k)) return (cur[k] as string | null | undefined) ?? null;
    return p.nullableStr(k) ?? null;
  };
  return {
    city: field('city'),
    country: field('country'),
    line1: field('line1'),
    line2: field('line2'),
    postal_code: field('postal_code'),
    state: field('state'),
  };
}

export function shipping(p: Params | null | undefined, current?: unknown): Obj | null {
  if (p === undefined) return (current as Obj | null | undefined) ?? null;
  if (p === null) return null;
  const name = p.reqStr('name');
  return {
    address: address(p.obj('address') ?? null),
    name,
    phone: p.nullableStr('phone') ?? null,
  };
}

const CURRENCY = /^[a-z]{3}$/;

export function currency(p: Params, key = 'currency', required = true): string {
  const v = required ? p.reqStr(key) : p.str(key);
  if (v === undefined) return '';
  const lower = v.toLowerCase();
  if (!CURRENCY.test(lower)) throw invalid(`Invalid currency: ${v}. Stripe currently supports these currencies: usd, eur, gbp, …`, p.name(key));
  return lower;
}

/** Smallest amount Stripe charges, in the currency's minor unit (USD 50 cents). */
export function minimumCharge(cur: string): number {
  const table: Record<string, number> = { usd: 50, eur: 50, gbp: 30, cad: 50, aud: 50, jpy: 50, chf: 50, sek: 300, nok: 300, dkk: 250, inr: 50, mxn: 1000 };
  return table[cur] ?? 50;
}

/** A string field set by `key` when given (`''` clears to null), else the current value. */
export function nullable(p: Params, key: string, current: unknown): string | null {
  if (!p.has(key)) return (current as string | null | undefined) ?? null;
  return p.nullableStr(key) ?? null;
}
