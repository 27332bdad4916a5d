/**
 * The legacy card APIs older integrations still call: tokens (`tok_…`), cards saved on a
 * customer as sources, and charges made directly (`POST /v1/charges`) with capture later.
 * Test tokens (`tok_visa`, `tok_chargeDeclined`, …) behave as their cards do.
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { StripeError, invalid, missing } from '../errors.js';
import { event, insertWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import { insert, load, mustLoad, save, unlist } from '../lib/store.js';
import { is, listOf, newestWhere } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';
import { TEST_CARDS, cardFor, tokenNumber, type Behaviour, type TestCard } from './cards.js';
import { fingerprint, rawCard, tokenExpiry } from './payment_methods.js';
import { balanceTxn, capturedHooks, makeCharge, stripeFee } from './payments.js';
import { currency, minimumCharge, shipping } from './shared.js';

const DAY = 86_400;
const BRAND: Record<string, string> = {
  visa: 'Visa', mastercard: 'MasterCard', amex: 'American Express', discover: 'Discover', diners: 'Diners Club',
  jcb: 'JCB', unionpay: 'UnionPay', unknown: 'Unknown',
};

function cardObject(c: Call, t: TestCard, exp: { month: number; year: number }, cvc: boolean, name: string | null): Obj {
  return {
    id: c.ctx.id('card_', 24), object: 'card', address_city: null, address_country: null, address_line1: null,
    address_line1_check: null, address_line2: null, address_state: null, address_zip: null, address_zip_check: null,
    brand: BRAND[t.brand] ?? 'Unknown', country: t.country, customer: null, cvc_check: cvc ? 'pass' : null,
    dynamic_last4: null, exp_month: exp.month, exp_year: exp.year, fingerprint: fingerprint(c, t.number),
    funding: t.funding, last4: t.number.slice(-4), metadata: {}, name, regulated_status: 'unregulated',
    tokenization_method: null,
  };
}

function behaviourOfCard(c: Call, card: Obj): Behaviour {
  for (const t of TEST_CARDS) if (fingerprint(c, t.number) === card.fingerprint) return t.behaviour;
  return { kind: 'succeed' };
}

function createToken(c: Call): Obj {
  const card = c.p.obj('card');
  if (card === undefined || card === null) throw invalid('You must supply either a card, customer, PII data, bank account, or account legal entity to create a token.', 'card');
  const { number, month, year } = rawCard(c, card);
  // A token's card also names its networks; a saved card does not.
  const token: Obj = {
    id: c.ctx.id('tok_', 24), object: 'token', card: { ...cardObject(c, cardFor(number), { month, year }, card.has('cvc'), card.nullableStr('name') ?? null), networks: { preferred: null } },
    client_ip: null, created: c.now, livemode: false, type: 'card', used: false,
  };
  insert(c, 'token', token);
  return token;
}

/** The card a source names: a test token (a fresh card each time), a token used once, or a saved card. */
function cardFromSource(c: Call, source: string, param: string): Obj {
  const number = tokenNumber(source);
  if (number !== undefined && source.startsWith('tok_')) return cardObject(c, cardFor(number), tokenExpiry(c), true, null);
  if (source.startsWith('tok_')) {
    const token = load(c, 'token', source);
    if (token === undefined) throw missing('token', source, param);
    if (token.used === true) throw invalid(`You cannot use a Stripe token more than once: ${source}.`, param, 'token_already_used');
    token.used = true;
    save(c, 'token', token);
    const { networks: _networks, ...card } = clone(token.card as Obj);
    return card;
  }
  const card = load(c, 'card', source);
  if (card === undefined) throw missing('source', source, param);
  return card;
}

function createSource(c: Call): Obj {
  const customerId = c.req.params.customer as string;
  const before = mustLoad(c, 'customer', customerId, 'customer', 'customer');
  const card = cardFromSource(c, c.p.reqStr('source'), 'source');
  if (card.customer !== null) throw invalid('This card is already saved on a customer.', 'source');
  const b = behaviourOfCard(c, card);
  if (b.kind === 'decline' && b.onlyCharge !== true) {
    throw new StripeError(402, 'card_error', b.message, { code: b.code, decline_code: b.decline_code, param: b.param ?? '' });
  }
  card.customer = customerId;
  card.metadata = applyMetadata(undefined, c.p.get('metadata'));
  insertWithEvent(c, 'card', card, 'customer.source.created');
  if (before.default_source === null) {
    const after = clone(before);
    after.default_source = card.id;
    save(c, 'customer', after);
    updated(c, 'customer.updated', before, after);
  }
  return card;
}

function ownCard(c: Call, customerId: string, id: string): Obj {
  const card = load(c, 'card', id);
  if (card === undefined || card.customer !== customerId) throw missing('source', id);
  return card;
}

function deleteSource(c: Call): Obj {
  const customerId = c.req.params.customer as string;
  const id = c.req.params.id as string;
  const customer = mustLoad(c, 'customer', customerId, 'customer', 'customer');
  const card = ownCard(c, customerId, id);
  unlist(c, 'card', id);
  event(c, 'customer.source.deleted', card);
  if (customer.default_source === id) {
    const after = clone(customer);
    // The newest remaining card becomes the default, as at Stripe.
    let next: string | null = null;
    for (const rec of newestWhere(c, 'card', is('customer', customerId))) {
      if (rec.o.id !== id) { next = rec.o.id as string; break; }
    }
    after.default_source = next;
    save(c, 'customer', after);
    updated(c, 'customer.updated', customer, after);
  }
  return { id, object: 'card', customer: customerId, deleted: true };
}

