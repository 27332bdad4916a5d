/**
 * What a world is told about a twin's root, a credential and a link, checked: the bodies of
 * `PUT …/twins/<vendor>/root`, `PUT …/twins/<name>/credential` and `PUT …/links/<name>`.
 * Every refusal is a KitError with a stable code; no message repeats a secret.
 */
import { KitError } from '../errors.js';
import { parseDuration } from '../world/time.js';
import { checkDestinationUrl } from './destinations.js';

export type DeployPolicy = 'auto' | 'manual';

export interface RootConfig {
  url: string;
  deploy: DeployPolicy;
  refresh: { atMost?: string; every?: string };
}

/** What is sealed: the headers that stand for the caller's, and the secret webhooks are signed with. */
export interface CredentialSecret {
  headers: Record<string, string>;
  signingSecret?: string;
}

export interface LinkConfig {
  origin: string;
}

/** A credential body's most bytes (its JSON text). */
export const MAX_CREDENTIAL_BYTES = 16 * 1024;
const MAX_CREDENTIAL_HEADERS = 20;
/** A header name as HTTP's token grammar allows it. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** Headers a credential may not set: they belong to the connection, not the caller. */
const NOT_CREDENTIAL = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-connection']);
/** A root or link URL's most characters. */
const MAX_URL = 2048;
/** A link's name: a vendor id's shape, so `{world_url}/<name>/…` reads like a twin's. */
export const LINK_NAME = /^[a-z][a-z0-9-]{1,39}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function onlyFields(body: Record<string, unknown>, allowed: readonly string[], code: 'invalid_root' | 'invalid_credential' | 'invalid_link', what: string): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw new KitError(code, `${what} has no field '${key.slice(0, 40)}' (its fields: ${allowed.join(', ')}).`, { param: key.slice(0, 40) });
  }
}

/** A URL a world may reach: refused with `destination_refused` where it must not (see destinations.ts). */
export function destinationUrl(raw: unknown, field: string, loopback: boolean, code: 'invalid_root' | 'invalid_link' | 'invalid_origin'): URL {
  if (typeof raw !== 'string' || raw === '') throw new KitError(code, `'${field}' must be a URL string.`, { param: field });
  if (raw.length > MAX_URL) throw new KitError(code, `'${field}' is longer than ${MAX_URL} characters.`, { param: field });
  const checked = checkDestinationUrl(raw, { loopback });
  if ('code' in checked) throw new KitError('destination_refused', `'${field}' is refused: ${checked.message}`, { param: field });
  return checked.ok;
}

/** `PUT …/twins/<vendor>/root`'s body: a root, or null to clear it. */
export function parseRoot(body: unknown, loopback: boolean): RootConfig | null {
  if (body === null) return null;
  if (!isObject(body)) throw new KitError('invalid_root', 'Send { url, deploy?, refresh?: { atMost?, every? } }, or null to clear the root.');
  onlyFields(body, ['url', 'deploy', 'refresh'], 'invalid_root', 'A root');
  const url = destinationUrl(body['url'], 'url', loopback, 'invalid_root');
  if (url.search !== '' || url.hash !== '') throw new KitError('invalid_root', "'url' names the root without a query or a fragment.", { param: 'url' });
  const deploy = body['deploy'] ?? 'manual';
  if (deploy !== 'auto' && deploy !== 'manual') throw new KitError('invalid_root', "'deploy' is 'auto' (a push performs its changes on the root) or 'manual' (the default: a deploy does).", { param: 'deploy' });
  const refresh: RootConfig['refresh'] = {};
  const r = body['refresh'];
  if (r !== undefined && r !== null) {
    if (!isObject(r)) throw new KitError('invalid_root', "'refresh' is { atMost?, every? }, each a duration like 30s, 15m, 1h or 1d.", { param: 'refresh' });
    onlyFields(r, ['atMost', 'every'], 'invalid_root', "'refresh'");
    for (const field of ['atMost', 'every'] as const) {
      const value = r[field];
      if (value === undefined || value === null) continue;
      const ms = durationOf(value, `refresh.${field}`);
      if (field === 'every' && ms < 60_000) throw new KitError('invalid_root', "'refresh.every' is at least 1m: a schedule is not a way around the throttle.", { param: 'refresh.every' });
      refresh[field] = value as string;
    }
  }
  // The URL as the parser normalised it, without a trailing slash (paths are appended to it).
  const href = url.href.endsWith('/') ? url.href.slice(0, -1) : url.href;
  return { url: href, deploy, refresh };
}

