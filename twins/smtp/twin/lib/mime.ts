/**
 * A small MIME parser (RFC 5322 headers, RFC 2045–2047 bodies and encoded words, RFC 2231
 * parameters), enough for what mail libraries send: multipart/alternative, /mixed and
 * /related, base64 and quoted-printable, inline and attached files. Runs in the sandbox.
 * Input is the message as a binary string (one character per byte), after dot-unstuffing.
 */
import { base64Clean, base64Decode, base64Encode, base64Size, decodeCharset, decodeWords, quotedPrintableDecode, utf8Decode } from './encoding.js';

export interface MailAddress {
  name: string;
  address: string;
}

export interface MailHeader {
  name: string;
  /** Unfolded, encoded words decoded. */
  value: string;
}

export interface MailAttachment {
  filename: string | null;
  contentType: string;
  /** Bytes of the decoded content. */
  size: number;
  contentId: string | null;
  disposition: 'attachment' | 'inline';
  contentBase64: string;
}

export interface ParsedMail {
  headers: MailHeader[];
  subject: string | null;
  from: MailAddress[];
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  replyTo: MailAddress[];
  messageId: string | null;
  /** The Date header as an ISO instant, when it parses. */
  date: string | null;
  /** Text bodies with line breaks as `\n`. */
  text: string | null;
  html: string | null;
  attachments: MailAttachment[];
}

const MAX_DEPTH = 20;
const MAX_PARTS = 1000;
const MAX_HEADERS = 1000;

interface Entity {
  headers: { name: string; raw: string }[];
  body: string;
}

function splitEntity(raw: string): Entity {
  let headerText: string;
  let body: string;
  if (raw.startsWith('\r\n')) {
    headerText = '';
    body = raw.slice(2);
  } else {
    const end = raw.indexOf('\r\n\r\n');
    if (end < 0) {
      headerText = raw;
      body = '';
    } else {
      headerText = raw.slice(0, end);
      body = raw.slice(end + 4);
    }
  }
  const headers: { name: string; raw: string }[] = [];
  for (const line of headerText.replace(/\r\n(?=[ \t])/g, '').split('\r\n')) {
    if (headers.length >= MAX_HEADERS) break;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    headers.push({ name: line.slice(0, colon).trim(), raw: line.slice(colon + 1).trim() });
  }
  return { headers, body };
}

function header(e: Entity, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const h of e.headers) if (h.name.toLowerCase() === lower) return h.raw;
  return undefined;
}

export interface HeaderValue {
  value: string;
  params: Record<string, string>;
}

