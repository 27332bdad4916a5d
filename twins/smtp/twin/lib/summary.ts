/**
 * A message's summary: what a mailbox list shows of it (who, to whom, the subject, when, a
 * snippet of the body), without the body, the headers or the attachments' bytes. It is made
 * once, when the message is delivered, and kept in the arrival index beside the message's id,
 * so a page of the list is one ordered read of small records (mailbox.ts, stores.ts).
 */
import type { MailAddress } from './mime.js';

export interface MessageSummary {
  id: string;
  receivedAt: string;
  /** The Date header as an ISO instant, or null. */
  date: string | null;
  subject: string | null;
  /** The headers' addresses, as the message has them. */
  from: MailAddress[];
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  /** The SMTP envelope: MAIL FROM's reverse-path and the RCPT TO addresses. */
  envelope: { from: string; to: string[] };
  /** Bytes of the message as received. */
  size: number;
  /** How many attachments (inline parts included). */
  attachments: number;
  /** The first words of the text body (or of the HTML body's text), whitespace collapsed. */
  snippet: string;
}

/** What a summary is made from: a stored message's fields (its bodies and attachments in place of the counts). */
export type Summarised = Omit<MessageSummary, 'attachments' | 'snippet'> & {
  text: string | null;
  html: string | null;
  attachments: readonly unknown[];
};

export const SNIPPET_CHARS = 160;
/** Of a body, only this much is read for its snippet: a body may be megabytes. */
const SNIPPET_SOURCE = 8192;

export function summarize(m: Summarised): MessageSummary {
  return {
    id: m.id,
    receivedAt: m.receivedAt,
    date: m.date,
    subject: m.subject,
    from: m.from,
    to: m.to,
    cc: m.cc,
    bcc: m.bcc,
    envelope: { from: m.envelope.from, to: m.envelope.to },
    size: m.size,
    attachments: m.attachments.length,
    snippet: snippetOf(m.text, m.html),
  };
}

/** The first SNIPPET_CHARS characters of the text body, else of the HTML body's visible text. */
export function snippetOf(text: string | null, html: string | null): string {
  const source = text !== null && text.trim() !== '' ? text.slice(0, SNIPPET_SOURCE) : html === null ? '' : visibleText(html.slice(0, SNIPPET_SOURCE));
  const flat = source.replace(/\s+/g, ' ').trim();
  return flat.length <= SNIPPET_CHARS ? flat : `${flat.slice(0, SNIPPET_CHARS - 1).trimEnd()}…`;
}

/** Elements whose content is not text a reader sees. */
const HIDDEN = ['head', 'style', 'script', 'title', 'template'];
/** The named entities mail HTML uses most; others stay as written. */
const ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', shy: '', zwnj: '', zwj: '',
  copy: '©', reg: '®', trade: '™', euro: '€', pound: '£', hellip: '…', mdash: '—', ndash: '–', middot: '·', bull: '•',
  lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»',
  aacute: 'á', eacute: 'é', iacute: 'í', oacute: 'ó', uacute: 'ú', agrave: 'à', egrave: 'è', auml: 'ä', ouml: 'ö', uuml: 'ü',
  Auml: 'Ä', Ouml: 'Ö', Uuml: 'Ü', szlig: 'ß', ccedil: 'ç', ntilde: 'ñ',
};

/**
 * The text of a piece of HTML: tags dropped, hidden elements with their content, a few
 * entities decoded. One pass forward (each `indexOf` starts where the last ended), so hostile
 * markup costs no more than its length; an element that never closes ends the text there.
 */
export function visibleText(html: string): string {
  const lower = html.toLowerCase();
  const out: string[] = [];
  let at = 0;
  while (at < html.length) {
    const lt = html.indexOf('<', at);
    if (lt < 0) {
      out.push(html.slice(at));
      break;
    }
    out.push(html.slice(at, lt));
    const gt = html.indexOf('>', lt + 1);
    if (gt < 0) break;
    const name = /^<\s*([a-zA-Z]+)/.exec(html.slice(lt, Math.min(gt, lt + 20)))?.[1]?.toLowerCase();
    at = gt + 1;
    if (name !== undefined && HIDDEN.includes(name)) {
      const close = lower.indexOf(`</${name}`, at);
      if (close < 0) break;
      at = close;
    } else out.push(' ');
  }
  return out.join('').replace(/&(#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref] ?? whole;
  });
}