/** A root's refresh duration, refused as a bad root (naming its field), not as the clock's `invalid_duration`. */
function durationOf(value: unknown, param: string): number {
  try {
    return parseDuration(value);
  } catch {
    throw new KitError('invalid_root', `'${param}' is a duration like 30s, 15m, 1h or 1d.`, { param });
  }
}

/**
 * `PUT …/twins/<name>/credential`'s body: `{ headers?, bearer?, signingSecret? }` — the
 * headers that replace the caller's (`bearer: <token>` is `authorization: Bearer <token>`) and
 * the webhook signing secret. At least one of them.
 */
export function parseCredential(body: unknown, bytes: number): CredentialSecret {
  if (bytes > MAX_CREDENTIAL_BYTES) throw new KitError('credential_too_large', `A credential is at most ${MAX_CREDENTIAL_BYTES} bytes of JSON; this one is ${bytes}.`);
  if (!isObject(body)) throw new KitError('invalid_credential', 'Send { headers?: { <name>: <value> }, bearer?: <token>, signingSecret?: <secret> }.');
  onlyFields(body, ['headers', 'bearer', 'signingSecret'], 'invalid_credential', 'A credential');
  const headers: Record<string, string> = {};
  const given = body['headers'];
  if (given !== undefined) {
    if (!isObject(given)) throw new KitError('invalid_credential', "'headers' is an object of header names to string values.", { param: 'headers' });
    const names = Object.keys(given);
    if (names.length > MAX_CREDENTIAL_HEADERS) throw new KitError('invalid_credential', `A credential holds at most ${MAX_CREDENTIAL_HEADERS} headers.`, { param: 'headers' });
    for (const name of names) {
      const value = given[name];
      if (!HEADER_NAME.test(name)) throw new KitError('invalid_credential', `'${name.slice(0, 40)}' is not a header name.`, { param: 'headers' });
      if (NOT_CREDENTIAL.has(name.toLowerCase())) throw new KitError('invalid_credential', `A credential does not set '${name.toLowerCase()}': it belongs to the connection.`, { param: 'headers' });
      // The value is never repeated: it is the secret.
      if (typeof value !== 'string' || value === '' || /[\r\n\u0000]/.test(value)) throw new KitError('invalid_credential', `The value of header '${name.toLowerCase()}' must be a non-empty string without line breaks.`, { param: 'headers' });
      headers[name.toLowerCase()] = value;
    }
  }
  const bearer = body['bearer'];
  if (bearer !== undefined) {
    if (typeof bearer !== 'string' || bearer === '' || /[\s\u0000-\u001f]/.test(bearer)) throw new KitError('invalid_credential', "'bearer' must be a token without white space.", { param: 'bearer' });
    if (headers['authorization'] !== undefined) throw new KitError('invalid_credential', "Give 'bearer' or an authorization header, not both.", { param: 'bearer' });
    headers['authorization'] = `Bearer ${bearer}`;
  }
  const out: CredentialSecret = { headers };
  const signing = body['signingSecret'];
  if (signing !== undefined) {
    if (typeof signing !== 'string' || signing.length < 8) throw new KitError('invalid_credential', "'signingSecret' must be the vendor's webhook signing secret (a string of at least 8 characters).", { param: 'signingSecret' });
    out.signingSecret = signing;
  }
  if (Object.keys(headers).length === 0 && out.signingSecret === undefined) throw new KitError('invalid_credential', 'A credential gives headers, a bearer token or a signing secret.');
  return out;
}

/** `PUT …/links/<name>`'s body: `{ origin }`, an https origin (scheme and host, no path). */
export function parseLink(body: unknown, loopback: boolean): LinkConfig {
  if (!isObject(body)) throw new KitError('invalid_link', 'Send { origin: "https://<host>" }.');
  onlyFields(body, ['origin'], 'invalid_link', 'A link');
  const url = destinationUrl(body['origin'], 'origin', loopback, 'invalid_link');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') throw new KitError('invalid_link', "'origin' is a scheme and a host name (https://api.example.com), without a path.", { param: 'origin' });
  return { origin: url.origin };
}
