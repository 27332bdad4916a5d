/**
 * The hello mirror's two views: the greetings, a page at a time, and one greeting. Each reads
 * the twin's vendor API as any client does (`GET /v1/greetings`, `GET /v1/greetings/:id`),
 * with the browser's session; the shared components (pages/ui) draw them.
 */
import {
  Card,
  DataTable,
  DetailList,
  ErrorNote,
  instant,
  JsonView,
  Link,
  Loading,
  navigate,
  PrevNext,
  StatusBadge,
  useLoad,
  usePagedList,
  type World,
} from '../../../pages/ui/index.js';
// The twin's own type: the mirror shows what the API answers, so a change of shape fails the
// type check here. `import type` only: nothing of the twin's code is bundled into the page.
import type { Greeting } from '../twin/resources/greetings.js';

/** A page of `GET /v1/greetings`. */
interface GreetingList {
  data: Greeting[];
  has_more: boolean;
}

const PAGE_SIZE = 20;

/** Every greeting, newest first, 20 at a time: the twin pages (`starting_after`), so the mirror never reads them all. */
export function GreetingsList({ world, href }: { world: World; href: (vendorPath: string) => string }) {
  const list = usePagedList<Greeting>(async (cursor) => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    if (cursor !== null) query.set('starting_after', cursor);
    const page = await world.vendor<GreetingList>('hello', `/v1/greetings?${query}`);
    // The next page starts after the last greeting of this one.
    return { items: page.data, next: page.has_more ? page.data[page.data.length - 1]!.id : null };
  }, [world]);

  return (
    <Card title="Greetings">
      <ErrorNote error={list.items === null ? list.error : null} what="The greetings did not load" />
      {list.items === null && list.error === null && <Loading what="greetings" />}
      {list.items !== null && (
        <DataTable
          label="Greetings"
          rows={list.items}
          rowKey={(g) => g.id}
          // A row leads to the greeting's own vendor path; a plain click stays in the page.
          rowHref={(g) => href(`/v1/greetings/${encodeURIComponent(g.id)}`)}
          onOpen={(_g, to) => navigate(to)}
          empty="No greetings yet. Greetings your app makes appear here."
          columns={[
            { title: 'Name', cell: (g) => g.name },
            { title: 'Message', cell: (g) => g.message },
            { title: 'Status', cell: (g) => <StatusBadge status={g.status} /> },
            { title: 'Created', cell: (g) => instant(g.created), nowrap: true },
            { title: 'ID', cell: (g) => g.id, mono: true },
          ]}
        />
      )}
      <PrevNext list={list} />
    </Card>
  );
}

/** One greeting: its fields as the vendor's dashboard lists them, then the object as the API answers it. */
export function GreetingPage({ world, id, href }: { world: World; id: string; href: (vendorPath: string) => string }) {
  const greeting = useLoad(() => world.vendor<Greeting>('hello', `/v1/greetings/${encodeURIComponent(id)}`), [world, id]);
  const back = <Link href={href('/v1/greetings')}>← Greetings</Link>;
  if (greeting.data === null) {
    return (
      <>
        {back}
        {/* A greeting that does not exist is the twin's 404 (`resource_missing`), shown as it says it. */}
        <ErrorNote error={greeting.error} what={`Greeting ${id}`} />
        {greeting.error === null && <Loading what="the greeting" />}
      </>
    );
  }
  const g = greeting.data;
  return (
    <>
      {back}
      <Card title={g.name} actions={<StatusBadge status={g.status} />}>
        <DetailList
          label="Greeting"
          items={[
            { label: 'ID', value: g.id, mono: true },
            ['Message', g.message],
            ['Status', g.status],
            ['Created', instant(g.created)],
            ['Expires', g.expires_at === null ? null : instant(g.expires_at)],
            ...Object.entries(g.metadata).map(([key, value]): [string, string] => [`metadata.${key}`, value]),
          ]}
        />
      </Card>
      <Card title="As the API answers it">
        <JsonView value={g} />
      </Card>
    </>
  );
}
