/** Products, prices (one-time and recurring) and coupons. */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid, paramMissing } from '../errors.js';
import { event, insertWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import type { Params } from '../lib/params.js';
import { search } from '../lib/search.js';
import { load, mustLoad, newId, save, unlist } from '../lib/store.js';
import { boolEq, eq, is, isAny, listOf, newestWhere, type Filter } from '../lib/lists.js';
import { clone, isObj, type Obj } from '../lib/util.js';
import { currency, nullable } from './shared.js';

const CUSTOM_ID = /^[A-Za-z0-9_-]{1,200}$/;

// ---- products ------------------------------------------------------------------------------

function productFields(p: Params, product: Obj, creating: boolean): void {
  if (creating || p.has('name')) {
    const name = creating ? p.reqStr('name') : p.str('name');
    if (name === '') throw invalid('You must provide a non-empty name.', 'name');
    product.name = name;
  }
  if (p.has('active')) product.active = p.bool('active');
  for (const k of ['description', 'statement_descriptor', 'tax_code', 'unit_label', 'url']) {
    product[k] = nullable(p, k, product[k]);
  }
  if (p.has('shippable')) product.shippable = p.bool('shippable') ?? null;
  if (p.has('images')) product.images = p.strings('images');
  if (p.has('marketing_features')) {
    product.marketing_features = (p.objects('marketing_features') ?? []).map((f) => ({ name: f.reqStr('name') }));
  }
  product.metadata = applyMetadata(product.metadata as Obj | undefined, p.get('metadata'));
}

function createProduct(c: Call): Obj {
  const custom = c.p.str('id');
  if (custom !== undefined && !CUSTOM_ID.test(custom)) throw invalid('Invalid product id.', 'id');
  const id = custom ?? c.ctx.id('prod_', 14);
  if (load(c, 'product', id) !== undefined) {
    throw invalid(`Product already exists.`, 'id', 'resource_already_exists');
  }
  const product: Obj = {
    id, object: 'product', active: true, created: c.now, default_price: null, description: null,
    images: [], livemode: false, marketing_features: [], metadata: {}, name: '', package_dimensions: null,
    shippable: null, statement_descriptor: null, tax_code: null, type: 'service', unit_label: null,
    updated: c.now, url: null,
  };
  productFields(c.p, product, true);
  const dpd = c.p.obj('default_price_data');
  insertWithEvent(c, 'product', product, 'product.created');
  if (dpd !== undefined && dpd !== null) {
    const price = makePrice(c, dpd, id);
    product.default_price = price.id;
    save(c, 'product', product);
  }
  return product;
}

function updateProduct(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'product', id, 'product');
  const after = clone(before);
  productFields(c.p, after, false);
  if (c.p.has('default_price')) {
    const priceId = c.p.nullableStr('default_price') ?? null;
    if (priceId !== null) {
      const price = mustLoad(c, 'price', priceId, 'price', 'default_price');
      if (price.product !== id) throw invalid(`The price \`${priceId}\` does not belong to this product.`, 'default_price');
    }
    after.default_price = priceId;
  }
  after.updated = c.now;
  save(c, 'product', after);
  updated(c, 'product.updated', before, after);
  return after;
}

function deleteProduct(c: Call): Obj {
  const id = c.req.params.id as string;
  const product = mustLoad(c, 'product', id, 'product');
  // Any price of the product, found through the prices-by-product index.
  if (!newestWhere(c, 'price', is('product', id)).next().done) {
    throw invalid('This product cannot be deleted because it has one or more user-created prices.', undefined, 'product_has_prices');
  }
  unlist(c, 'product', id);
  event(c, 'product.deleted', product);
  return { id, object: 'product', deleted: true };
}

// ---- prices --------------------------------------------------------------------------------

function findByLookupKey(c: Call, key: string): Obj | undefined {
  return newestWhere(c, 'price', is('lookup_key', key)).next().value?.o;
}

