/**
 * The Stripe mirror's frame, laid out as Stripe's dashboard: the account and the sections down
 * the left, a search and the test-mode bar along the top, and the view the address names
 * (routes.ts) in the middle. The address is the vendor's API path under the world
 * (`{world_url}/stripe/v1/customers/cus_…`); moving between views pushes such a path.
 */
import type { VNode } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { navigate, sessionLabel, SideNav, useLoad, useLocation, type NavGroup, type PageContext } from '../../../pages/ui/index.js';
import { MirrorContext, type Mirror } from './components.js';
import { HOME, pathOf, placeOf, sectionOf, titleOf, viewOfSearch, type Place, type Resource, type View } from './routes.js';
import { StripeApi } from './stripe.js';
import { InvoicePage, InvoicesList, SubscriptionPage, SubscriptionsList } from './views/billing.js';
import { PricePage, PricesList, ProductPage, ProductsList } from './views/catalog.js';
import { CustomerPage, CustomersList } from './views/customers.js';
import { EventPage, EventsList, WebhookPage, WebhooksList } from './views/developers.js';
import { ObjectView } from './views/object.js';
import { ChargePage, ChargesList, PaymentPage, PaymentsList, RefundPage, RefundsList } from './views/payments.js';

const SECTIONS: NavGroup[] = [
  {
    items: [
      { id: 'payment_intents', label: 'Payments' },
      { id: 'customers', label: 'Customers' },
      { id: 'products', label: 'Product catalog' },
    ],
  },
  {
    title: 'Billing',
    items: [
      { id: 'subscriptions', label: 'Subscriptions' },
      { id: 'invoices', label: 'Invoices' },
    ],
  },
  {
    title: 'Developers',
    items: [
      { id: 'events', label: 'Events' },
      { id: 'webhook_endpoints', label: 'Webhooks' },
    ],
  },
];

/** The view a place names, as its component. */
function Content({ view }: { view: View }) {
  switch (view.kind) {
    case 'list': {
      const q = view.query;
      const lists: Record<Resource, () => VNode> = {
        customers: () => <CustomersList query={q} />,
        payment_intents: () => <PaymentsList query={q} />,
        charges: () => <ChargesList query={q} />,
        refunds: () => <RefundsList query={q} />,
        subscriptions: () => <SubscriptionsList query={q} />,
        invoices: () => <InvoicesList query={q} />,
        products: () => <ProductsList query={q} />,
        prices: () => <PricesList query={q} />,
        events: () => <EventsList query={q} />,
        webhook_endpoints: () => <WebhooksList query={q} />,
      };
      return lists[view.resource]();
    }
    case 'detail': {
      const id = view.id;
      const pages: Record<Resource, () => VNode> = {
        customers: () => <CustomerPage id={id} />,
        payment_intents: () => <PaymentPage id={id} />,
        charges: () => <ChargePage id={id} />,
        refunds: () => <RefundPage id={id} />,
        subscriptions: () => <SubscriptionPage id={id} />,
        invoices: () => <InvoicePage id={id} />,
        products: () => <ProductPage id={id} />,
        prices: () => <PricePage id={id} />,
        events: () => <EventPage id={id} />,
        webhook_endpoints: () => <WebhookPage id={id} />,
      };
      // Keyed by id: a link from one customer to another starts the page afresh.
      return <div key={`${view.resource}/${id}`}>{pages[view.resource]()}</div>;
    }
    case 'object':
      return <ObjectView path={view.path} query={view.query} />;
    case 'home':
      return null;
    case 'not_found':
      return (
        <section class="object-page">
          <h1>Not a Stripe API path</h1>
          <p>
            <span class="mono">{view.path}</span> is not under <span class="mono">/v1/</span>, where the twin answers Stripe's API.
          </p>
        </section>
      );
  }
}

/** The account shown, and the others the world holds (the twin's `account_list` store). */
function AccountSwitcher({ place, api, href }: { place: Place; api: StripeApi; href: Mirror['href'] }) {
  const accounts = useLoad(() => api.accounts(), []);
  const list = accounts.data;
  const shown = place.account ?? list?.default ?? null;
  const section = sectionOf(place.view) ?? 'customers';
  return (
    <div class="account">
      <span class="account-mark" aria-hidden="true">
        T
      </span>
      <label class="account-pick">
        <span class="account-name">Twinkit test account</span>
        <select
          aria-label="Account"
          value={shown ?? ''}
          disabled={list === null || list.data.length < 2}
          onChange={(e) => {
            const to = e.currentTarget.value;
            navigate(href({ kind: 'list', resource: section, query: {} }, list !== null && to === list.default ? null : to));
          }}
        >
          {[...(list?.data ?? []), ...(shown !== null && !(list?.data ?? []).includes(shown) ? [shown] : [])].map((id) => (
            <option key={id} value={id}>
              {id === list?.default ? "The world's own account" : id}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

function Search({ href }: { href: Mirror['href'] }) {
  const [text, setText] = useState('');
  const [missed, setMissed] = useState(false);
  return (
    <form
      class="search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        const view = viewOfSearch(text);
        setMissed(view === null);
        if (view !== null) navigate(href(view));
      }}
    >
      <input
        type="search"
        aria-label="Search by id or email"
        placeholder="Search by id (cus_…, pi_…, in_…) or email"
        value={text}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setMissed(false);
        }}
      />
      {missed && <span class="hint">Type an object's id or a customer's email</span>}
    </form>
  );
}

export function StripeMirror({ config, world, session, signOut }: PageContext) {
  const where = useLocation();
  const vendor = config.vendor ?? 'stripe';
  const base = `${config.worldUrl}/${vendor}`;
  const place = placeOf(where.path.startsWith(base) ? where.path.slice(base.length) : where.path, where.query.toString());
  const api = useMemo(() => new StripeApi(world, vendor, place.account), [world, vendor, place.account]);
  const href = (view: View, account: string | null = place.account) => `${base}${pathOf({ view, account })}`;
  // Opened at …/mirror/ (or the twin's root): the customers list, at its own address.
  useEffect(() => {
    if (place.view.kind === 'home') navigate(href(HOME), { replace: true });
  }, [place.view.kind]);
  const title = titleOf(place.view);
  useEffect(() => {
    document.title = `${title} · Stripe · ${config.org}/${config.world}`;
  }, [title]);
  const mirror: Mirror = { config, world, api, href };
  const section = sectionOf(place.view) ?? '';
  const groups = SECTIONS.map((g) => ({ ...g, items: g.items.map((item) => ({ ...item, href: href({ kind: 'list', resource: item.id as Resource, query: {} }) })) }));
  return (
    <MirrorContext.Provider value={mirror}>
      <div class="stripe">
        <div class="test-bar" role="note">
          <span>Test mode</span> a twin of Stripe in world <span class="mono">{`${config.org}/${config.world}`}</span>
        </div>
        <div class="stripe-frame">
          <aside class="stripe-nav">
            <AccountSwitcher place={place} api={api} href={href} />
            <SideNav groups={groups} current={section} onSelect={(id) => navigate(href({ kind: 'list', resource: id as Resource, query: {} }))} label="Dashboard" />
          </aside>
          <div class="stripe-main">
            <header class="stripe-top">
              <Search href={href} />
              <span class="top-session">{sessionLabel(session)}</span>
              <button type="button" class="link" onClick={signOut}>
                Sign out
              </button>
            </header>
            <main class="stripe-content">
              <Content view={place.view} />
            </main>
          </div>
        </div>
      </div>
    </MirrorContext.Provider>
  );
}
