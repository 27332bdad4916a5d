/**
 * Tax rates (percentage, inclusive or exclusive) and the tax arithmetic of invoices: each line
 * is taxed by its own rates or the invoice's defaults, after its share of the discounts.
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid, paramMissing } from '../errors.js';
import { insertWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import type { Params } from '../lib/params.js';
import { load, mustLoad, save } from '../lib/store.js';
import { boolEq, listOf } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';

function createTaxRate(c: Call): Obj {
  const displayName = c.p.reqStr('display_name');
  const percentage = c.p.num('percentage', 0, 100);
  if (percentage === undefined) throw paramMissing('percentage');
  const inclusive = c.p.bool('inclusive');
  if (inclusive === undefined) throw paramMissing('inclusive');
  const rate: Obj = {
    id: c.ctx.id('txr_', 24), object: 'tax_rate', active: c.p.bool('active') ?? true, country: c.p.str('country') ?? null,
    created: c.now, description: c.p.nullableStr('description') ?? null, display_name: displayName,
    effective_percentage: percentage, flat_amount: null, inclusive, jurisdiction: c.p.nullableStr('jurisdiction') ?? null,
    jurisdiction_level: null, livemode: false, metadata: applyMetadata(undefined, c.p.get('metadata')), percentage,
    rate_type: 'percentage', state: c.p.str('state') ?? null, tax_type: c.p.str('tax_type') ?? null,
  };
  insertWithEvent(c, 'tax_rate', rate, 'tax_rate.created');
  return rate;
}

function updateTaxRate(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'tax_rate', id, 'tax rate');
  const after = clone(before);
  if (c.p.has('active')) after.active = c.p.bool('active');
  for (const k of ['display_name', 'description', 'jurisdiction', 'country', 'state', 'tax_type']) {
    if (c.p.has(k)) after[k] = c.p.nullableStr(k) ?? null;
  }
  after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'tax_rate', after);
  updated(c, 'tax_rate.updated', before, after);
  return after;
}

/** Tax rates named by a parameter (`default_tax_rates`, `tax_rates`), whole; each must exist and be active. */
export function taxRatesParam(c: Call, p: Params, key: string): Obj[] | undefined {
  const ids = p.strings(key);
  if (ids === undefined) return undefined;
  return ids.map((id, i) => {
    const rate = mustLoad(c, 'tax_rate', id, 'tax rate', `${p.name(key)}[${i}]`);
    if (rate.active !== true) throw invalid(`The tax rate ${id} is inactive and cannot be applied.`, `${p.name(key)}[${i}]`);
    return rate;
  });
}

export interface TaxedLine {
  amount: number;
  /** Ids of the line's own rates; empty to use the invoice's defaults. */
  rates: string[];
}

/**
 * Taxes each line after its share of `discount` (split in proportion to the amounts):
 * exclusive rates add to the total, inclusive ones are part of the amount already.
 */
export function computeTaxes(c: Call, lines: TaxedLine[], defaults: string[], discount: number): { lineTaxes: Obj[][]; totalTaxes: Obj[]; exclusive: number; inclusive: number } {
  const subtotal = lines.reduce((n, l) => n + l.amount, 0);
  let exclusive = 0, inclusive = 0;
  const totals = new Map<string, Obj>();
  const lineTaxes = lines.map((l) => {
    const share = subtotal > 0 ? Math.round((discount * l.amount) / subtotal) : 0;
    const base = Math.max(0, l.amount - share);
    const out: Obj[] = [];
    for (const id of l.rates.length > 0 ? l.rates : defaults) {
      const rate = load(c, 'tax_rate', id);
      if (rate === undefined) continue;
      const pct = rate.percentage as number;
      const isInclusive = rate.inclusive === true;
      const amount = isInclusive ? base - Math.round(base / (1 + pct / 100)) : Math.round((base * pct) / 100);
      const taxable = isInclusive ? base - amount : base;
      if (isInclusive) inclusive += amount;
      else exclusive += amount;
      out.push({ amount, tax_behavior: isInclusive ? 'inclusive' : 'exclusive', tax_rate_details: { tax_rate: id }, taxability_reason: 'standard_rated', taxable_amount: taxable, type: 'tax_rate_details' });
      const t = totals.get(id);
      if (t === undefined) totals.set(id, { amount, tax_behavior: isInclusive ? 'inclusive' : 'exclusive', tax_rate_details: { tax_rate: id }, taxability_reason: 'standard_rated', taxable_amount: taxable, type: 'tax_rate_details' });
      else {
        t.amount = (t.amount as number) + amount;
        t.taxable_amount = (t.taxable_amount as number) + taxable;
      }
    }
    return out;
  });
  return { lineTaxes, totalTaxes: [...totals.values()], exclusive, inclusive };
}

export const taxRoutes: Route[] = [
  route('tax_rates.create', 'POST', '/v1/tax_rates', createTaxRate),
  route('tax_rates.list', 'GET', '/v1/tax_rates', (c) => listOf(c, 'tax_rate', '/v1/tax_rates', [boolEq(c, 'active'), boolEq(c, 'inclusive')])),
  route('tax_rates.retrieve', 'GET', '/v1/tax_rates/:id', (c) => mustLoad(c, 'tax_rate', c.req.params.id as string, 'tax rate')),
  route('tax_rates.update', 'POST', '/v1/tax_rates/:id', updateTaxRate),
];
