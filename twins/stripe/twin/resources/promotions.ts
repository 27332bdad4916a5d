/** Promotion codes (customer-facing codes for a coupon) and customer portal sessions. */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid, paramMissing } from '../errors.js';
import { event, insertWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import { mustLoad, save } from '../lib/store.js';
import { boolEq, eq, listOf, matching, newestWhere } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';

function createPromotionCode(c: Call): Obj {
  const promotion = c.p.obj('promotion');
  if (promotion === undefined || promotion === null) throw paramMissing('promotion');
  const couponId = promotion.reqStr('coupon');
  mustLoad(c, 'coupon', couponId, 'coupon', 'promotion[coupon]');
  const code = c.p.str('code') ?? c.ctx.id('', 8).toUpperCase();
  if (!/^[A-Za-z0-9_-]{1,500}$/.test(code)) throw invalid('Promotion codes may contain only letters, digits, dashes and underscores.', 'code');
  for (const rec of newestWhere(c, 'promotion_code', matching('promotion_code', 'code', code))) {
    if (rec.o.active === true) throw invalid(`An active promotion code with \`code: ${code}\` already exists.`, 'code', 'resource_already_exists');
  }
  const customer = c.p.str('customer');
  if (customer !== undefined) mustLoad(c, 'customer', customer, 'customer', 'customer');
  const r = c.p.obj('restrictions');
  const promo: Obj = {
    id: c.ctx.id('promo_', 24), object: 'promotion_code', active: c.p.bool('active') ?? true, code, created: c.now,
    customer: customer ?? null, customer_account: null, expires_at: c.p.int('expires_at') ?? null, livemode: false,
    max_redemptions: c.p.int('max_redemptions', 1) ?? null, metadata: applyMetadata(undefined, c.p.get('metadata')),
    promotion: { coupon: couponId, type: 'coupon' },
    restrictions: {
      first_time_transaction: r?.bool('first_time_transaction') ?? false,
      minimum_amount: r?.int('minimum_amount', 1) ?? null,
      minimum_amount_currency: r?.str('minimum_amount_currency') ?? null,
    },
    times_redeemed: 0,
  };
  insertWithEvent(c, 'promotion_code', promo, 'promotion_code.created');
  return promo;
}

function updatePromotionCode(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'promotion_code', id, 'promotion code');
  const after = clone(before);
  if (c.p.has('active')) after.active = c.p.bool('active');
  after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'promotion_code', after);
  updated(c, 'promotion_code.updated', before, after);
  return after;
}

/** The coupon a promotion code stands for, if the code may be redeemed now by this customer. */
export function redeemPromotionCode(c: Call, id: string, customer: string, param: string): { promo: Obj; coupon: string } {
  const promo = mustLoad(c, 'promotion_code', id, 'promotion code', param);
  const usable = promo.active === true &&
    (typeof promo.expires_at !== 'number' || promo.expires_at > c.now) &&
    (typeof promo.max_redemptions !== 'number' || (promo.times_redeemed as number) < promo.max_redemptions) &&
    (promo.customer === null || promo.customer === customer);
  if (!usable) throw invalid(`This promotion code cannot be redeemed: ${promo.code as string}`, param);
  const before = clone(promo);
  promo.times_redeemed = (promo.times_redeemed as number) + 1;
  save(c, 'promotion_code', promo);
  updated(c, 'promotion_code.updated', before, promo);
  return { promo, coupon: (promo.promotion as Obj).coupon as string };
}

function createPortalSession(c: Call): Obj {
  const customer = c.p.reqStr('customer');
  mustLoad(c, 'customer', customer, 'customer', 'customer');
  const returnUrl = c.p.str('return_url') ?? null;
  if (returnUrl !== null && !/^https?:\/\//.test(returnUrl)) throw invalid('Not a valid URL', 'return_url', 'url_invalid');
  const id = c.ctx.id('bps_', 24);
  const session: Obj = {
    id, object: 'billing_portal.session', configuration: c.p.str('configuration') ?? `bpc_${c.acct.slice(5)}default`,
    created: c.now, customer, customer_account: null, flow: null, livemode: false, locale: c.p.str('locale') ?? null,
    on_behalf_of: null, return_url: returnUrl, url: `https://billing.stripe.com/p/session/test_${c.ctx.id('', 32)}`,
  };
  event(c, 'billing_portal.session.created', session);
  return session;
}

export const promotionRoutes: Route[] = [
  route('promotion_codes.create', 'POST', '/v1/promotion_codes', createPromotionCode),
  route('promotion_codes.list', 'GET', '/v1/promotion_codes', (c) => {
    const coupon = c.p.str('coupon');
    // Stripe's `code` filter ignores case, as codes do at checkout.
    const code = c.p.str('code');
    return listOf(c, 'promotion_code', '/v1/promotion_codes', [boolEq(c, 'active'), code === undefined ? undefined : matching('promotion_code', 'code', code), eq(c, 'customer'),
      coupon === undefined ? undefined : (o) => (o.promotion as Obj).coupon === coupon]);
  }),
  route('promotion_codes.retrieve', 'GET', '/v1/promotion_codes/:id', (c) => mustLoad(c, 'promotion_code', c.req.params.id as string, 'promotion code')),
  route('promotion_codes.update', 'POST', '/v1/promotion_codes/:id', updatePromotionCode),
  route('billing_portal.sessions.create', 'POST', '/v1/billing_portal/sessions', createPortalSession),
];
