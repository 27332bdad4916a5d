/**
 * How the mirror writes what Stripe's dashboard writes: instants, statuses as the dashboard
 * names them, prices, events as sentences, and the cursor pager's state; amounts in their
 * currency's units are pages/ui's `money`. No DOM here (format.test.ts runs in Node).
 */

import { money } from '../../../pages/ui/format.js';

export { money };

const DATE = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric', hour: 'numeric', minute: '2-digit' });
const DAY = new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric', year: 'numeric' });

/** Unix seconds as Stripe's dashboard writes them in a UTC account: `May 1, 2026, 9:00 AM`. */
export function dateTime(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
  return DATE.format(new Date(seconds * 1000));
}

/** Unix seconds as a day: `May 1, 2026`. */
export function day(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
  return DAY.format(new Date(seconds * 1000));
}

/** How a badge is coloured, as the dashboard's: green done, blue in progress, orange waiting on someone, red failed, grey over. */
export type Tone = 'success' | 'info' | 'warning' | 'danger' | 'neutral';

export interface Status {
  label: string;
  tone: Tone;
}

const STATUS: Record<string, Status> = {
  succeeded: { label: 'Succeeded', tone: 'success' },
  paid: { label: 'Paid', tone: 'success' },
  active: { label: 'Active', tone: 'success' },
  enabled: { label: 'Enabled', tone: 'success' },
  trialing: { label: 'Trialing', tone: 'info' },
  processing: { label: 'Processing', tone: 'info' },
  pending: { label: 'Pending', tone: 'info' },
  open: { label: 'Open', tone: 'info' },
  draft: { label: 'Draft', tone: 'neutral' },
  requires_capture: { label: 'Uncaptured', tone: 'warning' },
  requires_action: { label: 'Incomplete', tone: 'warning' },
  requires_confirmation: { label: 'Incomplete', tone: 'neutral' },
  requires_payment_method: { label: 'Incomplete', tone: 'neutral' },
  incomplete: { label: 'Incomplete', tone: 'warning' },
  past_due: { label: 'Past due', tone: 'danger' },
  unpaid: { label: 'Unpaid', tone: 'danger' },
  uncollectible: { label: 'Uncollectible', tone: 'danger' },
  failed: { label: 'Failed', tone: 'danger' },
  canceled: { label: 'Canceled', tone: 'neutral' },
  incomplete_expired: { label: 'Expired', tone: 'neutral' },
  paused: { label: 'Paused', tone: 'neutral' },
  void: { label: 'Void', tone: 'neutral' },
  disabled: { label: 'Disabled', tone: 'neutral' },
  inactive: { label: 'Archived', tone: 'neutral' },
};

/** A Stripe status word as the dashboard's badge says it (`past_due` → Past due). */
export function statusOf(status: string | null | undefined): Status {
  if (typeof status !== 'string' || status === '') return { label: 'Unknown', tone: 'neutral' };
  return STATUS[status] ?? { label: sentenceCase(status), tone: 'neutral' };
}