function claimLookupKey(c: Call, p: Params, key: string | null, priceId: string): void {
  if (key === null) return;
  const holder = findByLookupKey(c, key);
  if (holder === undefined || holder.id === priceId) return;
  if (p.bool('transfer_lookup_key') !== true) {
    throw invalid(`A price (\`${holder.id as string}\`) already uses that lookup key.`, 'lookup_key');
  }
  const before = clone(holder);
  holder.lookup_key = null;
  save(c, 'price', holder);
  updated(c, 'price.updated', before, holder);
}

/** Makes and stores a price from price parameters (also `default_price_data`, `price_data`). */
export function makePrice(c: Call, p: Params, productId?: string): Obj {
  const cur = currency(p);
  let product = productId ?? p.str('product');
  const productData = p.obj('product_data');
  if (product === undefined && (productData === undefined || productData === null)) throw paramMissing(p.name('product'));
  if (product !== undefined) {
    if (productId === undefined) mustLoad(c, 'product', product, 'product', p.name('product'));
  }
  const rec = p.obj('recurring');
  let recurring: Obj | null = null;
  if (rec !== undefined && rec !== null) {
    const interval = rec.oneOf('interval', ['day', 'week', 'month', 'year'] as const);
    if (interval === undefined) throw paramMissing(rec.name('interval'));
    const count = rec.int('interval_count', 1) ?? 1;
    const max = { day: 1095, week: 156, month: 36, year: 3 }[interval];
    if (count > max) throw invalid(`The maximum billing interval is 3 years.`, rec.name('interval_count'));
    recurring = {
      interval, interval_count: count, meter: null,
      trial_period_days: rec.int('trial_period_days', 0, 730) ?? null,
      usage_type: rec.oneOf('usage_type', ['licensed', 'metered'] as const) ?? 'licensed',
    };
  }
  const scheme = p.oneOf('billing_scheme', ['per_unit', 'tiered'] as const) ?? 'per_unit';
  let unitAmount = p.int('unit_amount', 0, 99_999_999);
  const decimal = p.str('unit_amount_decimal');
  const custom = p.obj('custom_unit_amount');
  let customUnit: Obj | null = null;
  if (custom !== undefined && custom !== null && custom.bool('enabled') === true) {
    if (recurring !== null) throw invalid('Custom unit amounts are only supported for one-time prices.', p.name('custom_unit_amount'));
    customUnit = {
      maximum: custom.int('maximum', 1) ?? null,
      minimum: custom.int('minimum', 1) ?? null,
      preset: custom.int('preset', 1) ?? null,
    };
  }
  if (unitAmount === undefined && decimal !== undefined) {
    if (!/^\d+(\.\d{1,12})?$/.test(decimal)) throw invalid(`Invalid decimal: ${decimal}`, p.name('unit_amount_decimal'));
    unitAmount = Number.isInteger(Number(decimal)) ? Number(decimal) : undefined;
  }
  if (unitAmount === undefined && decimal === undefined && customUnit === null && scheme === 'per_unit') {
    throw invalid('You must pass either `unit_amount`, `unit_amount_decimal` or `custom_unit_amount` (or `billing_scheme=tiered` with `tiers`).', p.name('unit_amount'), 'parameter_missing');
  }
  const lookupKey = p.nullableStr('lookup_key') ?? null;
  if (product === undefined && productData !== undefined && productData !== null) {
    const prod: Obj = {
      id: c.ctx.id('prod_', 14), object: 'product', active: productData.bool('active') ?? true, created: c.now,
      default_price: null, description: null, images: [], livemode: false, marketing_features: [],
      metadata: applyMetadata(undefined, productData.get('metadata')), name: productData.reqStr('name'),
      package_dimensions: null, shippable: null, statement_descriptor: productData.str('statement_descriptor') ?? null,
      tax_code: productData.str('tax_code') ?? null, type: 'service', unit_label: productData.str('unit_label') ?? null,
      updated: c.now, url: null,
    };
    insertWithEvent(c, 'product', prod, 'product.created');
    product = prod.id as string;
  }
  const id = newId(c, 'price', 'price_', 24);
  claimLookupKey(c, p, lookupKey, id);
  const price: Obj = {
    id,
    object: 'price',
    active: p.bool('active') ?? true,
    billing_scheme: scheme,
    created: c.now,
    currency: cur,
    custom_unit_amount: customUnit,
    livemode: false,
    lookup_key: lookupKey,
    metadata: applyMetadata(undefined, p.get('metadata')),
    nickname: p.nullableStr('nickname') ?? null,
    product,
    recurring,
    tax_behavior: p.oneOf('tax_behavior', ['exclusive', 'inclusive', 'unspecified'] as const) ?? 'unspecified',
    tiers_mode: scheme === 'tiered' ? (p.oneOf('tiers_mode', ['graduated', 'volume'] as const) ?? null) : null,
    transform_quantity: null,
    type: recurring === null ? 'one_time' : 'recurring',
    unit_amount: customUnit !== null ? null : (unitAmount ?? null),
    unit_amount_decimal: customUnit !== null ? null : (decimal ?? (unitAmount === undefined ? null : String(unitAmount))),
  };
  insertWithEvent(c, 'price', price, 'price.created');
  return price;
}

