/**
 * The runner's answers in the world API's one shape: JSON bodies, the error body
 * (`{ error: { code, message, … } }`), no content. Shared by the vendor wire, the world
 * API and the worker thread's relay, so it imports nothing of the runner but its types.
 */
import { KitError, isKitError } from '../errors.js';
import type { WorldResponse } from './types.js';

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): WorldResponse {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** 204, for a change that has nothing to say (a scenario or check deleted). */
export function noContent(): WorldResponse {
  return { status: 204, headers: {}, body: '' };
}

/** `Retry-After` for an answer a client should simply send again: the world catching up its clock. */
export function retryHeaders(e: KitError): Record<string, string> {
  if (e.code === 'catching_up') return { 'retry-after': '1' };
  const after = e.details?.['retryAfterS'];
  return e.code === 'refresh_throttled' && typeof after === 'number' ? { 'retry-after': String(after) } : {};
}

/** Any failure as the world API's error body; one that is not a KitError is logged and answered 500 `internal`. */
export function errorResponse(e: unknown): WorldResponse {
  const err = isKitError(e) ? e : new KitError('internal', 'The world failed to answer this request.');
  if (!isKitError(e)) console.error('twinkit: unexpected error', e);
  return jsonResponse(err.status, err.toBody(), retryHeaders(err));
}
