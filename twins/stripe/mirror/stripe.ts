/**
 * The twin's Stripe API as the mirror reads it: GETs through the world with the browser's
 * session (no API key: the host marks a session's requests as the world's own, which opens the
 * default account), `Stripe-Account` naming another account the world holds. Stripe's query
 * encoding (`expand[]=…`). The object shapes are the fields the mirror shows, loosely typed:
 * the twin answers Stripe's full objects.
 */
import type { World } from '../../../pages/ui/index.js';

export type Params = Record<string, string | number | string[] | undefined>;

/** A Stripe list (`{ object: 'list', data, has_more }`). */
export interface StripeList<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

/** Any Stripe object: an id, its `object` and whatever else it holds. */
export interface StripeObject {
  id: string;
  object: string;
  created?: number;
  metadata?: Record<string, string>;
  [field: string]: unknown;
}

/** `a=1&expand[]=x&expand[]=y`, as the SDKs send arrays. */
export function queryOf(params: Params): string {
  const out = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(`${key}[]`, v);
    else out.set(key, String(value));
  }
  return out.toString();
}

export class StripeApi {
  constructor(
    private readonly world: World,
    private readonly vendor: string,
    /** The account shown; null for the world's own (the default account). */
    readonly account: string | null,
  ) {}

  /** `GET /v1/…` with `params` in the query. */
  get<T>(path: string, params: Params = {}): Promise<T> {
    const query = queryOf(params);
    const headers: Record<string, string> = this.account === null ? {} : { 'stripe-account': this.account };
    return this.world.vendor<T>(this.vendor, query === '' ? path : `${path}?${query}`, { headers });
  }

  list<T>(path: string, params: Params = {}): Promise<StripeList<T>> {
    return this.get<StripeList<T>>(path, params);
  }

  /** The twin's `account_list` store: the accounts the world holds, the default one first. */
  accounts(): Promise<{ default: string; data: string[]; has_more: boolean }> {
    return this.world.store(this.vendor, 'account_list', 'limit=100');
  }
}

// ---- the fields the mirror reads, per object

export interface Customer extends StripeObject {
  name: string | null;
  email: string | null;
  description: string | null;
  phone: string | null;
  balance: number;
  currency: string | null;
  delinquent: boolean;
  deleted?: boolean;
  invoice_prefix: string | null;
  address: Record<string, string | null> | null;
  invoice_settings?: { default_payment_method: string | PaymentMethod | null };
  default_source?: string | null;
  test_clock?: string | null;
}

export interface Card {
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  funding?: string;
  country?: string | null;
}

export interface PaymentMethod extends StripeObject {
  type: string;
  card?: Card;
  billing_details?: { name: string | null; email: string | null };
  customer: string | null;
}

export interface Charge extends StripeObject {
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  currency: string;
  status: string;
  paid: boolean;
  captured: boolean;
  refunded: boolean;
  disputed: boolean;
  description: string | null;
  customer: string | Customer | null;
  payment_intent: string | null;
  failure_code: string | null;
  failure_message: string | null;
  outcome: { network_status?: string; seller_message?: string; type?: string; risk_level?: string } | null;
  payment_method_details: { type: string; card?: Card } | null;
  balance_transaction: string | BalanceTransaction | null;
  receipt_url?: string | null;
}

export interface BalanceTransaction extends StripeObject {
  amount: number;
  fee: number;
  net: number;
  currency: string;
  available_on: number;
  status: string;
}

export interface PaymentIntent extends StripeObject {
  amount: number;
  amount_received: number;
  amount_capturable: number;
  currency: string;
  status: string;
  description: string | null;
  customer: string | Customer | null;
  latest_charge: string | Charge | null;
  payment_method: string | PaymentMethod | null;
  capture_method: string;
  canceled_at: number | null;
  cancellation_reason: string | null;
  last_payment_error: { code?: string | null; decline_code?: string | null; message?: string | null; type?: string } | null;
  receipt_email: string | null;
  statement_descriptor?: string | null;
}

export interface Refund extends StripeObject {
  amount: number;
  currency: string;
  status: string;
  reason: string | null;
  charge: string | null;
  payment_intent: string | null;
}

export interface Price extends StripeObject {
  active: boolean;
  currency: string;
  unit_amount: number | null;
  unit_amount_decimal: string | null;
  recurring: { interval: string; interval_count: number; usage_type?: string } | null;
  type: string;
  product: string | Product;
  nickname: string | null;
  lookup_key: string | null;
  tax_behavior?: string | null;
}

export interface Product extends StripeObject {
  name: string;
  description: string | null;
  active: boolean;
  default_price: string | Price | null;
  updated: number;
  images?: string[];
}

export interface SubscriptionItem extends StripeObject {
  price: Price;
  quantity?: number;
}

export interface Subscription extends StripeObject {
  status: string;
  customer: string | Customer;
  collection_method: string;
  currency: string;
  items: StripeList<SubscriptionItem> & { total_count?: number };
  cancel_at_period_end: boolean;
  cancel_at: number | null;
  canceled_at: number | null;
  start_date: number;
  trial_end: number | null;
  latest_invoice: string | null;
  default_payment_method: string | null;
  pause_collection: { behavior: string; resumes_at: number | null } | null;
  description?: string | null;
  test_clock?: string | null;
}

export interface InvoiceLine extends StripeObject {
  amount: number;
  currency: string;
  description: string | null;
  quantity: number | null;
  period?: { start: number; end: number };
  pricing?: { price_details?: { price?: string; product?: string } } | null;
}

export interface Invoice extends StripeObject {
  number: string | null;
  status: string | null;
  customer: string | Customer | null;
  customer_email: string | null;
  customer_name: string | null;
  currency: string;
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  subtotal: number;
  total: number;
  due_date: number | null;
  collection_method: string;
  billing_reason: string | null;
  description: string | null;
  lines: StripeList<InvoiceLine> & { total_count?: number };
  period_start: number;
  period_end: number;
  status_transitions?: { finalized_at: number | null; paid_at: number | null; voided_at: number | null; marked_uncollectible_at: number | null };
  parent?: { subscription_details?: { subscription?: string | null } | null } | null;
  hosted_invoice_url?: string | null;
  starting_balance?: number;
  ending_balance?: number | null;
}

export interface StripeEvent extends StripeObject {
  type: string;
  api_version: string;
  data: { object: StripeObject & { amount?: number; currency?: string }; previous_attributes?: Record<string, unknown> };
  request: { id: string | null; idempotency_key: string | null };
  pending_webhooks: number;
}

export interface WebhookEndpoint extends StripeObject {
  url: string;
  status: string;
  enabled_events: string[];
  description: string | null;
  api_version: string | null;
}

/** An expandable field's id, whether it came expanded or not. */
export function idOf(value: string | { id: string } | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : value.id;
}

/** An expandable field's object when it came expanded. */
export function expanded<T extends { id: string }>(value: string | T | null | undefined): T | null {
  return typeof value === 'object' && value !== null ? value : null;
}
