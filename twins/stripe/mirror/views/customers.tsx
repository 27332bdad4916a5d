/** Customers: the list (with the email filter Stripe's dashboard has) and a customer's page. */
import { useState } from 'preact/hooks';
import { DetailList, navigate, type Column } from '../../../../pages/ui/index.js';
import { dateTime } from '../format.js';
import { filled, ListPage, MetadataList, Money, ObjectLink, ObjectPage, Section, SectionList, useMirror } from '../components.js';
import type { ListQuery } from '../routes.js';
import { expanded, type Customer, type Invoice, type PaymentIntent, type PaymentMethod, type Subscription } from '../stripe.js';
import { cardText, invoiceColumns, paymentColumns, paymentMethodColumns, subscriptionColumns } from './columns.js';

const customerColumns: Column<Customer>[] = [
  { title: 'Name', cell: (c) => c.name ?? <span class="muted">—</span> },
  { title: 'Email', cell: (c) => c.email ?? <span class="muted">—</span> },
  { title: 'Default payment method', cell: (c) => cardText(expanded(c.invoice_settings?.default_payment_method)?.card), nowrap: true },
  { title: 'Description', cell: (c) => c.description ?? '' },
  { title: 'Created', cell: (c) => dateTime(c.created), nowrap: true },
];

function EmailFilter({ query }: { query: ListQuery }) {
  const { href } = useMirror();
  const [email, setEmail] = useState(query.email ?? '');
  const go = (value: string) => navigate(href({ kind: 'list', resource: 'customers', query: value === '' ? {} : { email: value } }));
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filter customers"
      onSubmit={(e) => {
        e.preventDefault();
        go(email.trim());
      }}
    >
      <label>
        <span>Email</span>
        <input type="search" value={email} placeholder="jenny.rosen@example.com" onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
      <button type="submit">Filter</button>
      {query.email !== undefined && (
        <button type="button" class="link" onClick={() => { setEmail(''); go(''); }}>
          Clear
        </button>
      )}
    </form>
  );
}

export function CustomersList({ query }: { query: ListQuery }) {
  return (
    <ListPage<Customer>
      title="Customers"
      noun="customers"
      resource="customers"
      query={query}
      path="/v1/customers"
      params={{ ...(query.email === undefined ? {} : { email: query.email }), expand: ['data.invoice_settings.default_payment_method'] }}
      columns={customerColumns}
      head={<EmailFilter query={query} />}
    />
  );
}

function address(a: Customer['address']): string | null {
  if (a === null) return null;
  const parts = [a['line1'], a['line2'], [a['postal_code'], a['city']].filter(Boolean).join(' '), a['state'], a['country']].filter((p) => typeof p === 'string' && p !== '');
  return parts.length === 0 ? null : parts.join(', ');
}

export function CustomerPage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<Customer> kind="Customer" load={() => api.get<Customer>(`/v1/customers/${encodeURIComponent(id)}`, { expand: ['invoice_settings.default_payment_method'] })} deps={[api, id]}>
      {(c) => {
        if (c.deleted === true) {
          return { title: <span class="mono">{c.id}</span>, badge: <span class="badge tone-red">Deleted</span>, main: <p>This customer was deleted.</p>, aside: <DetailList items={[{ label: 'Customer ID', value: c.id, mono: true }]} /> };
        }
        const pm = expanded(c.invoice_settings?.default_payment_method);
        return {
          title: c.name ?? c.email ?? c.id,
          subtitle: c.name !== null && c.email !== null ? c.email : undefined,
          main: (
            <>
              <SectionList<PaymentIntent>
                title="Payments"
                noun="payments"
                path="/v1/payment_intents"
                params={{ customer: c.id, expand: ['data.latest_charge'] }}
                columns={paymentColumns.filter((col) => col.title !== 'Customer')}
              />
              <SectionList<Subscription>
                title="Subscriptions"
                noun="subscriptions"
                path="/v1/subscriptions"
                params={{ customer: c.id, status: 'all', expand: ['data.items.data.price.product'] }}
                columns={subscriptionColumns.filter((col) => col.title !== 'Customer')}
              />
              <SectionList<Invoice> title="Invoices" noun="invoices" path="/v1/invoices" params={{ customer: c.id }} columns={invoiceColumns.filter((col) => col.title !== 'Customer')} />
              <SectionList<PaymentMethod>
                title="Payment methods"
                noun="payment methods"
                path={`/v1/customers/${encodeURIComponent(c.id)}/payment_methods`}
                params={{}}
                columns={paymentMethodColumns}
                rowView={(row) => ({ kind: 'object', path: `/v1/payment_methods/${row.id}`, query: '' })}
              />
              <Section title="Metadata">
                <MetadataList metadata={c.metadata} />
              </Section>
            </>
          ),
          aside: (
            <DetailList
              items={filled([
                { label: 'Customer ID', value: c.id, mono: true },
                ['Customer since', dateTime(c.created)],
                ['Email', c.email],
                ['Phone', c.phone],
                ['Description', c.description],
                ['Billing details', address(c.address)],
                ['Default payment method', pm === null ? null : cardText(pm.card)],
                ['Currency', c.currency?.toUpperCase() ?? null],
                ['Balance', c.balance === 0 ? null : <Money amount={c.balance} currency={c.currency ?? 'usd'} />],
                ['Invoice prefix', c.invoice_prefix],
                ['Test clock', c.test_clock ?? null],
                ['Delinquent', c.delinquent ? 'Yes' : null],
              ])}
            />
          ),
        };
      }}
    </ObjectPage>
  );
}

/** A customer named in another object's details: a link by email when it came expanded. */
export function CustomerDetail({ customer }: { customer: string | Customer | null }) {
  const c = expanded(customer);
  const id = typeof customer === 'string' ? customer : c?.id ?? null;
  return <ObjectLink id={id} resource="customers">{c?.email ?? c?.name ?? undefined}</ObjectLink>;
}
