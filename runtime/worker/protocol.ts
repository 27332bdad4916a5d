/**
 * Messages between a `SupervisedWorker` and `serveInWorker`. Arrays, not objects, so that the
 * structured clone of every call stays small. Calls and replies travel in batches: every
 * call (or reply) made in one event-loop turn goes in one `postMessage`, at `setImmediate`.
 * A message between threads has a fixed cost well above that of cloning a small request
 * (the port's wake-up, the message event), and under load many requests arrive per turn.
 */
import { KitError, statusOf } from '../errors.js';
import type { KitErrorCode } from '../errors.js';

/** main → worker: one call. A message is a batch of them. */
export type CallMessage = [id: number, request: unknown];
export type CallBatch = CallMessage[];
/** worker → main: the answer to call `id`. A message is a batch of them, or `['ready']` once the worker serves. */
export type ReplyMessage = [id: number, ok: 0, response: unknown] | [id: number, failed: 1, error: ErrorBody];
export type ReplyBatch = ReplyMessage[] | ['ready'];

export interface ErrorBody {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/** What crosses back when a handler throws: a KitError keeps its code, anything else is `internal`. */
export function toErrorBody(e: unknown): ErrorBody {
  if (e instanceof KitError) {
    return e.details === undefined ? { code: e.code, message: e.message } : { code: e.code, message: e.message, details: e.details };
  }
  return { code: 'internal', message: e instanceof Error ? e.message : String(e) };
}

/** The main side's KitError for an error body (an unknown code becomes `internal`). */
export function fromErrorBody(body: ErrorBody): KitError {
  const code = isKitErrorCode(body.code) ? body.code : 'internal';
  return new KitError(code, String(body.message), body.details);
}

function isKitErrorCode(code: string): code is KitErrorCode {
  return statusOf(code as KitErrorCode) !== undefined;
}
