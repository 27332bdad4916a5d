/**
 * Payment intents, charges, refunds and balance transactions: create, confirm (also
 * `confirm: true` at creation), manual capture (full and partial), cancel; declines as
 * `card_error`s that keep `last_payment_error`; `requires_action` for cards that need 3D Secure.
 */
import type { Move, Route } from '../../../../sdk/twin/types.js';
import { route, runMove } from '../lib/call.js';
import { cancelMove, type Call } from '../lib/request.js';
import { StripeError, invalid } from '../errors.js';
import { event, insertWithEvent, saveWithEvent, updated } from '../lib/events.js';
import { includedList, objectsOf, registerIncludable } from '../lib/expand.js';
import { applyMetadata } from '../lib/metadata.js';
import { Params } from '../lib/params.js';
import { search } from '../lib/search.js';
import { insert, load, mustLoad, newId, save } from '../lib/store.js';
import { eq, is, listOf, newestWhere } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';
import { balanceSums, recordBalance } from './balance.js';
import type { Behaviour } from './cards.js';
import { attachTo, behaviourOf, resolvePaymentMethod } from './payment_methods.js';
import { currency, minimumCharge, nullable, shipping } from './shared.js';

const DAY = 86_400;
const CANCELABLE = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action', 'processing'];

/** Stripe's standard US card pricing, 2.9% + 30¢, as the fee on every captured charge. */
export function stripeFee(amount: number): number {
  return Math.round(amount * 0.029) + 30;
}

function money(amount: number, cur: string): string {
  return `${cur === 'usd' ? '$' : ''}${(amount / 100).toFixed(2)}${cur === 'usd' ? '' : ' ' + cur.toUpperCase()}`;
}

function unexpected(message: string, param?: string): StripeError {
  return invalid(message, param, 'payment_intent_unexpected_state');
}

// ---- balance transactions ------------------------------------------------------------------

export function balanceTxn(c: Call, source: string, type: 'charge' | 'refund' | 'payment' | 'adjustment' | 'payout', amount: number, cur: string, description: string | null, fee: number, availableOn: number): Obj {
  const txn: Obj = {
    id: newId(c, 'balance_transaction', 'txn_', 24),
    object: 'balance_transaction',
    amount,
    available_on: availableOn,
    balance_type: 'payments',
    created: c.now,
    currency: cur,
    description,
    exchange_rate: null,
    fee,
    fee_details: fee === 0 ? [] : [{ amount: fee, application: null, currency: cur, description: 'Stripe processing fees', type: 'stripe_fee' }],
    net: amount - fee,
    reporting_category: type === 'refund' ? 'refund' : type === 'adjustment' ? 'dispute' : type === 'payout' ? 'payout' : 'charge',
    source,
    status: availableOn <= c.now ? 'available' : 'pending',
    type,
  };
  insert(c, 'balance_transaction', txn);
  recordBalance(c, txn);
  return txn;
}

/** A balance transaction's status moves from pending to available with the clock. */
export function txnNow(c: Call, txn: Obj): Obj {
  return { ...txn, status: (txn.available_on as number) <= c.now ? 'available' : 'pending' };
}

function balance(c: Call): Obj {
  const { available, pending } = balanceSums(c);
  if (available.size === 0) { available.set('usd', 0); pending.set('usd', 0); }
  const rows = (m: Map<string, number>): Obj[] =>
    [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([cur, amount]) => ({ amount, currency: cur, source_types: { card: amount } }));
  return { object: 'balance', available: rows(available), livemode: false, pending: rows(pending) };
}

// ---- charges -------------------------------------------------------------------------------

export interface Outcome {
  ok: boolean;
  failure?: Extract<Behaviour, { kind: 'decline' }> | { kind: 'decline'; code: string; decline_code: string; message: string; param?: string };
}

