/**
 * Turns the host's `WorldRequest` into the plain request a twin handler sees, parsing
 * the body by its content type. Malformed bodies are the caller's fault, never a 500.
 */
import type { TwinRequest } from '../../sdk/twin/types.js';
import { FormError, parseForm } from '../../sdk/twin/form.js';
import { KitError } from '../errors.js';
import { decodeStrict } from '../router/query.js';
import { parseQueryString } from '../router/index.js';
import type { WorldRequest } from './types.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

export interface ParsedBody {
  body: unknown;
  bodyText?: string;
  bodyBase64?: string;
}

function mediaType(headers: Record<string, string>): string {
  const raw = headers['content-type'] ?? '';
  const semi = raw.indexOf(';');
  return (semi === -1 ? raw : raw.slice(0, semi)).trim().toLowerCase();
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/** Parses a body for a twin: JSON, bracket-syntax form, other text, or bytes. */
export function parseBody(headers: Record<string, string>, bytes: Uint8Array | undefined): ParsedBody {
  if (!bytes || bytes.byteLength === 0) return { body: undefined };
  const type = mediaType(headers);
  let text: string | undefined;
  try {
    text = utf8.decode(bytes);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    // A form or JSON that is not UTF-8 is refused, never handed on as if it had no parameters.
    if (isJsonType(type)) throw new KitError('invalid_json', 'The request body is not valid UTF-8.');
    if (type === 'application/x-www-form-urlencoded') throw new KitError('bad_request', 'The form body is not valid UTF-8: percent-encode its bytes (name=%C3%A9t%C3%A9).');
    return { body: undefined, bodyBase64: Buffer.from(bytes).toString('base64') };
  }
  if (isJsonType(type)) {
    try {
      return { body: JSON.parse(text), bodyText: text };
    } catch (e) {
      throw new KitError('invalid_json', `The request body is not valid JSON: ${(e as Error).message}`);
    }
  }
  if (type === 'application/x-www-form-urlencoded') {
    try {
      return { body: parseForm(text), bodyText: text };
    } catch (e) {
      if (e instanceof FormError) throw new KitError('bad_request', e.message, e.param ? { param: e.param } : undefined);
      throw e;
    }
  }
  if (type === '' || type.startsWith('text/') || type === 'application/xml') return { body: undefined, bodyText: text };
  return { body: undefined, bodyText: text, bodyBase64: Buffer.from(bytes).toString('base64') };
}

/** The twin request for `rest` (the path below `/<vendor>`), without params (the router fills them). */
export function toTwinRequest(req: WorldRequest, rest: string, readOnly: boolean, requestId: string): TwinRequest {
  const parsed = parseBody(req.headers, req.body);
  const out: TwinRequest = {
    method: req.method,
    path: rest,
    params: {},
    query: parseQueryString(req.query),
    headers: req.headers,
    body: parsed.body,
    requestId,
    readOnly,
  };
  if (parsed.bodyText !== undefined) out.bodyText = parsed.bodyText;
  if (parsed.bodyBase64 !== undefined) out.bodyBase64 = parsed.bodyBase64;
  return out;
}

/** Reads a JSON body of a world API call; a wrong content type or bad JSON is a 4xx. */
export function readJsonBody(req: WorldRequest): unknown {
  if (!req.body || req.body.byteLength === 0) return undefined;
  const type = mediaType(req.headers);
  if (type !== '' && !isJsonType(type)) {
    throw new KitError('unsupported_media_type', `Send JSON (content-type: application/json), not ${type}.`);
  }
  let text: string;
  try {
    text = utf8.decode(req.body);
  } catch {
    throw new KitError('invalid_json', 'The request body is not UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new KitError('invalid_json', `The request body is not valid JSON: ${(e as Error).message}`);
  }
}

/** Reads a text body (scenario documents, check sources). */
export function readTextBody(req: WorldRequest): string {
  if (!req.body || req.body.byteLength === 0) return '';
  try {
    return utf8.decode(req.body);
  } catch {
    throw new KitError('bad_request', 'The request body is not UTF-8 text.');
  }
}

/** A percent-encoded path segment, decoded; a malformed escape is the caller's 400, never a 500. */
export function decodeSegment(s: string): string {
  const decoded = decodeStrict(s);
  if (decoded === null) throw new KitError('bad_request', `The path segment '${s}' is not valid percent-encoding.`);
  return decoded;
}
