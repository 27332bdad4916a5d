/**
 * The mirror's URLs are Stripe's own API paths (`/v1/customers/cus_…`): this maps the path
 * after `{world_url}/stripe` and its query to what the mirror shows, and a view back to its
 * path. No DOM here, so it is unit-tested in Node (routes.test.ts).
 */

/** The lists the mirror shows as Stripe's dashboard does, each at its API path. */
export const LISTS = {
  customers: '/v1/customers',
  payment_intents: '/v1/payment_intents',
  charges: '/v1/charges',
  refunds: '/v1/refunds',
  subscriptions: '/v1/subscriptions',
  invoices: '/v1/invoices',
  products: '/v1/products',
  prices: '/v1/prices',
  events: '/v1/events',
  webhook_endpoints: '/v1/webhook_endpoints',
} as const;

export type Resource = keyof typeof LISTS;

/** A list's query as the mirror keeps it in the URL: Stripe's cursor and the filters it offers. */
export interface ListQuery {
  starting_after?: string;
  ending_before?: string;
  /** Customers by email (the twin reads an index). */
  email?: string;
  /** Subscriptions and invoices by status (Stripe's dashboard tabs). */
  status?: string;
  /** Prices of one product. */
  product?: string;
  /** Events of one type. */
  type?: string;
}

export type View =
  | { kind: 'list'; resource: Resource; query: ListQuery }
  | { kind: 'detail'; resource: Resource; id: string }
  /** Any other Stripe path: its JSON as the API answers it. */
  | { kind: 'object'; path: string; query: string }
  /** `/mirror/`, `/`, `/v1`: the mirror's home, replaced by the customers list. */
  | { kind: 'home' }
  | { kind: 'not_found'; path: string };

/** Where the mirror is, with the account it shows (null: the world's own, the default one). */
export interface Place {
  view: View;
  account: string | null;
}

export const HOME: View = { kind: 'list', resource: 'customers', query: {} };

const QUERY_KEYS: (keyof ListQuery)[] = ['starting_after', 'ending_before', 'email', 'status', 'product', 'type'];

/** Which filters each list keeps (a parameter a list does not take would be refused by the twin). */
const FILTERS: Partial<Record<Resource, (keyof ListQuery)[]>> = {
  customers: ['email'],
  subscriptions: ['status'],
  invoices: ['status'],
  prices: ['product'],
  events: ['type'],
};

/** An id as Stripe makes them, or a product's own id: printable, no slash, not absurdly long. */
const ID = /^[A-Za-z0-9_.:-]{1,255}$/;

const byPath = new Map<string, Resource>(Object.entries(LISTS).map(([r, p]) => [p, r as Resource]));

function decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * What a path after `{world_url}/stripe` shows. `search` is `location.search` (with or without
 * its `?`); `account` in it names the account (`acct_…`), the rest is the list's query.
 */
export function placeOf(path: string, search = ''): Place {
  const params = new URLSearchParams(search.startsWith('?') ? search.slice(1) : search);
  const asked = params.get('account');
  const account = asked !== null && /^acct_[A-Za-z0-9]{1,64}$/.test(asked) ? asked : null;
  return { view: viewOf(path, params), account };
}

function viewOf(rawPath: string, params: URLSearchParams): View {
  const path = rawPath.replace(/\/+$/, '') || '/';
  if (path === '/' || path === '/v1' || path === '/mirror') return { kind: 'home' };
  if (!path.startsWith('/v1/')) return { kind: 'not_found', path };
  const listed = byPath.get(path);
  if (listed !== undefined) return { kind: 'list', resource: listed, query: listQuery(listed, params) };
  const slash = path.lastIndexOf('/');
  const parent = byPath.get(path.slice(0, slash));
  const id = decode(path.slice(slash + 1));
  if (parent !== undefined && id !== null && ID.test(id)) return { kind: 'detail', resource: parent, id };
  // A sub-path of an object the mirror shows (`/v1/customers/cus_1/payment_methods`,
  // `/v1/invoices/in_1/lines`): that object's page, which shows those too.
  const m = /^(\/v1\/[a-z_]+)\/([^/]+)\/[a-z_/]+$/.exec(path);
  if (m !== null) {
    const owner = byPath.get(m[1] as string);
    const ownerId = decode(m[2] as string);
    if (owner !== undefined && ownerId !== null && ID.test(ownerId)) return { kind: 'detail', resource: owner, id: ownerId };
  }
  const rest = new URLSearchParams(params);
  rest.delete('account');
  const query = rest.toString();
  return { kind: 'object', path, query };
}

