/**
 * The mailbox: every message the twin accepted, delivered by the SMTP session (one log entry
 * per message) and read or deleted over the twin's HTTP API.
 *
 * State, as records in the twin's tree:
 * - `message/<id>` → the stored message (parsed headers, text, html, attachment metadata, envelope);
 * - `message_by_seq/<seq, 12 digits>` → `{ id, summary }`: arrival order, so a list is one
 *   ordered read, and each message's summary (summary.ts), so a list of summaries (the
 *   `messages` store, stores.ts) reads nothing else; entries written before summaries were
 *   kept hold `{ id }` only, and their message is read instead;
 * - `message_raw/<id>` → `{ raw }`: the message as received (a binary string), for `…/raw`
 *   and for attachments, which are parsed out of it again when asked for: a message's bytes
 *   are kept once, and lists never carry them;
 * A message's id is ordered (`ctx.orderedId`) and its seq is the log position of the entry
 * that delivered it, which only grows: no counter is kept. Mailboxes made before kept
 * `message_counter/seq`, whose numbers were never above the position of the entry that drew
 * them (one entry per message), so new messages still sort after those.
 */
import type { ReadTree, TwinContext, TwinRequest, TwinResponse } from '../../../../sdk/twin/index.js';
import { errorResponse } from '../errors.js';
import { base64Encode } from '../lib/encoding.js';
import { parseMail, type MailAddress, type MailHeader } from '../lib/mime.js';
import { summarize, type MessageSummary } from '../lib/summary.js';

export const MESSAGE = 'message';
const BY_SEQ = 'message_by_seq';
const RAW = 'message_raw';
export const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 50;
/** Messages one `DELETE /messages` removes; the answer's `has_more` says to call again. */
const CLEAR_BATCH = 500;
/**
 * About how many bytes of JSON one list page holds. A message is up to 3 MiB and JSON writes a
 * control character as six bytes, so a page of 50 could be gigabytes (20 messages of control
 * bytes answered 347 MB; 40 failed). A page stops before the message that would pass this
 * (the first always comes) and says `has_more`.
 */
const PAGE_BYTES = 8 * 1024 * 1024;

export interface Envelope {
  /** The reverse-path of MAIL FROM (`''` for the null sender). */
  from: string;
  to: string[];
  /** What the client said in EHLO/HELO. */
  helo: string | null;
  /** The user name the client authenticated as, or null. */
  auth: string | null;
  body: '7BIT' | '8BITMIME';
  smtputf8: boolean;
}

export interface AttachmentInfo {
  index: number;
  filename: string | null;
  contentType: string;
  size: number;
  contentId: string | null;
  disposition: 'attachment' | 'inline';
}

export interface Message {
  id: string;
  object: 'message';
  receivedAt: string;
  envelope: Envelope;
  /** Bytes of the message as received (after dot-unstuffing). */
  size: number;
  messageId: string | null;
  subject: string | null;
  date: string | null;
  from: MailAddress[];
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  replyTo: MailAddress[];
  headers: MailHeader[];
  text: string | null;
  html: string | null;
  attachments: AttachmentInfo[];
}

export interface StoredMessage extends Message {
  seq: number;
}

/** A record of the arrival index; `summary` is missing from entries written before it was kept. */
export interface ArrivalEntry {
  id: string;
  summary?: MessageSummary;
}

function seqKey(seq: number): string {
  return String(seq).padStart(12, '0');
}

function present(stored: StoredMessage): Message {
  const { seq: _seq, ...message } = stored;
  return message;
}

