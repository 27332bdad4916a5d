/**
 * CORS, for a browser app that calls a twin from a page of another origin, as it calls
 * api.stripe.com or api.github.com, which both answer any origin (`*`). A preflight is
 * answered before authentication: a browser never sends credentials on one, and the real
 * request that follows is authenticated as usual. Every answer to a request that carries
 * `Origin` lets the page read it, error answers included, and exposes every header (a
 * vendor's request id, `Link`, rate limits).
 *
 * The origin is `*`, never the caller's echoed with `Access-Control-Allow-Credentials`:
 * browsers then refuse a cross-origin request that would carry cookies, so a page elsewhere
 * can never act with, or read through, a browser session of the world's own origin. Tokens
 * go in headers, which a page must hold to send.
 */
import type { HttpAnswer } from './types.js';

/** Token characters (RFC 9110), for the method a preflight asks for. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A comma-separated list of header names, as `Access-Control-Request-Headers` carries. */
const HEADER_LIST = /^\s*[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:\s*,\s*[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*\s*$/;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** How long a browser may reuse a preflight's answer, in seconds (Stripe says 300). */
const MAX_AGE = '300';

/** Lower-case header names, as `HttpHead.headers` has them. */
type Headers = Readonly<Record<string, string>>;

/** Whether a request is a browser's CORS preflight (not any `OPTIONS`, which is the vendor's business). */
export function isPreflight(method: string, headers: Headers): boolean {
  return method === 'OPTIONS' && headers['origin'] !== undefined && headers['access-control-request-method'] !== undefined;
}

/**
 * The answer to a preflight: whatever method and headers it asks for are allowed (the real
 * request is judged when it comes). `Authorization` must be named to be allowed (a `*` does
 * not cover it), so the asked-for list is echoed.
 */
export function preflightAnswer(headers: Headers, extra: Record<string, string>): HttpAnswer {
  const method = headers['access-control-request-method'] ?? '';
  const asked = headers['access-control-request-headers'];
  const out: Record<string, string> = {
    'access-control-allow-origin': '*',
    'access-control-allow-methods': (TOKEN.test(method) && !METHODS.includes(method) ? [...METHODS, method] : METHODS).join(', '),
    'access-control-max-age': MAX_AGE,
    vary: 'Access-Control-Request-Method, Access-Control-Request-Headers',
    ...extra,
  };
  if (asked !== undefined && HEADER_LIST.test(asked)) out['access-control-allow-headers'] = asked.trim();
  // Chrome's Private Network Access: a public page calling a twin on loopback asks first.
  if (headers['access-control-request-private-network'] === 'true') out['access-control-allow-private-network'] = 'true';
  return { status: 204, headers: out, body: '' };
}

/** Lets a page of any origin read the answer, unless the twin said otherwise itself. */
export function allowAnyOrigin(answer: HttpAnswer): HttpAnswer {
  const headers = answer.headers;
  if (headers['access-control-allow-origin'] === undefined) {
    headers['access-control-allow-origin'] = '*';
    headers['access-control-expose-headers'] ??= '*';
  }
  return answer;
}