function updatePrice(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'price', id, 'price');
  const after = clone(before);
  if (c.p.has('active')) after.active = c.p.bool('active');
  after.nickname = nullable(c.p, 'nickname', before.nickname);
  if (c.p.has('lookup_key')) {
    const key = c.p.nullableStr('lookup_key') ?? null;
    claimLookupKey(c, c.p, key, id);
    after.lookup_key = key;
  }
  if (c.p.has('tax_behavior')) after.tax_behavior = c.p.oneOf('tax_behavior', ['exclusive', 'inclusive', 'unspecified'] as const);
  after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'price', after);
  updated(c, 'price.updated', before, after);
  return after;
}

function listPrices(c: Call): Obj {
  const filters: (Filter | undefined)[] = [boolEq(c, 'active'), eq(c, 'currency'), eq(c, 'product'), eq(c, 'type')];
  const keys = c.p.strings('lookup_keys');
  if (keys !== undefined) filters.push(isAny('lookup_key', keys));
  const rec = c.p.obj('recurring');
  if (rec !== undefined && rec !== null) {
    const interval = rec.str('interval');
    const usage = rec.str('usage_type');
    filters.push((o) => isObj(o.recurring) && (interval === undefined || o.recurring.interval === interval) &&
      (usage === undefined || o.recurring.usage_type === usage));
  }
  return listOf(c, 'price', '/v1/prices', filters);
}

// ---- coupons -------------------------------------------------------------------------------

function createCoupon(c: Call): Obj {
  const custom = c.p.str('id');
  if (custom !== undefined && !CUSTOM_ID.test(custom)) throw invalid('Invalid coupon id.', 'id');
  const id = custom ?? c.ctx.id('', 8);
  if (load(c, 'coupon', id) !== undefined) throw invalid('Coupon already exists.', 'id', 'resource_already_exists');
  const percent = c.p.num('percent_off', 0, 100);
  const amount = c.p.int('amount_off', 1);
  if (percent === undefined && amount === undefined) {
    throw invalid('You must pass either `percent_off` or `amount_off`.', 'percent_off', 'parameter_missing');
  }
  if (percent !== undefined && amount !== undefined) {
    throw invalid('You may only specify one of these parameters: amount_off, percent_off.', 'amount_off');
  }
  if (percent !== undefined && percent <= 0) throw invalid('Percent off must be greater than 0.', 'percent_off');
  const cur = amount !== undefined ? currency(c.p) : null;
  const duration = c.p.oneOf('duration', ['forever', 'once', 'repeating'] as const) ?? 'once';
  const months = c.p.int('duration_in_months', 1);
  if (duration === 'repeating' && months === undefined) throw paramMissing('duration_in_months');
  if (duration !== 'repeating' && months !== undefined) {
    throw invalid('You can only specify `duration_in_months` when `duration` is `repeating`.', 'duration_in_months');
  }
  const redeemBy = c.p.int('redeem_by');
  if (redeemBy !== undefined && redeemBy <= c.now) throw invalid('Redeem by must be in the future.', 'redeem_by');
  const coupon: Obj = {
    id, object: 'coupon',
    amount_off: amount ?? null,
    created: c.now,
    currency: cur,
    duration,
    duration_in_months: months ?? null,
    livemode: false,
    max_redemptions: c.p.int('max_redemptions', 1) ?? null,
    metadata: applyMetadata(undefined, c.p.get('metadata')),
    name: c.p.nullableStr('name') ?? null,
    percent_off: percent ?? null,
    redeem_by: redeemBy ?? null,
    times_redeemed: 0,
    valid: true,
  };
  const applies = c.p.obj('applies_to');
  if (applies !== undefined && applies !== null) coupon.applies_to = { products: applies.strings('products') ?? [] };
  insertWithEvent(c, 'coupon', coupon, 'coupon.created');
  return coupon;
}

