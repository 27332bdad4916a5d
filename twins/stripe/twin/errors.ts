/**
 * Stripe's error body: `{ error: { type, code?, param?, message, decline_code?, doc_url? } }`.
 * Handlers throw `StripeError`; the route wrapper turns it into the vendor's answer.
 * Status follows Stripe: 400 invalid request, 401 bad key, 402 card errors, 404 missing.
 */
import type { Obj } from './lib/util.js';

export type StripeErrorType =
  | 'invalid_request_error'
  | 'card_error'
  | 'idempotency_error'
  | 'api_error';

export class StripeError extends Error {
  constructor(
    readonly status: number,
    readonly type: StripeErrorType,
    message: string,
    readonly fields: { code?: string; param?: string; decline_code?: string } & Obj = {},
    /** Set when the request changed state before failing (a decline): the writes are kept. */
    readonly keepWrites = false,
  ) {
    super(message);
  }

  body(): { error: Obj } {
    const error: Obj = { message: this.message, type: this.type };
    for (const [k, v] of Object.entries(this.fields)) if (v !== undefined) error[k] = v;
    if (typeof this.fields.code === 'string' && error.doc_url === undefined) {
      error.doc_url = `https://stripe.com/docs/error-codes/${this.fields.code.replace(/_/g, '-')}`;
    }
    return { error };
  }
}

/** 400 invalid_request_error, optionally naming the parameter and a code. */
export function invalid(message: string, param?: string, code?: string): StripeError {
  const fields: Obj = {};
  if (code !== undefined) fields.code = code;
  if (param !== undefined) fields.param = param;
  return new StripeError(400, 'invalid_request_error', message, fields);
}

/** `No such customer: 'cus_x'` — Stripe's 404 for an id that is not there. */
export function missing(noun: string, id: string, param = 'id'): StripeError {
  return new StripeError(404, 'invalid_request_error', `No such ${noun}: '${id}'`, {
    code: 'resource_missing',
    param,
  });
}

/**
 * 500 `api_error` for a record of the twin's that does not hold what the twin writes there
 * (brought into the world from elsewhere: the twin never writes one). Named by type and id, so
 * the world can be restored from before it; never answered as if it were an object.
 */
export function malformedRecord(type: string, id: string, problem: string): StripeError {
  const shown = id.length > 200 ? `${id.slice(0, 200)}…` : id;
  return new StripeError(500, 'api_error',
    `The Stripe twin's record of type '${type}' and id '${shown}' is malformed (${problem}), so the twin cannot answer from it. ` +
    "The twin's records change only through its API: restore the world from before the record was written (docs/scenarios.md, \"A damaged twin\").");
}

export function paramMissing(param: string): StripeError {
  return invalid(`Missing required param: ${param}.`, param, 'parameter_missing');
}

/** Stripe's answer for a missing or malformed key: 401 with type invalid_request_error. */
export function unauthorized(message: string): StripeError {
  return new StripeError(401, 'invalid_request_error', message);
}

/**
 * The body for a failure the runner answers for the twin: the twin's own (a throwing handler,
 * a call past its time: 5xx, `api_error`) or the request's (a form or JSON body it could not
 * parse: 4xx, `invalid_request_error`, so the SDK raises StripeInvalidRequestError as Stripe
 * would, not a server error it might retry).
 */
export function errorBody(status: number, code: string, message: string): unknown {
  return { error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', code, message } };
}
