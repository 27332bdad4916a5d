/** The product catalog: products with their prices, and prices on their own. */
import { Badge, DetailList, type Column } from '../../../../pages/ui/index.js';
import { dateTime, priceText } from '../format.js';
import { filled, ListPage, MetadataList, ObjectLink, ObjectPage, Section, SectionList, useMirror } from '../components.js';
import type { ListQuery } from '../routes.js';
import { expanded, idOf, type Price, type Product } from '../stripe.js';

function Archived({ active }: { active: boolean }) {
  return active ? null : <Badge tone="gray">Archived</Badge>;
}

const productColumns: Column<Product>[] = [
  {
    title: 'Name',
    cell: (p) => (
      <span class="two-lines">
        <span>
          {p.name} <Archived active={p.active} />
        </span>
        {p.description !== null && <span class="muted">{p.description}</span>}
      </span>
    ),
  },
  { title: 'Pricing', cell: (p) => { const price = expanded(p.default_price); return price === null ? <span class="muted">{p.default_price === null ? 'No default price' : 'Default price'}</span> : priceText(price); }, nowrap: true },
  { title: 'Created', cell: (p) => dateTime(p.created), nowrap: true },
  { title: 'Updated', cell: (p) => dateTime(p.updated), nowrap: true },
];

export function ProductsList({ query }: { query: ListQuery }) {
  return (
    <ListPage<Product>
      title="Product catalog"
      noun="products"
      resource="products"
      query={query}
      path="/v1/products"
      params={{ expand: ['data.default_price'] }}
      columns={productColumns}
    />
  );
}

const priceColumns: Column<Price>[] = [
  { title: 'Price', cell: (p) => <span>{priceText(p)} <Archived active={p.active} /></span>, nowrap: true },
  { title: 'Description', cell: (p) => p.nickname ?? '' },
  { title: 'Lookup key', cell: (p) => p.lookup_key ?? '', mono: true },
  { title: 'ID', cell: (p) => p.id, mono: true, nowrap: true },
  { title: 'Created', cell: (p) => dateTime(p.created), nowrap: true },
];

export function PricesList({ query }: { query: ListQuery }) {
  const columns: Column<Price>[] = [
    ...priceColumns.slice(0, 1),
    { title: 'Product', cell: (p) => { const product = expanded(p.product); return <ObjectLink id={idOf(p.product)} resource="products">{product?.name}</ObjectLink>; } },
    ...priceColumns.slice(1),
  ];
  return (
    <ListPage<Price>
      title={query.product === undefined ? 'Prices' : `Prices of ${query.product}`}
      noun="prices"
      resource="prices"
      query={query}
      path="/v1/prices"
      params={{ ...(query.product === undefined ? {} : { product: query.product }), expand: ['data.product'] }}
      columns={columns}
    />
  );
}

export function ProductPage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<Product> kind="Product" load={() => api.get<Product>(`/v1/products/${encodeURIComponent(id)}`)} deps={[api, id]}>
      {(p) => ({
        title: p.name,
        badge: <Archived active={p.active} />,
        subtitle: p.description ?? undefined,
        main: (
          <>
            <SectionList<Price>
              title="Pricing"
              noun="prices"
              path="/v1/prices"
              params={{ product: p.id }}
              columns={priceColumns}
              all={{ kind: 'list', resource: 'prices', query: { product: p.id } }}
            />
            <Section title="Metadata">
              <MetadataList metadata={p.metadata} />
            </Section>
          </>
        ),
        aside: (
          <DetailList
            items={filled([
              { label: 'Product ID', value: p.id, mono: true },
              ['Created', dateTime(p.created)],
              ['Updated', dateTime(p.updated)],
              ['Default price', p.default_price === null ? null : <ObjectLink id={idOf(p.default_price)} resource="prices" />],
              ['Status', p.active ? 'Active' : 'Archived'],
            ])}
          />
        ),
      })}
    </ObjectPage>
  );
}

export function PricePage({ id }: { id: string }) {
  const { api } = useMirror();
  return (
    <ObjectPage<Price> kind="Price" load={() => api.get<Price>(`/v1/prices/${encodeURIComponent(id)}`, { expand: ['product'] })} deps={[api, id]}>
      {(p) => {
        const product = expanded(p.product);
        return {
          title: priceText(p),
          badge: <Archived active={p.active} />,
          subtitle: product?.name,
          main: (
            <Section title="Metadata">
              <MetadataList metadata={p.metadata} />
            </Section>
          ),
          aside: (
            <DetailList
              items={filled([
                { label: 'Price ID', value: p.id, mono: true },
                ['Product', <ObjectLink id={idOf(p.product)} resource="products">{product?.name}</ObjectLink>],
                ['Type', p.recurring === null ? 'One-off' : 'Recurring'],
                ['Billing period', p.recurring === null ? null : `${p.recurring.interval_count === 1 ? 'Every' : `Every ${p.recurring.interval_count}`} ${p.recurring.interval}${p.recurring.interval_count === 1 ? '' : 's'}`],
                ['Description', p.nickname],
                { label: 'Lookup key', value: p.lookup_key, mono: true },
                ['Tax behavior', p.tax_behavior ?? null],
                ['Created', dateTime(p.created)],
              ])}
            />
          ),
        };
      }}
    </ObjectPage>
  );
}