/** A coupon is valid until it runs out of redemptions or passes `redeem_by`. */
export function couponValid(c: Call, coupon: Obj): boolean {
  if (typeof coupon.redeem_by === 'number' && coupon.redeem_by <= c.now) return false;
  if (typeof coupon.max_redemptions === 'number' && (coupon.times_redeemed as number) >= coupon.max_redemptions) return false;
  return true;
}

function retrieveCoupon(c: Call): Obj {
  const coupon = mustLoad(c, 'coupon', c.req.params.id as string, 'coupon');
  return { ...coupon, valid: couponValid(c, coupon) };
}

function updateCoupon(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'coupon', id, 'coupon');
  const after = clone(before);
  after.name = nullable(c.p, 'name', before.name);
  after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'coupon', after);
  updated(c, 'coupon.updated', before, after);
  return { ...after, valid: couponValid(c, after) };
}

function deleteCoupon(c: Call): Obj {
  const id = c.req.params.id as string;
  const coupon = mustLoad(c, 'coupon', id, 'coupon');
  unlist(c, 'coupon', id);
  event(c, 'coupon.deleted', coupon);
  return { id, object: 'coupon', deleted: true };
}

export const catalogRoutes: Route[] = [
  route('products.search', 'GET', '/v1/products/search', (c) =>
    search(c, 'product', 'products', { active: 'bool', description: 'string', name: 'string', shippable: 'bool', url: 'string', created: 'number', metadata: 'string' })),
  route('products.create', 'POST', '/v1/products', createProduct),
  route('products.list', 'GET', '/v1/products', (c) => {
    const ids = c.p.strings('ids');
    return listOf(c, 'product', '/v1/products', [
      boolEq(c, 'active'), boolEq(c, 'shippable'), eq(c, 'url'),
      ids === undefined ? undefined : (o) => ids.includes(o.id as string),
    ]);
  }),
  route('products.retrieve', 'GET', '/v1/products/:id', (c) => mustLoad(c, 'product', c.req.params.id as string, 'product')),
  route('products.update', 'POST', '/v1/products/:id', updateProduct),
  route('products.del', 'DELETE', '/v1/products/:id', deleteProduct),

  route('prices.search', 'GET', '/v1/prices/search', (c) =>
    search(c, 'price', 'prices', { active: 'bool', currency: 'token', lookup_key: 'string', product: 'token', type: 'token', created: 'number', metadata: 'string' })),
  route('prices.create', 'POST', '/v1/prices', (c) => makePrice(c, c.p)),
  route('prices.list', 'GET', '/v1/prices', listPrices),
  route('prices.retrieve', 'GET', '/v1/prices/:id', (c) => mustLoad(c, 'price', c.req.params.id as string, 'price')),
  route('prices.update', 'POST', '/v1/prices/:id', updatePrice),

  route('coupons.create', 'POST', '/v1/coupons', createCoupon),
  route('coupons.list', 'GET', '/v1/coupons', (c) => {
    const list = listOf(c, 'coupon', '/v1/coupons');
    list.data = (list.data as Obj[]).map((o) => ({ ...o, valid: couponValid(c, o) }));
    return list;
  }),
  route('coupons.retrieve', 'GET', '/v1/coupons/:id', retrieveCoupon),
  route('coupons.update', 'POST', '/v1/coupons/:id', updateCoupon),
  route('coupons.del', 'DELETE', '/v1/coupons/:id', deleteCoupon),
];
