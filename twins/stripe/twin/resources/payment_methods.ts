/**
 * PaymentMethods of type card: from test tokens (`pm_card_visa`, …) and test card numbers;
 * attach, detach, update, list (also under a customer).
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { StripeError, invalid, missing, paramMissing } from '../errors.js';
import { saveWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import type { Params } from '../lib/params.js';
import { insert, load, mustLoad, newId, save } from '../lib/store.js';
import { eq, is, listOf } from '../lib/lists.js';
import { clone, hash62, isObj, type Obj } from '../lib/util.js';
import { TEST_CARDS, cardFor, luhn, tokenNumber, type Behaviour, type TestCard } from './cards.js';
import { address } from './shared.js';

export function fingerprint(c: Call, number: string): string {
  return hash62(`${c.acct}:${number}`, 16);
}

/** The behaviour of a stored card PaymentMethod, found again from its fingerprint. */
export function behaviourOf(c: Call, pm: Obj): Behaviour {
  const card = pm.card as Obj | undefined;
  const fp = card?.fingerprint;
  for (const t of TEST_CARDS) if (fingerprint(c, t.number) === fp) return t.behaviour;
  return { kind: 'succeed' };
}

function billingDetails(p: Params | null | undefined, current?: Obj): Obj {
  const cur = current ?? { address: null, email: null, name: null, phone: null, tax_id: null };
  if (p === undefined || p === null) return clone(cur);
  const out = clone(cur);
  if (p.has('address')) out.address = address(p.obj('address'), cur.address);
  for (const k of ['email', 'name', 'phone']) if (p.has(k)) out[k] = p.nullableStr(k) ?? null;
  if (out.address === null) {
    out.address = { city: null, country: null, line1: null, line2: null, postal_code: null, state: null };
  }
  return out;
}

export function cardError(message: string, code: string, param?: string): StripeError {
  const fields: Obj = { code };
  if (param !== undefined) fields.param = param;
  return new StripeError(402, 'card_error', message, fields);
}

/** A card given by number (`card[number]`, `card[exp_month]`, `card[exp_year]`), checked as Stripe checks it. */
export function rawCard(c: Call, card: Params): { number: string; month: number; year: number } {
  const number = card.reqStr('number').replace(/[\s-]/g, '');
  if (!luhn(number)) throw cardError('Your card number is incorrect.', 'incorrect_number', 'card[number]');
  const month = card.reqInt('exp_month');
  const year4 = card.reqInt('exp_year');
  const year = year4 < 100 ? 2000 + year4 : year4;
  if (month < 1 || month > 12) throw cardError("Your card's expiration month is invalid.", 'invalid_expiry_month', 'card[exp_month]');
  const now = new Date(c.nowMs);
  if (year * 12 + month - 1 < now.getUTCFullYear() * 12 + now.getUTCMonth()) throw cardError("Your card's expiration year is invalid.", 'invalid_expiry_year', 'card[exp_year]');
  return { number, month, year };
}

function newCardPm(c: Call, card: TestCard, exp: { month: number; year: number }, cvc: boolean, p?: Params): Obj {
  const billing = billingDetails(p?.obj('billing_details'));
  const pm: Obj = {
    id: newId(c, 'payment_method', 'pm_', 24),
    object: 'payment_method',
    allow_redisplay: p?.oneOf('allow_redisplay', ['always', 'limited', 'unspecified'] as const) ?? 'unspecified',
    billing_details: billing,
    card: {
      brand: card.brand,
      checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: cvc ? 'pass' : null },
      country: card.country,
      display_brand: card.brand === 'amex' ? 'american_express' : card.brand,
      exp_month: exp.month,
      exp_year: exp.year,
      fingerprint: fingerprint(c, card.number),
      funding: card.funding,
      generated_from: null,
      last4: card.number.slice(-4),
      networks: { available: [card.brand], preferred: null },
      regulated_status: 'unregulated',
      three_d_secure_usage: { supported: true },
      wallet: null,
    },
    created: c.now,
    customer: null,
    customer_account: null,
    livemode: false,
    metadata: applyMetadata(undefined, p?.get('metadata')),
    type: 'card',
  };
  return pm;
}

export function tokenExpiry(c: Call): { month: number; year: number } {
  const d = new Date(c.nowMs);
  return { month: d.getUTCMonth() + 1, year: d.getUTCFullYear() + 1 };
}

/**
 * A PaymentMethod by id. A test token (`pm_card_visa`) makes a new PaymentMethod each time
 * it is used, as Stripe does; anything else must exist in this account.
 */
export function resolvePaymentMethod(c: Call, id: string, param: string): Obj {
  const number = tokenNumber(id);
  if (number !== undefined && id.startsWith('pm_card_')) {
    const pm = newCardPm(c, cardFor(number), tokenExpiry(c), true);
    insert(c, 'payment_method', pm);
    return pm;
  }
  const pm = load(c, 'payment_method', id);
  if (pm === undefined) throw missing('PaymentMethod', id, param);
  return pm;
}

/** Attaches (saving the card for later) or refuses as Stripe does for a card that declines. */
export function attachTo(c: Call, pm: Obj, customerId: string): Obj {
  if (pm.customer !== null && pm.customer !== customerId) {
    throw invalid('The payment method you provided has already been attached to a customer.', 'payment_method', 'payment_method_unexpected_state');
  }
  if (pm.customer === customerId) return pm;
  const b = behaviourOf(c, pm);
  if (b.kind === 'decline' && b.onlyCharge !== true) {
    throw new StripeError(402, 'card_error', b.message, { code: b.code, decline_code: b.decline_code, param: b.param ?? '' });
  }
  pm.customer = customerId;
  saveWithEvent(c, 'payment_method', pm, 'payment_method.attached');
  return pm;
}

