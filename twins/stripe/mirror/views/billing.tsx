/** Billing: subscriptions and invoices, each a list with the dashboard's status tabs and an object page. */
import { DataTable, DetailList, navigate, Tabs, type Column } from '../../../../pages/ui/index.js';
import { dateTime, day, priceText, statusOf } from '../format.js';
import { filled, ListPage, MetadataList, Money, ObjectLink, ObjectPage, Section, SectionList, StatusBadge, useMirror } from '../components.js';
import type { ListQuery, Resource } from '../routes.js';
import { expanded, idOf, type Invoice, type InvoiceLine, type StripeObject, type Subscription, type SubscriptionItem } from '../stripe.js';
import { CustomerDetail } from './customers.js';
import { invoiceColumns, subscriptionColumns } from './columns.js';

/** Status tabs over a list: each a link to the list filtered by that status (`undefined`: the list as the API answers it unfiltered). */
function StatusTabs({ resource, query, tabs, label }: { resource: Resource; query: ListQuery; tabs: [string, string | undefined][]; label: string }) {
  const { href } = useMirror();
  const at = (status: string | undefined) => href({ kind: 'list', resource, query: status === undefined ? {} : { status } });
  return (
    <Tabs
      label={label}
      current={query.status ?? ''}
      items={tabs.map(([title, status]) => ({ id: status ?? '', label: title, href: at(status) }))}
      onSelect={(id) => navigate(at(id === '' ? undefined : id))}
    />
  );
}

export function SubscriptionsList({ query }: { query: ListQuery }) {
  return (
    <ListPage<Subscription>
      title="Subscriptions"
      noun="subscriptions"
      resource="subscriptions"
      query={query}
      path="/v1/subscriptions"
      params={{ ...(query.status === undefined ? {} : { status: query.status }), expand: ['data.customer', 'data.items.data.price.product'] }}
      columns={subscriptionColumns}
      head={
        <StatusTabs
          resource="subscriptions"
          query={query}
          label="Subscription status"
          tabs={[['Current', undefined], ['Active', 'active'], ['Past due', 'past_due'], ['Trialing', 'trialing'], ['Canceled', 'canceled'], ['All', 'all']]}
        />
      }
    />
  );
}

export function InvoicesList({ query }: { query: ListQuery }) {
  return (
    <ListPage<Invoice>
      title="Invoices"
      noun="invoices"
      resource="invoices"
      query={query}
      path="/v1/invoices"
      params={query.status === undefined ? {} : { status: query.status }}
      columns={invoiceColumns}
      head={
        <StatusTabs
          resource="invoices"
          query={query}
          label="Invoice status"
          tabs={[['All', undefined], ['Draft', 'draft'], ['Open', 'open'], ['Paid', 'paid'], ['Void', 'void'], ['Uncollectible', 'uncollectible']]}
        />
      }
    />
  );
}

const itemColumns: Column<SubscriptionItem>[] = [
  { title: 'Product', cell: (item) => (typeof item.price.product === 'object' ? <ObjectLink id={item.price.product.id} resource="products">{item.price.product.name}</ObjectLink> : <ObjectLink id={item.price.product} resource="products" />) },
  { title: 'Qty', cell: (item) => item.quantity ?? 1, align: 'right' },
  { title: 'Price', cell: (item) => <ObjectLink id={item.price.id} resource="prices">{priceText(item.price)}</ObjectLink>, nowrap: true },
  { title: 'ID', cell: (item) => item.id, mono: true, nowrap: true },
];

function period(sub: Subscription): string | null {
  const item = sub.items.data[0] as (SubscriptionItem & { current_period_start?: number; current_period_end?: number }) | undefined;
  if (item?.current_period_start === undefined || item.current_period_end === undefined || item.current_period_end === 0) return null;
  return `${day(item.current_period_start)} to ${day(item.current_period_end)}`;
}

export function SubscriptionPage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<Subscription>
      kind="Subscription"
      load={() => api.get<Subscription>(`/v1/subscriptions/${encodeURIComponent(id)}`, { expand: ['customer', 'items.data.price.product'] })}
      deps={[api, id]}
    >
      {(sub) => {
        const customer = expanded(sub.customer);
        const more = (sub.items.total_count ?? sub.items.data.length) - sub.items.data.length;
        return {
          title: customer?.name ?? customer?.email ?? idOf(sub.customer) ?? sub.id,
          badge: <StatusBadge status={statusOf(sub.status)} />,
          subtitle: sub.cancel_at_period_end ? `Cancels ${sub.cancel_at === null ? 'at the period end' : day(sub.cancel_at)}` : sub.pause_collection !== null ? `Collection paused (${sub.pause_collection.behavior.replace(/_/g, ' ')})` : undefined,
          main: (
            <>
              <Section title="Pricing">
                <DataTable label="Subscription items" columns={itemColumns} rows={sub.items.data} rowKey={(item) => item.id} empty="No items." />
                {more > 0 && <p class="hint">and {more} more items (GET /v1/subscription_items?subscription={sub.id})</p>}
              </Section>
              <SectionList<Invoice> title="Invoices" noun="invoices" path="/v1/invoices" params={{ subscription: sub.id }} columns={invoiceColumns.filter((c) => c.title !== 'Customer')} />
              <Section title="Metadata">
                <MetadataList metadata={sub.metadata} />
              </Section>
            </>
          ),
          aside: (
            <DetailList
              items={filled([
                { label: 'Subscription ID', value: sub.id, mono: true },
                ['Customer', <CustomerDetail customer={sub.customer} />],
                ['Started', dateTime(sub.start_date)],
                ['Current period', period(sub)],
                ['Billing', sub.collection_method === 'send_invoice' ? 'Send invoice' : 'Charge automatically'],
                ['Trial ends', sub.trial_end === null ? null : dateTime(sub.trial_end)],
                ['Cancels at', sub.cancel_at === null ? null : dateTime(sub.cancel_at)],
                ['Canceled', sub.canceled_at === null ? null : dateTime(sub.canceled_at)],
                ['Latest invoice', sub.latest_invoice === null ? null : <ObjectLink id={sub.latest_invoice} resource="invoices" />],
                ['Test clock', sub.test_clock ?? null],
              ])}
            />
          ),
        };
      }}
    </ObjectPage>
  );
}