/** Stores one accepted message; its writes become the entry of the DATA that carried it. */
export function deliver(ctx: TwinContext, envelope: Envelope, raw: string): Message {
  const parsed = parseMail(raw);
  const seq = ctx.position;
  const id = ctx.orderedId('msg_');
  const stored: StoredMessage = {
    id,
    object: 'message',
    receivedAt: ctx.now(),
    envelope,
    size: raw.length,
    messageId: parsed.messageId,
    subject: parsed.subject,
    date: parsed.date,
    from: parsed.from,
    to: parsed.to,
    cc: parsed.cc,
    // Bcc is never in the headers a client sends; the envelope's recipients not in To/Cc are it.
    bcc: parsed.bcc.length > 0 ? parsed.bcc : bccOf(envelope.to, parsed.to, parsed.cc),
    replyTo: parsed.replyTo,
    headers: parsed.headers,
    text: parsed.text,
    html: parsed.html,
    attachments: parsed.attachments.map((a, index) => ({ index, filename: a.filename, contentType: a.contentType, size: a.size, contentId: a.contentId, disposition: a.disposition })),
    seq,
  };
  ctx.tree.put(MESSAGE, id, stored);
  ctx.tree.put(BY_SEQ, seqKey(seq), { id, summary: summarize(stored) } satisfies ArrivalEntry);
  ctx.tree.put(RAW, id, { raw });
  const message = present(stored);
  ctx.emit('message.received', { id, from: envelope.from, to: envelope.to, subject: parsed.subject, size: raw.length });
  return message;
}

function bccOf(rcpt: string[], to: MailAddress[], cc: MailAddress[]): MailAddress[] {
  const shown = new Set([...to, ...cc].map((a) => a.address.toLowerCase()));
  return rcpt.filter((r) => !shown.has(r.toLowerCase())).map((address) => ({ name: '', address }));
}

// ------------------------------------------------------------------ HTTP API

export function one(q: Record<string, string | string[]>, name: string): string | undefined {
  const v = q[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
}

/** What the list's filters look at: a message, or its summary. */
type Filterable = Pick<Message, 'subject' | 'from' | 'to' | 'cc' | 'bcc'> & { envelope: { from: string; to: string[] } };

/** The `to=`, `from=`, `subject=` filters: case-insensitive substrings (`to` also matches Cc, Bcc and the envelope). */
export function matches(m: Filterable, q: Record<string, string | string[]>): boolean {
  const has = (hay: string | null, needle: string | undefined): boolean => needle === undefined || (hay ?? '').toLowerCase().includes(needle.toLowerCase());
  const to = one(q, 'to');
  const from = one(q, 'from');
  const addressText = (list: MailAddress[]): string => list.map((a) => `${a.name} <${a.address}>`).join(', ');
  return (
    has(m.subject, one(q, 'subject')) &&
    (to === undefined || has(`${addressText(m.to)} ${addressText(m.cc)} ${addressText(m.bcc)} ${m.envelope.to.join(' ')}`, to)) &&
    (from === undefined || has(`${addressText(m.from)} ${m.envelope.from}`, from))
  );
}

/**
 * Where a page of the list starts: at the newest message, past `starting_after` (older ones),
 * or, for `ending_before`, just newer than that message — then the index is walked upward and
 * the page turned round, so it is newest first like every page.
 */
export interface Cursor {
  upward: boolean;
  /** The index key to start past (exclusive), or undefined for the newest end. */
  key: string | undefined;
}

/** The page's cursor from `starting_after` / `ending_before`, or the refusal to answer. */
export function cursorOf(tree: ReadTree, q: Record<string, string | string[]>): Cursor | { status: number; code: string; message: string } {
  const after = one(q, 'starting_after');
  const before = one(q, 'ending_before');
  if (after !== undefined && before !== undefined) return { status: 400, code: 'invalid_cursor', message: 'Give starting_after or ending_before, not both.' };
  const id = after ?? before;
  if (id === undefined) return { upward: false, key: undefined };
  const cursor = find({ tree }, id);
  if (!cursor) return { status: 404, code: 'message_not_found', message: `No message '${id}' to ${after !== undefined ? 'start after' : 'end before'}.` };
  return { upward: before !== undefined, key: seqKey(cursor.seq) };
}

/** The arrival index from a cursor, in the cursor's direction, read MAX_LIMIT entries at a time. */
export function* arrivals(tree: ReadTree, cursor: Cursor): Generator<ArrivalEntry> {
  let key = cursor.key;
  for (;;) {
    const bound = key === undefined ? {} : cursor.upward ? { after: key } : { before: key };
    const page = tree.list<ArrivalEntry>(BY_SEQ, { reverse: !cursor.upward, limit: MAX_LIMIT, ...bound });
    for (const item of page.items) {
      key = item.id;
      yield item.value;
    }
    if (!page.hasMore || page.items.length === 0) return;
  }
}

/** `GET /messages?limit=&starting_after=&ending_before=&to=&from=&subject=`: newest first. */
export function listMessages(request: TwinRequest, ctx: TwinContext): TwinResponse {
  const q = request.query;
  const limitText = one(q, 'limit');
  const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) return errorResponse(400, 'invalid_limit', `limit must be an integer from 1 to ${MAX_LIMIT}.`);
  const cursor = cursorOf(ctx.tree, q);
  if ('code' in cursor) return errorResponse(cursor.status, cursor.code, cursor.message);
  const data: Message[] = [];
  const budget = new PageBudget();
  let hasMore = false;
  for (const entry of arrivals(ctx.tree, cursor)) {
    const m = find(ctx, entry.id);
    if (!m || !matches(m, q)) continue;
    if (data.length === limit) {
      hasMore = true;
      break;
    }
    const message = present(m);
    if (!budget.admits(message)) {
      hasMore = true;
      break;
    }
    data.push(message);
  }
  if (cursor.upward) data.reverse();
  return { body: { object: 'list', data, has_more: hasMore } };
}