/** Makes and stores a charge for a PaymentIntent (or, for the legacy Charges API, an intent-shaped request). */
export function makeCharge(c: Call, pi: Obj, pm: Obj, outcome: Outcome, capture: boolean, bypassPending: boolean): Obj {
  const id = newId(c, 'charge', 'ch_', 24);
  const amount = pi.amount as number;
  const cur = pi.currency as string;
  const card = (pm.card ?? {}) as Obj;
  const f = outcome.failure;
  let txn: Obj | null = null;
  if (outcome.ok && capture) {
    txn = balanceTxn(c, id, 'charge', amount, cur, (pi.description as string | null) ?? null, stripeFee(amount), bypassPending ? c.now : c.now + 2 * DAY);
  }
  const charge: Obj = {
    id,
    object: 'charge',
    amount,
    amount_captured: outcome.ok && capture ? amount : 0,
    amount_refunded: 0,
    application: null,
    application_fee: null,
    application_fee_amount: null,
    balance_transaction: txn === null ? null : txn.id,
    billing_details: clone(pm.billing_details),
    calculated_statement_descriptor: 'TWINKIT',
    captured: outcome.ok && capture,
    created: c.now,
    currency: cur,
    customer: pi.customer ?? null,
    description: pi.description ?? null,
    disputed: false,
    failure_balance_transaction: null,
    failure_code: f?.code ?? null,
    failure_message: f?.message ?? null,
    fraud_details: {},
    livemode: false,
    metadata: clone(pi.metadata),
    on_behalf_of: null,
    outcome: outcome.ok
      ? { advice_code: null, network_advice_code: null, network_decline_code: null, network_status: 'approved_by_network', reason: null, risk_level: 'normal', risk_score: 32, seller_message: 'Payment complete.', type: 'authorized' }
      : {
        advice_code: f?.decline_code === 'insufficient_funds' ? 'try_again_later' : 'do_not_try_again',
        network_advice_code: null, network_decline_code: null,
        network_status: f?.decline_code === 'fraudulent' ? 'not_sent_to_network' : 'declined_by_network',
        reason: f?.decline_code ?? null, risk_level: f?.decline_code === 'fraudulent' ? 'highest' : 'normal',
        risk_score: f?.decline_code === 'fraudulent' ? 95 : 32,
        seller_message: f?.decline_code === 'fraudulent' ? 'Stripe blocked this payment as too risky.' : 'The bank did not return any further details with this decline.',
        type: f?.decline_code === 'fraudulent' ? 'blocked' : 'issuer_declined',
      },
    paid: outcome.ok,
    payment_intent: pi.id ?? null,
    payment_method: pm.id,
    payment_method_details: {
      card: {
        amount_authorized: outcome.ok ? amount : null,
        authorization_code: outcome.ok ? '123456' : null,
        brand: card.brand ?? null,
        checks: clone(card.checks ?? null),
        country: card.country ?? null,
        exp_month: card.exp_month ?? null,
        exp_year: card.exp_year ?? null,
        extended_authorization: { status: 'disabled' },
        fingerprint: card.fingerprint ?? null,
        funding: card.funding ?? null,
        incremental_authorization: { status: 'unavailable' },
        installments: null,
        last4: card.last4 ?? null,
        mandate: null,
        multicapture: { status: 'unavailable' },
        network: card.brand ?? null,
        network_token: { used: false },
        network_transaction_id: outcome.ok ? '104557651805572' : null,
        overcapture: { maximum_amount_capturable: amount, status: 'unavailable' },
        regulated_status: 'unregulated',
        three_d_secure: null,
        transaction_link_id: null,
        wallet: null,
      },
      type: 'card',
    },
    receipt_email: pi.receipt_email ?? null,
    receipt_number: null,
    receipt_url: `https://pay.stripe.com/receipts/payment/${id}`,
    refunded: false,
    review: null,
    shipping: clone(pi.shipping ?? null),
    source: null,
    source_transfer: null,
    statement_descriptor: pi.statement_descriptor ?? null,
    statement_descriptor_suffix: pi.statement_descriptor_suffix ?? null,
    status: outcome.ok ? 'succeeded' : 'failed',
    transfer_data: null,
    transfer_group: null,
  };
  insertWithEvent(c, 'charge', charge, outcome.ok ? 'charge.succeeded' : 'charge.failed');
  return charge;
}

// ---- payment intents -----------------------------------------------------------------------

