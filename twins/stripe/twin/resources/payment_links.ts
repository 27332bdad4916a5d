/**
 * Payment links: a shareable `url` for fixed line items. Paying one makes a Checkout Session
 * (with `payment_link` set) and completes it; the twin-only
 * `POST /v1/test_helpers/payment_links/:id/complete` plays the customer.
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid, paramMissing } from '../errors.js';
import { event, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import { Params } from '../lib/params.js';
import { insert, load, mustLoad, save } from '../lib/store.js';
import { boolEq, listOf } from '../lib/lists.js';
import { clone, isObj, type Obj } from '../lib/util.js';
import { complete, createSession } from './checkout.js';

function afterCompletion(p: Params | null | undefined): Obj {
  if (p === undefined || p === null) return { hosted_confirmation: { custom_message: null }, type: 'hosted_confirmation' };
  const type = p.oneOf('type', ['hosted_confirmation', 'redirect'] as const) ?? 'hosted_confirmation';
  if (type === 'redirect') {
    const url = p.obj('redirect')?.str('url');
    if (url === undefined) throw paramMissing('after_completion[redirect][url]');
    return { redirect: { url }, type };
  }
  return { hosted_confirmation: { custom_message: p.obj('hosted_confirmation')?.str('custom_message') ?? null }, type };
}

function createLink(c: Call): Obj {
  const items = c.p.objects('line_items');
  if (items === undefined || items.length === 0) throw paramMissing('line_items');
  const stored = items.map((p) => {
    const priceId = p.reqStr('price');
    const price = mustLoad(c, 'price', priceId, 'price', p.name('price'));
    return { price: priceId, quantity: p.int('quantity', 1) ?? 1, currency: price.currency, recurring: price.type === 'recurring' };
  });
  const currencies = new Set(stored.map((s) => s.currency));
  if (currencies.size > 1) throw invalid('All prices on a payment link must have the same currency.', 'line_items');
  const subscription = stored.some((s) => s.recurring);
  const piData = c.p.obj('payment_intent_data');
  const subData = c.p.obj('subscription_data');
  const limit = c.p.obj('restrictions')?.obj('completed_sessions')?.int('limit', 1);
  const id = c.ctx.id('plink_', 24);
  const link: Obj = {
    id, object: 'payment_link', active: c.p.bool('active') ?? true, after_completion: afterCompletion(c.p.obj('after_completion')),
    allow_promotion_codes: c.p.bool('allow_promotion_codes') ?? false, application: null, application_fee_amount: null,
    application_fee_percent: null, automatic_tax: { enabled: false, liability: null }, billing_address_collection: 'auto',
    consent_collection: null, currency: [...currencies][0], custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer_creation: subscription ? 'always' : (c.p.oneOf('customer_creation', ['always', 'if_required'] as const) ?? 'if_required'),
    inactive_message: c.p.nullableStr('inactive_message') ?? null, invoice_creation: null, livemode: false, managed_payments: null,
    metadata: applyMetadata(undefined, c.p.get('metadata')), on_behalf_of: null,
    payment_intent_data: piData === undefined || piData === null ? null : {
      capture_method: null, description: piData.str('description') ?? null, metadata: applyMetadata(undefined, piData.get('metadata')),
      setup_future_usage: null, statement_descriptor: null, statement_descriptor_suffix: null, transfer_group: null,
    },
    payment_method_collection: 'always', payment_method_options: null, payment_method_types: null,
    phone_number_collection: { enabled: false },
    restrictions: limit === undefined ? null : { completed_sessions: { count: 0, limit } },
    shipping_address_collection: null, shipping_options: [], submit_type: 'auto',
    subscription_data: subData === undefined || subData === null ? null : {
      description: subData.str('description') ?? null, invoice_settings: { issuer: { type: 'self' } },
      metadata: applyMetadata(undefined, subData.get('metadata')), trial_period_days: subData.int('trial_period_days', 1, 730) ?? null,
      trial_settings: null,
    },
    tax_id_collection: { enabled: false, required: 'never' }, transfer_data: null,
    url: `https://buy.stripe.com/test_${c.ctx.id('', 20)}`,
  };
  insert(c, 'payment_link', link);
  c.tree.put('payment_link.line_items', `${c.acct}/${id}`, stored.map(({ price, quantity }) => ({ price, quantity })));
  event(c, 'payment_link.created', link);
  return link;
}

function updateLink(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'payment_link', id, 'payment link');
  const link = clone(before);
  if (c.p.has('active')) link.active = c.p.bool('active');
  if (c.p.has('after_completion')) link.after_completion = afterCompletion(c.p.obj('after_completion'));
  if (c.p.has('allow_promotion_codes')) link.allow_promotion_codes = c.p.bool('allow_promotion_codes');
  if (c.p.has('inactive_message')) link.inactive_message = c.p.nullableStr('inactive_message') ?? null;
  link.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'payment_link', link);
  updated(c, 'payment_link.updated', before, link);
  return link;
}

/** The customer pays the link (twin-only test helper): a Checkout Session made and completed. */
function payLink(c: Call): Obj {
  const id = c.req.params.id as string;
  const link = clone(mustLoad(c, 'payment_link', id, 'payment link'));
  if (link.active !== true) throw invalid((link.inactive_message as string | null) ?? 'This payment link is no longer active.');
  const items = c.tree.get<{ price: string; quantity: number }[]>('payment_link.line_items', `${c.acct}/${id}`) ?? [];
  let mode = 'payment';
  for (const item of items) if (load(c, 'price', item.price)?.type === 'recurring') mode = 'subscription';
  const raw: Obj = { mode, line_items: items.map((i) => ({ price: i.price, quantity: String(i.quantity) })) };
  if (link.customer_creation === 'always' && mode === 'payment') raw.customer_creation = 'always';
  if (isObj(link.payment_intent_data)) raw.payment_intent_data = { metadata: link.payment_intent_data.metadata, ...(link.payment_intent_data.description === null ? {} : { description: link.payment_intent_data.description }) };
  if (isObj(link.subscription_data)) {
    raw.subscription_data = { metadata: link.subscription_data.metadata, ...(link.subscription_data.trial_period_days === null ? {} : { trial_period_days: String(link.subscription_data.trial_period_days) }) };
  }
  const session = createSession({ ...c, p: new Params(raw) });
  session.payment_link = id;
  save(c, 'checkout.session', session);
  const done = complete({ ...c, req: { ...c.req, params: { id: session.id as string } }, p: c.p });
  if (isObj(link.restrictions) && isObj(link.restrictions.completed_sessions)) {
    const cs = link.restrictions.completed_sessions;
    cs.count = (cs.count as number) + 1;
    if ((cs.count as number) >= (cs.limit as number)) link.active = false;
    save(c, 'payment_link', link);
  }
  return done;
}

