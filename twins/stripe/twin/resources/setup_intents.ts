/** Setup intents: save a card for later (create, confirm, cancel), with 3D Secure and declines. */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { StripeError, invalid } from '../errors.js';
import { insertWithEvent, saveWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import type { Params } from '../lib/params.js';
import { load, mustLoad, newId, save } from '../lib/store.js';
import { eq, listOf } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';
import { attachTo, behaviourOf, resolvePaymentMethod } from './payment_methods.js';
import { requireReturnUrl, setSetupAuthenticator } from './payments.js';

function unexpected(message: string): StripeError {
  return invalid(message, undefined, 'setup_intent_unexpected_state');
}

function usePm(c: Call, si: Obj, id: string): Obj {
  const pm = resolvePaymentMethod(c, id, 'payment_method');
  if (pm.customer !== null && si.customer !== null && pm.customer !== si.customer) {
    throw invalid('The provided PaymentMethod belongs to another customer.', 'payment_method');
  }
  si.payment_method = pm.id;
  return pm;
}

function succeed(c: Call, si: Obj, pm: Obj): Obj {
  if (typeof si.customer === 'string' && pm.customer === null) attachTo(c, pm, si.customer);
  si.status = 'succeeded';
  si.next_action = null;
  si.last_setup_error = null;
  saveWithEvent(c, 'setup_intent', si, 'setup_intent.succeeded');
  return si;
}

function confirmSi(c: Call, si: Obj, p: Params, pmAlreadySet = false): Obj {
  const status = si.status as string;
  if (!['requires_payment_method', 'requires_confirmation', 'requires_action'].includes(status)) {
    throw unexpected(`You cannot confirm this SetupIntent because it has a status of ${status}.`);
  }
  const pmParam = pmAlreadySet ? undefined : p.str('payment_method');
  let pm: Obj | undefined;
  if (pmParam !== undefined && pmParam !== '') pm = usePm(c, si, pmParam);
  else if (typeof si.payment_method === 'string') pm = load(c, 'payment_method', si.payment_method);
  if (pm === undefined) {
    throw unexpected("You cannot confirm this SetupIntent because it's missing a payment method. Update the SetupIntent with a payment method and then confirm it again.");
  }
  if (p.str('return_url') === undefined) requireReturnUrl(si.automatic_payment_methods, 'Setup Intent');
  const b = behaviourOf(c, pm);
  if (b.kind === 'decline' && b.onlyCharge !== true) {
    si.status = 'requires_payment_method';
    si.payment_method = null;
    si.last_setup_error = {
      code: b.code, decline_code: b.decline_code, doc_url: `https://stripe.com/docs/error-codes/${b.code.replace(/_/g, '-')}`,
      message: b.message, payment_method: clone(pm), type: 'card_error',
    };
    saveWithEvent(c, 'setup_intent', si, 'setup_intent.setup_failed');
    throw new StripeError(402, 'card_error', b.message, {
      code: b.code, decline_code: b.decline_code, payment_method: clone(pm), setup_intent: clone(si),
    }, true);
  }
  if ((b.kind === 'authenticate_always' || b.kind === 'authenticate_unless_setup') && status !== 'requires_action') {
    const returnUrl = p.str('return_url');
    const src = `src_${(si.id as string).slice(5)}`;
    si.status = 'requires_action';
    si.next_action = returnUrl !== undefined
      ? { type: 'redirect_to_url', redirect_to_url: { return_url: returnUrl, url: `https://hooks.stripe.com/redirect/authenticate/${src}` } }
      : { type: 'use_stripe_sdk', use_stripe_sdk: { source: src, stripe_js: `https://hooks.stripe.com/redirect/authenticate/${src}`, type: 'three_d_secure_redirect' } };
    saveWithEvent(c, 'setup_intent', si, 'setup_intent.requires_action');
    return si;
  }
  if (status === 'requires_action') {
    save(c, 'setup_intent', si);
    return si;
  }
  return succeed(c, si, pm);
}

export function createSi(c: Call): Obj {
  const id = newId(c, 'setup_intent', 'seti_', 24);
  const customer = c.p.str('customer');
  if (customer !== undefined && customer !== '') mustLoad(c, 'customer', customer, 'customer', 'customer');
  const types = c.p.strings('allowed_payment_method_types');
  if (types !== undefined && types.some((t) => t !== 'card')) {
    throw invalid(`The payment method type \`${types.find((t) => t !== 'card') ?? ''}\` is not supported by the twin yet; use \`card\`.`, 'allowed_payment_method_types');
  }
  const apm = c.p.obj('automatic_payment_methods');
  const si: Obj = {
    id,
    object: 'setup_intent',
    allowed_payment_method_types: types ?? null,
    application: null,
    automatic_payment_methods: types !== undefined ? null : {
      allow_redirects: apm?.oneOf('allow_redirects', ['always', 'never'] as const) ?? 'always',
      enabled: apm?.bool('enabled') ?? true,
    },
    cancellation_reason: null,
    client_secret: `${id}_secret_${c.ctx.id('', 32)}`,
    created: c.now,
    customer: customer === undefined || customer === '' ? null : customer,
    description: c.p.nullableStr('description') ?? null,
    excluded_payment_method_types: null,
    flow_directions: null,
    last_setup_error: null,
    latest_attempt: null,
    livemode: false,
    mandate: null,
    metadata: applyMetadata(undefined, c.p.get('metadata')),
    next_action: null,
    on_behalf_of: null,
    payment_method: null,
    payment_method_configuration_details: null,
    payment_method_options: { card: { mandate_options: null, network: null, request_three_d_secure: 'automatic' } },
    payment_method_types: types ?? ['card'],
    single_use_mandate: null,
    status: 'requires_payment_method',
    usage: c.p.oneOf('usage', ['off_session', 'on_session'] as const) ?? 'off_session',
  };
  const pmId = c.p.str('payment_method');
  if (pmId !== undefined && pmId !== '') {
    usePm(c, si, pmId);
    si.status = 'requires_confirmation';
  }
  insertWithEvent(c, 'setup_intent', si, 'setup_intent.created');
  if (c.p.bool('confirm') === true) return confirmSi(c, si, c.p, true);
  return si;
}

function updateSi(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'setup_intent', id, 'setup_intent');
  const si = clone(before);
  if (c.p.has('customer')) {
    const cus = c.p.nullableStr('customer') ?? null;
    if (cus !== null) mustLoad(c, 'customer', cus, 'customer', 'customer');
    si.customer = cus;
  }
  if (c.p.has('description')) si.description = c.p.nullableStr('description') ?? null;
  si.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  const pmId = c.p.str('payment_method');
  if (pmId !== undefined && pmId !== '') {
    if (si.status === 'succeeded' || si.status === 'canceled') throw unexpected(`You cannot update this SetupIntent's payment method because it has a status of ${si.status as string}.`);
    usePm(c, si, pmId);
    si.status = 'requires_confirmation';
  }
  save(c, 'setup_intent', si);
  updated(c, 'setup_intent.updated', before, si);
  return si;
}

