/**
 * Hello's error shapes. A twin answers its vendor's own error body, never the world API's:
 * hello copies Stripe's `{ error: { type, code, message, param } }`.
 */
import type { Handler, TwinResponse } from '../../../sdk/twin/index.js';

export type ErrorType = 'invalid_request_error' | 'api_error';

export interface HelloErrorBody {
  error: { type: ErrorType; code: string; message: string; param?: string };
}

/** A vendor-shaped error response. */
export function errorResponse(status: number, code: string, message: string, param?: string): TwinResponse {
  const error: HelloErrorBody['error'] = { type: status >= 500 ? 'api_error' : 'invalid_request_error', code, message };
  if (param !== undefined) error.param = param;
  return { status, body: { error } };
}

/** 404 for a greeting that does not exist (or was deleted). */
export function missing(id: string, param = 'id'): TwinResponse {
  return errorResponse(404, 'resource_missing', `No such greeting: '${id}'`, param);
}

/**
 * Thrown by input checks deep inside a handler; `handler()` turns it into a 400. Throwing keeps
 * the handlers linear. Check input before writing: the 400 is an answer like any other, so
 * writes made before the throw would still be committed.
 */
export class InvalidRequest extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Wraps a handler so `InvalidRequest` becomes the vendor's 400 answer; anything else is a twin failure (500). */
export function handler(fn: Handler): Handler {
  return (request, ctx) => {
    try {
      return fn(request, ctx);
    } catch (e) {
      if (e instanceof InvalidRequest) return errorResponse(e.status, e.code, e.message, e.param);
      throw e;
    }
  };
}

/** The body the runtime answers when a handler throws something unexpected (`errorBody` in the definition). */
export function failureBody(status: number, code: string, message: string): HelloErrorBody {
  return { error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', code, message } };
}