function listQuery(resource: Resource, params: URLSearchParams): ListQuery {
  const allowed = new Set<keyof ListQuery>(['starting_after', 'ending_before', ...(FILTERS[resource] ?? [])]);
  const query: ListQuery = {};
  for (const key of QUERY_KEYS) {
    const value = params.get(key);
    if (value !== null && value !== '' && allowed.has(key) && value.length <= 512) query[key] = value;
  }
  // Stripe refuses both cursors at once; the later page wins.
  if (query.starting_after !== undefined) delete query.ending_before;
  return query;
}

/** The path (with its query) a place has, after `{world_url}/stripe`. */
export function pathOf(place: Place): string {
  const { view, account } = place;
  const params = new URLSearchParams();
  let path: string;
  switch (view.kind) {
    case 'list':
      path = LISTS[view.resource];
      for (const key of QUERY_KEYS) {
        const value = view.query[key];
        if (value !== undefined) params.set(key, value);
      }
      break;
    case 'detail':
      path = `${LISTS[view.resource]}/${encodeURIComponent(view.id)}`;
      break;
    case 'object':
      path = view.path;
      for (const [k, v] of new URLSearchParams(view.query)) params.append(k, v);
      break;
    case 'home':
      path = LISTS.customers;
      break;
    case 'not_found':
      path = view.path;
      break;
  }
  if (account !== null) params.set('account', account);
  const query = params.toString();
  return query === '' ? path : `${path}?${query}`;
}

/** The page an object's id opens, from Stripe's id prefixes; null when the prefix names nothing the mirror shows. */
export function resourceOfId(id: string): Resource | null {
  const prefix = id.slice(0, id.indexOf('_') + 1);
  switch (prefix) {
    case 'cus_': return 'customers';
    case 'pi_': return 'payment_intents';
    case 'ch_': case 'py_': return 'charges';
    case 're_': case 'pyr_': return 'refunds';
    case 'sub_': return 'subscriptions';
    case 'in_': return 'invoices';
    case 'prod_': return 'products';
    case 'price_': return 'prices';
    case 'evt_': return 'events';
    case 'we_': return 'webhook_endpoints';
    default: return null;
  }
}

/** Other objects by prefix, opened as their API path's JSON. */
const OTHER_PATHS: Record<string, string> = {
  pm_: '/v1/payment_methods',
  card_: '/v1/payment_methods',
  seti_: '/v1/setup_intents',
  txn_: '/v1/balance_transactions',
  cs_: '/v1/checkout/sessions',
  ii_: '/v1/invoiceitems',
  po_: '/v1/payouts',
  du_: '/v1/disputes',
  dp_: '/v1/disputes',
  plink_: '/v1/payment_links',
  promo_: '/v1/promotion_codes',
  txr_: '/v1/tax_rates',
  clock_: '/v1/test_helpers/test_clocks',
};

/**
 * Where a typed id or email goes (the top bar's search): an id to its page, an email to the
 * customers with it, anything else to nothing.
 */
export function viewOfSearch(text: string): View | null {
  const t = text.trim();
  if (t === '') return null;
  if (/^[^\s@]+@[^\s@]+$/.test(t)) return { kind: 'list', resource: 'customers', query: { email: t } };
  if (!ID.test(t)) return null;
  const resource = resourceOfId(t);
  if (resource !== null) return { kind: 'detail', resource, id: t };
  const other = OTHER_PATHS[t.slice(0, t.indexOf('_') + 1)];
  return other === undefined ? null : { kind: 'object', path: `${other}/${t}`, query: '' };
}

/** The list a view belongs to in the navigation (its detail pages light the same entry). */
export function sectionOf(view: View): Resource | null {
  if (view.kind === 'list' || view.kind === 'detail') {
    // A charge or refund is part of Payments, a price of the product catalog.
    if (view.resource === 'charges' || view.resource === 'refunds') return 'payment_intents';
    if (view.resource === 'prices') return 'products';
    return view.resource;
  }
  return null;
}

const TITLES: Record<Resource, [list: string, one: string]> = {
  customers: ['Customers', 'Customer'],
  payment_intents: ['Payments', 'Payment'],
  charges: ['Charges', 'Charge'],
  refunds: ['Refunds', 'Refund'],
  subscriptions: ['Subscriptions', 'Subscription'],
  invoices: ['Invoices', 'Invoice'],
  products: ['Product catalog', 'Product'],
  prices: ['Prices', 'Price'],
  events: ['Events', 'Event'],
  webhook_endpoints: ['Webhooks', 'Webhook endpoint'],
};

/** The tab's title for a view: `Customers`, `Customer cus_1`, `/v1/balance`. */
export function titleOf(view: View): string {
  switch (view.kind) {
    case 'list':
      return TITLES[view.resource][0];
    case 'detail':
      return `${TITLES[view.resource][1]} ${view.id}`;
    case 'object':
    case 'not_found':
      return view.path;
    case 'home':
      return TITLES.customers[0];
  }
}