function sentenceCase(word: string): string {
  const spaced = word.replace(/[_.]+/g, ' ');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** What the mirror reads of a PaymentIntent and its latest charge to name its status. */
export interface PaymentLike {
  status: string;
  amount: number;
  last_payment_error?: { code?: string | null; decline_code?: string | null; message?: string | null } | null;
  latest_charge?: string | { amount_refunded?: number; refunded?: boolean; disputed?: boolean; status?: string } | null;
}

/**
 * A payment's badge as the dashboard's Payments list shows it: a refund or a dispute of its
 * charge outranks `succeeded`; an intent waiting for a new payment method after a decline is
 * Failed, not Incomplete.
 */
export function paymentStatus(pi: PaymentLike): Status {
  const charge = typeof pi.latest_charge === 'object' && pi.latest_charge !== null ? pi.latest_charge : null;
  if (charge !== null) {
    if (charge.disputed === true) return { label: 'Disputed', tone: 'danger' };
    if (charge.refunded === true) return { label: 'Refunded', tone: 'neutral' };
    if ((charge.amount_refunded ?? 0) > 0) return { label: 'Partially refunded', tone: 'neutral' };
  }
  if (pi.status === 'requires_payment_method' && pi.last_payment_error) return { label: 'Failed', tone: 'danger' };
  return statusOf(pi.status);
}

/** A charge's badge: refunded, disputed, then its status. */
export function chargeStatus(charge: { status: string; refunded?: boolean; amount_refunded?: number; disputed?: boolean; captured?: boolean }): Status {
  if (charge.disputed === true) return { label: 'Disputed', tone: 'danger' };
  if (charge.refunded === true) return { label: 'Refunded', tone: 'neutral' };
  if ((charge.amount_refunded ?? 0) > 0) return { label: 'Partially refunded', tone: 'neutral' };
  if (charge.status === 'succeeded' && charge.captured === false) return { label: 'Uncaptured', tone: 'warning' };
  return statusOf(charge.status);
}

/** A price as the catalog writes it: `$10.00 / month`, `$5.00 every 3 months`, `$20.00` (one-time). */
export function priceText(price: {
  unit_amount?: number | null;
  unit_amount_decimal?: string | null;
  currency: string;
  recurring?: { interval: string; interval_count?: number } | null;
}): string {
  const amount = typeof price.unit_amount === 'number' ? price.unit_amount : price.unit_amount_decimal != null ? Number(price.unit_amount_decimal) : null;
  const base = money(amount, price.currency);
  const r = price.recurring;
  if (r === null || r === undefined) return base;
  const count = r.interval_count ?? 1;
  return count === 1 ? `${base} / ${r.interval}` : `${base} every ${count} ${r.interval}s`;
}

/** The nouns of event types the dashboard writes differently from the type's own word. */
const NOUNS: Record<string, string> = {
  payment_intent: 'payment',
  invoiceitem: 'invoice item',
  'checkout.session': 'Checkout session',
  'customer.subscription': 'subscription',
  'customer.source': 'source',
  'customer.discount': 'discount',
  'customer.tax_id': 'tax ID',
  'test_helpers.test_clock': 'test clock',
  'billing_portal.session': 'portal session',
  'charge.dispute': 'dispute',
  'charge.refund': 'refund',
};

const VERBS: Record<string, string> = {
  created: 'was created',
  updated: 'was updated',
  deleted: 'was deleted',
  succeeded: 'succeeded',
  payment_failed: 'failed',
  failed: 'failed',
  canceled: 'was canceled',
  captured: 'was captured',
  refunded: 'was refunded',
  finalized: 'was finalized',
  paid: 'was paid',
  voided: 'was voided',
  sent: 'was sent',
  completed: 'was completed',
  expired: 'expired',
  attached: 'was attached',
  detached: 'was detached',
  requires_action: 'requires action',
  amount_capturable_updated: 'is ready to be captured',
  trial_will_end: 'trial ends soon',
  upcoming: 'is upcoming',
  marked_uncollectible: 'was marked uncollectible',
  payment_succeeded: 'payment succeeded',
  closed: 'was closed',
  opened: 'was opened',
};

/**
 * An event as a sentence, as the dashboard lists events: `customer.created` about `cus_1` →
 * `A new customer cus_1 was created`; `payment_intent.succeeded` → `The payment pi_1 for $10.00 succeeded`.
 */
export function eventSentence(type: string, object: { id?: unknown; amount?: unknown; currency?: unknown } | null | undefined): string {
  const dot = type.lastIndexOf('.');
  const what = dot < 0 ? type : type.slice(0, dot);
  const action = dot < 0 ? '' : type.slice(dot + 1);
  const noun = NOUNS[what] ?? what.replace(/_/g, ' ').replace(/\./g, ' ');
  const id = typeof object?.id === 'string' ? ` ${object.id}` : '';
  const amount = typeof object?.amount === 'number' && typeof object.currency === 'string' ? ` for ${money(object.amount, object.currency)}` : '';
  const verb = VERBS[action] ?? `: ${action.replace(/_/g, ' ')}`;
  if (action === 'created') return `A new ${noun}${id}${amount} was created`;
  const subject = `The ${noun}${id}${amount}`;
  return verb.startsWith(':') ? `${subject}${verb}` : `${subject} ${verb}`;
}

/** Which way a list page was asked for: from the start, after an id (Next), or before one (Previous). */
export interface PageCursor {
  starting_after?: string;
  ending_before?: string;
}

/**
 * Whether Previous and Next lead anywhere, from how the page was asked for and Stripe's
 * `has_more`: after `ending_before`, `has_more` speaks of newer items (Previous), and there is
 * always a Next (the items the cursor came from); after `starting_after`, the reverse.
 */
export function pagerState(cursor: PageCursor, page: { data: { id: string }[]; has_more: boolean }): { previous: string | null; next: string | null } {
  const first = page.data[0]?.id ?? null;
  const last = page.data[page.data.length - 1]?.id ?? null;
  if (cursor.ending_before !== undefined) {
    // An empty page before a cursor: the cursor was the newest; Next goes back to it.
    if (first === null) return { previous: null, next: null };
    return { previous: page.has_more ? first : null, next: last };
  }
  return { previous: cursor.starting_after !== undefined ? first : null, next: page.has_more ? last : null };
}
