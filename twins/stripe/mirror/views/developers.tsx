/** Developers: events (as sentences, with their data) and webhook endpoints with their deliveries. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { Badge, DataTable, DetailList, ErrorNote, instant, JsonView, Loading, navigate, type Column } from '../../../../pages/ui/index.js';
import { scanDeliveries, type Delivery, type TimelinePage } from '../deliveries.js';
import { dateTime, eventSentence, statusOf } from '../format.js';
import { filled, ListPage, MetadataList, ObjectLink, ObjectPage, Section, StatusBadge, useMirror } from '../components.js';
import { resourceOfId, type ListQuery } from '../routes.js';
import type { StripeEvent, WebhookEndpoint } from '../stripe.js';

const eventColumns: Column<StripeEvent>[] = [
  { title: 'Event', cell: (e) => eventSentence(e.type, e.data.object) },
  { title: 'Type', cell: (e) => e.type, mono: true, nowrap: true },
  { title: 'ID', cell: (e) => e.id, mono: true, nowrap: true },
  { title: 'Date', cell: (e) => dateTime(e.created), nowrap: true },
];

function TypeFilter({ query }: { query: ListQuery }) {
  const { href } = useMirror();
  const [type, setType] = useState(query.type ?? '');
  const go = (value: string) => navigate(href({ kind: 'list', resource: 'events', query: value === '' ? {} : { type: value } }));
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filter events"
      onSubmit={(e) => {
        e.preventDefault();
        go(type.trim());
      }}
    >
      <label>
        <span>Type</span>
        <input type="search" value={type} placeholder="customer.* or invoice.paid" onInput={(e) => setType(e.currentTarget.value)} />
      </label>
      <button type="submit">Filter</button>
      {query.type !== undefined && (
        <button type="button" class="link" onClick={() => { setType(''); go(''); }}>
          Clear
        </button>
      )}
    </form>
  );
}

export function EventsList({ query }: { query: ListQuery }) {
  return (
    <ListPage<StripeEvent>
      title="Events"
      noun="events"
      resource="events"
      query={query}
      path="/v1/events"
      params={query.type === undefined ? {} : { type: query.type }}
      columns={eventColumns}
      head={<TypeFilter query={query} />}
    />
  );
}

export function EventPage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<StripeEvent> kind="Event" load={() => api.get<StripeEvent>(`/v1/events/${encodeURIComponent(id)}`)} deps={[api, id]}>
      {(e) => {
        const object = e.data.object;
        const about = typeof object.id === 'string' && resourceOfId(object.id) !== null ? object.id : null;
        return {
          title: eventSentence(e.type, object),
          subtitle: <span class="mono">{e.type}</span>,
          main: (
            <>
              <Section title="Event data">
                <JsonView value={object} label="Event data" open={1} />
              </Section>
              {e.data.previous_attributes !== undefined && (
                <Section title="Previous attributes">
                  <JsonView value={e.data.previous_attributes} label="Previous attributes" open={2} />
                </Section>
              )}
            </>
          ),
          aside: (
            <DetailList
              items={filled([
                { label: 'Event ID', value: e.id, mono: true },
                { label: 'Type', value: e.type, mono: true },
                ['Date', dateTime(e.created)],
                ['Object', about === null ? (typeof object.id === 'string' ? object.id : null) : <ObjectLink id={about} />],
                ['API version', e.api_version],
                { label: 'Request', value: e.request.id ?? 'Automatic (no request)', mono: e.request.id !== null },
                { label: 'Idempotency key', value: e.request.idempotency_key, mono: true },
                ['Pending webhooks', String(e.pending_webhooks)],
              ])}
            />
          ),
        };
      }}
    </ObjectPage>
  );
}

function listening(events: string[]): string {
  return events.includes('*') ? 'All events' : `${events.length} ${events.length === 1 ? 'event' : 'events'}`;
}

const endpointColumns: Column<WebhookEndpoint>[] = [
  { title: 'URL', cell: (we) => we.url, mono: true },
  { title: 'Status', cell: (we) => <StatusBadge status={statusOf(we.status)} />, nowrap: true },
  { title: 'Listening to', cell: (we) => listening(we.enabled_events), nowrap: true },
  { title: 'Description', cell: (we) => we.description ?? '' },
  { title: 'Created', cell: (we) => dateTime(we.created), nowrap: true },
];

export function WebhooksList({ query }: { query: ListQuery }) {
  return <ListPage<WebhookEndpoint> title="Webhooks" noun="webhook endpoints" resource="webhook_endpoints" query={query} path="/v1/webhook_endpoints" columns={endpointColumns} />;
}

/** The table of deliveries; `Sent to` only where one went elsewhere than the endpoint's URL now (it was changed since). */
function deliveryColumns(url: string, rows: Delivery[]): Column<Delivery>[] {
  return [
    { title: 'Event', cell: (d) => (d.eventType === null ? '—' : d.eventType), mono: true, nowrap: true },
    { title: 'Event ID', cell: (d) => <ObjectLink id={d.eventId} resource="events" />, nowrap: true },
    ...(rows.some((d) => d.url !== url) ? [{ title: 'Sent to', cell: (d: Delivery) => d.url, mono: true }] : []),
    { title: 'Date', cell: (d) => <span title={instant(d.at)}>{dateTime(Date.parse(d.at) / 1000)}</span>, nowrap: true },
  ];
}

