/**
 * The uWebSockets.js adapter: sockets in, `HttpHead` + body out, `HttpAnswer` back to
 * bytes. It knows nothing of worlds or tokens; a server gives it an `HttpHandler`.
 *
 * uWS rules this file keeps: the request object dies at the first await, so headers are
 * read with `req.forEach` up front; a body chunk's ArrayBuffer is neutered when `onData`
 * returns, so each chunk is copied; a response that is not answered synchronously needs
 * `onAborted`; writes outside the handler's synchronous part are corked; every answer ends
 * the response in uWS's eyes (see `write`), or uWS aborts the process.
 */
import type * as uWS from 'uWebSockets.js';
import { STATUS_CODES } from 'node:http';
import type { BodyReader, HttpAnswer, HttpHandler, HttpHead } from '../../core/types.js';

export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * uWS refuses a request head over 4 KB (431) unless told otherwise, and reads the setting
 * once, when the addon loads. Vendor calls with long query strings (search, GraphQL over
 * GET) pass 4 KB; 16 KB is Node's own default.
 */
export const MAX_HEAD_BYTES = 16 * 1024;

let addon: Promise<typeof uWS> | null = null;
/** Loads uWS on first use, after setting its head limit (unless the environment set one). */
function loadUws(): Promise<typeof uWS> {
  if (addon === null) {
    process.env['UWS_HTTP_MAX_HEADERS_SIZE'] ??= String(MAX_HEAD_BYTES);
    addon = import('uWebSockets.js');
  }
  return addon;
}
/** `LIBUS_LISTEN_EXCLUSIVE_PORT` (ListenOptions in the typings, a plain 1 at run time). */
const LISTEN_EXCLUSIVE_PORT = 1;
/** Node's setTimeout fires at once for anything longer; a scenario may ask for more. */
const MAX_DELAY_MS = 2_147_483_647;

export interface HttpServerOptions {
  handler: HttpHandler;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Bodies above this are answered 413 without being buffered. Default 4 MB. */
  maxBodyBytes?: number;
  /** On close, how long in-flight requests may take before their connections are cut. Default 10 s. */
  drainTimeoutMs?: number;
  /** Registers more routes (e.g. WebSockets) before the catch-all HTTP route. */
  configure?: (app: uWS.TemplatedApp) => void;
}

export interface HttpServer {
  readonly host: string;
  readonly port: number;
  /** Requests read but not yet answered. */
  inFlight(): number;
  /** Stops accepting, lets in-flight requests finish (up to the drain timeout), closes every connection. */
  close(): Promise<void>;
}

/** Per-request state shared by the callbacks of one response. */
interface Pending {
  aborted: boolean;
  settled: boolean;
  isHead: boolean;
}

/** An answer waiting for the end of the turn (`writeReady`). */
interface ReadyAnswer {
  res: uWS.HttpResponse;
  answer: HttpAnswer;
  p: Pending;
}

const statusLines = new Map<number, string>();
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    // Only final statuses: a 1xx from a twin would leave the client waiting for the real answer.
    const ok = Number.isInteger(status) && status >= 200 && status <= 599;
    if (!ok) return '500 Internal Server Error';
    line = `${status} ${STATUS_CODES[status] ?? 'Status'}`;
    statusLines.set(status, line);
  }
  return line;
}

/** uWS writes these itself (framing) or they describe the connection, not the answer. */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'date']);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const UNSAFE_VALUE = /[\r\n\0]/;
/**
 * RFC 9110 5.5: a field value holds no control character but HTAB. uWS never hands over a
 * value with one below 0x20 (uws-pack 20.0.8 holds such a head; later uWS refuses it), only DEL:
 * a substring test, several times cheaper than a character class on every header.
 */
const DEL = '\x7f';
const DIGITS = /^\d+$/;

function byteLength(body: Uint8Array | string): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}

function join(parts: Uint8Array[], size: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/**
 * Writes one answer. Headers a sandboxed twin produced are checked so it cannot split the response.
 *
 * HEAD: uws-pack 20.0.8 marks a response done only once it has sent as many body bytes as
 * the length it wrote, so `endWithoutBody(n)` with n > 0 leaves it pending: returned from
 * synchronously without `onAborted`, uWS aborts the process; with `onAborted`, the next request
 * on the connection makes uWS close it, and until then the connection does not time out.
 * (Upstream uWebSockets fixed this in c8da12b, May 2025.) So the GET's length goes out as a
 * header of ours and `endWithoutBody()` writes none: the response is done with no body.
 * With `close`, uWS writes a length of its own, and only 0 ends the response: a HEAD that
 * must close the connection reports 0.
 */
function write(res: uWS.HttpResponse, answer: HttpAnswer, isHead: boolean): void {
  res.writeStatus(statusLine(answer.status));
  const headers = answer.headers;
  let declaredLength: string | undefined;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (HOP_HEADERS.has(lower)) {
      if (lower === 'content-length') declaredLength = value;
      continue;
    }
    if (!HEADER_NAME.test(name) || UNSAFE_VALUE.test(value)) continue;
    res.writeHeader(name, value);
  }
  const status = answer.status;
  const close = answer.close === true;
  if (status === 204 || status === 304) {
    // No argument means no content-length; an explicit undefined writes a garbage length.
    if (close) res.endWithoutBody(0, true);
    else res.endWithoutBody();
  } else if (isHead) {
    if (close) {
      res.endWithoutBody(0, true);
      return;
    }
    // The length the GET would have: the body's, or the one a twin declared for an empty body.
    const n = byteLength(answer.body);
    const reported = n === 0 && declaredLength !== undefined && /^\d{1,15}$/.test(declaredLength) ? Number(declaredLength) : n;
    res.writeHeader('Content-Length', String(reported));
    res.endWithoutBody();
  } else {
    res.end(answer.body, close);
  }
}