/** Splits `a; b=1; c="x;y"` outside quotes. */
function splitParams(raw: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"' && raw[i - 1] !== '\\') quoted = !quoted;
    if (c === ';' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function unquote(v: string): string {
  const t = v.trim();
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1).replace(/\\(.)/g, '$1') : t;
}

function percentBytes(v: string): string {
  return v.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** `text/plain; charset=utf-8` → `{ value: 'text/plain', params: { charset: 'utf-8' } }`, RFC 2231 continuations joined. */
export function parseHeaderValue(raw: string): HeaderValue {
  const [first, ...rest] = splitParams(raw);
  const params: Record<string, string> = {};
  // name → pieces of an RFC 2231 continuation (`name*0*=utf-8''…`, `name*1*=…`)
  const pieces: Record<string, { index: number; text: string; encoded: boolean }[]> = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq <= 0) continue;
    const key = p.slice(0, eq).trim().toLowerCase();
    const value = p.slice(eq + 1).trim();
    const m = /^([^*]+)(?:\*(\d+))?(\*)?$/.exec(key);
    if (!m) continue;
    const name = m[1]!;
    if (m[2] === undefined && m[3] === undefined) {
      params[name] = decodeWords(unquote(value));
      continue;
    }
    (pieces[name] ??= []).push({ index: m[2] === undefined ? 0 : Number(m[2]), text: unquote(value), encoded: m[3] !== undefined });
  }
  for (const [name, list] of Object.entries(pieces)) {
    list.sort((a, b) => a.index - b.index);
    let charset = 'utf-8';
    let bytes = '';
    list.forEach((piece, i) => {
      let text = piece.text;
      if (piece.encoded) {
        if (i === 0) {
          const parts = /^([^']*)'[^']*'(.*)$/.exec(text);
          if (parts) {
            charset = parts[1] || 'utf-8';
            text = parts[2]!;
          }
        }
        bytes += percentBytes(text);
      } else bytes += text;
    });
    params[name] = decodeCharset(bytes, charset);
  }
  return { value: (first ?? '').trim().toLowerCase(), params };
}

// Character codes the address scanners look at.
const BACKSLASH = 92;
const QUOTE = 34;
const OPEN = 40;
const CLOSE = 41;
const AT = 64;

/**
 * Splits an address list on commas (and a group's closing `;`) outside quoted strings, angle
 * brackets and comments. One pass, each character looked at once: a header is attacker-sized
 * (up to the 3 MiB message limit), so nothing here may rescan what it has passed.
 */
function splitAddresses(raw: string): string[] {
  const out: string[] = [];
  let start = 0; // the current item is raw.slice(start, i)
  let lastAt = -1; // index of the last `@` seen, quoted or not
  let quoted = false;
  let angle = 0;
  let comment = 0; // RFC 5322 comments nest
  const n = raw.length;
  for (let i = 0; i < n; i++) {
    const c = raw.charCodeAt(i);
    if (c === AT) lastAt = i;
    if (comment > 0) {
      if (c === BACKSLASH) {
        if (raw.charCodeAt(++i) === AT) lastAt = i; // a quoted-pair: the next character is text
      } else if (c === OPEN) comment++;
      else if (c === CLOSE) comment--;
    } else if (quoted) {
      if (c === BACKSLASH) {
        if (raw.charCodeAt(++i) === AT) lastAt = i;
      } else if (c === QUOTE) quoted = false;
    } else if (c === QUOTE) quoted = true;
    else if (c === OPEN) comment = 1;
    else if (c === 60 /* < */) angle++;
    else if (c === 62 /* > */) angle = Math.max(0, angle - 1);
    else if ((c === 44 /* , */ || c === 59 /* ; */) && angle === 0) {
      out.push(raw.slice(start, i));
      start = i + 1;
    } else if (c === 58 /* : */ && angle === 0 && lastAt < start) {
      // `Group name: a@b, c@d;` — the group's name is dropped, its members kept.
      start = i + 1;
    }
  }
  out.push(raw.slice(start));
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

function unescapePairs(s: string): string {
  return s.indexOf('\\') < 0 ? s : s.replace(/\\(.)/gs, '$1');
}

/**
 * Removes RFC 5322 comments (`(…)`, nested, with `\)` escapes) outside quoted strings, in one
 * pass; also answers the first comment's text (quoted-pairs undone). A comment that never
 * closes is kept as written, with everything after it (so the pass never rescans).
 */
function stripComments(s: string): { text: string; comment: string | null } {
  const kept: string[] = [];
  let comment: string | null = null;
  let from = 0; // start of the text being kept
  let quoted = false;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (quoted) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) quoted = false;
    } else if (c === QUOTE) quoted = true;
    else if (c === OPEN) {
      let depth = 1;
      let j = i + 1;
      for (; j < n && depth > 0; j++) {
        const d = s.charCodeAt(j);
        if (d === BACKSLASH) j++;
        else if (d === OPEN) depth++;
        else if (d === CLOSE) depth--;
      }
      if (depth > 0) break; // unclosed: the rest stays as written
      kept.push(s.slice(from, i));
      comment ??= unescapePairs(s.slice(i + 1, j - 1));
      from = j;
      i = j - 1;
    }
  }
  kept.push(s.slice(from));
  return { text: kept.length === 1 ? kept[0]! : kept.join(''), comment };
}

export function parseAddresses(raw: string | undefined): MailAddress[] {
  if (raw === undefined) return [];
  const out: MailAddress[] = [];
  for (const item of splitAddresses(raw)) {
    // Comments go first, so a `<` or `>` inside one is not taken for the angle address.
    const { text, comment } = stripComments(item);
    const lt = text.lastIndexOf('<');
    const gt = text.lastIndexOf('>');
    if (lt >= 0 && gt > lt) {
      out.push({ name: decodeWords(unquote(text.slice(0, lt).trim())), address: text.slice(lt + 1, gt).trim() });
    } else {
      out.push({ name: comment === null ? '' : decodeWords(comment.trim()), address: text.trim() });
    }
  }
  return out;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const ZONES: Record<string, number> = { ut: 0, gmt: 0, z: 0, est: -300, edt: -240, cst: -360, cdt: -300, mst: -420, mdt: -360, pst: -480, pdt: -420 };

/** An RFC 5322 date (`Thu, 1 Jan 2026 10:00:00 +0100`) as an ISO instant, or null. */
export function parseMailDate(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const m = /(\d{1,2})\s+([A-Za-z]{3})[a-z]*\s+(\d{2,4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([+-]\d{4}|[A-Za-z]{1,3})?/.exec(raw);
  if (!m) return null;
  const month = MONTHS.indexOf(m[2]!.toLowerCase());
  if (month < 0) return null;
  let year = Number(m[3]);
  if (m[3]!.length === 2) year += year < 50 ? 2000 : 1900;
  let offset = 0;
  const zone = m[7];
  if (zone !== undefined) {
    if (/^[+-]\d{4}$/.test(zone)) offset = (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3, 5)));
    else offset = ZONES[zone.toLowerCase()] ?? 0;
  }
  const ms = Date.UTC(year, month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6] ?? '0')) - offset * 60_000;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** Splits a multipart body into its parts' raw text (preamble and epilogue dropped). */
function splitMultipart(body: string, boundary: string): string[] {
  const delim = `--${boundary}`;
  const parts: string[] = [];
  let at = body.startsWith(delim) ? 0 : body.indexOf(`\r\n${delim}`);
  if (at < 0) return parts;
  if (at > 0 || !body.startsWith(delim)) at += 2;
  for (;;) {
    const after = at + delim.length;
    if (body.startsWith('--', after)) break; // the closing delimiter
    const eol = body.indexOf('\r\n', after);
    if (eol < 0) break;
    const start = eol + 2;
    const next = body.indexOf(`\r\n${delim}`, start);
    if (next < 0) {
      parts.push(body.slice(start)); // no closing delimiter: take the rest, as mail clients do
      break;
    }
    parts.push(body.slice(start, next));
    if (parts.length >= MAX_PARTS) break;
    at = next + 2;
  }
  return parts;
}

function decodeBody(body: string, transferEncoding: string): string {
  if (transferEncoding === 'base64') return base64Decode(body);
  if (transferEncoding === 'quoted-printable') return quotedPrintableDecode(body);
  return body;
}

function textOf(bytes: string, charset: string | undefined): string {
  return decodeCharset(bytes, charset).replace(/\r\n/g, '\n');
}

/** Parses a whole message. Never throws on malformed input: what cannot be read is left out. */
export function parseMail(raw: string): ParsedMail {
  // Line ends are CRLF on the wire; a bare LF (a sloppy client) is made one, at the cost of a copy.
  const normalized = /(^|[^\r])\n/.test(raw) ? raw.replace(/\r?\n/g, '\r\n') : raw;
  const top = splitEntity(normalized);
  const out: ParsedMail = {
    headers: top.headers.map((h) => ({ name: h.name, value: decodeWords(h.raw) })),
    subject: null,
    from: parseAddresses(header(top, 'from')),
    to: parseAddresses(header(top, 'to')),
    cc: parseAddresses(header(top, 'cc')),
    bcc: parseAddresses(header(top, 'bcc')),
    replyTo: parseAddresses(header(top, 'reply-to')),
    messageId: header(top, 'message-id') ?? null,
    date: parseMailDate(header(top, 'date')),
    text: null,
    html: null,
    attachments: [],
  };
  const subject = header(top, 'subject');
  if (subject !== undefined) out.subject = decodeWords(subject);
  let parts = 0;

  const walk = (e: Entity, depth: number, defaultType: string): void => {
    if (++parts > MAX_PARTS) return;
    const ctype = parseHeaderValue(header(e, 'content-type') ?? defaultType);
    const type = ctype.value || defaultType;
    const cte = (header(e, 'content-transfer-encoding') ?? '7bit').trim().toLowerCase();
    if (type.startsWith('multipart/') && ctype.params['boundary'] && depth < MAX_DEPTH) {
      const childDefault = type === 'multipart/digest' ? 'message/rfc822' : 'text/plain';
      for (const part of splitMultipart(e.body, ctype.params['boundary'])) walk(splitEntity(part), depth + 1, childDefault);
      return;
    }
    const disp = parseHeaderValue(header(e, 'content-disposition') ?? '');
    const filename = disp.params['filename'] ?? ctype.params['name'] ?? null;
    const isBody = (type === 'text/plain' || type === 'text/html') && disp.value !== 'attachment' && filename === null;
    if (isBody) {
      const text = textOf(decodeBody(e.body, cte), ctype.params['charset']);
      if (type === 'text/plain') out.text = out.text === null ? text : `${out.text}\n${text}`;
      else out.html = out.html === null ? text : `${out.html}\n${text}`;
      return;
    }
    const contentBase64 = cte === 'base64' ? base64Clean(e.body) : base64Encode(decodeBody(e.body, cte));
    const cid = header(e, 'content-id');
    out.attachments.push({
      filename: filename ?? (type === 'message/rfc822' ? 'message.eml' : null),
      contentType: type,
      size: base64Size(contentBase64),
      contentId: cid === undefined ? null : cid.replace(/^<|>$/g, ''),
      disposition: disp.value === 'inline' || (disp.value === '' && cid !== undefined) ? 'inline' : 'attachment',
      contentBase64,
    });
  };
  walk(top, 0, 'text/plain');
  return out;
}

/** For tests and the raw endpoint: the message's bytes as text (UTF-8, malformed bytes replaced). */
export function rawText(raw: string): string {
  return utf8Decode(raw);
}
