/** What the runner does with the value a scenario `js` handler returned (see `JsCall`). */

import type { TwinResponse } from '../../sdk/twin/types.js';
import { KitError } from '../errors.js';
import { isPlainObject } from '../router/matcher.js';

const RESPONSE_KEYS = new Set(['status', 'headers', 'body', 'bodyBase64']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Checks a `js` handler's result: a response to answer, or `pass` (it returned
 * undefined or null) to let the twin's own routes take the request. A malformed
 * response is a KitError `handler_error` naming the field.
 */
export function jsOutcome(value: unknown, handlerName: string): { kind: 'respond'; response: TwinResponse & { status: number; headers: Record<string, string> } } | { kind: 'pass' } {
  if (value === undefined || value === null) return { kind: 'pass' };
  const bad = (field: string, problem: string): never => {
    throw new KitError('handler_error', `scenario handler "${handlerName}" returned a bad response: ${field} ${problem}`, { handler: handlerName, field });
  };
  if (!isPlainObject(value)) bad('the value', 'must be a response object { status, headers, body }, or nothing to pass on to the twin');
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v)) if (!RESPONSE_KEYS.has(k)) bad(k, 'is not a response field (status, headers, body, bodyBase64)');
  let status = 200;
  if (v['status'] !== undefined) {
    const s = v['status'];
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 100 || s > 599) bad('status', 'must be an integer 100-599');
    status = s as number;
  }
  const headers: Record<string, string> = {};
  if (v['headers'] !== undefined) {
    if (!isPlainObject(v['headers'])) bad('headers', 'must be an object of names to strings');
    for (const [k, h] of Object.entries(v['headers'] as Record<string, unknown>)) {
      if (!HEADER_NAME.test(k) || k === '__proto__') bad(`headers.${k}`, 'is not a valid header name');
      if (typeof h !== 'string' && typeof h !== 'number') bad(`headers.${k}`, 'must be a string');
      headers[k] = String(h).replace(/[\r\n\0]/g, ' ');
    }
  }
  const response: TwinResponse & { status: number; headers: Record<string, string> } = { status, headers };
  if (v['body'] !== undefined) response.body = v['body'];
  if (v['bodyBase64'] !== undefined) {
    if (typeof v['bodyBase64'] !== 'string') bad('bodyBase64', 'must be a base64 string');
    response.bodyBase64 = v['bodyBase64'] as string;
  }
  return { kind: 'respond', response };
}
