/** Payments: PaymentIntents (the dashboard's Payments), with their charges and refunds; a charge's and a refund's page. */
import { DetailList, JsonView } from '../../../../pages/ui/index.js';
import { chargeStatus, dateTime, money, paymentStatus, statusOf } from '../format.js';
import { filled, ListPage, MetadataList, Money, ObjectLink, ObjectPage, Section, SectionList, StatusBadge, useMirror } from '../components.js';
import type { ListQuery } from '../routes.js';
import { expanded, idOf, type BalanceTransaction, type Charge, type PaymentIntent, type Refund } from '../stripe.js';
import { cardText, chargeColumns, paymentColumns, refundColumns } from './columns.js';
import { CustomerDetail } from './customers.js';

export function PaymentsList({ query }: { query: ListQuery }) {
  return (
    <ListPage<PaymentIntent>
      title="Payments"
      noun="payments"
      resource="payment_intents"
      query={query}
      path="/v1/payment_intents"
      params={{ expand: ['data.latest_charge', 'data.customer'] }}
      columns={paymentColumns}
    />
  );
}

export function ChargesList({ query }: { query: ListQuery }) {
  return <ListPage<Charge> title="Charges" noun="charges" resource="charges" query={query} path="/v1/charges" columns={chargeColumns} />;
}

export function RefundsList({ query }: { query: ListQuery }) {
  return <ListPage<Refund> title="Refunds" noun="refunds" resource="refunds" query={query} path="/v1/refunds" columns={refundColumns} />;
}

/** Amount, fee and net of a charge's balance transaction, as the payment page's breakdown. */
function Breakdown({ amount, currency, txn }: { amount: number; currency: string; txn: BalanceTransaction | null }) {
  return (
    <DetailList
      label="Payment breakdown"
      items={[
        ['Payment amount', <Money amount={amount} currency={currency} />],
        ['Stripe processing fees', txn === null ? null : `-${money(txn.fee, txn.currency)}`],
        ['Net amount', txn === null ? null : <Money amount={txn.net} currency={txn.currency} />],
        ['Funds available', txn === null ? null : dateTime(txn.available_on)],
      ]}
    />
  );
}

function declineText(pi: PaymentIntent): string | null {
  const e = pi.last_payment_error;
  if (e === null || e === undefined) return null;
  const code = e.decline_code ?? e.code ?? null;
  return code === null ? e.message ?? null : `${code.replace(/_/g, ' ')}${e.message ? ` — ${e.message}` : ''}`;
}

export function PaymentPage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<PaymentIntent>
      kind="Payment"
      load={() => api.get<PaymentIntent>(`/v1/payment_intents/${encodeURIComponent(id)}`, { expand: ['latest_charge.balance_transaction', 'payment_method', 'customer'] })}
      deps={[api, id]}
    >
      {(pi) => {
        const charge = expanded(pi.latest_charge);
        const pm = expanded(pi.payment_method);
        const card = charge?.payment_method_details?.card ?? pm?.card ?? null;
        return {
          title: <Money amount={pi.amount} currency={pi.currency} />,
          badge: <StatusBadge status={paymentStatus(pi)} title={pi.status} />,
          subtitle: pi.description ?? undefined,
          main: (
            <>
              <Section title="Payment breakdown">
                <Breakdown amount={pi.amount} currency={pi.currency} txn={expanded(charge?.balance_transaction)} />
              </Section>
              <SectionList<Charge> title="Charges" noun="charges" path="/v1/charges" params={{ payment_intent: pi.id }} columns={chargeColumns} />
              <SectionList<Refund> title="Refunds" noun="refunds" path="/v1/refunds" params={{ payment_intent: pi.id }} columns={refundColumns} />
              <Section title="Payment method">
                <DetailList
                  items={[
                    { label: 'ID', value: idOf(pi.payment_method), mono: true },
                    ['Number', card === null ? null : cardText(card)],
                    ['Expires', card === null ? null : `${String(card.exp_month).padStart(2, '0')} / ${card.exp_year}`],
                    ['Funding', card?.funding ?? null],
                    ['Issuing country', card?.country ?? null],
                    ['Owner', pm?.billing_details?.name ?? null],
                  ]}
                />
              </Section>
              <Section title="Metadata">
                <MetadataList metadata={pi.metadata} />
              </Section>
            </>
          ),
          aside: (
            <DetailList
              items={filled([
                { label: 'Payment ID', value: pi.id, mono: true },
                ['Created', dateTime(pi.created)],
                ['Customer', pi.customer === null ? null : <CustomerDetail customer={pi.customer} />],
                ['Status', pi.status],
                ['Amount received', <Money amount={pi.amount_received} currency={pi.currency} />],
                ['Capture method', pi.capture_method],
                ['Decline', declineText(pi)],
                ['Canceled', pi.canceled_at === null ? null : `${dateTime(pi.canceled_at)}${pi.cancellation_reason === null ? '' : ` (${pi.cancellation_reason.replace(/_/g, ' ')})`}`],
                ['Receipt email', pi.receipt_email],
              ])}
            />
          ),
        };
      }}
    </ObjectPage>
  );
}