/** Runs of characters JSON writes as one byte each: printable ASCII but `"` and `\`. */
const PLAIN = /[\x20\x21\x23-\x5b\x5d-\x7e]+/g;

/**
 * No fewer than the bytes `value` takes as JSON. A string's characters count six bytes each
 * (what JSON writes for a control character, `\u00XX`, or a lone surrogate, `\uDXXX`), or with
 * `scan`, one byte each but for those JSON may write longer (also non-ASCII, two or three
 * bytes in UTF-8, and a quote or backslash, two), which takes a pass over every string.
 */
function jsonBytes(value: unknown, scan: boolean): number {
  if (typeof value === 'string') return (scan ? value.length + 5 * value.replace(PLAIN, '').length : 6 * value.length) + 2;
  if (value === null || typeof value !== 'object') return String(value).length;
  let n = 2;
  if (Array.isArray(value)) for (const v of value) n += jsonBytes(v, scan) + 1;
  else for (const [k, v] of Object.entries(value)) n += jsonBytes(k, scan) + jsonBytes(v, scan) + 2;
  return n;
}

/**
 * Counts a page's messages against PAGE_BYTES; the first always fits. Most pages are far
 * below it, so messages are counted at six bytes a character (no string scanned) until that
 * would pass the budget; then the page's messages are counted closely, each scanned once.
 */
class PageBudget {
  private bound = 0;
  private close: number | undefined;
  private readonly taken: Message[] = [];

  admits(message: Message): boolean {
    if (this.close === undefined) {
      const quick = jsonBytes(message, false);
      if (this.bound + quick <= PAGE_BYTES) {
        this.bound += quick;
        this.taken.push(message);
        return true;
      }
      this.close = this.taken.reduce((n, m) => n + jsonBytes(m, true), 0);
    }
    const size = jsonBytes(message, true);
    if (this.taken.length > 0 && this.close + size > PAGE_BYTES) return false;
    this.close += size;
    this.taken.push(message);
    return true;
  }
}

export function find(ctx: TwinContext | { tree: ReadTree }, id: string | undefined): StoredMessage | undefined {
  return id === undefined ? undefined : checked(id, ctx.tree.get<StoredMessage>(MESSAGE, id));
}

/**
 * A stored message, when it holds what the answers are made from (its id, `seq`, envelope and
 * attachments): a record the twin did not write (brought in from elsewhere) is a 500 naming it,
 * never an answer without its id. A few typeof tests per read.
 */
