/**
 * Discounts: a coupon or a promotion code redeemed on a subscription or an invoice, and the
 * amounts they take off an invoice.
 */
import type { Call } from '../lib/request.js';
import { invalid } from '../errors.js';
import { updated } from '../lib/events.js';
import type { Params } from '../lib/params.js';
import { insert, load, mustLoad, save } from '../lib/store.js';
import { clone, type Obj } from '../lib/util.js';
import { couponValid } from './catalog.js';
import { redeemPromotionCode } from './promotions.js';
import { periodAfter } from './billing_shared.js';

function makeDiscount(c: Call, couponId: string, customer: string, subscription: string | null, param: string, promotionCode: string | null = null): Obj {
  const coupon = mustLoad(c, 'coupon', couponId, 'coupon', param);
  if (!couponValid(c, coupon)) throw invalid(`Coupon expired: ${couponId}`, param, 'coupon_expired');
  const start = c.now;
  let end: number | null = null;
  if (coupon.duration === 'repeating') end = periodAfter(start, 'month', coupon.duration_in_months as number, 1);
  const discount: Obj = {
    id: c.ctx.id('di_', 24), object: 'discount', checkout_session: null, customer, customer_account: null, end,
    invoice: null, invoice_item: null, promotion_code: promotionCode, source: { coupon: couponId, type: 'coupon' }, start,
    subscription, subscription_item: null,
  };
  insert(c, 'discount', discount);
  const before = clone(coupon);
  coupon.times_redeemed = (coupon.times_redeemed as number) + 1;
  save(c, 'coupon', coupon);
  updated(c, 'coupon.updated', before, coupon);
  return discount;
}

export function discountsParam(c: Call, p: Params, customer: string, subscription: string | null): string[] {
  const out: string[] = [];
  for (const d of p.objects('discounts') ?? []) {
    const coupon = d.str('coupon');
    const promotion = d.str('promotion_code');
    if (coupon !== undefined) out.push(makeDiscount(c, coupon, customer, subscription, d.name('coupon')).id as string);
    else if (promotion !== undefined) {
      const { promo, coupon: promoCoupon } = redeemPromotionCode(c, promotion, customer, d.name('promotion_code'));
      out.push(makeDiscount(c, promoCoupon, customer, subscription, d.name('promotion_code'), promo.id as string).id as string);
    }
  }
  return out;
}

/** Discount amounts for an invoice of `subtotal`: once-coupons apply to the first invoice only. */
export function applyDiscounts(c: Call, ids: string[], subtotal: number, first: boolean): { amount: number; discount: string }[] {
  const out: { amount: number; discount: string }[] = [];
  let left = subtotal;
  for (const id of ids) {
    const d = load(c, 'discount', id);
    if (d === undefined) continue;
    if (typeof d.end === 'number' && d.end <= c.now) continue;
    const coupon = load(c, 'coupon', ((d.source as Obj).coupon as string));
    if (coupon === undefined) continue;
    if (coupon.duration === 'once' && !first) continue;
    const amount = typeof coupon.percent_off === 'number'
      ? Math.round(left * coupon.percent_off / 100)
      : Math.min(left, (coupon.amount_off as number) ?? 0);
    left -= amount;
    out.push({ amount, discount: id });
  }
  return out;
}
