/**
 * Any other Stripe path (`/v1/balance`, `/v1/payment_methods/pm_…`, `/v1/checkout/sessions`):
 * what the API answers there, a list as a table of its objects (each leading to its page), an
 * object as its JSON. The address's query is sent as it is (a list answers its first ten
 * unless it names a `limit`; a retrieve refuses parameters it does not know).
 */
import { DataTable, ErrorNote, JsonView, Loading, useLoad, type Column } from '../../../../pages/ui/index.js';
import { dateTime } from '../format.js';
import { Money, ObjectLink, useMirror } from '../components.js';
import type { StripeObject } from '../stripe.js';

const columns: Column<StripeObject>[] = [
  { title: 'ID', cell: (o) => <ObjectLink id={o.id} />, nowrap: true },
  { title: 'Object', cell: (o) => o.object, mono: true, nowrap: true },
  { title: 'Amount', cell: (o) => (typeof o['amount'] === 'number' && typeof o['currency'] === 'string' ? <Money amount={o['amount']} currency={o['currency']} /> : ''), align: 'right', nowrap: true },
  { title: 'Status', cell: (o) => (typeof o['status'] === 'string' ? o['status'] : ''), nowrap: true },
  { title: 'Created', cell: (o) => dateTime(o.created), nowrap: true },
];

export function ObjectView({ path, query }: { path: string; query: string }) {
  const { api } = useMirror();
  const params = Object.fromEntries(new URLSearchParams(query));
  const loaded = useLoad(() => api.get<unknown>(path, params), [api, path, query]);
  const value = loaded.data;
  const list = typeof value === 'object' && value !== null && (value as { object?: unknown }).object === 'list' ? (value as { data: StripeObject[]; has_more: boolean }) : null;
  return (
    <section class="object-page" aria-label={path}>
      <div class="object-head">
        <p class="object-kind">GET</p>
        <h1 class="mono">{path}</h1>
      </div>
      {value === null && loaded.error === null && <Loading what={path} />}
      <ErrorNote error={loaded.error} what={`GET ${path}`} />
      {list !== null && (
        <>
          <DataTable label={path} columns={columns} rows={list.data} rowKey={(o) => o.id} empty="Nothing here." />
          {list.has_more && <p class="hint">More after these: add starting_after={list.data[list.data.length - 1]?.id} to the address.</p>}
        </>
      )}
      {value !== null && list === null && <JsonView value={value} label={path} open={1} />}
    </section>
  );
}
