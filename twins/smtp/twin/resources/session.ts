/**
 * The SMTP session (RFC 5321, with the ESMTP extensions SIZE, 8BITMIME, PIPELINING,
 * AUTH PLAIN/LOGIN, ENHANCEDSTATUSCODES and SMTPUTF8) as a stream handler. The session's
 * state lives in the connection's JSON state, never in the guest, so every call starts from
 * what the host hands in.
 *
 * AUTH accepts any user name and password: the stream itself was opened with the world's
 * token, so whoever reaches this session already holds it. The user name is kept on the
 * message's envelope; the password is never stored.
 */
import type { StreamAnswer, StreamConnection, StreamHandler, TwinContext } from '../../../../sdk/twin/index.js';
import { base64Decode, utf8Decode } from '../lib/encoding.js';
import { deliver, type Envelope } from './mailbox.js';

export const SERVER_NAME = 'smtp.twinkit.test';
/**
 * SIZE: the largest message accepted, in bytes (advertised in EHLO and enforced). Bounded by
 * the world sandbox's memory (64 MiB by default, shared by every twin of the world): parsing
 * and storing a message holds several copies of it at once, measured at about 12 bytes of
 * sandbox memory per message byte; 3 MiB keeps a world with Stripe loaded near 50 MiB.
 */
export const MAX_MESSAGE_BYTES = 3 * 1024 * 1024;
/** RFC 5321 allows 512 for a command line; some clients send long AUTH lines, so more is taken. */
export const MAX_LINE_BYTES = 4096;
export const MAX_RECIPIENTS = 1000;
/** Errors in one session before the twin hangs up, as real servers do with a confused client. */
const MAX_ERRORS = 50;

export interface SmtpState {
  phase: 'command' | 'data' | 'auth-plain' | 'auth-login-user' | 'auth-login-pass';
  helo: string | null;
  esmtp: boolean;
  user: string | null;
  /** LOGIN's user name between its two challenges. */
  loginUser: string | null;
  /** The transaction: MAIL FROM's reverse-path, or null before MAIL. */
  from: string | null;
  body: '7BIT' | '8BITMIME';
  smtputf8: boolean;
  rcpt: string[];
  /** Command phase: a partial line. Data phase: the message so far (or, past the size limit, its last 4 bytes). */
  pending: string;
  /** Data phase: bytes dropped past the size limit (0 while within it). */
  overflow: number;
  /** Command phase: the rest of an over-long line is being dropped. */
  discarding: boolean;
  errors: number;
}

function fresh(): SmtpState {
  return { phase: 'command', helo: null, esmtp: false, user: null, loginUser: null, from: null, body: '7BIT', smtputf8: false, rcpt: [], pending: '', overflow: 0, discarding: false, errors: 0 };
}

function resetTransaction(st: SmtpState): void {
  st.from = null;
  st.rcpt = [];
  st.body = '7BIT';
  st.smtputf8 = false;
}

