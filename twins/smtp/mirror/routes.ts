/**
 * The mirror's addresses are the mailbox API's paths (twins/smtp/README.md): this maps the
 * path after `{world_url}/smtp`, its query and its fragment to what the mirror shows, and a
 * view back to its address. No DOM here, so it is unit-tested in Node (routes.test.ts).
 *
 * | address (after `{world_url}/smtp`)           | shows                                  |
 * |----------------------------------------------|----------------------------------------|
 * | `/messages?to=&from=&subject=`               | the inbox, newest first, filtered      |
 * | `/messages?starting_after=<id>`              | the page of older messages after it    |
 * | `/messages?ending_before=<id>`               | the page of newer messages before it   |
 * | `/messages/<id>`                             | the message: its HTML (or its text)    |
 * | `/messages/<id>#source`, `#text`, `#headers` | the HTML's source, the text, headers   |
 * | `/messages/<id>/raw`                         | the message as received                |
 * | `/messages/<id>/attachments[/<n>]`           | its attachments (attachment n marked)  |
 * | `/mirror/…`, `/`, ``                         | the inbox (the address is replaced)    |
 */

/** The list's filters, as `GET /messages` takes them: case-insensitive substrings. */
export interface Filters {
  from?: string;
  to?: string;
  subject?: string;
}

export type Tab = 'html' | 'source' | 'text' | 'headers' | 'raw' | 'attachments';

export type View =
  | { kind: 'home' }
  | { kind: 'inbox'; filters: Filters; startingAfter?: string; endingBefore?: string }
  /** `tab` null: the message's first tab (its HTML, or its text when it has no HTML). */
  | { kind: 'message'; id: string; tab: Tab | null; attachment: number | null }
  | { kind: 'unknown'; path: string };

const FILTERS = ['from', 'to', 'subject'] as const;
/** Tabs kept in the fragment: they have no path of their own in the API. */
const FRAGMENT_TABS: Tab[] = ['source', 'text', 'headers'];

function segment(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/** The view at `path` (after `{world_url}/smtp`), with the address's query and fragment. */
export function viewOf(path: string, search = '', hash = ''): View {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (trimmed === '' || trimmed === '/' || trimmed === '/mirror' || trimmed.startsWith('/mirror/')) return { kind: 'home' };
  if (trimmed === '/messages') {
    const q = new URLSearchParams(search);
    const filters: Filters = {};
    for (const name of FILTERS) {
      const value = q.get(name);
      if (value !== null && value !== '') filters[name] = value;
    }
    const after = q.get('starting_after');
    const before = q.get('ending_before');
    // Both cursors: the API refuses that; the mirror keeps the older page.
    if (after !== null && after !== '') return { kind: 'inbox', filters, startingAfter: after };
    if (before !== null && before !== '') return { kind: 'inbox', filters, endingBefore: before };
    return { kind: 'inbox', filters };
  }
  const m = /^\/messages\/([^/]+)(?:\/(raw|attachments)(?:\/(\d{1,4}))?)?$/.exec(trimmed);
  const id = m === null ? null : segment(m[1]!);
  if (m === null || id === null) return { kind: 'unknown', path };
  if (m[2] === 'raw') return { kind: 'message', id, tab: 'raw', attachment: null };
  if (m[2] === 'attachments') return { kind: 'message', id, tab: 'attachments', attachment: m[3] === undefined ? null : Number(m[3]) };
  const fromHash = hash.replace(/^#/, '') as Tab;
  return { kind: 'message', id, tab: FRAGMENT_TABS.includes(fromHash) ? fromHash : null, attachment: null };
}

/** The inbox's address: its filters, and a cursor. */
export function inboxPath(filters: Filters, cursor?: { startingAfter: string } | { endingBefore: string }): string {
  const q = new URLSearchParams();
  for (const name of FILTERS) {
    const value = filters[name];
    if (value !== undefined && value !== '') q.set(name, value);
  }
  if (cursor !== undefined) {
    if ('startingAfter' in cursor) q.set('starting_after', cursor.startingAfter);
    else q.set('ending_before', cursor.endingBefore);
  }
  const query = q.toString();
  return `/messages${query === '' ? '' : `?${query}`}`;
}

/** A message's address on one of its tabs (`null`: its first). */
export function messagePath(id: string, tab: Tab | null = null, attachment: number | null = null): string {
  const base = `/messages/${encodeURIComponent(id)}`;
  if (tab === 'raw') return `${base}/raw`;
  if (tab === 'attachments') return `${base}/attachments${attachment === null ? '' : `/${attachment}`}`;
  if (tab === null || tab === 'html') return base;
  return `${base}#${tab}`;
}

/**
 * A search as a person types it: `from:ada to:"Bob B" invoice` → `{ from: 'ada', to: 'Bob B',
 * subject: 'invoice' }`. Words without a field search the subject (with `subject:`'s, in order);
 * an unknown `field:` is a word.
 */
export function parseSearch(text: string): Filters {
  const filters: Filters = {};
  const subject: string[] = [];
  // `field:value`, `field:"a value"` or `field:` (empty), else a quoted or plain word.
  for (const m of text.matchAll(/([a-zA-Z]+):(?:"([^"]*)"|(\S*))|"([^"]*)"|(\S+)/g)) {
    const field = m[1]?.toLowerCase();
    const value = (m[2] ?? m[3] ?? m[4] ?? m[5] ?? '').trim();
    if (field === 'subject') subject.push(value);
    else if (field === 'from' || field === 'to') {
      if (value !== '') filters[field] = value;
    } else subject.push(field === undefined ? value : `${m[1]}:${value}`);
  }
  const words = subject.filter((w) => w !== '').join(' ');
  if (words !== '') filters.subject = words;
  return filters;
}

/** Filters back as the search box shows them. */
export function searchText(filters: Filters): string {
  const quote = (v: string) => (/[\s"]/.test(v) ? `"${v.replace(/"/g, '')}"` : v);
  const parts: string[] = [];
  if (filters.from !== undefined) parts.push(`from:${quote(filters.from)}`);
  if (filters.to !== undefined) parts.push(`to:${quote(filters.to)}`);
  if (filters.subject !== undefined) parts.push(/^[a-zA-Z]+:/.test(filters.subject) ? `subject:${quote(filters.subject)}` : filters.subject);
  return parts.join(' ');
}