export function ChargePage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<Charge> kind="Charge" load={() => api.get<Charge>(`/v1/charges/${encodeURIComponent(id)}`, { expand: ['balance_transaction', 'customer'] })} deps={[api, id]}>
      {(ch) => ({
        title: <Money amount={ch.amount} currency={ch.currency} />,
        badge: <StatusBadge status={chargeStatus(ch)} title={ch.status} />,
        subtitle: ch.description ?? undefined,
        main: (
          <>
            <Section title="Payment breakdown">
              <Breakdown amount={ch.amount} currency={ch.currency} txn={expanded(ch.balance_transaction)} />
            </Section>
            <SectionList<Refund> title="Refunds" noun="refunds" path="/v1/refunds" params={{ charge: ch.id }} columns={refundColumns} />
            <Section title="Outcome">
              <DetailList
                items={[
                  ['Network status', ch.outcome?.network_status?.replace(/_/g, ' ') ?? null],
                  ['Risk level', ch.outcome?.risk_level ?? null],
                  ['Seller message', ch.outcome?.seller_message ?? null],
                  ['Failure', ch.failure_code === null ? null : `${ch.failure_code}${ch.failure_message ? ` — ${ch.failure_message}` : ''}`],
                ]}
              />
            </Section>
            <Section title="Metadata">
              <MetadataList metadata={ch.metadata} />
            </Section>
          </>
        ),
        aside: (
          <DetailList
            items={filled([
              { label: 'Charge ID', value: ch.id, mono: true },
              ['Payment', ch.payment_intent === null ? null : <ObjectLink id={ch.payment_intent} resource="payment_intents" />],
              ['Created', dateTime(ch.created)],
              ['Customer', ch.customer === null ? null : <CustomerDetail customer={ch.customer} />],
              ['Payment method', cardText(ch.payment_method_details?.card)],
              ['Captured', <Money amount={ch.amount_captured} currency={ch.currency} />],
              ['Refunded', ch.amount_refunded === 0 ? null : <Money amount={ch.amount_refunded} currency={ch.currency} />],
            ])}
          />
        ),
      })}
    </ObjectPage>
  );
}

export function RefundPage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<Refund> kind="Refund" load={() => api.get<Refund>(`/v1/refunds/${encodeURIComponent(id)}`)} deps={[api, id]}>
      {(re) => ({
        title: <Money amount={re.amount} currency={re.currency} />,
        badge: <StatusBadge status={statusOf(re.status)} />,
        main: (
          <Section title="Refund">
            <JsonView value={re} label="Refund" />
          </Section>
        ),
        aside: (
          <DetailList
            items={filled([
              { label: 'Refund ID', value: re.id, mono: true },
              ['Created', dateTime(re.created)],
              ['Reason', re.reason?.replace(/_/g, ' ') ?? null],
              ['Payment', re.payment_intent === null ? null : <ObjectLink id={re.payment_intent} resource="payment_intents" />],
              ['Charge', re.charge === null ? null : <ObjectLink id={re.charge} resource="charges" />],
            ])}
          />
        ),
      })}
    </ObjectPage>
  );
}
