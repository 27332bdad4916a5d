/**
 * A customer's balance: credit (negative) or debt (positive) in the customer's currency,
 * changed by balance transactions and applied to the next invoice when it is finalized.
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid, missing } from '../errors.js';
import { updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import { insert, load, mustLoad, save } from '../lib/store.js';
import { is, listOf } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';
import { currency } from './shared.js';

/** Records a change of the balance and moves the customer's balance with it. */
export function balanceChange(c: Call, customer: Obj, amount: number, type: string, o: { currency?: string; description?: string | null; invoice?: string | null; metadata?: Obj } = {}): Obj {
  const before = clone(customer);
  const cur = (customer.currency as string | null) ?? o.currency ?? 'usd';
  if (o.currency !== undefined && customer.currency !== null && o.currency !== customer.currency) {
    throw invalid(`The customer's balance is in ${customer.currency as string}; a transaction in ${o.currency} cannot change it.`, 'currency');
  }
  const ending = (customer.balance as number) + amount;
  const txn: Obj = {
    id: c.ctx.id('cbtxn_', 24), object: 'customer_balance_transaction', amount, checkout_session: null, created: c.now,
    credit_note: null, currency: cur, customer: customer.id, customer_account: null, description: o.description ?? null,
    ending_balance: ending, invoice: o.invoice ?? null, livemode: false, metadata: o.metadata ?? {}, type,
  };
  insert(c, 'customer_balance_transaction', txn);
  customer.balance = ending;
  customer.currency = cur;
  save(c, 'customer', customer);
  updated(c, 'customer.updated', before, customer);
  return txn;
}

/**
 * Applies the balance to an invoice being finalized: a credit pays what it can, a debt is
 * added. Sets `starting_balance`, `ending_balance`, `amount_due` and `amount_remaining`.
 */
export function applyBalance(c: Call, inv: Obj, customer: Obj): void {
  const balance = customer.balance as number;
  inv.starting_balance = balance;
  const total = inv.total as number;
  let applied = 0;
  if (balance < 0) applied = -Math.min(-balance, Math.max(0, total));
  else if (balance > 0) applied = balance;
  inv.ending_balance = balance - applied;
  inv.amount_due = Math.max(0, total + applied);
  inv.amount_remaining = inv.amount_due;
  if (applied !== 0) balanceChange(c, customer, -applied, 'applied_to_invoice', { invoice: inv.id as string });
}

function createTxn(c: Call): Obj {
  const customerId = c.req.params.customer as string;
  const customer = clone(mustLoad(c, 'customer', customerId, 'customer', 'customer'));
  const amount = c.p.reqInt('amount');
  const cur = currency(c.p);
  return balanceChange(c, customer, amount, 'adjustment', {
    currency: cur, description: c.p.nullableStr('description') ?? null, metadata: applyMetadata(undefined, c.p.get('metadata')),
  });
}

function ownTxn(c: Call): Obj {
  const txn = load(c, 'customer_balance_transaction', c.req.params.id as string);
  if (txn === undefined || txn.customer !== c.req.params.customer) throw missing('customer balance transaction', c.req.params.id as string);
  return txn;
}

export const customerBalanceRoutes: Route[] = [
  route('customers.createBalanceTransaction', 'POST', '/v1/customers/:customer/balance_transactions', createTxn),
  route('customers.listBalanceTransactions', 'GET', '/v1/customers/:customer/balance_transactions', (c) => {
    const customerId = c.req.params.customer as string;
    mustLoad(c, 'customer', customerId, 'customer', 'customer');
    return listOf(c, 'customer_balance_transaction', `/v1/customers/${customerId}/balance_transactions`, [is('customer', customerId)]);
  }),
  route('customers.retrieveBalanceTransaction', 'GET', '/v1/customers/:customer/balance_transactions/:id', ownTxn),
  route('customers.updateBalanceTransaction', 'POST', '/v1/customers/:customer/balance_transactions/:id', (c) => {
    const txn = clone(ownTxn(c));
    if (c.p.has('description')) txn.description = c.p.nullableStr('description') ?? null;
    txn.metadata = applyMetadata(txn.metadata as Obj, c.p.get('metadata'));
    save(c, 'customer_balance_transaction', txn);
    return txn;
  }),
];
