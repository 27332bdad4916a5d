/**
 * Reading the admin's and the branch endpoints' JSON bodies: an object with known fields only,
 * each checked, every refusal a 4xx with a stable code and the field named.
 */
import { KitError } from '../../runtime/errors.js';
import { HostError } from '../errors.js';
import { NAME_PATTERN } from '../core/paths.js';

/** The body as a JSON object whose fields are all among `known`. */
export function objectBody(body: Uint8Array | undefined, known: readonly string[]): Record<string, unknown> {
  let value: unknown = {};
  if (body !== undefined && body.byteLength > 0) {
    const text = new TextDecoder('utf-8', { fatal: false }).decode(body);
    try {
      value = JSON.parse(text);
    } catch {
      throw new KitError('invalid_json', 'the body is not JSON; send a JSON object');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new KitError('bad_request', 'send a JSON object');
  for (const field of Object.keys(value)) {
    if (!known.includes(field)) throw new KitError('bad_request', `unknown field ${JSON.stringify(field)}; the fields are ${known.join(', ')}`, { param: field });
  }
  return value as Record<string, unknown>;
}

/** An org or world name (lower case, digits and dashes, 1 to 63), or `invalid_name`. */
export function checkName(value: unknown, param: string): string {
  if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
    throw new HostError('invalid_name', `${param} is 1 to 63 lower-case letters, digits and dashes, starting with a letter or digit`, { param });
  }
  return value;
}

/** A path segment as sent, percent-decoded; a malformed escape is `invalid_name`. */
export function segment(raw: string | undefined, param: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw ?? '');
  } catch {
    throw new HostError('invalid_name', `${param} in the path is not a name`, { param });
  }
  return checkName(decoded, param);
}
