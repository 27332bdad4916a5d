/**
 * The SMTP twin's error shape. Its HTTP API (the mailbox, `{world_url}/smtp/messages`) refuses
 * with `{ error: { code, message } }` and a 4xx status; a handler that throws answers the same
 * shape (the definition's `errorBody`, with status 500). The SMTP
 * session refuses in SMTP's own way, with a reply code and an enhanced status code on the
 * stream (`550 5.1.1 …`, resources/session.ts), not with this body.
 */
import type { TwinResponse } from '../../../sdk/twin/index.js';

/** The body of every refusal of the HTTP API. */
export function errorBody(_status: number, code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/** A refusal of the HTTP API: `status` with the twin's error body. */
export function errorResponse(status: number, code: string, message: string): TwinResponse {
  return { status, body: errorBody(status, code, message) };
}
