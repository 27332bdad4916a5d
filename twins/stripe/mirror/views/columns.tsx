/**
 * The columns of Stripe's dashboard tables, per object, shared by the list pages and the lists
 * inside object pages (a customer's payments are the Payments table's rows).
 */
import type { Column } from '../../../../pages/ui/index.js';
import { chargeStatus, dateTime, paymentStatus, statusOf } from '../format.js';
import { Money, ObjectLink, StatusBadge } from '../components.js';
import { expanded, idOf, type Card, type Charge, type Customer, type Invoice, type PaymentIntent, type PaymentMethod, type Refund, type Subscription } from '../stripe.js';

/** `Visa •••• 4242`, as the dashboard names a card. */
export function cardText(card: Card | undefined | null): string {
  if (card === undefined || card === null) return '—';
  const brand = card.brand === 'amex' ? 'American Express' : card.brand.charAt(0).toUpperCase() + card.brand.slice(1);
  return `${brand} •••• ${card.last4}`;
}

/** A customer as a cell: their email (or name), linked; the id when the list did not expand it. */
export function CustomerCell({ customer, email }: { customer: string | Customer | null; email?: string | null }) {
  const c = expanded(customer);
  const id = idOf(customer);
  if (id === null) return <span class="muted">—</span>;
  const label = c?.email ?? email ?? c?.name ?? null;
  return <ObjectLink id={id} resource="customers">{label === null ? <span class="mono">{id}</span> : label}</ObjectLink>;
}

export const paymentColumns: Column<PaymentIntent>[] = [
  { title: 'Amount', cell: (pi) => <Money amount={pi.amount} currency={pi.currency} />, align: 'right', nowrap: true },
  { title: 'Status', cell: (pi) => <StatusBadge status={paymentStatus(pi)} title={pi.status} />, nowrap: true },
  { title: 'Payment method', cell: (pi) => cardText(expanded(pi.latest_charge)?.payment_method_details?.card ?? expanded(pi.payment_method)?.card), nowrap: true },
  { title: 'Description', cell: (pi) => pi.description ?? <span class="mono muted">{pi.id}</span> },
  { title: 'Customer', cell: (pi) => <CustomerCell customer={pi.customer} email={pi.receipt_email} /> },
  { title: 'Date', cell: (pi) => dateTime(pi.created), nowrap: true },
];

export const chargeColumns: Column<Charge>[] = [
  { title: 'Amount', cell: (ch) => <Money amount={ch.amount} currency={ch.currency} />, align: 'right', nowrap: true },
  { title: 'Status', cell: (ch) => <StatusBadge status={chargeStatus(ch)} title={ch.status} />, nowrap: true },
  { title: 'Payment method', cell: (ch) => cardText(ch.payment_method_details?.card), nowrap: true },
  { title: 'Description', cell: (ch) => ch.description ?? ch.outcome?.seller_message ?? '—' },
  { title: 'ID', cell: (ch) => ch.id, mono: true, nowrap: true },
  { title: 'Date', cell: (ch) => dateTime(ch.created), nowrap: true },
];

export const refundColumns: Column<Refund>[] = [
  { title: 'Amount', cell: (re) => <Money amount={re.amount} currency={re.currency} />, align: 'right', nowrap: true },
  { title: 'Status', cell: (re) => <StatusBadge status={statusOf(re.status)} />, nowrap: true },
  { title: 'Reason', cell: (re) => (re.reason === null ? '—' : re.reason.replace(/_/g, ' ')) },
  { title: 'ID', cell: (re) => re.id, mono: true, nowrap: true },
  { title: 'Date', cell: (re) => dateTime(re.created), nowrap: true },
];

/** The products a subscription's items are for, as the Subscriptions table's Product column. */
export function itemsText(sub: Subscription): string {
  const names = sub.items.data.map((item) => {
    const product = typeof item.price.product === 'object' ? item.price.product.name : item.price.nickname ?? item.price.product;
    return (item.quantity ?? 1) > 1 ? `${product} × ${item.quantity}` : product;
  });
  const more = (sub.items.total_count ?? sub.items.data.length) - sub.items.data.length;
  return names.join(', ') + (more > 0 ? ` and ${more} more` : '');
}

export const subscriptionColumns: Column<Subscription>[] = [
  { title: 'Customer', cell: (sub) => <CustomerCell customer={sub.customer} /> },
  { title: 'Status', cell: (sub) => <StatusBadge status={statusOf(sub.status)} />, nowrap: true },
  { title: 'Product', cell: itemsText },
  { title: 'Billing', cell: (sub) => (sub.collection_method === 'send_invoice' ? 'Send invoice' : 'Auto') , nowrap: true },
  { title: 'Created', cell: (sub) => dateTime(sub.created), nowrap: true },
];

export const invoiceColumns: Column<Invoice>[] = [
  { title: 'Amount', cell: (inv) => <Money amount={inv.total} currency={inv.currency} />, align: 'right', nowrap: true },
  { title: 'Status', cell: (inv) => <StatusBadge status={statusOf(inv.status)} />, nowrap: true },
  { title: 'Invoice number', cell: (inv) => inv.number ?? <span class="muted">{inv.id}</span>, mono: true, nowrap: true },
  { title: 'Customer', cell: (inv) => <CustomerCell customer={inv.customer} email={inv.customer_email} /> },
  { title: 'Due', cell: (inv) => (inv.due_date === null ? '—' : dateTime(inv.due_date)), nowrap: true },
  { title: 'Created', cell: (inv) => dateTime(inv.created), nowrap: true },
];

export const paymentMethodColumns: Column<PaymentMethod>[] = [
  { title: 'Payment method', cell: (pm) => (pm.card === undefined ? pm.type : cardText(pm.card)), nowrap: true },
  { title: 'Expires', cell: (pm) => (pm.card === undefined ? '—' : `${String(pm.card.exp_month).padStart(2, '0')} / ${pm.card.exp_year}`), nowrap: true },
  { title: 'ID', cell: (pm) => pm.id, mono: true, nowrap: true },
  { title: 'Created', cell: (pm) => dateTime(pm.created), nowrap: true },
];
