/**
 * Disputes from Stripe's dispute test cards (`pm_card_createDispute`, …): the charge succeeds
 * and a dispute opens at once, withdrawing the amount and a $15 fee. Evidence with
 * `uncategorized_text` `winning_evidence` / `losing_evidence` decides it when submitted.
 */
import type { Route } from '../../../../sdk/twin/types.js';
import { route } from '../lib/call.js';
import type { Call } from '../lib/request.js';
import { invalid } from '../errors.js';
import { event, updated } from '../lib/events.js';
import { applyMetadata } from '../lib/metadata.js';
import { insert, mustLoad, save } from '../lib/store.js';
import { eq, listOf } from '../lib/lists.js';
import { clone, type Obj } from '../lib/util.js';
import { balanceTxn, onChargeCaptured } from './payments.js';

const DAY = 86_400;
const DISPUTE_FEE = 1500;
const EVIDENCE_FIELDS = [
  'access_activity_log', 'billing_address', 'cancellation_policy', 'cancellation_policy_disclosure', 'cancellation_rebuttal',
  'customer_communication', 'customer_email_address', 'customer_name', 'customer_purchase_ip', 'customer_signature',
  'duplicate_charge_documentation', 'duplicate_charge_explanation', 'duplicate_charge_id', 'product_description', 'receipt',
  'refund_policy', 'refund_policy_disclosure', 'refund_refusal_explanation', 'service_date', 'service_documentation',
  'shipping_address', 'shipping_carrier', 'shipping_date', 'shipping_documentation', 'shipping_tracking_number',
  'uncategorized_file', 'uncategorized_text',
];

onChargeCaptured((c, charge, b) => {
  if (b.kind !== 'succeed' || b.dispute === undefined) return;
  const inquiry = b.dispute === 'inquiry';
  const id = c.ctx.id('dp_', 24);
  const amount = charge.amount_captured as number;
  // A dispute carries its balance transactions whole, not as ids.
  const txns: Obj[] = [];
  if (!inquiry) {
    txns.push(balanceTxn(c, id, 'adjustment', -amount, charge.currency as string, `Chargeback withdrawal for ${charge.id as string}`, DISPUTE_FEE, c.now));
  }
  const dispute: Obj = {
    id, object: 'dispute', amount, balance_transactions: txns, charge: charge.id, created: c.now, currency: charge.currency,
    enhanced_eligibility_types: [],
    evidence: { ...Object.fromEntries(EVIDENCE_FIELDS.map((f) => [f, null])), enhanced_evidence: {} },
    evidence_details: { due_by: c.now + 7 * DAY, enhanced_eligibility: {}, has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: inquiry, livemode: false, metadata: {},
    payment_intent: charge.payment_intent ?? null,
    payment_method_details: { card: { brand: ((charge.payment_method_details as Obj).card as Obj).brand, case_type: inquiry ? 'inquiry' : 'chargeback', network: ((charge.payment_method_details as Obj).card as Obj).network ?? null, network_reason_code: null }, type: 'card' },
    reason: b.dispute === 'inquiry' ? 'general' : b.dispute,
    status: inquiry ? 'warning_needs_response' : 'needs_response',
  };
  insert(c, 'dispute', dispute);
  charge.disputed = true;
  save(c, 'charge', charge);
  event(c, 'charge.dispute.created', dispute);
  if (!inquiry) event(c, 'charge.dispute.funds_withdrawn', dispute);
});

function decide(c: Call, dispute: Obj, won: boolean): void {
  const inquiry = String(dispute.status).startsWith('warning');
  dispute.status = inquiry ? (won ? 'warning_closed' : 'lost') : won ? 'won' : 'lost';
  if (won && !inquiry) {
    const txn = balanceTxn(c, dispute.id as string, 'adjustment', dispute.amount as number, dispute.currency as string, `Chargeback reversal for ${dispute.charge as string}`, -DISPUTE_FEE, c.now);
    (dispute.balance_transactions as Obj[]).push(txn);
    event(c, 'charge.dispute.funds_reinstated', dispute);
  }
  event(c, 'charge.dispute.closed', dispute);
}

function updateDispute(c: Call): Obj {
  const id = c.req.params.id as string;
  const before = mustLoad(c, 'dispute', id, 'dispute');
  const dispute = clone(before);
  if (!['needs_response', 'warning_needs_response'].includes(dispute.status as string)) {
    throw invalid(`This dispute is already ${dispute.status as string}; it cannot be updated.`);
  }
  const evidence = c.p.obj('evidence');
  if (evidence !== undefined && evidence !== null) {
    for (const key of Object.keys(evidence.raw)) {
      if (!EVIDENCE_FIELDS.includes(key)) throw invalid(`Received unknown parameter: evidence[${key}]`, `evidence[${key}]`, 'parameter_unknown');
      (dispute.evidence as Obj)[key] = evidence.nullableStr(key) ?? null;
    }
    (dispute.evidence_details as Obj).has_evidence = true;
  }
  dispute.metadata = applyMetadata(before.metadata as Obj, c.p.get('metadata'));
  const submit = c.p.bool('submit') ?? true;
  save(c, 'dispute', dispute);
  updated(c, 'charge.dispute.updated', before, dispute);
  if (submit && evidence !== undefined && evidence !== null) {
    (dispute.evidence_details as Obj).submission_count = ((dispute.evidence_details as Obj).submission_count as number) + 1;
    const text = (dispute.evidence as Obj).uncategorized_text;
    if (text === 'winning_evidence') decide(c, dispute, true);
    else if (text === 'losing_evidence') decide(c, dispute, false);
    else dispute.status = String(dispute.status).startsWith('warning') ? 'warning_under_review' : 'under_review';
    save(c, 'dispute', dispute);
  }
  return dispute;
}

function closeDispute(c: Call): Obj {
  const dispute = clone(mustLoad(c, 'dispute', c.req.params.id as string, 'dispute'));
  if (!['needs_response', 'warning_needs_response'].includes(dispute.status as string)) {
    throw invalid(`This dispute is already ${dispute.status as string}; it cannot be closed.`);
  }
  decide(c, dispute, false);
  save(c, 'dispute', dispute);
  return dispute;
}

export const disputeRoutes: Route[] = [
  route('disputes.list', 'GET', '/v1/disputes', (c) => listOf(c, 'dispute', '/v1/disputes', [eq(c, 'charge'), eq(c, 'payment_intent')])),
  route('disputes.retrieve', 'GET', '/v1/disputes/:id', (c) => mustLoad(c, 'dispute', c.req.params.id as string, 'dispute')),
  route('disputes.update', 'POST', '/v1/disputes/:id', updateDispute),
  route('disputes.close', 'POST', '/v1/disputes/:id/close', closeDispute),
];

