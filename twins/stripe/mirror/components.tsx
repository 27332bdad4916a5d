/**
 * The pieces of Stripe's dashboard the views share: amounts, status badges, links to objects,
 * a list page that pages with Stripe's cursor in the URL, a list inside a detail page, and a
 * detail page's frame. Generic pieces (table, badge, details, JSON, loading) are pages/ui's.
 */
import type { ComponentChildren } from 'preact';
import { createContext } from 'preact';
import { useContext, useEffect } from 'preact/hooks';
import { ApiError, Badge, DataTable, ErrorNote, Link, Loading, navigate, useCursorList, useLoad, type Column, type DetailItem, type PageConfig, type Tone as BadgeTone, type World } from '../../../pages/ui/index.js';
import { money, pagerState, type Status as StatusText, type Tone } from './format.js';
import { pathOf, placeOf, resourceOfId, type ListQuery, type Resource, type View } from './routes.js';
import type { Params, StripeApi, StripeList } from './stripe.js';

/** What every view reads: the API for the account shown, and where a view's page is. */
export interface Mirror {
  config: PageConfig;
  world: World;
  api: StripeApi;
  /** The address of a view in the account shown (or in `account` when given). */
  href: (view: View, account?: string | null) => string;
}

export const MirrorContext = createContext<Mirror | null>(null);

export function useMirror(): Mirror {
  const m = useContext(MirrorContext);
  if (m === null) throw new Error('useMirror outside the mirror');
  return m;
}

/** `$10.50 USD`, the currency muted as Stripe writes it beside an amount. */
export function Money({ amount, currency, code = true }: { amount: number | null | undefined; currency: string | null | undefined; code?: boolean }) {
  return (
    <span class="money">
      {money(amount, currency)}
      {code && typeof currency === 'string' && <span class="currency"> {currency.toUpperCase()}</span>}
    </span>
  );
}

const TONES: Record<Tone, BadgeTone> = { success: 'green', info: 'blue', warning: 'amber', danger: 'red', neutral: 'gray' };

/** A status as the dashboard's badge (format.ts names it). */
export function StatusBadge({ status, title }: { status: StatusText; title?: string }) {
  return (
    <Badge tone={TONES[status.tone]} title={title}>
      {status.label}
    </Badge>
  );
}

/** A link to the page of an object by its id (the prefix says which), or its id as text when the mirror has no page for it. */
export function ObjectLink({ id, resource, children }: { id: string | null | undefined; resource?: Resource; children?: ComponentChildren }) {
  const { href } = useMirror();
  if (id === null || id === undefined) return <span class="muted">—</span>;
  const r = resource ?? resourceOfId(id);
  const body = children ?? <span class="mono">{id}</span>;
  if (r === null) return <>{body}</>;
  return <Link href={href({ kind: 'detail', resource: r, id })}>{body}</Link>;
}

/** The head of a list page: its title, and filters or tabs below it. */
function ListHead({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="page-head">
      <h1>{title}</h1>
      {children}
    </div>
  );
}

export interface ListPageProps<T extends { id: string }> {
  title: string;
  resource: Resource;
  query: ListQuery;
  /** The API's list path and its parameters besides the cursor (filters, `expand`). */
  path: string;
  params?: Params;
  columns: Column<T>[];
  /** Filters or tabs under the title. */
  head?: ComponentChildren;
  /** The noun in "No customers" and "20 customers". */
  noun: string;
  /** Where a row leads (default: its own page). */
  rowView?: (row: T) => View;
}

export const PAGE_SIZE = 20;

/**
 * A list page: one page of `PAGE_SIZE` from Stripe's cursor in the URL (`starting_after`,
 * `ending_before`), Previous and Next as links to the pages around it, rows leading to their
 * object's page. Only this page is read: a world of any size costs one list call.
 */
