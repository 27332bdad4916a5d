/** Customers: create, retrieve, update, delete, list, search. */
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid, missing } from '../errors.js';
import { event, insertWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import { insertFresh, load, mustLoad, newId, save, unlist } from '../lib/store.js';
import { eq, listOf } from '../lib/lists.js';
import { search } from '../lib/search.js';
import { clone, type Obj } from '../lib/util.js';
import { cancelCustomerSubscriptions } from './subscriptions.js';
import { balanceChange } from './customer_balance.js';
import { attachTo, resolvePaymentMethod } from './payment_methods.js';
import { address, nullable, shipping } from './shared.js';
import type { Route } from '../../../../sdk/twin/types.js';

// Builtins as module bindings: a global lookup is slow in a node:vm context (see util.ts).
const { JSON, Math } = globalThis;

function invoiceSettings(c: Call, customerId: string, current: Obj | undefined): Obj {
  const cur = current ?? { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null };
  const p = c.p.obj('invoice_settings');
  if (p === undefined || p === null) return cur;
  const out = { ...cur };
  if (p.has('default_payment_method')) {
    const id = p.nullableStr('default_payment_method') ?? null;
    if (id !== null) {
      const pm = resolvePaymentMethod(c, id, 'invoice_settings[default_payment_method]');
      if (pm.customer !== customerId) {
        throw invalid(
          `The payment method \`${id}\` must be attached to the customer before it can be set as the default.`,
          'invoice_settings[default_payment_method]',
          'resource_missing',
        );
      }
      out.default_payment_method = pm.id;
    } else out.default_payment_method = null;
  }
  if (p.has('footer')) out.footer = p.nullableStr('footer') ?? null;
  return out;
}

/** Stripe's default invoice prefix: eight upper-case hex digits. */
function hex8(c: Call): string {
  let out = '';
  for (let i = 0; i < 8; i++) out += '0123456789ABCDEF'[Math.floor(c.ctx.random() * 16)];
  return out;
}

function testClock(c: Call): string | null {
  const id = c.p.str('test_clock');
  if (id === undefined || id === '') return null;
  mustLoad(c, 'test_helpers.test_clock', id, 'test clock', 'test_clock');
  return id;
}

export function createCustomer(c: Call): Obj {
  // Ordered, save in a copy of a real account (lib/account.ts, AccountState.copy).
  const id = newId(c, 'customer', 'cus_', 14);
  const locales = c.p.strings('preferred_locales') ?? [];
  const prefix = c.p.str('invoice_prefix') ?? hex8(c);
  if (!/^[A-Z0-9]{3,12}$/.test(prefix)) {
    throw invalid('Invoice prefix must be 3–12 uppercase letters or numbers.', 'invoice_prefix');
  }
  const customer: Obj = {
    id,
    object: 'customer',
    address: address(c.p.obj('address')),
    balance: 0,
    created: c.now,
    currency: null,
    default_source: null,
    delinquent: false,
    description: c.p.nullableStr('description') ?? null,
    discount: null,
    email: c.p.nullableStr('email') ?? null,
    invoice_prefix: prefix,
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    metadata: applyMetadata(undefined, c.p.get('metadata')),
    name: c.p.nullableStr('name') ?? null,
    next_invoice_sequence: c.p.int('next_invoice_sequence', 1) ?? 1,
    phone: c.p.nullableStr('phone') ?? null,
    preferred_locales: locales,
    shipping: shipping(c.p.obj('shipping')),
    tax_exempt: c.p.oneOf('tax_exempt', ['none', 'exempt', 'reverse'] as const) ?? 'none',
    test_clock: testClock(c),
  };
  const pmId = c.p.str('payment_method');
  const initialBalance = c.p.int('balance') ?? 0;
  if ((pmId === undefined || pmId === '') && initialBalance === 0 && !c.p.has('invoice_settings')) {
    // Nothing changes the customer after it is stored: the record, the event and the answer
    // share the one object, each written out as it is (no copies).
    insertFresh(c, 'customer', customer);
    event(c, 'customer.created', customer, undefined, { fresh: true });
    return customer;
  }
  insertWithEvent(c, 'customer', customer, 'customer.created');
  if (initialBalance !== 0) balanceChange(c, customer, initialBalance, 'initial');
  if (pmId !== undefined && pmId !== '') {
    const pm = resolvePaymentMethod(c, pmId, 'payment_method');
    attachTo(c, pm, id);
  }
  const settings = invoiceSettings(c, id, customer.invoice_settings as Obj);
  if (settings !== customer.invoice_settings && JSON.stringify(settings) !== JSON.stringify(customer.invoice_settings)) {
    customer.invoice_settings = settings;
    save(c, 'customer', customer);
  }
  return customer;
}

function updateCustomer(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'customer', id, 'customer');
  const after: Obj = clone(before);
  if (c.p.has('address')) after.address = address(c.p.obj('address'), before.address);
  if (c.p.has('shipping')) after.shipping = shipping(c.p.obj('shipping'));
  const newBalance = c.p.int('balance');
  for (const k of ['description', 'email', 'name', 'phone']) after[k] = nullable(c.p, k, before[k]);
  if (c.p.has('preferred_locales')) after.preferred_locales = c.p.strings('preferred_locales');
  if (c.p.has('tax_exempt')) after.tax_exempt = c.p.oneOf('tax_exempt', ['none', 'exempt', 'reverse'] as const);
  if (c.p.has('invoice_prefix')) after.invoice_prefix = c.p.str('invoice_prefix');
  if (c.p.has('next_invoice_sequence')) after.next_invoice_sequence = c.p.int('next_invoice_sequence', 1);
  after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  after.invoice_settings = invoiceSettings(c, id, before.invoice_settings as Obj);
  if (c.p.has('default_source')) after.default_source = c.p.nullableStr('default_source') ?? null;
  save(c, 'customer', after);
  updated(c, 'customer.updated', before, after);
  // Setting the balance directly records the difference as an adjustment, as Stripe does.
  if (newBalance !== undefined && newBalance !== after.balance) {
    balanceChange(c, after, newBalance - (after.balance as number), 'adjustment');
  }
  return after;
}

function deleteCustomer(c: Call): Obj {
  const id = c.req.params.id as string;
  const customer = mustLoad(c, 'customer', id, 'customer');
  const stub = { id, object: 'customer', deleted: true };
  cancelCustomerSubscriptions(c, id);
  unlist(c, 'customer', id, stub);
  event(c, 'customer.deleted', customer);
  return stub;
}

function retrieveCustomer(c: Call): Obj {
  const id = c.req.params.id as string;
  const customer = load(c, 'customer', id);
  if (customer === undefined) throw missing('customer', id);
  return customer;
}

export const customerRoutes: Route[] = [
  route('customers.search', 'GET', '/v1/customers/search', (c) =>
    search(c, 'customer', 'customers', { created: 'number', email: 'string', name: 'string', phone: 'string', metadata: 'string' })),
  route('customers.create', 'POST', '/v1/customers', createCustomer),
  route('customers.list', 'GET', '/v1/customers', (c) =>
    listOf(c, 'customer', '/v1/customers', [eq(c, 'email'), eq(c, 'test_clock')])),
  route('customers.retrieve', 'GET', '/v1/customers/:id', retrieveCustomer),
  route('customers.update', 'POST', '/v1/customers/:id', updateCustomer),
  route('customers.del', 'DELETE', '/v1/customers/:id', deleteCustomer),
];
