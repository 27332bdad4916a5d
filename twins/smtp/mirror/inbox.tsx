/**
 * The inbox: the mailbox's messages, newest first, 50 a page, as Mailpit lists them (who, to
 * whom, the subject with the first words of the body, attachments, size, when). It reads the
 * twin's `messages` store, whose pages are summaries (no bodies), with the list's cursors and
 * filters in the address, so a page can be reloaded, shared, and paged Back and Forward.
 * The first page looks again every few seconds: mail an app sends appears on its own.
 */
import { useEffect, useState } from 'preact/hooks';
import { bytes, count, DataTable, Empty, ErrorNote, instant, Link, Loading, minute, navigate, useInterval, useLoad, type World } from '../../../pages/ui/index.js';
import type { MessageSummary } from '../twin/lib/summary.js';
import { firstOf } from './mail.js';
import { inboxPath, messagePath, parseSearch, searchText, type Filters } from './routes.js';

/** What the `messages` store answers. */
interface SummaryPage {
  count: number;
  messages: MessageSummary[];
  has_more: boolean;
}

export const PAGE_SIZE = 50;
const REFRESH_MS = 5000;

export interface InboxProps {
  world: World;
  /** `{world_url}/smtp` + a vendor path. */
  href: (vendorPath: string) => string;
  filters: Filters;
  startingAfter?: string;
  endingBefore?: string;
  /** Tells the frame how many messages the mailbox holds (the side navigation shows it). */
  onCount: (n: number) => void;
}

export function Inbox({ world, href, filters, startingAfter, endingBefore, onCount }: InboxProps) {
  const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
  for (const [name, value] of Object.entries(filters)) query.set(name, value);
  if (startingAfter !== undefined) query.set('starting_after', startingAfter);
  if (endingBefore !== undefined) query.set('ending_before', endingBefore);
  const key = query.toString();
  const page = useLoad(() => world.store<SummaryPage>('smtp', 'messages', key), [world, key]);
  const first = startingAfter === undefined && endingBefore === undefined;
  useInterval(page.reload, first ? REFRESH_MS : null);
  useEffect(() => {
    if (page.data !== null) onCount(page.data.count);
  }, [page.data?.count]);

  const filtered = Object.keys(filters).length > 0;
  const data = page.data;
  // A cursor is a message: past it there is at least that message (the other way round, has_more says).
  const newer = data === null ? false : startingAfter !== undefined ? true : endingBefore !== undefined ? data.has_more : false;
  const older = data === null ? false : endingBefore !== undefined ? true : data.has_more;
  const messages = data?.messages ?? [];
  const pager = (
    <nav class="mail-pager" aria-label="Pages">
      {newer && messages.length > 0 ? <Link href={href(inboxPath(filters, { endingBefore: messages[0]!.id }))}>‹ Newer</Link> : <span class="muted">‹ Newer</span>}
      {older && messages.length > 0 ? <Link href={href(inboxPath(filters, { startingAfter: messages[messages.length - 1]!.id }))}>Older ›</Link> : <span class="muted">Older ›</span>}
    </nav>
  );

  return (
    <section class="inbox" aria-labelledby="inbox-heading">
      <header class="inbox-head">
        <h2 id="inbox-heading">
          {filtered ? 'Search results' : 'Inbox'}
          {data !== null && <span class="hint"> {count(data.count)} {data.count === 1 ? 'message' : 'messages'} in the mailbox</span>}
        </h2>
        <SearchBox filters={filters} href={href} />
        {pager}
      </header>
      <ErrorNote error={page.error} what="The mailbox did not load" />
      {data === null && page.error === null && <Loading what="the mailbox" />}
      {data !== null && (
        <DataTable
          label="Messages"
          rows={messages}
          rowKey={(m) => m.id}
          rowHref={(m) => href(messagePath(m.id))}
          onOpen={(_m, to) => navigate(to)}
          empty={
            <Empty
              title={filtered ? 'No message matches.' : first ? 'No mail yet.' : 'No messages on this page.'}
              hint={
                filtered ? (
                  <Link href={href(inboxPath({}))}>Show every message</Link>
                ) : first ? (
                  'Mail your app sends to this world (SMTP_HOST and SMTP_PORT, from kit world attach) appears here.'
                ) : (
                  <Link href={href(inboxPath(filters))}>Go to the newest</Link>
                )
              }
            />
          }
          columns={[
            { title: 'From', cell: (m) => <span title={m.from[0]?.address ?? m.envelope.from}>{firstOf(m.from, [m.envelope.from])}</span>, width: '14rem' },
            { title: 'To', cell: (m) => <span title={[...m.to, ...m.cc].map((a) => a.address).join(', ') || m.envelope.to.join(', ')}>{firstOf(m.to, m.envelope.to)}</span>, width: '12rem' },
            {
              title: 'Subject',
              cell: (m) => (
                <span class="subject-cell">
                  <span class="subject">{m.subject ?? '(no subject)'}</span>
                  {m.snippet !== '' && <span class="snippet"> {m.snippet}</span>}
                </span>
              ),
            },
            {
              title: 'Files',
              cell: (m) => {
                if (m.attachments === 0) return null;
                const says = `${m.attachments} attachment${m.attachments === 1 ? '' : 's'}`;
                return (
                  <span class="files" aria-label={says} title={says}>
                    <Paperclip /> {m.attachments}
                  </span>
                );
              },
              nowrap: true,
              width: '4rem',
            },
            { title: 'Size', cell: (m) => bytes(m.size), align: 'right', nowrap: true, width: '5rem' },
            { title: 'Received', cell: (m) => <span title={instant(m.receivedAt)}>{minute(m.receivedAt)}</span>, nowrap: true, width: '11rem' },
          ]}
        />
      )}
      {messages.length > 0 && pager}
    </section>
  );
}

/** The search box: `from:` `to:` `subject:` and plain words (the subject), as the list's filters in the address. */
function SearchBox({ filters, href }: { filters: Filters; href: (vendorPath: string) => string }) {
  const [text, setText] = useState(searchText(filters));
  // A new address (Back, a link) shows its own filters.
  useEffect(() => setText(searchText(filters)), [searchText(filters)]);
  return (
    <form
      class="mail-search"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        navigate(href(inboxPath(parseSearch(text))));
      }}
    >
      <input type="search" aria-label="Search" placeholder="Search: words of the subject, from:…, to:…" value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <button type="submit">Search</button>
    </form>
  );
}

/** A paperclip, drawn (an emoji depends on the reader's fonts). */
function Paperclip() {
  return (
    <svg class="paperclip" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
      <path d="M10.5 4.5 5.8 9.2a1.3 1.3 0 0 0 1.9 1.9l5-5a2.6 2.6 0 0 0-3.7-3.7l-5.2 5.2a3.9 3.9 0 0 0 5.5 5.5l4.2-4.2" fill="none" stroke="currentColor" stroke-width="1.4" stroke-linecap="round" />
    </svg>
  );
}