export function ListPage<T extends { id: string }>(props: ListPageProps<T>) {
  const { api, href } = useMirror();
  const { query, resource } = props;
  const cursor = { starting_after: query.starting_after, ending_before: query.ending_before };
  const key = JSON.stringify([api.account, props.path, props.params, query]);
  const loaded = useLoad(
    () => api.list<T>(props.path, { limit: PAGE_SIZE, ...props.params, ...(cursor.starting_after !== undefined ? { starting_after: cursor.starting_after } : {}), ...(cursor.ending_before !== undefined ? { ending_before: cursor.ending_before } : {}) }),
    [key],
  );
  const page = loaded.data;
  const filters: ListQuery = { ...query };
  delete filters.starting_after;
  delete filters.ending_before;
  const at = (extra: ListQuery): string => href({ kind: 'list', resource, query: { ...filters, ...extra } });
  const rowView = props.rowView ?? ((row: T) => ({ kind: 'detail', resource, id: row.id }) as View);
  const pager = page === null ? null : pagerState(cursor, page);
  const paged = cursor.starting_after !== undefined || cursor.ending_before !== undefined;
  return (
    <section class="list-page" aria-label={props.title}>
      <ListHead title={props.title}>{props.head}</ListHead>
      {page === null && loaded.error === null && <Loading what={props.noun} />}
      <ErrorNote error={loaded.error} what={`The ${props.noun} did not load`} />
      {page !== null && (
        <>
          <DataTable
            label={props.title}
            columns={props.columns}
            rows={page.data}
            rowKey={(row) => row.id}
            rowHref={(row) => href(rowView(row))}
            onOpen={(_row, to) => navigate(to)}
            empty={paged ? `No more ${props.noun}.` : `No ${props.noun}.`}
          />
          <nav class="pager" aria-label="Pages">
            <span class="hint">
              {page.data.length === 0 ? 'No results' : `${page.data.length} ${page.data.length === 1 ? 'result' : 'results'}${pager?.next !== null || pager?.previous !== null ? ' on this page' : ''}`}
            </span>
            <span class="pager-links">
              {paged && pager?.previous === null && <Link href={at({})}>First page</Link>}
              <PagerLink href={pager?.previous === null || pager === null ? null : at({ ending_before: pager.previous })} label="Previous" />
              <PagerLink href={pager?.next === null || pager === null ? null : at({ starting_after: pager.next })} label="Next" />
            </span>
          </nav>
        </>
      )}
    </section>
  );
}

function PagerLink({ href, label }: { href: string | null; label: string }) {
  if (href === null) {
    return (
      <span class="pager-button disabled" aria-disabled="true">
        {label}
      </span>
    );
  }
  return (
    <Link class="pager-button" href={href}>
      {label}
    </Link>
  );
}

/**
 * A list inside an object's page (a customer's payments): its first page, "Load more" after
 * it with Stripe's cursor, and a link to the whole list when the list page can filter by it.
 */
export function SectionList<T extends { id: string }>({
  title,
  path,
  params,
  columns,
  noun,
  rowView,
  all,
}: {
  title: string;
  path: string;
  params: Params;
  columns: Column<T>[];
  noun: string;
  /** Where a row leads (default: its object's page by its id's prefix); null: rows lead nowhere. */
  rowView?: ((row: T) => View | null) | null;
  all?: View;
}) {
  const { api, href } = useMirror();
  const list = useCursorList<T>(
    async (cursor) => {
      const page: StripeList<T> = await api.list<T>(path, { limit: 10, ...params, ...(cursor === null ? {} : { starting_after: cursor }) });
      return { items: page.data, next: page.has_more ? (page.data[page.data.length - 1]?.id ?? null) : null };
    },
    [api, path, JSON.stringify(params)],
  );
  const byId = (row: T): View | null => {
    const r = resourceOfId(row.id);
    return r === null ? null : { kind: 'detail', resource: r, id: row.id };
  };
  const view = rowView === null ? null : rowView ?? byId;
  return (
    <section class="section" aria-label={title}>
      <header class="section-head">
        <h2>{title}</h2>
        {all !== undefined && <Link href={href(all)}>View all</Link>}
      </header>
      {list.items === null && list.error === null && <Loading what={noun} />}
      <ErrorNote error={list.error} what={`The ${noun} did not load`} />
      {list.items !== null && (
        <>
          <DataTable
            label={title}
            columns={columns}
            rows={list.items}
            rowKey={(row) => row.id}
            rowHref={
              view === null
                ? undefined
                : (row) => {
                    const v = view(row);
                    return v === null ? '' : href(v);
                  }
            }
            onOpen={(_row, to) => to !== '' && navigate(to)}
            empty={<p class="muted section-empty">No {noun}.</p>}
          />
          {list.hasMore && (
            <div class="pager">
              <button type="button" onClick={list.more} disabled={list.loading}>
                {list.loading ? 'Loading…' : `Load more ${noun}`}
              </button>
            </div>
          )}
        </>
      )}
    </section>
  );
}