function createCharge(c: Call): Obj {
  const amount = c.p.reqInt('amount', 1, 99_999_999);
  const cur = currency(c.p);
  if (amount < minimumCharge(cur)) throw invalid(`Amount must be at least ${minimumCharge(cur)} cents`, 'amount', 'amount_too_small');
  const customerId = c.p.str('customer') ?? null;
  let customer: Obj | undefined;
  if (customerId !== null) customer = mustLoad(c, 'customer', customerId, 'customer', 'customer');
  const source = c.p.str('source');
  let card: Obj;
  if (source !== undefined) {
    card = cardFromSource(c, source, 'source');
    if (card.customer !== null && card.customer !== customerId) throw missing('source', source, 'source');
  } else if (customer !== undefined) {
    if (typeof customer.default_source !== 'string') {
      throw invalid('Cannot charge a customer that has no active card', 'card', 'missing');
    }
    card = mustLoad(c, 'card', customer.default_source, 'source', 'source');
  } else {
    throw invalid('Must provide source or customer.', 'source', 'parameter_missing');
  }
  const capture = c.p.bool('capture') ?? true;
  const intentShape: Obj = {
    id: null, amount, currency: cur, customer: customerId, description: c.p.nullableStr('description') ?? null,
    metadata: applyMetadata(undefined, c.p.get('metadata')), receipt_email: c.p.nullableStr('receipt_email') ?? null,
    shipping: shipping(c.p.obj('shipping')), statement_descriptor: c.p.nullableStr('statement_descriptor') ?? null,
    statement_descriptor_suffix: c.p.nullableStr('statement_descriptor_suffix') ?? null,
  };
  const pmShape: Obj = {
    id: card.id,
    billing_details: { address: null, email: null, name: card.name ?? null, phone: null, tax_id: null },
    card: {
      brand: Object.entries(BRAND).find(([, v]) => v === card.brand)?.[0] ?? 'unknown', checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: card.cvc_check },
      country: card.country, exp_month: card.exp_month, exp_year: card.exp_year, fingerprint: card.fingerprint, funding: card.funding, last4: card.last4,
    },
  };
  const b = behaviourOfCard(c, card);
  const failure = b.kind === 'decline' ? b
    : b.kind === 'succeed' ? undefined
    : { kind: 'decline' as const, code: 'card_declined', decline_code: 'authentication_required', message: 'Your card was declined. This transaction requires authentication.' };
  const ch = makeCharge(c, intentShape, pmShape, failure === undefined ? { ok: true } : { ok: false, failure }, capture, b.kind === 'succeed' && b.bypassPending === true);
  ch.source = clone(card);
  save(c, 'charge', ch);
  if (failure !== undefined) {
    throw new StripeError(402, 'card_error', failure.message, {
      code: failure.code, decline_code: failure.decline_code, charge: ch.id,
      ...(failure.param === undefined ? {} : { param: failure.param }),
    }, true);
  }
  if (capture) for (const hook of capturedHooks) hook(c, ch, b);
  return load(c, 'charge', ch.id as string) ?? ch;
}

function captureCharge(c: Call): Obj {
  const id = c.req.params.id as string;
  const ch = clone(mustLoad(c, 'charge', id, 'charge'));
  if (ch.captured === true) throw invalid(`Charge ${id} has already been captured.`, undefined, 'charge_already_captured');
  if (ch.status !== 'succeeded') throw invalid(`Charge ${id} cannot be captured because it has a status of ${ch.status as string}.`);
  if (typeof ch.payment_intent === 'string') throw invalid(`This charge belongs to a PaymentIntent; capture the PaymentIntent (${ch.payment_intent}) instead.`);
  const amount = c.p.int('amount', 1) ?? (ch.amount as number);
  if (amount > (ch.amount as number)) throw invalid(`The amount to capture (${amount}) is greater than the charge's amount (${ch.amount as number}).`, 'amount', 'amount_too_large');
  const txn = balanceTxn(c, id, 'charge', amount, ch.currency as string, (ch.description as string | null) ?? null, stripeFee(amount), c.now + 2 * DAY);
  const prev = clone(ch);
  ch.captured = true;
  ch.amount_captured = amount;
  ch.amount_refunded = (ch.amount as number) - amount;
  ch.balance_transaction = txn.id;
  save(c, 'charge', ch);
  event(c, 'charge.captured', ch, { amount_captured: prev.amount_captured, captured: false, balance_transaction: null });
  const card = ch.source as Obj | null;
  if (card !== null) for (const hook of capturedHooks) hook(c, ch, behaviourOfCard(c, card));
  return load(c, 'charge', id) ?? ch;
}

export const legacyRoutes: Route[] = [
  route('tokens.create', 'POST', '/v1/tokens', createToken),
  route('tokens.retrieve', 'GET', '/v1/tokens/:id', (c) => mustLoad(c, 'token', c.req.params.id as string, 'token')),
  route('customers.createSource', 'POST', '/v1/customers/:customer/sources', createSource),
  route('customers.listSources', 'GET', '/v1/customers/:customer/sources', (c) => {
    const customerId = c.req.params.customer as string;
    mustLoad(c, 'customer', customerId, 'customer', 'customer');
    return listOf(c, 'card', `/v1/customers/${customerId}/sources`, [is('customer', customerId)]);
  }),
  route('customers.retrieveSource', 'GET', '/v1/customers/:customer/sources/:id', (c) => ownCard(c, c.req.params.customer as string, c.req.params.id as string)),
  route('customers.deleteSource', 'DELETE', '/v1/customers/:customer/sources/:id', deleteSource),
  route('charges.create', 'POST', '/v1/charges', createCharge),
  route('charges.capture', 'POST', '/v1/charges/:id/capture', captureCharge),
];