/** The endpoint's deliveries, newest first, read from the world's timeline a few pages at a time (deliveries.ts). */
function Deliveries({ endpoint }: { endpoint: WebhookEndpoint }) {
  const { world, config } = useMirror();
  const [shown, setShown] = useState<Delivery[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [scanned, setScanned] = useState(0);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const generation = useRef(0);
  const twin = config.vendor ?? 'stripe';
  const fetchPage = (before: string | null) =>
    world.api<TimelinePage>(`/timeline?twin=${encodeURIComponent(twin)}&limit=100${before === null ? '' : `&before=${encodeURIComponent(before)}`}`);
  const load = (cursor: string | null, append: boolean) => {
    const gen = append ? generation.current : ++generation.current;
    setLoading(true);
    scanDeliveries(fetchPage, endpoint.id, cursor).then(
      (scan) => {
        if (gen !== generation.current) return;
        setShown((before) => [...(append ? (before ?? []) : []), ...scan.deliveries]);
        setNext(scan.next);
        setScanned((n) => (append ? n : 0) + scan.scanned);
        setError(null);
        setLoading(false);
      },
      (e: unknown) => {
        if (gen !== generation.current) return;
        setError(e);
        setLoading(false);
      },
    );
  };
  useEffect(() => {
    load(null, false);
    return () => {
      generation.current++;
    };
  }, [endpoint.id]);
  return (
    <Section title="Event deliveries">
      <p class="hint">
        Each event this endpoint takes is sent by the world once the change that made it is saved, signed with the endpoint's secret and retried on failure. The twin records
        what was sent, not what the receiver answered.
      </p>
      {shown === null && error === null && <Loading what="deliveries" />}
      <ErrorNote error={error} what="The deliveries did not load" />
      {shown !== null && (
        <>
          <DataTable label="Event deliveries" columns={deliveryColumns(endpoint.url, shown)} rows={shown} rowKey={(d) => `${d.id}@${d.position}`} empty="No deliveries found yet." />
          <div class="pager">
            <span class="hint">
              {shown.length} {shown.length === 1 ? 'delivery' : 'deliveries'} in the last {scanned} changes{next === null ? ' (all of them)' : ''}
            </span>
            {next !== null && (
              <button type="button" onClick={() => load(next, true)} disabled={loading}>
                {loading ? 'Loading…' : 'Look further back'}
              </button>
            )}
          </div>
        </>
      )}
    </Section>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<WebhookEndpoint> kind="Webhook endpoint" load={() => api.get<WebhookEndpoint>(`/v1/webhook_endpoints/${encodeURIComponent(id)}`)} deps={[api, id]}>
      {(we) => ({
        title: <span class="mono">{we.url}</span>,
        badge: <StatusBadge status={statusOf(we.status)} />,
        subtitle: we.description ?? undefined,
        main: (
          <>
            <Section title="Listening to">
              <p class="event-types">
                {we.enabled_events.map((t) => (
                  <Badge key={t}>{t === '*' ? 'All events' : t}</Badge>
                ))}
              </p>
            </Section>
            <Deliveries endpoint={we} />
            <Section title="Metadata">
              <MetadataList metadata={we.metadata} />
            </Section>
          </>
        ),
        aside: (
          <DetailList
            items={filled([
              { label: 'Endpoint ID', value: we.id, mono: true },
              { label: 'URL', value: we.url, mono: true },
              ['Status', we.status === 'enabled' ? 'Enabled' : 'Disabled'],
              ['API version', we.api_version ?? 'Account default'],
              ['Created', dateTime(we.created)],
              ['Signing secret', 'Shown once, when the endpoint was made'],
            ])}
          />
        ),
      })}
    </ObjectPage>
  );
}