function cancelSi(c: Call): Obj {
  const si = clone(mustLoad(c, 'setup_intent', c.req.params.id as string, 'setup_intent'));
  if (si.status === 'succeeded' || si.status === 'canceled') {
    throw unexpected(`You cannot cancel this SetupIntent because it has a status of ${si.status as string}.`);
  }
  si.status = 'canceled';
  si.cancellation_reason = c.p.oneOf('cancellation_reason', ['abandoned', 'duplicate', 'requested_by_customer'] as const) ?? null;
  si.next_action = null;
  saveWithEvent(c, 'setup_intent', si, 'setup_intent.canceled');
  return si;
}

setSetupAuthenticator((c, id, outcome) => {
  const si = clone(mustLoad(c, 'setup_intent', id, 'setup_intent'));
  if (si.status !== 'requires_action') throw unexpected(`This SetupIntent has a status of ${si.status as string}; only one that requires_action can be authenticated.`);
  const pm = mustLoad(c, 'payment_method', si.payment_method as string, 'PaymentMethod');
  if (outcome === 'fail') {
    si.status = 'requires_payment_method';
    si.payment_method = null;
    si.next_action = null;
    si.last_setup_error = {
      code: 'setup_intent_authentication_failure',
      message: 'The latest attempt to set up the payment method has failed because authentication failed.',
      payment_method: clone(pm), type: 'invalid_request_error',
    };
    saveWithEvent(c, 'setup_intent', si, 'setup_intent.setup_failed');
    return si;
  }
  return succeed(c, si, pm);
});

export const setupIntentRoutes: Route[] = [
  route('setup_intents.create', 'POST', '/v1/setup_intents', createSi),
  route('setup_intents.list', 'GET', '/v1/setup_intents', (c) =>
    listOf(c, 'setup_intent', '/v1/setup_intents', [eq(c, 'customer'), eq(c, 'payment_method')])),
  route('setup_intents.retrieve', 'GET', '/v1/setup_intents/:id', (c) => mustLoad(c, 'setup_intent', c.req.params.id as string, 'setup_intent')),
  route('setup_intents.update', 'POST', '/v1/setup_intents/:id', updateSi),
  route('setup_intents.confirm', 'POST', '/v1/setup_intents/:id/confirm', (c) =>
    confirmSi(c, clone(mustLoad(c, 'setup_intent', c.req.params.id as string, 'setup_intent')), c.p)),
  route('setup_intents.cancel', 'POST', '/v1/setup_intents/:id/cancel', cancelSi),
];
