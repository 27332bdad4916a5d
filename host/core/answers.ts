/**
 * The answers the host gives itself (errors in the one body shape) and the shaping of a
 * world's answer on its way out: `x-kit-world-code` on every answer, CORS for a page of
 * another origin, and HEAD (no body, the GET's length) in one place.
 */
import { isCodedError, KitError, type KitErrorCode } from '../../runtime/errors.js';
import type { WorldResponse } from '../../runtime/runner/types.js';
import { HostError, type HostErrorCode } from '../errors.js';
import { allowAnyOrigin } from './cors.js';
import type { HttpAnswer } from './types.js';

const JSON_TYPE = 'application/json';

/** An error in the one body shape, stamped with the code version `code`. */
export function errorAnswer(error: { status: number; toBody(): unknown; details?: Record<string, unknown> | undefined }, code: string, extra?: Record<string, string>): HttpAnswer {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE, 'x-kit-world-code': code };
  // A 405 names what the path answers in `Allow` as well as in its body.
  const allow = error.details?.['allow'];
  if (error.status === 405 && typeof allow === 'string') headers['allow'] = allow;
  if (extra !== undefined) Object.assign(headers, extra);
  return { status: error.status, headers, body: JSON.stringify(error.toBody()) };
}

/** The runtime's codes the host also answers with itself. */
type SharedCode = Extract<KitErrorCode, 'not_found' | 'unknown_world' | 'method_not_allowed' | 'body_too_large' | 'bad_request'>;
const SHARED = new Set<string>(['not_found', 'unknown_world', 'method_not_allowed', 'body_too_large', 'bad_request'] satisfies SharedCode[]);

/** `errorAnswer` of a code the host raises (its own, or one of the runtime's it shares). */
export function hostAnswer(code: HostErrorCode | SharedCode, message: string, worldCode: string, extra?: Record<string, string>): HttpAnswer {
  const error = SHARED.has(code) ? new KitError(code as SharedCode, message) : new HostError(code as HostErrorCode, message);
  return errorAnswer(error, worldCode, extra);
}

/** A world's answer as the host sends it. */
export function fromWorld(r: WorldResponse, worldCode: string): HttpAnswer {
  // Object.assign, not a spread: V8 spreads these header objects about 20× slower (measured).
  const headers: Record<string, string> = Object.assign({}, r.headers);
  headers['x-kit-world-code'] = worldCode;
  const answer: HttpAnswer = { status: r.status, headers, body: r.body };
  if (r.fault !== undefined) answer.fault = r.fault;
  if (r.delayMs !== undefined) answer.delayMs = r.delayMs;
  return answer;
}

/** A thrown error as an answer: a coded one in its shape, anything else a 500 that leaks nothing. */
export function fromFailure(e: unknown, worldCode: string): HttpAnswer {
  if (isCodedError(e)) return errorAnswer(e, worldCode);
  // The host's or the world's own bug: say so without leaking internals to the client.
  console.error('kit: a request failed:', e);
  return errorAnswer(new KitError('internal', 'the server failed on this request'), worldCode);
}

function byteLength(body: Uint8Array | string): number {
  if (typeof body !== 'string') return body.byteLength;
  let ascii = true;
  for (let i = 0; i < body.length && ascii; i++) ascii = body.charCodeAt(i) < 0x80;
  return ascii ? body.length : new TextEncoder().encode(body).byteLength;
}

/**
 * The answer to a HEAD: no body, and the length the GET would have (the body's, or the one
 * the answer declared for an empty body) in `content-length`, which every adapter writes as is.
 */
export function headOf(answer: HttpAnswer): HttpAnswer {
  if (answer.status === 204 || answer.status === 304) return answer;
  const n = byteLength(answer.body);
  if (n === 0) return answer;
  const headers = Object.assign({}, answer.headers);
  headers['content-length'] = String(n);
  return { ...answer, headers, body: '' };
}

/** CORS when the request came from a page (cors.ts). */
export function withOrigin(answer: HttpAnswer, origin: string | undefined): HttpAnswer {
  return origin === undefined ? answer : allowAnyOrigin(answer);
}

/** The final touches every answer gets: CORS when the request came from a page, HEAD's shape. */
export function finish(answer: HttpAnswer, method: string, origin: string | undefined): HttpAnswer {
  const out = withOrigin(answer, origin);
  return method === 'HEAD' ? headOf(out) : out;
}
