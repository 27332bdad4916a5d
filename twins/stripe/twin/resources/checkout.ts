/**
 * Checkout sessions in payment, subscription and setup mode: create (with `url`,
 * `amount_subtotal`, `amount_total`), retrieve, list, line items, expire. The customer's side
 * of the hosted page is the twin-only `POST /v1/test_helpers/checkout/sessions/:id/complete`.
 */
import type { Move, Route } from '../../../../sdk/twin/types.js';
import { route, runMove } from '../lib/call.js';
import { cancelMove, type Call } from '../lib/request.js';
import { StripeError, invalid, paramMissing } from '../errors.js';
import { saveWithEvent } from '../lib/events.js';
import { includedList, registerIncludable } from '../lib/expand.js';
import { applyMetadata } from '../lib/metadata.js';
import { Params } from '../lib/params.js';
import { insert, load, mustLoad, newId, save } from '../lib/store.js';
import { eq, listOf } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';
import { createSub } from './subscriptions.js';
import { makePrice } from './catalog.js';
import { createCustomer } from './customers.js';
import { attachTo, resolvePaymentMethod } from './payment_methods.js';
import { chargeCard } from './payments.js';
import { createSi } from './setup_intents.js';

const DAY = 86_400;

function lineItems(c: Call, mode: string): Obj[] {
  const items = c.p.objects('line_items');
  if (mode === 'setup') {
    if (items !== undefined && items.length > 0) throw invalid('You cannot pass `line_items` in `setup` mode.', 'line_items');
    return [];
  }
  if (items === undefined || items.length === 0) throw paramMissing('line_items');
  return items.map((p) => {
    let price: Obj;
    const priceId = p.str('price');
    const data = p.obj('price_data');
    if (priceId !== undefined) price = mustLoad(c, 'price', priceId, 'price', p.name('price'));
    else if (data !== undefined && data !== null) price = makePrice(c, data);
    else throw paramMissing(p.name('price'));
    if (price.active === false) throw invalid(`The price \`${price.id as string}\` is not active.`, p.name('price'));
    if (mode === 'payment' && price.type === 'recurring') {
      throw invalid('You specified `payment` mode but passed a recurring price. Either switch to `subscription` mode or use only one-time prices.', p.name('price'));
    }
    const quantity = p.int('quantity', 1) ?? 1;
    const amount = ((price.unit_amount as number | null) ?? 0) * quantity;
    return {
      id: c.ctx.id('li_', 24), object: 'item', amount_discount: 0, amount_subtotal: amount, amount_tax: 0, amount_total: amount,
      currency: price.currency, description: null, price: clone(price), quantity,
    };
  });
}