function piBase(c: Call, p: Params): Obj {
  const amount = p.reqInt('amount', 1, 99_999_999);
  const cur = currency(p);
  if (amount < minimumCharge(cur)) {
    throw invalid(`Amount must be at least ${money(minimumCharge(cur), cur)} ${cur}`, 'amount', 'amount_too_small');
  }
  const id = newId(c, 'payment_intent', 'pi_', 24);
  // This API version names the caller's choice `allowed_payment_method_types`; the object
  // keeps both it and the resulting `payment_method_types`.
  const types = p.strings('allowed_payment_method_types');
  if (types !== undefined && types.some((t) => t !== 'card')) {
    throw invalid(`The payment method type \`${types.find((t) => t !== 'card') ?? ''}\` is not supported by the twin yet; use \`card\`.`, 'allowed_payment_method_types');
  }
  const apm = p.obj('automatic_payment_methods');
  const customer = p.str('customer');
  if (customer !== undefined && customer !== '') mustLoad(c, 'customer', customer, 'customer', 'customer');
  return {
    id,
    object: 'payment_intent',
    amount,
    amount_capturable: 0,
    amount_details: { tip: {} },
    amount_received: 0,
    application: null,
    allowed_payment_method_types: types ?? null,
    application_fee_amount: null,
    automatic_payment_methods: types !== undefined ? null : {
      allow_redirects: apm?.oneOf('allow_redirects', ['always', 'never'] as const) ?? 'always',
      enabled: apm?.bool('enabled') ?? true,
    },
    canceled_at: null,
    cancellation_reason: null,
    capture_method: p.oneOf('capture_method', ['automatic', 'automatic_async', 'manual'] as const) ?? 'automatic_async',
    client_secret: `${id}_secret_${c.ctx.id('', 25)}`,
    confirmation_method: p.oneOf('confirmation_method', ['automatic', 'manual'] as const) ?? 'automatic',
    created: c.now,
    currency: cur,
    customer: customer === undefined || customer === '' ? null : customer,
    customer_account: null,
    description: p.nullableStr('description') ?? null,
    excluded_payment_method_types: null,
    last_payment_error: null,
    latest_charge: null,
    livemode: false,
    managed_payments: null,
    metadata: applyMetadata(undefined, p.get('metadata')),
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_configuration_details: null,
    payment_method_options: { card: { installments: null, mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: types ?? ['card'],
    processing: null,
    receipt_email: p.nullableStr('receipt_email') ?? null,
    review: null,
    setup_future_usage: p.oneOf('setup_future_usage', ['off_session', 'on_session'] as const) ?? null,
    shipping: shipping(p.obj('shipping')),
    source: null,
    statement_descriptor: p.nullableStr('statement_descriptor') ?? null,
    statement_descriptor_suffix: p.nullableStr('statement_descriptor_suffix') ?? null,
    status: 'requires_payment_method',
    transfer_data: null,
    transfer_group: p.nullableStr('transfer_group') ?? null,
  };
}

/** Sets the PaymentIntent's payment method (a token makes a new one), checking the customer. */
function usePaymentMethod(c: Call, pi: Obj, id: string): Obj {
  const pm = resolvePaymentMethod(c, id, 'payment_method');
  if (pm.customer !== null && pi.customer !== null && pm.customer !== pi.customer) {
    throw invalid(`The provided PaymentMethod belongs to another customer (${String(pm.customer)}); it cannot be used with this PaymentIntent's customer.`, 'payment_method');
  }
  if (pm.customer !== null && pi.customer === null) {
    throw invalid('The provided PaymentMethod was previously attached to a Customer. To use it with a PaymentIntent, pass the Customer ID as well.', 'payment_method');
  }
  pi.payment_method = pm.id;
  return pm;
}

/**
 * An intent that accepts the Dashboard's payment methods may need a redirect, so Stripe wants
 * a `return_url` to confirm it on-session — even for a card — unless redirects are off.
 */
export function requireReturnUrl(apm: unknown, noun: string): void {
  if (typeof apm !== 'object' || apm === null) return;
  const a = apm as Obj;
  if (a.enabled !== true || a.allow_redirects === 'never') return;
  throw invalid(
    `A \`return_url\` must be specified because this ${noun} is configured to automatically accept the payment methods enabled in the Dashboard, some of which may require a full page redirect to succeed. If you do not want to accept redirect-based payment methods, set \`automatic_payment_methods[enabled]\` to \`true\` and \`automatic_payment_methods[allow_redirects]\` to \`never\` when creating Setup Intents and Payment Intents.`,
    'return_url',
  );
}

function declineError(f: NonNullable<Outcome['failure']>, extra: Obj): StripeError {
  return new StripeError(402, 'card_error', f.message, {
    code: f.code,
    decline_code: f.decline_code,
    ...(f.param === undefined ? {} : { param: f.param }),
    ...extra,
  }, true);
}

/**
 * Confirms: runs the card. Answers the PaymentIntent, or throws a `card_error` after
 * recording the failed attempt (the error keeps its writes).
 */
function confirmPi(c: Call, pi: Obj, p: Params, pmAlreadySet = false): Obj {
  const status = pi.status as string;
  if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(status)) {
    throw unexpected(`You cannot confirm this PaymentIntent because it has a status of ${status}.`);
  }
  const pmParam = pmAlreadySet ? undefined : p.str('payment_method');
  let pm: Obj | undefined;
  if (pmParam !== undefined && pmParam !== '') pm = usePaymentMethod(c, pi, pmParam);
  else if (typeof pi.payment_method === 'string') pm = load(c, 'payment_method', pi.payment_method);
  if (pm === undefined) {
    throw unexpected("You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.");
  }
  if (p.has('receipt_email')) pi.receipt_email = p.nullableStr('receipt_email') ?? null;
  if (p.has('setup_future_usage')) pi.setup_future_usage = p.oneOf('setup_future_usage', ['off_session', 'on_session'] as const) ?? null;
  if (p.has('capture_method')) pi.capture_method = p.oneOf('capture_method', ['automatic', 'automatic_async', 'manual'] as const);
  // `recurring` and `one_off` first: read as a boolean they would be refused.
  const offSessionKind = p.str('off_session');
  const offSession = offSessionKind === 'recurring' || offSessionKind === 'one_off' || p.bool('off_session') === true;
  const returnUrl = p.str('return_url');
  if (!offSession && returnUrl === undefined) requireReturnUrl(pi.automatic_payment_methods, 'Payment Intent');
  const b = behaviourOf(c, pm);
  pi.last_payment_error = null;
  pi.next_action = null;

  const needsAuth = b.kind === 'authenticate_always' || (b.kind === 'authenticate_unless_setup' && !(offSession && pm.customer !== null));
  if (needsAuth && status !== 'requires_action') {
    if (offSession || p.bool('error_on_requires_action') === true) {
      return fail(c, pi, pm, {
        kind: 'decline', code: 'authentication_required', decline_code: 'authentication_required',
        message: 'Your card was declined. This transaction requires authentication.',
      }, false);
    }
    pi.status = 'requires_action';
    pi.next_action = returnUrl !== undefined
      ? { type: 'redirect_to_url', redirect_to_url: { return_url: returnUrl, url: `https://hooks.stripe.com/redirect/authenticate/src_${(pi.id as string).slice(3)}?client_secret=${pi.client_secret as string}` } }
      : { type: 'use_stripe_sdk', use_stripe_sdk: { source: `src_${(pi.id as string).slice(3)}`, stripe_js: `https://hooks.stripe.com/redirect/authenticate/src_${(pi.id as string).slice(3)}`, type: 'three_d_secure_redirect' } };
    saveWithEvent(c, 'payment_intent', pi, 'payment_intent.requires_action');
    return pi;
  }
  if (status === 'requires_action' && needsAuth) {
    // Confirming again does not authenticate: the customer has to (see test_helpers.authenticate).
    save(c, 'payment_intent', pi);
    return pi;
  }
  return charge(c, pi, pm, b);
}

/** Called when a charge is captured, with the card's behaviour (disputes open on some test cards). */
export const capturedHooks: ((c: Call, charge: Obj, b: Behaviour) => void)[] = [];
export function onChargeCaptured(hook: (c: Call, charge: Obj, b: Behaviour) => void): void {
  capturedHooks.push(hook);
}

/** Called when a PaymentIntent succeeds (billing marks the invoice it pays as paid). */
const succeededHooks: ((c: Call, pi: Obj) => void)[] = [];
export function onIntentSucceeded(hook: (c: Call, pi: Obj) => void): void {
  succeededHooks.push(hook);
}

/** Runs the charge for a confirmed PaymentIntent whose card needs nothing more. */
function charge(c: Call, pi: Obj, pm: Obj, b: Behaviour): Obj {
  if (b.kind === 'decline') return fail(c, pi, pm, b, true);
  const manual = pi.capture_method === 'manual';
  const ch = makeCharge(c, pi, pm, { ok: true }, !manual, b.kind === 'succeed' && b.bypassPending === true);
  if (!manual) for (const hook of capturedHooks) hook(c, ch, b);
  pi.latest_charge = ch.id;
  pi.payment_method = pm.id;
  pi.next_action = null;
  if (manual) {
    pi.status = 'requires_capture';
    pi.amount_capturable = pi.amount;
    // An uncaptured card authorization lapses after seven days.
    c.schedules.push({ id: `auth.${c.acct}.${pi.id as string}`, move: 'expireAuthorization', dueAt: new Date((c.now + 7 * DAY) * 1000).toISOString(), data: { acct: c.acct, id: pi.id } });
  } else {
    pi.status = 'succeeded';
    pi.amount_received = pi.amount;
  }
  if (pi.setup_future_usage !== null && typeof pi.customer === 'string' && pm.customer === null) {
    attachTo(c, pm, pi.customer);
  }
  saveWithEvent(c, 'payment_intent', pi, manual ? 'payment_intent.amount_capturable_updated' : 'payment_intent.succeeded');
  if (!manual) for (const hook of succeededHooks) hook(c, pi);
  return pi;
}

function fail(c: Call, pi: Obj, pm: Obj, f: NonNullable<Outcome['failure']>, withCharge: boolean): never {
  const ch = withCharge ? makeCharge(c, pi, pm, { ok: false, failure: f }, false, false) : undefined;
  const lastError: Obj = {
    ...(ch === undefined ? {} : { charge: ch.id }),
    code: f.code,
    decline_code: f.decline_code,
    doc_url: `https://stripe.com/docs/error-codes/${f.code.replace(/_/g, '-')}`,
    message: f.message,
    ...(f.param === undefined ? {} : { param: f.param }),
    payment_method: clone(pm),
    type: 'card_error',
  };
  pi.status = 'requires_payment_method';
  pi.payment_method = null;
  pi.next_action = null;
  pi.last_payment_error = lastError;
  if (ch !== undefined) pi.latest_charge = ch.id;
  saveWithEvent(c, 'payment_intent', pi, 'payment_intent.payment_failed');
  throw declineError(f, {
    ...(ch === undefined ? {} : { charge: ch.id }),
    payment_intent: clone(pi),
    payment_method: clone(pm),
    request_log_url: `https://dashboard.stripe.com/test/logs/${c.requestId}`,
  });
}

function createPi(c: Call): Obj {
  const pi = piBase(c, c.p);
  const pmId = c.p.str('payment_method');
  if (pmId !== undefined && pmId !== '') {
    usePaymentMethod(c, pi, pmId);
    pi.status = 'requires_confirmation';
  }
  insertWithEvent(c, 'payment_intent', pi, 'payment_intent.created');
  // The payment method is already set: confirm without resolving a token a second time.
  if (c.p.bool('confirm') === true) return confirmPi(c, pi, c.p, true);
  return pi;
}

function updatePi(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'payment_intent', id, 'payment_intent');
  const pi = clone(before);
  const status = pi.status as string;
  const open = ['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(status);
  const moneyFields = ['amount', 'currency', 'payment_method', 'customer', 'capture_method', 'allowed_payment_method_types', 'setup_future_usage'];
  for (const k of moneyFields) {
    if (c.p.has(k) && !open) {
      throw unexpected(`You cannot update this PaymentIntent's ${k} because it has a status of ${status}.`, k);
    }
  }
  if (c.p.has('amount')) {
    const amount = c.p.reqInt('amount', 1, 99_999_999);
    pi.amount = amount;
  }
  if (c.p.has('currency')) pi.currency = currency(c.p);
  if ((pi.amount as number) < minimumCharge(pi.currency as string)) {
    throw invalid(`Amount must be at least ${money(minimumCharge(pi.currency as string), pi.currency as string)} ${pi.currency as string}`, 'amount', 'amount_too_small');
  }
  if (c.p.has('customer')) {
    const cus = c.p.nullableStr('customer') ?? null;
    if (cus !== null) mustLoad(c, 'customer', cus, 'customer', 'customer');
    pi.customer = cus;
  }
  for (const k of ['description', 'receipt_email', 'statement_descriptor', 'statement_descriptor_suffix', 'transfer_group']) {
    pi[k] = nullable(c.p, k, pi[k]);
  }
  if (c.p.has('shipping')) pi.shipping = shipping(c.p.obj('shipping'));
  if (c.p.has('capture_method')) pi.capture_method = c.p.oneOf('capture_method', ['automatic', 'automatic_async', 'manual'] as const);
  if (c.p.has('setup_future_usage')) pi.setup_future_usage = c.p.oneOf('setup_future_usage', ['off_session', 'on_session'] as const) ?? null;
  pi.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  const pmId = c.p.str('payment_method');
  if (pmId !== undefined && pmId !== '') {
    usePaymentMethod(c, pi, pmId);
    pi.status = 'requires_confirmation';
    pi.next_action = null;
  }
  save(c, 'payment_intent', pi);
  updated(c, 'payment_intent.updated', before, pi);
  return pi;
}

function confirmRoute(c: Call): Obj {
  const pi = clone(mustLoad(c, 'payment_intent', c.req.params.id as string, 'payment_intent'));
  return confirmPi(c, pi, c.p);
}

function capturePi(c: Call): Obj {
  const id = c.req.params.id as string;
  const pi = clone(mustLoad(c, 'payment_intent', id, 'payment_intent'));
  if (pi.status !== 'requires_capture') {
    throw unexpected(`This PaymentIntent could not be captured because it has a status of ${pi.status as string}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`);
  }
  const capturable = pi.amount_capturable as number;
  const amount = c.p.int('amount_to_capture', 1) ?? capturable;
  if (amount > capturable) {
    throw invalid(`The amount to capture (${amount}) must be less than or equal to the amount capturable (${capturable}).`, 'amount_to_capture', 'amount_too_large');
  }
  const ch = clone(mustLoad(c, 'charge', pi.latest_charge as string, 'charge'));
  const prevCharge = clone(ch);
  const txn = balanceTxn(c, ch.id as string, 'charge', amount, ch.currency as string, (ch.description as string | null) ?? null, stripeFee(amount), c.now + 2 * DAY);
  ch.captured = true;
  ch.amount_captured = amount;
  ch.amount_refunded = (ch.amount as number) - amount;
  ch.balance_transaction = txn.id;
  save(c, 'charge', ch);
  event(c, 'charge.captured', ch, { amount_captured: prevCharge.amount_captured, captured: false, balance_transaction: null });
  const pm = typeof ch.payment_method === 'string' ? load(c, 'payment_method', ch.payment_method) : undefined;
  if (pm !== undefined) for (const hook of capturedHooks) hook(c, ch, behaviourOf(c, pm));
  pi.status = 'succeeded';
  pi.amount_received = amount;
  pi.amount_capturable = 0;
  cancelMove(c, `auth.${c.acct}.${id}`);
  pi.metadata = applyMetadata(pi.metadata as Obj, c.p.get('metadata'));
  saveWithEvent(c, 'payment_intent', pi, 'payment_intent.succeeded');
  for (const hook of succeededHooks) hook(c, pi);
  return pi;
}

function cancelPi(c: Call): Obj {
  const id = c.req.params.id as string;
  const pi = clone(mustLoad(c, 'payment_intent', id, 'payment_intent'));
  const status = pi.status as string;
  if (!CANCELABLE.includes(status)) {
    throw unexpected(`You cannot cancel this PaymentIntent because it has a status of ${status}. Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE.join(', ')}.`);
  }
  const reason = c.p.oneOf('cancellation_reason', ['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] as const) ?? null;
  if (status === 'requires_capture' && typeof pi.latest_charge === 'string') {
    // Releasing an authorization refunds the uncaptured charge in full.
    const ch = clone(mustLoad(c, 'charge', pi.latest_charge, 'charge'));
    ch.amount_refunded = ch.amount;
    ch.refunded = true;
    save(c, 'charge', ch);
    event(c, 'charge.refunded', ch, { amount_refunded: 0, refunded: false });
  }
  pi.status = 'canceled';
  pi.canceled_at = c.now;
  pi.cancellation_reason = reason;
  cancelMove(c, `auth.${c.acct}.${id}`);
  pi.amount_capturable = 0;
  pi.next_action = null;
  saveWithEvent(c, 'payment_intent', pi, 'payment_intent.canceled');
  return pi;
}

/** Twin-only: the customer finishes (or fails) 3D Secure for a PaymentIntent or SetupIntent. */
export function authenticate(c: Call): Obj {
  const id = c.req.params.id as string;
  const outcome = c.p.oneOf('outcome', ['succeed', 'fail'] as const) ?? 'succeed';
  if (id.startsWith('seti_')) return authenticateSetup(c, id, outcome);
  const pi = clone(mustLoad(c, 'payment_intent', id, 'payment_intent'));
  if (pi.status !== 'requires_action') {
    throw unexpected(`This PaymentIntent has a status of ${pi.status as string}; only one that requires_action can be authenticated.`);
  }
  const pm = mustLoad(c, 'payment_method', pi.payment_method as string, 'PaymentMethod');
  if (outcome === 'fail') {
    pi.status = 'requires_payment_method';
    pi.payment_method = null;
    pi.next_action = null;
    pi.last_payment_error = {
      code: 'payment_intent_authentication_failure',
      doc_url: 'https://stripe.com/docs/error-codes/payment-intent-authentication-failure',
      message: 'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
      payment_method: clone(pm),
      type: 'invalid_request_error',
    };
    saveWithEvent(c, 'payment_intent', pi, 'payment_intent.payment_failed');
    return pi;
  }
  return charge(c, pi, pm, { kind: 'succeed' });
}

// Set by setup_intents.ts, which imports this module (a function slot avoids an import cycle).
let authenticateSetup: (c: Call, id: string, outcome: 'succeed' | 'fail') => Obj = () => {
  throw invalid('Setup intents are not available.');
};
export function setSetupAuthenticator(fn: typeof authenticateSetup): void {
  authenticateSetup = fn;
}

/** Makes an unconfirmed PaymentIntent for the twin's own flows (an invoice's payment). */
export function createIntent(c: Call, o: { amount: number; currency: string; customer: string | null; description?: string | null; metadata?: Obj }): Obj {
  const raw: Obj = { amount: String(o.amount), currency: o.currency, allowed_payment_method_types: ['card'] };
  if (o.customer !== null) raw.customer = o.customer;
  if (o.description !== undefined && o.description !== null) raw.description = o.description;
  if (o.metadata !== undefined) raw.metadata = o.metadata;
  const pi = piBase(c, new Params(raw));
  insertWithEvent(c, 'payment_intent', pi, 'payment_intent.created');
  return pi;
}

/** Confirms an existing PaymentIntent with a payment method; a decline comes back as the error. */
export function confirmIntent(c: Call, piId: string, paymentMethod: string, offSession: boolean): { pi: Obj; error?: StripeError } {
  const pi = clone(mustLoad(c, 'payment_intent', piId, 'payment_intent'));
  try {
    return { pi: confirmPi(c, pi, new Params(offSession ? { payment_method: paymentMethod, off_session: 'true' } : { payment_method: paymentMethod })) };
  } catch (e) {
    if (e instanceof StripeError && e.status === 402) return { pi: load(c, 'payment_intent', piId) ?? pi, error: e };
    throw e;
  }
}

/**
 * Charges a card for the twin's own flows (an invoice's payment off-session, a completed
 * Checkout Session on-session): makes and confirms a PaymentIntent. Answers it, and on a
 * decline also the card error; the attempt is recorded either way.
 */
export function chargeCard(c: Call, offSession: boolean, o: { amount: number; currency: string; customer: string | null; paymentMethod: string; description?: string | null; metadata?: Obj }): { pi: Obj; error?: StripeError } {
  const raw: Obj = { amount: String(o.amount), currency: o.currency, allowed_payment_method_types: ['card'] };
  if (o.customer !== null) raw.customer = o.customer;
  if (o.description !== undefined && o.description !== null) raw.description = o.description;
  if (o.metadata !== undefined) raw.metadata = o.metadata;
  const pi = piBase(c, new Params(raw));
  usePaymentMethod(c, pi, o.paymentMethod);
  pi.status = 'requires_confirmation';
  insertWithEvent(c, 'payment_intent', pi, 'payment_intent.created');
  try {
    return { pi: confirmPi(c, pi, new Params(offSession ? { off_session: 'true' } : {}), true) };
  } catch (e) {
    if (e instanceof StripeError && e.status === 402) return { pi: load(c, 'payment_intent', pi.id as string) ?? pi, error: e };
    throw e;
  }
}

// ---- refunds -------------------------------------------------------------------------------

function createRefund(c: Call): Obj {
  const chargeId = c.p.str('charge');
  const piId = c.p.str('payment_intent');
  if (chargeId === undefined && piId === undefined) {
    throw invalid('One of the following params should be provided for this request: payment_intent or charge.', 'charge', 'parameter_missing');
  }
  let ch: Obj;
  if (chargeId !== undefined) {
    ch = clone(mustLoad(c, 'charge', chargeId, 'charge', 'charge'));
    if (piId !== undefined && ch.payment_intent !== piId) throw invalid('The charge does not belong to that PaymentIntent.', 'payment_intent');
  } else {
    const pi = mustLoad(c, 'payment_intent', piId as string, 'payment_intent', 'payment_intent');
    if (pi.status !== 'succeeded' || typeof pi.latest_charge !== 'string') {
      throw invalid(`This PaymentIntent (${piId as string}) does not have a successful charge to refund.`, 'payment_intent');
    }
    ch = clone(mustLoad(c, 'charge', pi.latest_charge, 'charge'));
  }
  const chId = ch.id as string;
  if (ch.status !== 'succeeded' || ch.captured !== true) {
    throw invalid(`Charge ${chId} has not been captured; cancel the PaymentIntent to release it instead.`, 'charge');
  }
  const captured = ch.amount_captured as number;
  const already = (ch.amount_refunded as number) - ((ch.amount as number) - captured);
  const remaining = captured - already;
  if (remaining <= 0 || ch.refunded === true) {
    throw invalid(`Charge ${chId} has already been refunded.`, undefined, 'charge_already_refunded');
  }
  const amount = c.p.int('amount', 1) ?? remaining;
  if (amount > remaining) {
    throw invalid(`Refund amount (${money(amount, ch.currency as string)}) is greater than unrefunded amount on charge (${money(remaining, ch.currency as string)})`, 'amount', 'amount_too_large');
  }
  const reason = c.p.oneOf('reason', ['duplicate', 'fraudulent', 'requested_by_customer'] as const) ?? null;
  const id = newId(c, 'refund', 're_', 24);
  const txn = balanceTxn(c, id, 'refund', -amount, ch.currency as string, 'REFUND FOR CHARGE', 0, c.now);
  const refund: Obj = {
    id,
    object: 'refund',
    amount,
    balance_transaction: txn.id,
    charge: chId,
    created: c.now,
    currency: ch.currency,
    customer: ch.customer ?? null,
    customer_account: null,
    destination_details: { card: { reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' }, type: 'card' },
    metadata: applyMetadata(undefined, c.p.get('metadata')),
    payment_intent: ch.payment_intent ?? null,
    payment_method: ch.payment_method ?? null,
    reason,
    receipt_number: null,
    source_transfer_reversal: null,
    status: 'succeeded',
    transfer_reversal: null,
  };
  insertWithEvent(c, 'refund', refund, 'refund.created');
  const prev = clone(ch);
  ch.amount_refunded = (ch.amount_refunded as number) + amount;
  ch.refunded = (ch.amount_refunded as number) >= (ch.amount as number);
  save(c, 'charge', ch);
  event(c, 'charge.refunded', ch, { amount_refunded: prev.amount_refunded, refunded: prev.refunded });
  return refund;
}

function updateRefund(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'refund', id, 'refund');
  const after = clone(before);
  after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'refund', after);
  updated(c, 'refund.updated', before, after);
  return after;
}

function updateCharge(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'charge', id, 'charge');
  const after = clone(before);
  for (const k of ['description', 'receipt_email']) after[k] = nullable(c.p, k, before[k]);
  if (c.p.has('shipping')) after.shipping = shipping(c.p.obj('shipping'));
  after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  save(c, 'charge', after);
  updated(c, 'charge.updated', before, after);
  return after;
}

/** The authorization of an uncaptured PaymentIntent lapses: canceled as `automatic`, its charge released. */
export const paymentMoves: Record<string, Move> = {
  expireAuthorization: (ctx, data, dueAt) => {
    const d = data as { acct?: unknown; id?: unknown } | null;
    if (d === null || typeof d.acct !== 'string' || typeof d.id !== 'string') return;
    const { acct, id } = d as { acct: string; id: string };
    runMove(ctx, acct, Date.parse(dueAt), (c) => {
      const pi = load(c, 'payment_intent', id);
      if (pi === undefined || pi.status !== 'requires_capture') return;
      if (typeof pi.latest_charge === 'string') {
        const ch = load(c, 'charge', pi.latest_charge);
        if (ch !== undefined) {
          ch.amount_refunded = ch.amount;
          ch.refunded = true;
          ch.status = 'failed';
          saveWithEvent(c, 'charge', ch, 'charge.expired');
        }
      }
      pi.status = 'canceled';
      pi.canceled_at = c.now;
      pi.cancellation_reason = 'automatic';
      pi.amount_capturable = 0;
      saveWithEvent(c, 'payment_intent', pi, 'payment_intent.canceled');
    });
  },
};

registerIncludable('charge', 'refunds', (c, charge) =>
  includedList(objectsOf(newestWhere(c, 'refund', is('charge', charge.id as string))), `/v1/charges/${charge.id as string}/refunds`));

export const paymentRoutes: Route[] = [
  route('payment_intents.search', 'GET', '/v1/payment_intents/search', (c) =>
    search(c, 'payment_intent', 'payment_intents', { amount: 'number', created: 'number', currency: 'token', customer: 'token', status: 'token', metadata: 'string' })),
  route('payment_intents.create', 'POST', '/v1/payment_intents', createPi),
  route('payment_intents.list', 'GET', '/v1/payment_intents', (c) => listOf(c, 'payment_intent', '/v1/payment_intents', [eq(c, 'customer')])),
  route('payment_intents.retrieve', 'GET', '/v1/payment_intents/:id', (c) => {
    const pi = mustLoad(c, 'payment_intent', c.req.params.id as string, 'payment_intent');
    const secret = c.p.str('client_secret');
    if (secret !== undefined && secret !== pi.client_secret) throw invalid('The client_secret provided does not match the client_secret associated with the PaymentIntent.', 'client_secret');
    return pi;
  }),
  route('payment_intents.update', 'POST', '/v1/payment_intents/:id', updatePi),
  route('payment_intents.confirm', 'POST', '/v1/payment_intents/:id/confirm', confirmRoute),
  route('payment_intents.capture', 'POST', '/v1/payment_intents/:id/capture', capturePi),
  route('payment_intents.cancel', 'POST', '/v1/payment_intents/:id/cancel', cancelPi),
  route('test_helpers.authenticate', 'POST', '/v1/test_helpers/authenticate/:id', authenticate),

  route('charges.search', 'GET', '/v1/charges/search', (c) =>
    search(c, 'charge', 'charges', {
      amount: 'number', created: 'number', currency: 'token', customer: 'token', disputed: 'bool', refunded: 'bool',
      status: 'token', payment_intent: 'token', 'billing_details.address.postal_code': 'string',
      'payment_method_details.card.last4': 'token', 'payment_method_details.card.brand': 'token', metadata: 'string',
    })),
  route('charges.list', 'GET', '/v1/charges', (c) => listOf(c, 'charge', '/v1/charges', [eq(c, 'customer'), eq(c, 'payment_intent')])),
  route('charges.retrieve', 'GET', '/v1/charges/:id', (c) => mustLoad(c, 'charge', c.req.params.id as string, 'charge')),
  route('charges.update', 'POST', '/v1/charges/:id', updateCharge),

  route('refunds.create', 'POST', '/v1/refunds', createRefund),
  route('refunds.list', 'GET', '/v1/refunds', (c) => listOf(c, 'refund', '/v1/refunds', [eq(c, 'charge'), eq(c, 'payment_intent')])),
  route('refunds.retrieve', 'GET', '/v1/refunds/:id', (c) => mustLoad(c, 'refund', c.req.params.id as string, 'refund')),
  route('refunds.update', 'POST', '/v1/refunds/:id', updateRefund),
  route('refunds.cancel', 'POST', '/v1/refunds/:id/cancel', (c) => {
    const r = mustLoad(c, 'refund', c.req.params.id as string, 'refund');
    throw invalid(`Refund ${r.id as string} has a status of ${r.status as string}; only a pending refund can be canceled.`, undefined, 'refund_already_succeeded');
  }),

  route('balance.retrieve', 'GET', '/v1/balance', balance),
  route('balance_transactions.list', 'GET', '/v1/balance_transactions', (c) => {
    const list = listOf(c, 'balance_transaction', '/v1/balance_transactions', [eq(c, 'type'), eq(c, 'source'), eq(c, 'currency')]);
    list.data = (list.data as Obj[]).map((t) => txnNow(c, t));
    return list;
  }),
  route('balance_transactions.retrieve', 'GET', '/v1/balance_transactions/:id', (c) =>
    txnNow(c, mustLoad(c, 'balance_transaction', c.req.params.id as string, 'balance transaction'))),
];