const ADDRESS = /^[^\s<>()@,;:"]+(?:"[^"]*")?@[^\s<>()@,;:"]+$|^"[^"]+"@[^\s<>()@,;:"]+$/;
const TERMINATOR = '\r\n.\r\n';

class Replies {
  readonly lines: string[] = [];
  close = false;
  add(code: number, text: string): void {
    this.lines.push(`${code} ${text}\r\n`);
  }
  multi(code: number, texts: string[]): void {
    texts.forEach((t, i) => this.lines.push(`${code}${i === texts.length - 1 ? ' ' : '-'}${t}\r\n`));
  }
}

function fail(st: SmtpState, out: Replies, code: number, text: string): void {
  out.add(code, text);
  if (++st.errors >= MAX_ERRORS) {
    out.add(421, `4.7.0 ${SERVER_NAME} Too many errors, closing connection`);
    out.close = true;
  }
}

/** `FROM:<a@b> SIZE=10 BODY=8BITMIME` → the path and the parameters, or null on bad syntax. */
function parsePath(arg: string, keyword: 'FROM' | 'TO'): { path: string; params: Record<string, string> } | null {
  const m = new RegExp(`^${keyword}:\\s*<([^<>]*)>(.*)$`, 'i').exec(arg);
  if (!m) return null;
  const params: Record<string, string> = {};
  for (const p of m[2]!.trim().split(/\s+/)) {
    if (p === '') continue;
    const eq = p.indexOf('=');
    params[(eq < 0 ? p : p.slice(0, eq)).toUpperCase()] = eq < 0 ? '' : p.slice(eq + 1);
  }
  // A source route (`<@relay:user@host>`) is ignored, as RFC 5321 says a server may.
  const path = m[1]!.replace(/^@[^:]+:/, '').trim();
  return { path, params };
}

function ehloLines(domain: string): string[] {
  return [`${SERVER_NAME} Hello ${domain}`, `SIZE ${MAX_MESSAGE_BYTES}`, '8BITMIME', 'PIPELINING', 'AUTH PLAIN LOGIN', 'ENHANCEDSTATUSCODES', 'SMTPUTF8'];
}

function command(ctx: TwinContext, st: SmtpState, line: string, out: Replies): void {
  const space = line.indexOf(' ');
  const verb = (space < 0 ? line : line.slice(0, space)).toUpperCase();
  const arg = space < 0 ? '' : line.slice(space + 1).trim();
  switch (verb) {
    case 'EHLO':
    case 'HELO': {
      if (arg === '') return fail(st, out, 501, `5.5.4 Syntax: ${verb} hostname`);
      resetTransaction(st);
      st.helo = arg;
      st.esmtp = verb === 'EHLO';
      if (verb === 'EHLO') out.multi(250, ehloLines(arg));
      else out.add(250, SERVER_NAME);
      return;
    }
    case 'MAIL': {
      if (st.helo === null) return fail(st, out, 503, '5.5.1 Error: send HELO/EHLO first');
      if (st.from !== null) return fail(st, out, 503, '5.5.1 Error: nested MAIL command');
      const p = parsePath(arg, 'FROM');
      if (!p) return fail(st, out, 501, '5.5.4 Syntax: MAIL FROM:<address>');
      if (p.path !== '' && !ADDRESS.test(p.path)) return fail(st, out, 501, `5.1.7 Bad sender address syntax: <${p.path}>`);
      let body: SmtpState['body'] = '7BIT';
      let smtputf8 = false;
      for (const [name, value] of Object.entries(p.params)) {
        if (!st.esmtp) return fail(st, out, 555, `5.5.4 MAIL parameters need EHLO: ${name}`);
        if (name === 'SIZE') {
          if (!/^\d{1,15}$/.test(value)) return fail(st, out, 501, '5.5.4 Syntax: SIZE=<bytes>');
          if (Number(value) > MAX_MESSAGE_BYTES) return fail(st, out, 552, '5.3.4 Message size exceeds fixed maximum message size');
        } else if (name === 'BODY') {
          const v = value.toUpperCase();
          if (v !== '7BIT' && v !== '8BITMIME') return fail(st, out, 501, '5.5.4 Syntax: BODY=7BIT or BODY=8BITMIME');
          body = v;
        } else if (name === 'SMTPUTF8') smtputf8 = true;
        else if (name === 'AUTH') {
          // RFC 4954's AUTH=<mailbox> is informational; taken and ignored.
        } else return fail(st, out, 555, `5.5.4 Unsupported option: ${name}`);
      }
      st.from = p.path;
      st.body = body;
      st.smtputf8 = smtputf8;
      st.rcpt = [];
      out.add(250, '2.1.0 Ok');
      return;
    }
    case 'RCPT': {
      if (st.from === null) return fail(st, out, 503, '5.5.1 Error: need MAIL command');
      const p = parsePath(arg, 'TO');
      if (!p) return fail(st, out, 501, '5.5.4 Syntax: RCPT TO:<address>');
      if (!ADDRESS.test(p.path) && p.path.toLowerCase() !== 'postmaster') return fail(st, out, 501, `5.1.3 Bad recipient address syntax: <${p.path}>`);
      if (Object.keys(p.params).length > 0 && !st.esmtp) return fail(st, out, 555, '5.5.4 RCPT parameters need EHLO');
      if (st.rcpt.length >= MAX_RECIPIENTS) return fail(st, out, 452, '4.5.3 Error: too many recipients');
      st.rcpt.push(p.path);
      out.add(250, '2.1.5 Ok');
      return;
    }
    case 'DATA': {
      if (arg !== '') return fail(st, out, 501, '5.5.4 Syntax: DATA');
      if (st.from === null) return fail(st, out, 503, '5.5.1 Error: need MAIL command');
      if (st.rcpt.length === 0) return fail(st, out, 554, '5.5.1 Error: no valid recipients');
      st.phase = 'data';
      st.pending = '';
      st.overflow = 0;
      out.add(354, 'End data with <CR><LF>.<CR><LF>');
      return;
    }
    case 'RSET':
      if (arg !== '') return fail(st, out, 501, '5.5.4 Syntax: RSET');
      resetTransaction(st);
      out.add(250, '2.0.0 Ok');
      return;
    case 'NOOP':
      out.add(250, '2.0.0 Ok');
      return;
    case 'QUIT':
      out.add(221, '2.0.0 Bye');
      out.close = true;
      return;
    case 'VRFY':
      out.add(252, '2.5.2 Cannot VRFY user, but will accept message and attempt delivery');
      return;
    case 'HELP':
      out.add(214, '2.0.0 Commands: EHLO HELO MAIL RCPT DATA RSET NOOP QUIT VRFY AUTH HELP');
      return;
    case 'AUTH':
      return auth(st, arg, out);
    case 'STARTTLS':
    case 'BDAT':
    case 'EXPN':
    case 'ETRN':
    case 'TURN':
      return fail(st, out, 502, `5.5.1 Error: command not implemented: ${verb}`);
    default:
      return fail(st, out, 500, '5.5.2 Error: command not recognized');
  }
}

function auth(st: SmtpState, arg: string, out: Replies): void {
  if (st.helo === null || !st.esmtp) return fail(st, out, 503, '5.5.1 Error: send EHLO first');
  if (st.user !== null) return fail(st, out, 503, '5.5.1 Error: already authenticated');
  if (st.from !== null) return fail(st, out, 503, '5.5.1 Error: MAIL transaction in progress');
  const [mechanism = '', initial] = arg.split(/\s+/);
  const mech = mechanism.toUpperCase();
  if (mech === 'PLAIN') {
    if (initial === undefined) {
      st.phase = 'auth-plain';
      out.add(334, '');
      return;
    }
    return authPlain(st, initial, out);
  }
  if (mech === 'LOGIN') {
    if (initial === undefined) {
      st.phase = 'auth-login-user';
      out.add(334, 'VXNlcm5hbWU6'); // "Username:"
      return;
    }
    return authLoginUser(st, initial, out);
  }
  if (mech === '') return fail(st, out, 501, '5.5.4 Syntax: AUTH mechanism');
  return fail(st, out, 504, `5.5.4 Unrecognized authentication type: ${mech}`);
}

function decodeResponse(text: string): string | null {
  if (text === '=') return '';
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  return base64Decode(text);
}

function authPlain(st: SmtpState, response: string, out: Replies): void {
  st.phase = 'command';
  if (response === '*') return fail(st, out, 501, '5.7.0 Authentication cancelled');
  const decoded = decodeResponse(response);
  if (decoded === null) return fail(st, out, 501, '5.5.2 Error: cannot decode response');
  const parts = decoded.split('\u0000');
  if (parts.length !== 3 || parts[1] === '') return fail(st, out, 535, '5.7.8 Error: authentication failed: malformed PLAIN response');
  st.user = utf8Decode(parts[1]!);
  out.add(235, '2.7.0 Authentication successful');
}

function authLoginUser(st: SmtpState, response: string, out: Replies): void {
  if (response === '*') {
    st.phase = 'command';
    return fail(st, out, 501, '5.7.0 Authentication cancelled');
  }
  const decoded = decodeResponse(response);
  if (decoded === null || decoded === '') {
    st.phase = 'command';
    return fail(st, out, 501, '5.5.2 Error: cannot decode response');
  }
  st.loginUser = utf8Decode(decoded);
  st.phase = 'auth-login-pass';
  out.add(334, 'UGFzc3dvcmQ6'); // "Password:"
}

function authLoginPass(st: SmtpState, response: string, out: Replies): void {
  st.phase = 'command';
  const user = st.loginUser;
  st.loginUser = null;
  if (response === '*') return fail(st, out, 501, '5.7.0 Authentication cancelled');
  if (decodeResponse(response) === null) return fail(st, out, 501, '5.5.2 Error: cannot decode response');
  st.user = user;
  out.add(235, '2.7.0 Authentication successful');
}

/** The message is complete: size checked, dots unstuffed, delivered as one entry. */
function endOfData(ctx: TwinContext, st: SmtpState, stuffed: string, out: Replies): void {
  st.phase = 'command';
  if (st.overflow > 0) {
    st.overflow = 0;
    resetTransaction(st);
    return fail(st, out, 552, '5.3.4 Message size exceeds fixed maximum message size');
  }
  // Most messages have no line starting with a dot: no copy then.
  const raw = stuffed.startsWith('.') || stuffed.includes('\r\n.') ? stuffed.replace(/(^|\r\n)\./g, '$1') : stuffed;
  if (raw.length > MAX_MESSAGE_BYTES) {
    resetTransaction(st);
    return fail(st, out, 552, '5.3.4 Message size exceeds fixed maximum message size');
  }
  const envelope: Envelope = { from: st.from ?? '', to: st.rcpt, helo: st.helo, auth: st.user, body: st.body, smtputf8: st.smtputf8 };
  const message = deliver(ctx, envelope, raw);
  resetTransaction(st);
  out.add(250, `2.0.0 Ok: queued as ${message.id}`);
}

/** Runs everything that arrived; answers the replies, and the framing hint for what comes next. */
function run(ctx: TwinContext, st: SmtpState, bytes: string): StreamAnswer<SmtpState> {
  const out = new Replies();
  let buf = st.pending + bytes;
  st.pending = '';
  let at = 0;
  while (!out.close) {
    if (st.phase === 'data') {
      if (st.overflow > 0) {
        // Past the limit only the last bytes are kept, to see the terminator.
        const idx = buf.indexOf(TERMINATOR, at);
        if (idx < 0) {
          st.overflow += buf.length - at;
          st.pending = buf.slice(Math.max(at, buf.length - 4));
          break;
        }
        at = idx + TERMINATOR.length;
        endOfData(ctx, st, '', out);
        continue;
      }
      const rest = at === 0 ? buf : buf.slice(at);
      // The CRLF that ended the DATA line is the terminator's first CRLF for an empty message.
      const found = rest.startsWith('.\r\n') ? -2 : rest.indexOf(TERMINATOR);
      if (found !== -1) {
        // The message keeps the CRLF before the dot; the terminator ends 5 bytes after it starts.
        const message = found === -2 ? '' : rest.slice(0, found + 2);
        at += found + 5;
        endOfData(ctx, st, message, out);
        continue;
      }
      if (rest.length > MAX_MESSAGE_BYTES) {
        st.overflow = rest.length;
        st.pending = rest.slice(-4);
      } else st.pending = rest;
      break;
    }
    const nl = buf.indexOf('\n', at);
    if (nl < 0) {
      const partial = buf.slice(at);
      if (st.discarding) break;
      if (partial.length > MAX_LINE_BYTES) {
        st.discarding = true;
        fail(st, out, 500, '5.5.2 Error: line too long');
        break;
      }
      st.pending = partial;
      break;
    }
    let line = buf.slice(at, nl);
    at = nl + 1;
    if (st.discarding) {
      st.discarding = false;
      continue;
    }
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.length > MAX_LINE_BYTES) {
      fail(st, out, 500, '5.5.2 Error: line too long');
      continue;
    }
    if (st.phase === 'auth-plain') authPlain(st, line.trim(), out);
    else if (st.phase === 'auth-login-user') authLoginUser(st, line.trim(), out);
    else if (st.phase === 'auth-login-pass') authLoginPass(st, line.trim(), out);
    else if (line.trim() === '') fail(st, out, 500, '5.5.2 Error: bad syntax');
    else command(ctx, st, line, out);
  }
  const answer: StreamAnswer<SmtpState> = { state: st, until: hint(st) };
  if (out.lines.length > 0) answer.send = out.lines.join('');
  if (out.close) answer.close = true;
  return answer;
}

/** What the host should wait for before calling again: a line, or the end of the message. */
function hint(st: SmtpState): StreamAnswer['until'] {
  if (st.phase === 'data') {
    if (st.overflow > 0) return { delimiter: TERMINATOR, tail: st.pending, max: 1024 * 1024 };
    // The DATA line's CRLF comes before the first byte of the message (no copy of a long pending).
    const tail = st.pending.length >= 4 ? st.pending.slice(-4) : `\r\n${st.pending}`.slice(-4);
    return { delimiter: TERMINATOR, tail, max: MAX_MESSAGE_BYTES + 8 - st.pending.length };
  }
  return { delimiter: '\n', max: Math.max(1, MAX_LINE_BYTES + 2 - st.pending.length) };
}

export const smtpSession: StreamHandler<SmtpState> = {
  open(): StreamAnswer<SmtpState> {
    const st = fresh();
    return { send: `220 ${SERVER_NAME} ESMTP twinkit SMTP twin\r\n`, state: st, until: hint(st) };
  },
  data(ctx: TwinContext, conn: StreamConnection<SmtpState>, bytes: string): StreamAnswer<SmtpState> {
    return run(ctx, conn.state ?? fresh(), bytes);
  },
};