const lineColumns: Column<InvoiceLine>[] = [
  { title: 'Description', cell: (line) => line.description ?? '—' },
  { title: 'Qty', cell: (line) => line.quantity ?? '—', align: 'right' },
  { title: 'Period', cell: (line) => (line.period === undefined ? '—' : `${day(line.period.start)} – ${day(line.period.end)}`), nowrap: true },
  { title: 'Amount', cell: (line) => <Money amount={line.amount} currency={line.currency} code={false} />, align: 'right', nowrap: true },
];

interface InvoicePayment extends StripeObject {
  amount_paid: number | null;
  amount_requested: number;
  currency: string;
  status: string;
  payment: { type: string; payment_intent?: string };
}

const invoicePaymentColumns: Column<InvoicePayment>[] = [
  { title: 'Amount', cell: (p) => <Money amount={p.amount_paid ?? p.amount_requested} currency={p.currency} />, align: 'right', nowrap: true },
  { title: 'Status', cell: (p) => <StatusBadge status={statusOf(p.status)} />, nowrap: true },
  { title: 'Payment', cell: (p) => (p.payment.payment_intent === undefined ? p.payment.type : <ObjectLink id={p.payment.payment_intent} resource="payment_intents" />) },
  { title: 'Created', cell: (p) => dateTime(p.created), nowrap: true },
];

export function InvoicePage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<Invoice> kind="Invoice" load={() => api.get<Invoice>(`/v1/invoices/${encodeURIComponent(id)}`, { expand: ['customer'] })} deps={[api, id]}>
      {(inv) => {
        const subscription = inv.parent?.subscription_details?.subscription ?? null;
        return {
          title: <Money amount={inv.total} currency={inv.currency} />,
          badge: <StatusBadge status={statusOf(inv.status)} />,
          subtitle: inv.number ?? undefined,
          main: (
            <>
              <Section title="Summary">
                <DetailList
                  items={[
                    ['Billed to', inv.customer_email ?? inv.customer_name],
                    ['Subtotal', <Money amount={inv.subtotal} currency={inv.currency} />],
                    ['Total', <Money amount={inv.total} currency={inv.currency} />],
                    ['Amount due', <Money amount={inv.amount_due} currency={inv.currency} />],
                    ['Amount paid', <Money amount={inv.amount_paid} currency={inv.currency} />],
                    ['Amount remaining', <Money amount={inv.amount_remaining} currency={inv.currency} />],
                    ['Memo', inv.description],
                  ]}
                />
              </Section>
              <SectionList<InvoiceLine>
                title="Line items"
                noun="line items"
                path={`/v1/invoices/${encodeURIComponent(inv.id)}/lines`}
                params={{}}
                columns={lineColumns}
                rowView={null}
              />
              <SectionList<InvoicePayment> title="Payments" noun="payments" path="/v1/invoice_payments" params={{ invoice: inv.id }} columns={invoicePaymentColumns} rowView={(p) => (p.payment.payment_intent === undefined ? null : { kind: 'detail', resource: 'payment_intents', id: p.payment.payment_intent })} />
              <Section title="Metadata">
                <MetadataList metadata={inv.metadata} />
              </Section>
            </>
          ),
          aside: (
            <DetailList
              items={filled([
                { label: 'Invoice ID', value: inv.id, mono: true },
                ['Number', inv.number],
                ['Customer', inv.customer === null ? null : <CustomerDetail customer={inv.customer} />],
                ['Subscription', subscription === null ? null : <ObjectLink id={subscription} resource="subscriptions" />],
                ['Created', dateTime(inv.created)],
                ['Finalized', inv.status_transitions?.finalized_at == null ? null : dateTime(inv.status_transitions.finalized_at)],
                ['Paid', inv.status_transitions?.paid_at == null ? null : dateTime(inv.status_transitions.paid_at)],
                ['Due', inv.due_date === null ? null : day(inv.due_date)],
                ['Billing', inv.collection_method === 'send_invoice' ? 'Send invoice' : 'Charge automatically'],
                ['Billing reason', inv.billing_reason?.replace(/_/g, ' ') ?? null],
              ])}
            />
          ),
        };
      }}
    </ObjectPage>
  );
}