function checked(id: string, m: StoredMessage | undefined): StoredMessage | undefined {
  if (m === undefined) return undefined;
  if (typeof m !== 'object' || m === null || m.id !== id || typeof m.seq !== 'number' || typeof m.envelope !== 'object' || m.envelope === null || !Array.isArray(m.attachments)) {
    throw new Error(`The SMTP twin's record of type '${MESSAGE}' and id '${id}' is malformed (not a message with its id, seq, envelope and attachments): restore the world from before it was written.`);
  }
  return m;
}

export function retrieveMessage(request: TwinRequest, ctx: TwinContext): TwinResponse {
  const m = find(ctx, request.params['id']);
  return m ? { body: present(m) } : errorResponse(404, 'message_not_found', `No message '${request.params['id']}'.`);
}

/**
 * Headers for what a sender wrote and the mailbox hands back as it is (a message's bytes, an
 * attachment): a browser opening it at the world's origin, where the world's pages and their
 * session live, must not run it as a page of that origin. `nosniff` keeps a type from being
 * guessed; `sandbox` gives an HTML file an origin of its own with no scripts.
 */
const UNRUN = { 'x-content-type-options': 'nosniff', 'content-security-policy': 'sandbox' } as const;

/** `GET /messages/:id/raw`: the message as received. */
export function rawMessage(request: TwinRequest, ctx: TwinContext): TwinResponse {
  const id = request.params['id'] ?? '';
  const raw = ctx.tree.get<{ raw: string }>(RAW, id);
  if (!raw) return errorResponse(404, 'message_not_found', `No message '${id}'.`);
  return { headers: { 'content-type': 'message/rfc822', ...UNRUN }, bodyBase64: base64Encode(raw.raw) };
}

/** `GET /messages/:id/attachments/:n`: attachment n's bytes, with its type and name. */
export function attachment(request: TwinRequest, ctx: TwinContext): TwinResponse {
  const m = find(ctx, request.params['id']);
  if (!m) return errorResponse(404, 'message_not_found', `No message '${request.params['id']}'.`);
  const n = Number(request.params['n']);
  const info = Number.isInteger(n) ? m.attachments[n] : undefined;
  const raw = info ? ctx.tree.get<{ raw: string }>(RAW, m.id) : undefined;
  const part = raw ? parseMail(raw.raw).attachments[n] : undefined;
  if (!info || !part) return errorResponse(404, 'attachment_not_found', `Message '${m.id}' has no attachment ${request.params['n']} (it has ${m.attachments.length}).`);
  const headers: Record<string, string> = { 'content-type': info.contentType, ...UNRUN };
  if (info.filename !== null) headers['content-disposition'] = `${info.disposition}; filename="${info.filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"`;
  return { headers, bodyBase64: part.contentBase64 };
}

function remove(ctx: TwinContext, m: StoredMessage): void {
  ctx.tree.delete(MESSAGE, m.id);
  ctx.tree.delete(BY_SEQ, seqKey(m.seq));
  ctx.tree.delete(RAW, m.id);
}

export function deleteMessage(request: TwinRequest, ctx: TwinContext): TwinResponse {
  const m = find(ctx, request.params['id']);
  if (!m) return errorResponse(404, 'message_not_found', `No message '${request.params['id']}'.`);
  remove(ctx, m);
  return { body: { id: m.id, object: 'message', deleted: true } };
}

/** `DELETE /messages`: empties the mailbox, up to 500 messages a call (`has_more` says to call again). */
export function clearMessages(_request: TwinRequest, ctx: TwinContext): TwinResponse {
  const page = ctx.tree.list<{ id: string }>(BY_SEQ, { limit: CLEAR_BATCH });
  let deleted = 0;
  // By the index's ids, not the message records' fields: emptying the mailbox also clears a
  // message record the twin cannot read (see `checked`).
  for (const item of page.items) {
    const id = (item.value as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && id !== '' && ctx.tree.get(MESSAGE, id) !== undefined) {
      ctx.tree.delete(MESSAGE, id);
      ctx.tree.delete(RAW, id);
      deleted++;
    }
    ctx.tree.delete(BY_SEQ, item.id);
  }
  return { body: { object: 'list', deleted, has_more: page.hasMore } };
}
