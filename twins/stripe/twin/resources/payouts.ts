/**
 * Payouts to the account's bank: taken from the available balance at once, `paid` on the
 * arrival date on the world clock (standard: two days; instant: at once).
 */
import type { Move, Route } from '../../../../sdk/twin/types.js';
import { route, runMove } from '../lib/call.js';
import { cancelMove, type Call } from '../lib/request.js';
import { invalid } from '../errors.js';
import { insertWithEvent, saveWithEvent, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import { load, mustLoad, save } from '../lib/store.js';
import { eq, listOf } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';
import { balanceSums } from './balance.js';
import { balanceTxn } from './payments.js';
import { currency } from './shared.js';

const DAY = 86_400;

function available(c: Call, cur: string): number {
  return balanceSums(c).available.get(cur) ?? 0;
}

function createPayout(c: Call): Obj {
  const amount = c.p.reqInt('amount', 1, 99_999_999_99);
  const cur = currency(c.p);
  const method = c.p.oneOf('method', ['standard', 'instant'] as const) ?? 'standard';
  if (available(c, cur) < amount) {
    throw invalid('You have insufficient funds in your Stripe account for this transfer. Your card balance is too low. You can use the /v1/balance endpoint to view your Stripe balance (for more details, see stripe.com/docs/api#balance).', 'amount', 'balance_insufficient');
  }
  const id = c.ctx.id('po_', 24);
  const txn = balanceTxn(c, id, 'payout', -amount, cur, c.p.nullableStr('description') ?? 'STRIPE PAYOUT', 0, c.now);
  const arrival = method === 'instant' ? c.now : c.now + 2 * DAY;
  const payout: Obj = {
    id, object: 'payout', amount, application_fee: null, application_fee_amount: null, arrival_date: arrival, automatic: false,
    balance_transaction: txn.id, created: c.now, currency: cur, description: c.p.nullableStr('description') ?? 'STRIPE PAYOUT',
    destination: `ba_${c.acct.slice(5)}bank`, failure_balance_transaction: null, failure_code: null, failure_message: null,
    livemode: false, metadata: applyMetadata(undefined, c.p.get('metadata')), method, original_payout: null, payout_method: null,
    reconciliation_status: 'not_applicable', reversed_by: null, source_type: 'card',
    statement_descriptor: c.p.nullableStr('statement_descriptor') ?? null, status: 'pending', trace_id: { status: 'pending', value: null },
    type: 'bank_account',
  };
  insertWithEvent(c, 'payout', payout, 'payout.created');
  c.schedules.push({ id: `payout.${c.acct}.${id}`, move: 'payoutArrives', dueAt: new Date(arrival * 1000).toISOString(), data: { acct: c.acct, id } });
  return payout;
}

function cancelPayout(c: Call): Obj {
  const id = c.req.params.id as string;
  const payout = clone(mustLoad(c, 'payout', id, 'payout'));
  if (payout.status !== 'pending') throw invalid(`Payout ${id} has a status of ${payout.status as string}; only a pending payout can be canceled.`);
  const back = balanceTxn(c, id, 'payout', payout.amount as number, payout.currency as string, 'Payout cancellation', 0, c.now);
  payout.status = 'canceled';
  payout.failure_balance_transaction = back.id;
  saveWithEvent(c, 'payout', payout, 'payout.canceled');
  cancelMove(c, `payout.${c.acct}.${id}`);
  return payout;
}

export const payoutMoves: Record<string, Move> = {
  payoutArrives: (ctx, data, dueAt) => {
    const d = data as { acct?: unknown; id?: unknown } | null;
    if (d === null || typeof d.acct !== 'string' || typeof d.id !== 'string') return;
    const { acct, id } = d as { acct: string; id: string };
    runMove(ctx, acct, Date.parse(dueAt), (c) => {
      const payout = load(c, 'payout', id);
      if (payout === undefined || payout.status !== 'pending') return;
      payout.status = 'paid';
      payout.reconciliation_status = 'completed';
      payout.trace_id = { status: 'supported', value: `TRACE${id.slice(3, 15).toUpperCase()}` };
      saveWithEvent(c, 'payout', payout, 'payout.paid');
    });
  },
};

export const payoutRoutes: Route[] = [
  route('payouts.create', 'POST', '/v1/payouts', createPayout),
  route('payouts.list', 'GET', '/v1/payouts', (c) => listOf(c, 'payout', '/v1/payouts', [eq(c, 'status')])),
  route('payouts.retrieve', 'GET', '/v1/payouts/:id', (c) => mustLoad(c, 'payout', c.req.params.id as string, 'payout')),
  route('payouts.update', 'POST', '/v1/payouts/:id', (c) => {
    const before = mustLoad(c, 'payout', c.req.params.id as string, 'payout');
    const after = clone(before);
    after.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
    save(c, 'payout', after);
    updated(c, 'payout.updated', before, after);
    return after;
  }),
  route('payouts.cancel', 'POST', '/v1/payouts/:id/cancel', cancelPayout),
];