function createPm(c: Call): Obj {
  const type = c.p.reqStr('type');
  if (type !== 'card') {
    throw invalid(`The payment method type \`${type}\` is not supported by the twin yet; use \`card\`.`, 'type');
  }
  const card = c.p.obj('card');
  if (card === undefined || card === null) throw paramMissing('card');
  const token = card.str('token');
  let pm: Obj;
  if (token !== undefined) {
    const number = tokenNumber(token);
    if (number === undefined || !token.startsWith('tok_')) throw missing('token', token, 'card[token]');
    pm = newCardPm(c, cardFor(number), tokenExpiry(c), true, c.p);
  } else {
    const { number, month, year } = rawCard(c, card);
    const cvc = card.str('cvc');
    if (cvc !== undefined && !/^\d{3,4}$/.test(cvc)) throw cardError("Your card's security code is invalid.", 'invalid_cvc', 'card[cvc]');
    pm = newCardPm(c, cardFor(number), { month, year }, cvc !== undefined, c.p);
  }
  insert(c, 'payment_method', pm);
  return pm;
}

function retrievePm(c: Call): Obj {
  const id = c.req.params.id as string;
  const number = tokenNumber(id);
  if (number !== undefined && id.startsWith('pm_card_')) {
    // Retrieving a token shows a fresh PaymentMethod for it without saving one.
    return newCardPm(c, cardFor(number), tokenExpiry(c), true);
  }
  return mustLoad(c, 'payment_method', id, 'PaymentMethod');
}

function updatePm(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'payment_method', id, 'PaymentMethod');
  const after = clone(before);
  if (c.p.has('billing_details')) after.billing_details = billingDetails(c.p.obj('billing_details'), before.billing_details as Obj);
  after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  const card = c.p.obj('card');
  if (card !== undefined && card !== null && isObj(after.card)) {
    const m = card.int('exp_month', 1, 12);
    const y = card.int('exp_year');
    if (m !== undefined) after.card.exp_month = m;
    if (y !== undefined) after.card.exp_year = y;
  }
  if (c.p.has('allow_redisplay')) after.allow_redisplay = c.p.oneOf('allow_redisplay', ['always', 'limited', 'unspecified'] as const);
  save(c, 'payment_method', after);
  updated(c, 'payment_method.updated', before, after);
  return after;
}

function attachPm(c: Call): Obj {
  const customer = c.p.reqStr('customer');
  mustLoad(c, 'customer', customer, 'customer', 'customer');
  const pm = resolvePaymentMethod(c, c.req.params.id as string, 'payment_method');
  return attachTo(c, pm, customer);
}

function detachPm(c: Call): Obj {
  const id = c.req.params.id as string;
  const pm = mustLoad(c, 'payment_method', id, 'PaymentMethod');
  if (pm.customer === null) {
    throw invalid('The payment method you provided is not attached to a customer so detachment is impossible.', undefined, 'payment_method_unexpected_state');
  }
  const before = clone(pm);
  pm.customer = null;
  saveWithEvent(c, 'payment_method', pm, 'payment_method.detached');
  // A detached card can no longer be the customer's default.
  const cus = load(c, 'customer', before.customer as string);
  if (cus !== undefined && isObj(cus.invoice_settings) && cus.invoice_settings.default_payment_method === id) {
    const prior = clone(cus);
    cus.invoice_settings.default_payment_method = null;
    save(c, 'customer', cus);
    updated(c, 'customer.updated', prior, cus);
  }
  return pm;
}

function listPms(c: Call, customer?: string): Obj {
  const url = customer === undefined ? '/v1/payment_methods' : `/v1/customers/${customer}/payment_methods`;
  if (customer !== undefined) mustLoad(c, 'customer', customer, 'customer', 'customer');
  const byCustomer = customer !== undefined ? is('customer', customer) : eq(c, 'customer');
  return listOf(c, 'payment_method', url, [byCustomer, eq(c, 'type')]);
}

export const paymentMethodRoutes: Route[] = [
  route('payment_methods.create', 'POST', '/v1/payment_methods', createPm),
  route('payment_methods.list', 'GET', '/v1/payment_methods', (c) => listPms(c)),
  route('payment_methods.retrieve', 'GET', '/v1/payment_methods/:id', retrievePm),
  route('payment_methods.update', 'POST', '/v1/payment_methods/:id', updatePm),
  route('payment_methods.attach', 'POST', '/v1/payment_methods/:id/attach', attachPm),
  route('payment_methods.detach', 'POST', '/v1/payment_methods/:id/detach', detachPm),
  route('customers.listPaymentMethods', 'GET', '/v1/customers/:customer/payment_methods', (c) => listPms(c, c.req.params.customer as string)),
  route('customers.retrievePaymentMethod', 'GET', '/v1/customers/:customer/payment_methods/:id', (c) => {
    const pm = mustLoad(c, 'payment_method', c.req.params.id as string, 'PaymentMethod');
    if (pm.customer !== c.req.params.customer) throw missing('PaymentMethod', c.req.params.id as string);
    return pm;
  }),
];
