/**
 * The outbound fetch on the edge (runtime/roots/outbound.ts) over workerd's global `fetch`: the
 * URL checked (runtime/roots/destinations.ts), redirects answered as they came (`redirect:
 * 'manual'`), the whole exchange under one timer, the body read with a byte cap.
 *
 * A Worker cannot see or choose the address a name resolves to: workerd resolves names itself,
 * and on Cloudflare a Worker's subrequests leave from Cloudflare's network, which does not carry
 * them to private addresses of anyone's network. So the check here is the URL's (scheme,
 * userinfo, IP literals, localhost and metadata names); the per-address check Node makes at
 * connect time (host/node/outbound.ts) has no equivalent, and needs none there.
 *
 * Runs on workerd and under Node alike (the tests use Node's fetch against a loopback server).
 */
import { KitError } from '../../runtime/errors.js';
import { prepareOutboundCall } from '../../runtime/roots/destinations.js';
import type { OutboundAnswer, OutboundFetch, OutboundLimits, OutboundRequest } from '../../runtime/roots/outbound.js';

export interface EdgeOutboundOptions {
  /** Whether loopback destinations (and `http:` to them) are allowed: `kit edge dev` tests only. */
  loopback: boolean;
  /** Webhook deliveries (`purpose: 'webhook'`) may reach any http(s) host: `kit edge dev` on this machine alone. */
  webhooksAnywhere?: boolean;
}

/** The outbound fetch of the edge variant. */
export function createEdgeOutbound(options: EdgeOutboundOptions): OutboundFetch {
  const loopback = options.loopback;
  return async (request: OutboundRequest, limits: OutboundLimits): Promise<OutboundAnswer> => {
    const anywhere = request.purpose === 'webhook' && options.webhooksAnywhere === true;
    const { url, method, where, headers } = prepareOutboundCall(request, limits, { loopback, anywhere });
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, limits.timeoutMs);
    try {
      let outgoing: Headers;
      try {
        outgoing = new Headers(headers);
      } catch {
        // The Headers error quotes the value.
        throw new KitError('outbound_failed', `${where}: a request header holds a character HTTP does not allow`);
      }
      url.hash = '';
      const response = await fetch(url.href, { method, headers: outgoing, ...(request.body === undefined ? {} : { body: new Uint8Array(request.body) }), redirect: 'manual', signal: controller.signal });
      const answerHeaders = headersOf(response.headers);
      // workerd (as Node's fetch) hands the body decoded but keeps the header that named its
      // encoding: kept, a Worker answering with it would encode the body again, in the encoding
      // workerd asked for itself, to a caller that may not have asked for any.
      if (DECODED.has((answerHeaders['content-encoding'] ?? '').trim().toLowerCase())) {
        delete answerHeaders['content-encoding'];
        delete answerHeaders['content-length'];
      }
      const declared = Number(response.headers.get('content-length') ?? '');
      if (response.headers.has('content-length') && Number.isFinite(declared) && declared > limits.maxBytes) {
        await response.body?.cancel().catch(() => undefined);
        throw tooLarge(where, limits);
      }
      const body = await readCapped(response, where, limits);
      return { status: response.status, headers: answerHeaders, body };
    } catch (e) {
      if (timedOut) throw new KitError('outbound_timeout', `${where}: no complete answer within ${limits.timeoutMs} ms`);
      if (e instanceof KitError) throw e;
      throw failed(e, where);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The encodings workerd's fetch decodes by itself (Node's too). */
const DECODED = new Set(['gzip', 'br']);

/** The body, up to `maxBytes`; past it the stream is cancelled and the call refused. */
async function readCapped(response: Response, where: string, limits: OutboundLimits): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limits.maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(where, limits);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

/** Lower-case names (as `Headers` gives them); repeated headers joined with `, `, set-cookie with `\n`. */
function headersOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== 'set-cookie') out[name] = value;
  });
  // `Headers` joins every repeated header with `, `; only getSetCookie keeps set-cookie's apart
  // (workerd and Node have it; without it the joined value is kept as is).
  const cookies = typeof headers.getSetCookie === 'function' ? headers.getSetCookie() : [headers.get('set-cookie')].filter((c): c is string => c !== null);
  if (cookies.length > 0) out['set-cookie'] = cookies.join('\n');
  return out;
}

function tooLarge(where: string, limits: OutboundLimits): KitError {
  return new KitError('outbound_too_large', `${where}: the answer's body is over ${limits.maxBytes} bytes`);
}

/** `outbound_failed` with only a system code when the runtime gives one (undici's `cause.code`); never the runtime's message. */
function failed(e: unknown, where: string): KitError {
  const cause = typeof e === 'object' && e !== null ? (e as { cause?: unknown }).cause : undefined;
  const raw = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  const code = typeof raw === 'string' && /^[A-Z0-9_]{1,64}$/.test(raw) ? raw : null;
  const what = code === 'ECONNREFUSED' ? 'the connection was refused' : code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' ? 'the connection was cut' : 'the exchange failed';
  return new KitError('outbound_failed', `${where}: ${what}${code === null ? '' : ` (${code})`}`);
}