export function createSession(c: Call): Obj {
  const mode = c.p.oneOf('mode', ['payment', 'setup', 'subscription'] as const);
  if (mode === undefined) throw paramMissing('mode');
  const items = lineItems(c, mode);
  if (mode === 'subscription' && !items.some((i) => (i.price as Obj).type === 'recurring')) {
    throw invalid('You must provide at least one recurring price in `subscription` mode when using prices.', 'line_items');
  }
  const currencies = new Set(items.map((i) => i.currency as string));
  if (currencies.size > 1) throw invalid('All prices on a Checkout Session must have the same currency.', 'line_items');
  const customer = c.p.str('customer');
  if (customer !== undefined) mustLoad(c, 'customer', customer, 'customer', 'customer');
  if (customer !== undefined && c.p.has('customer_email')) {
    throw invalid('You may only specify one of these parameters: customer, customer_email.', 'customer_email');
  }
  const successUrl = c.p.str('success_url') ?? null;
  if (successUrl !== null && !/^https?:\/\//.test(successUrl)) throw invalid('Not a valid URL', 'success_url', 'url_invalid');
  const id = newId(c, 'checkout.session', 'cs_test_', 58);
  const trial = mode === 'subscription' && (c.p.obj('subscription_data')?.int('trial_period_days', 1, 730) ?? 0) > 0;
  // What the customer pays today: nothing during a subscription's trial.
  const subtotal = trial ? 0 : items.reduce((n, i) => n + (i.amount_subtotal as number), 0);
  const expiresAt = c.p.int('expires_at') ?? c.now + DAY;
  if (expiresAt < c.now + 1800 || expiresAt > c.now + DAY) {
    throw invalid('The `expires_at` timestamp must be between 30 minutes and 24 hours from now.', 'expires_at');
  }
  const session: Obj = {
    id, object: 'checkout.session', adaptive_pricing: null, after_expiration: null, allow_promotion_codes: c.p.bool('allow_promotion_codes') ?? null,
    amount_subtotal: mode === 'setup' ? null : subtotal, amount_total: mode === 'setup' ? null : subtotal,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null }, billing_address_collection: null,
    cancel_url: c.p.str('cancel_url') ?? null, client_reference_id: c.p.nullableStr('client_reference_id') ?? null,
    client_secret: null, collected_information: null, consent: null, consent_collection: null, created: c.now, currency_conversion: null,
    currency: mode === 'setup' ? (c.p.str('currency') ?? null) : ([...currencies][0] ?? null),
    custom_fields: [], custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer: customer ?? null, customer_account: null, customer_creation: customer === undefined && mode === 'payment' ? (c.p.oneOf('customer_creation', ['always', 'if_required'] as const) ?? 'if_required') : null,
    customer_details: customer === undefined && c.p.has('customer_email') ? { address: null, email: c.p.str('customer_email'), name: null, phone: null, tax_exempt: 'none', tax_ids: null } : null,
    customer_email: c.p.str('customer_email') ?? null, discounts: [], expires_at: expiresAt, integration_identifier: null,
    invoice: null, invoice_creation: null, livemode: false, locale: c.p.str('locale') ?? null, managed_payments: null, metadata: applyMetadata(undefined, c.p.get('metadata')), mode,
    payment_intent: null, payment_link: null, payment_method_collection: mode === 'payment' ? null : 'always',
    payment_method_configuration_details: null, payment_method_options: {}, allowed_payment_method_types: c.p.strings('allowed_payment_method_types') ?? null,
    payment_method_types: c.p.strings('allowed_payment_method_types') ?? ['card'],
    origin_context: null, payment_status: mode === 'setup' ? 'no_payment_required' : 'unpaid', permissions: null, phone_number_collection: { enabled: false },
    recovered_from: null, saved_payment_method_options: null, setup_intent: null, shipping_address_collection: null,
    shipping_cost: null, shipping_options: [], status: 'open', submit_type: null, subscription: null, success_url: successUrl,
    total_details: mode === 'setup' ? null : { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted', url: `https://checkout.stripe.com/c/pay/${id}`, wallet_options: null,
  };
  insert(c, 'checkout.session', session);
  c.schedules.push({ id: `cs.${c.acct}.${id}`, move: 'expireCheckout', dueAt: new Date(expiresAt * 1000).toISOString(), data: { acct: c.acct, id } });
  c.tree.put('checkout.line_items', `${c.acct}/${id}`, items);
  // What the session hands on to the PaymentIntent or Subscription it makes when completed.
  const piData = c.p.obj('payment_intent_data');
  const subData = c.p.obj('subscription_data');
  c.tree.put('checkout.data', `${c.acct}/${id}`, {
    payment_intent: piData === undefined || piData === null ? {} : {
      metadata: applyMetadata(undefined, piData.get('metadata')), description: piData.str('description') ?? null,
    },
    subscription: subData === undefined || subData === null ? {} : {
      metadata: applyMetadata(undefined, subData.get('metadata')), description: subData.str('description') ?? null,
      trial_period_days: subData.int('trial_period_days', 1, 730) ?? null,
    },
  });
  return session;
}

/** An open session expires at `expires_at` on the world clock. */
export const checkoutMoves: Record<string, Move> = {
  expireCheckout: (ctx, data, dueAt) => {
    const d = data as { acct?: unknown; id?: unknown } | null;
    if (d === null || typeof d.acct !== 'string' || typeof d.id !== 'string') return;
    const { acct, id } = d as { acct: string; id: string };
    runMove(ctx, acct, Date.parse(dueAt), (c) => {
      const session = load(c, 'checkout.session', id);
      if (session === undefined || session.status !== 'open') return;
      session.status = 'expired';
      session.url = null;
      saveWithEvent(c, 'checkout.session', session, 'checkout.session.expired');
    });
  },
};

function expire(c: Call): Obj {
  const session = clone(mustLoad(c, 'checkout.session', c.req.params.id as string, 'checkout.session'));
  if (session.status !== 'open') throw invalid(`Only Checkout Sessions with a status of open can be expired; this one is ${session.status as string}.`);
  session.status = 'expired';
  session.url = null;
  saveWithEvent(c, 'checkout.session', session, 'checkout.session.expired');
  cancelMove(c, `cs.${c.acct}.${session.id as string}`);
  return session;
}

/** The customer completes the hosted page with a card (twin-only test helper). */
export function complete(c: Call): Obj {
  const session = clone(mustLoad(c, 'checkout.session', c.req.params.id as string, 'checkout.session'));
  if (session.status !== 'open') throw invalid(`This Checkout Session is ${session.status as string}; only an open one can be completed.`);
  if (session.expires_at as number <= c.now) throw invalid('This Checkout Session has expired.');
  const items = c.tree.get<Obj[]>('checkout.line_items', `${c.acct}/${session.id as string}`) ?? [];
  const data = c.tree.get<Obj>('checkout.data', `${c.acct}/${session.id as string}`) ?? {};
  const email = c.p.str('email') ?? (session.customer_email as string | null) ?? null;
  const name = c.p.str('name') ?? null;
  let customerId = session.customer as string | null;
  const needCustomer = session.mode !== 'payment' || session.customer_creation === 'always';
  if (customerId === null && needCustomer) {
    customerId = createCustomer({ ...c, p: new Params(email === null ? {} : { email, ...(name === null ? {} : { name }) }) }).id as string;
  }
  const pm = resolvePaymentMethod(c, c.p.str('payment_method') ?? 'pm_card_visa', 'payment_method');
  session.customer = customerId;
  session.customer_details = { address: null, email, name, phone: null, tax_exempt: 'none', tax_ids: null };
  if (session.mode === 'payment') {
    const piData = (data.payment_intent ?? {}) as Obj;
    const { pi, error } = chargeCard(c, false, {
      amount: session.amount_total as number, currency: session.currency as string, customer: customerId,
      paymentMethod: pm.id as string, metadata: (piData.metadata as Obj | undefined) ?? {},
      description: (piData.description as string | null | undefined) ?? null,
    });
    session.payment_intent = pi.id;
    if (error !== undefined) {
      save(c, 'checkout.session', session);
      throw new StripeError(error.status, error.type, error.message, error.fields, true);
    }
    if (pi.status !== 'succeeded') throw invalid('This card needs authentication, which the checkout test helper does not perform; use another card.', 'payment_method');
    session.payment_status = 'paid';
  } else if (session.mode === 'subscription') {
    attachTo(c, pm, customerId as string);
    const recurring = items.filter((i) => (i.price as Obj).type === 'recurring');
    const subData = (data.subscription ?? {}) as Obj;
    const raw: Obj = {
      customer: customerId, default_payment_method: pm.id, payment_behavior: 'error_if_incomplete',
      items: recurring.map((i) => ({ price: (i.price as Obj).id, quantity: String(i.quantity) })),
      metadata: (subData.metadata as Obj | undefined) ?? {},
    };
    if (typeof subData.trial_period_days === 'number') raw.trial_period_days = String(subData.trial_period_days);
    if (typeof subData.description === 'string') raw.description = subData.description;
    const sub = createSub({ ...c, p: new Params(raw) });
    session.subscription = sub.id;
    session.invoice = sub.latest_invoice;
    session.payment_status = sub.status === 'trialing' ? 'no_payment_required' : 'paid';
  } else {
    const si = createSi({ ...c, p: new Params({ ...(customerId === null ? {} : { customer: customerId }), payment_method: pm.id, confirm: 'true', allowed_payment_method_types: ['card'] }) });
    session.setup_intent = si.id;
  }
  session.status = 'complete';
  session.url = null;
  cancelMove(c, `cs.${c.acct}.${session.id as string}`);
  saveWithEvent(c, 'checkout.session', session, 'checkout.session.completed');
  return session;
}

// `line_items` is includable on a session: `expand: ['line_items']`, as webhook handlers do.
registerIncludable('checkout.session', 'line_items', (c, session) => {
  const items = c.tree.get<Obj[]>('checkout.line_items', `${c.acct}/${session.id as string}`) ?? [];
  return includedList(items, `/v1/checkout/sessions/${session.id as string}/line_items`);
});

export const checkoutRoutes: Route[] = [
  route('checkout.sessions.create', 'POST', '/v1/checkout/sessions', createSession),
  route('checkout.sessions.list', 'GET', '/v1/checkout/sessions', (c) =>
    listOf(c, 'checkout.session', '/v1/checkout/sessions', [eq(c, 'customer'), eq(c, 'payment_intent'), eq(c, 'payment_link'), eq(c, 'subscription'), eq(c, 'status')])),
  route('checkout.sessions.retrieve', 'GET', '/v1/checkout/sessions/:id', (c) => mustLoad(c, 'checkout.session', c.req.params.id as string, 'checkout.session')),
  route('checkout.sessions.update', 'POST', '/v1/checkout/sessions/:id', (c) => {
    const session = clone(mustLoad(c, 'checkout.session', c.req.params.id as string, 'checkout.session'));
    session.metadata = applyMetadata(session.metadata as Obj, c.p.get('metadata'));
    save(c, 'checkout.session', session);
    return session;
  }),
  route('checkout.sessions.listLineItems', 'GET', '/v1/checkout/sessions/:id/line_items', (c) => {
    const id = c.req.params.id as string;
    mustLoad(c, 'checkout.session', id, 'checkout.session');
    const items = c.tree.get<Obj[]>('checkout.line_items', `${c.acct}/${id}`) ?? [];
    const limit = c.p.int('limit', 1, 100) ?? 10;
    const after = c.p.str('starting_after');
    const start = after === undefined ? 0 : items.findIndex((i) => i.id === after) + 1;
    return { object: 'list', data: items.slice(start, start + limit), has_more: start + limit < items.length, url: `/v1/checkout/sessions/${id}/line_items` };
  }),
  route('checkout.sessions.expire', 'POST', '/v1/checkout/sessions/:id/expire', expire),
  route('test_helpers.checkout.complete', 'POST', '/v1/test_helpers/checkout/sessions/:id/complete', complete),
];