/** Starts a uWS server with one catch-all route; resolves once it listens. */
export async function listenHttp(options: HttpServerOptions): Promise<HttpServer> {
  const native = await loadUws();
  const handler = options.handler;
  const host = options.host ?? '127.0.0.1';
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const drainTimeoutMs = options.drainTimeoutMs ?? 10_000;
  const app = native.App();
  let listenSocket: uWS.us_listen_socket | null = null;
  let stopping = false;
  let inFlight = 0;
  let drained: (() => void) | null = null;

  const settle = (p: Pending): void => {
    if (p.settled) return;
    p.settled = true;
    inFlight--;
    if (inFlight === 0 && drained !== null) drained();
  };

  /**
   * The turn's answers, written in one burst. A client waiting in epoll is woken by its first
   * answer and reads the rest as they come, instead of being woken again for each; over
   * loopback in a VM each wake-up is an inter-processor interrupt, which cost the server's
   * core 13% of a Stripe retrieve (measured in bench/README, "Answers in one burst").
   */
  let ready: ReadyAnswer[] = [];
  const writeReady = (): void => {
    const answers = ready;
    ready = [];
    for (const { res, answer, p } of answers) {
      try {
        if (!p.aborted) res.cork(() => write(res, answer, p.isHead));
      } catch (e) {
        // One answer uWS cannot write costs its own connection, not the rest of the burst.
        console.error(`twinkit: an answer could not be written: ${String(e)}`);
        p.aborted = true;
        res.close();
      } finally {
        settle(p);
      }
    }
  };

  const deliver = (res: uWS.HttpResponse, answer: HttpAnswer, p: Pending): void => {
    if (p.aborted) return;
    const delay = answer.delayMs;
    if (delay !== undefined && delay > 0) {
      const rest: HttpAnswer = { ...answer, delayMs: 0 };
      setTimeout(() => deliver(res, rest, p), Math.min(delay, MAX_DELAY_MS));
      return;
    }
    if (answer.fault === 'reset') {
      p.aborted = true;
      settle(p);
      res.close();
      return;
    }
    // Written with the other answers that are ready in this turn of the event loop, not now.
    if (ready.length === 0) setImmediate(writeReady);
    ready.push({ res, answer, p });
  };

  const run = (res: uWS.HttpResponse, reader: BodyReader, body: Uint8Array | undefined, p: Pending): void => {
    let promise: Promise<HttpAnswer>;
    try {
      promise = reader(body);
    } catch (e) {
      deliver(res, handler.failed(e), p);
      return;
    }
    promise.then(
      (answer) => deliver(res, answer, p),
      (e: unknown) => deliver(res, handler.failed(e), p),
    );
  };

  /** One request, from inside uWS's handler: answered now, or watched with `onAborted`. */
  const serve = (res: uWS.HttpResponse, req: uWS.HttpRequest): void => {
    const headers = Object.create(null) as Record<string, string>;
    // uWS frames the body by the first content-length line; every other line must agree.
    let expected = -1;
    let lengthDigits = '';
    let malformed: string | null = null;
    req.forEach((name, value) => {
      const prev = headers[name];
      headers[name] = prev === undefined ? value : `${prev}, ${value}`;
      if (value.includes(DEL)) {
        malformed ??= `the ${name} header holds a control character`;
      } else if (name === 'content-length') {
        if (!DIGITS.test(value)) {
          malformed ??= 'content-length is not a decimal number';
        } else if (prev === undefined) {
          expected = Number(value);
          lengthDigits = value.replace(/^0+(?=\d)/, '');
        } else if (value.replace(/^0+(?=\d)/, '') !== lengthDigits) {
          malformed ??= 'repeated content-length headers disagree';
        }
      }
    });
    const method = req.getMethod().toUpperCase();
    const isHead = method === 'HEAD';
    if (stopping) {
      res.cork(() => write(res, { ...handler.stopping(), close: true }, isHead));
      return;
    }
    if (malformed !== null) {
      // Answered on the next turn, then closed. An answer now would let uWS go on parsing
      // this read (it closes only after it), and bytes after a head whose framing is in doubt
      // would reach the handler as requests of their own; a response still pending when uWS
      // parses another request on its connection makes uWS close the connection instead.
      // A malformed first content-length uWS refuses itself (400, closed) once this returns.
      const p: Pending = { aborted: false, settled: false, isHead };
      inFlight++;
      res.onAborted(() => {
        p.aborted = true;
        settle(p);
      });
      deliver(res, { ...handler.badRequest(malformed, headers), close: true }, p);
      return;
    }
    const chunked = headers['transfer-encoding'] !== undefined;
    if (expected > maxBody) {
      // Answered unread, and the connection kept: closing with the body still arriving
      // makes the kernel reset the connection, and the client would never see the 413.
      // uWS drops the unread body as it arrives.
      res.cork(() => write(res, handler.tooLarge(maxBody, headers), isHead));
      return;
    }
    const head: HttpHead = { method, path: req.getUrl(), query: req.getQuery() ?? '', headers, receivedAt: Date.now() };
    let first: HttpAnswer | BodyReader;
    try {
      first = handler.head(head);
    } catch (e) {
      // A throw out of a uWS callback would end the process; this request fails instead.
      first = handler.failed(e);
    }
    if (typeof first !== 'function') {
      // Answered on the head alone; an unread body is dropped by uWS (or the connection closes).
      res.cork(() => write(res, first, isHead));
      return;
    }
    const p: Pending = { aborted: false, settled: false, isHead };
    inFlight++;
    res.onAborted(() => {
      p.aborted = true;
      settle(p);
    });
    if (expected <= 0 && !chunked) {
      run(res, first, undefined, p);
      return;
    }
    // Known length: one buffer, one copy per chunk. Chunked: copies joined at the end.
    // Each body gets an ArrayBuffer of its own, exactly its size (never Node's shared Buffer
    // pool): a runner may transfer it to a worker thread, and a pooled slab would carry
    // other requests' bytes along.
    const fixed = expected > 0 ? new Uint8Array(expected) : null;
    const parts: Uint8Array[] = [];
    let size = 0;
    let refused = false;
    res.onData((chunk, isLast) => {
      if (refused || p.aborted) return;
      const n = chunk.byteLength;
      if (size + n > maxBody || (fixed !== null && size + n > fixed.byteLength)) {
        refused = true;
        parts.length = 0;
        // Not closed, for the same reason as above: the rest is dropped unbuffered.
        deliver(res, handler.tooLarge(maxBody, headers), p);
        return;
      }
      if (fixed !== null) fixed.set(new Uint8Array(chunk), size);
      else if (n > 0) parts.push(new Uint8Array(chunk.slice(0)));
      size += n;
      if (!isLast) return;
      const body = fixed === null ? join(parts, size) : size === fixed.byteLength ? fixed : fixed.slice(0, size);
      run(res, first, size === 0 ? undefined : body, p);
    });
  };

  options.configure?.(app);
  app.any('/*', (res, req) => {
    try {
      serve(res, req);
    } catch (e) {
      // A throw out of a uWS handler is an uncaught exception, and a response left neither
      // answered nor watched aborts the process: this connection ends instead. (`close` throws
      // on a response already answered.)
      console.error(`twinkit: a request could not be answered: ${String(e)}`);
      try {
        res.close();
      } catch {
        // Answered before the throw: nothing is left to close.
      }
    }
  });

  return new Promise((resolve, reject) => {
    // uWS listens with SO_REUSEPORT by default: a second server on a taken port would
    // silently share it with the first. The exclusive flag makes that a listen failure.
    // The native listen takes (host, port, options, cb); the typings lack that overload.
    const listen = app.listen as unknown as (
      this: uWS.TemplatedApp,
      host: string,
      port: number,
      options: number,
      cb: (socket: uWS.us_listen_socket | false) => void,
    ) => uWS.TemplatedApp;
    listen.call(app, host, options.port ?? 0, LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (socket === false) {
        reject(new Error(`cannot listen on ${host}:${options.port ?? 0} (the port is taken, or the address is not one of this machine's)`));
        return;
      }
      listenSocket = socket;
      const port = native.us_socket_local_port(socket);
      let closing: Promise<void> | null = null;
      resolve({
        host,
        port,
        inFlight: () => inFlight,
        close(): Promise<void> {
          if (closing !== null) return closing;
          stopping = true;
          if (listenSocket !== null) {
            native.us_listen_socket_close(listenSocket);
            listenSocket = null;
          }
          closing = new Promise<void>((done) => {
            const finish = (): void => {
              clearTimeout(timer);
              drained = null;
              // Idle keep-alive connections would otherwise hold the process open.
              app.close();
              done();
            };
            const timer = setTimeout(finish, drainTimeoutMs);
            if (inFlight === 0) finish();
            else drained = finish;
          });
          return closing;
        },
      });
    });
  });
}

/** The URL authority for an address a server listens on: a wildcard is no place a client can go, so loopback is named instead. */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