export const paymentLinkRoutes: Route[] = [
  route('payment_links.create', 'POST', '/v1/payment_links', createLink),
  route('payment_links.list', 'GET', '/v1/payment_links', (c) => listOf(c, 'payment_link', '/v1/payment_links', [boolEq(c, 'active')])),
  route('payment_links.retrieve', 'GET', '/v1/payment_links/:id', (c) => mustLoad(c, 'payment_link', c.req.params.id as string, 'payment link')),
  route('payment_links.update', 'POST', '/v1/payment_links/:id', updateLink),
  route('payment_links.listLineItems', 'GET', '/v1/payment_links/:id/line_items', (c) => {
    const id = c.req.params.id as string;
    mustLoad(c, 'payment_link', id, 'payment link');
    const items = c.tree.get<{ price: string; quantity: number }[]>('payment_link.line_items', `${c.acct}/${id}`) ?? [];
    const data = items.map((i, n) => {
      const price = load(c, 'price', i.price) ?? { id: i.price };
      const amount = ((price.unit_amount as number | null) ?? 0) * i.quantity;
      return { id: `li_${id.slice(6, 20)}${n}`, object: 'item', amount_discount: 0, amount_subtotal: amount, amount_tax: 0, amount_total: amount, currency: price.currency, description: null, price, quantity: i.quantity };
    });
    return { object: 'list', data, has_more: false, url: `/v1/payment_links/${id}/line_items` };
  }),
  route('test_helpers.payment_links.complete', 'POST', '/v1/test_helpers/payment_links/:id/complete', payLink),
];
