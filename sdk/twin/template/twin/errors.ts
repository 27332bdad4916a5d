/**
 * The vendor's error shape. A twin answers its vendor's own error body, never the world's:
 * this one is `{ error: { type, code, message, param? } }`. Change it to your vendor's.
 */
import type { Handler, TwinResponse } from 'twinkit/twin';

export interface VendorErrorBody {
  error: { type: 'invalid_request_error' | 'api_error'; code: string; message: string; param?: string };
}

/** The vendor's error body for a status and code. */
export function errorBody(status: number, code: string, message: string, param?: string): VendorErrorBody {
  const error: VendorErrorBody['error'] = { type: status >= 500 ? 'api_error' : 'invalid_request_error', code, message };
  if (param !== undefined) error.param = param;
  return { error };
}

/** A vendor-shaped error answer. */
export function errorResponse(status: number, code: string, message: string, param?: string): TwinResponse {
  return { status, body: errorBody(status, code, message, param) };
}

/** 404 for a record that does not exist (or was deleted). */
export function missing(kind: string, id: string, param = 'id'): TwinResponse {
  return errorResponse(404, 'resource_missing', `No such ${kind}: '${id}'`, param);
}

/**
 * Thrown by input checks deep inside a handler; `handler()` answers it as the vendor would.
 * Check input before writing: the answer is an answer like any other, so writes made before
 * the throw would be kept.
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

/** Wraps a handler: `InvalidRequest` becomes the vendor's 4xx; anything else is a failure of the twin (a 500 in `failureBody`'s shape). */
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

/** The definition's `errorBody`: what a client gets when a handler throws something unexpected. */
export function failureBody(status: number, code: string, message: string): VendorErrorBody {
  return errorBody(status, code, message);
}