/** A section of an object's page with a heading. */
export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="section" aria-label={title}>
      <header class="section-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

/**
 * An object's page: loads it, then shows its head (the kind of object, its title, a badge)
 * and its content beside a details column, as Stripe's object pages are laid out.
 */
export function ObjectPage<T>({
  load,
  deps,
  kind,
  children,
}: {
  load: () => Promise<T>;
  deps: readonly unknown[];
  kind: string;
  children: (object: T) => { title: ComponentChildren; badge?: ComponentChildren; subtitle?: ComponentChildren; main: ComponentChildren; aside: ComponentChildren };
}) {
  const loaded = useLoad(load, deps);
  const mirror = useMirror();
  const missing = loaded.error instanceof ApiError && loaded.error.status === 404 && mirror.api.account === null;
  // An app with its own sk_test_… key made the object in that key's account: look there before saying it is missing.
  const elsewhere = useLoad(() => (missing ? accountHolding(mirror) : Promise.resolve(null)), [missing]);
  useEffect(() => {
    if (elsewhere.data !== null) navigate(mirror.href(viewHere(mirror), elsewhere.data), { replace: true });
  }, [elsewhere.data]);
  if (loaded.data === null) {
    const searching = missing && elsewhere.loading;
    return (
      <section class="object-page" aria-label={kind}>
        {loaded.error === null || searching ? <Loading what={kind.toLowerCase()} /> : <ErrorNote error={loaded.error} what={`This ${kind.toLowerCase()} did not load`} />}
      </section>
    );
  }
  const parts = children(loaded.data);
  return (
    <section class="object-page" aria-label={kind}>
      <div class="object-head">
        <p class="object-kind">{kind}</p>
        <h1>
          {parts.title} {parts.badge}
        </h1>
        {parts.subtitle !== undefined && <p class="object-subtitle">{parts.subtitle}</p>}
      </div>
      <div class="object-body">
        <div class="object-main">{parts.main}</div>
        <aside class="object-aside" aria-label="Details">
          <h2>Details</h2>
          {parts.aside}
        </aside>
      </div>
    </section>
  );
}

/** The view the address names now (the mirror's addresses are the API's paths). */
function viewHere(mirror: Mirror): View {
  return placeOf(location.pathname.slice(`${mirror.config.worldUrl}/${mirror.config.vendor}`.length), location.search).view;
}

/** Another account of the world that holds the object the address names, or null. */
async function accountHolding(mirror: Mirror): Promise<string | null> {
  const path = location.pathname.slice(`${mirror.config.worldUrl}/${mirror.config.vendor}`.length);
  const accounts = await mirror.api.accounts();
  for (const account of accounts.data) {
    if (account === accounts.default) continue;
    try {
      await mirror.world.vendor(mirror.config.vendor!, path, { headers: { 'stripe-account': account } });
      return account;
    } catch {
      // Not in this one.
    }
  }
  return null;
}

/** Metadata as Stripe's pages show it: key and value, or "No metadata". */
export function MetadataList({ metadata }: { metadata: Record<string, string> | undefined }) {
  const entries = Object.entries(metadata ?? {});
  if (entries.length === 0) return <p class="muted">No metadata</p>;
  return (
    <dl class="details">
      {entries.map(([k, v]) => (
        <div class="detail" key={k}>
          <dt class="mono">{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The rows of a details column that have a value: Stripe's object pages leave out what is not set. */
export function filled(items: DetailItem[]): DetailItem[] {
  return items.filter((item) => {
    const value = Array.isArray(item) ? item[1] : item.value;
    return value !== null && value !== undefined && value !== '';
  });
}
