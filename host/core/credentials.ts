/**
 * Finding the credential a request presents and telling what it opens. Tokens are
 * compared as SHA-256 digests with `timingSafeEqual`, so neither the comparison time nor
 * a length mismatch says how much of a guess was right.
 */
import * as nodeCrypto from 'node:crypto';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Scope } from '../../runtime/runner/types.js';

export interface WorldTokens {
  /** Opens everything: `tok_` + 32 random bytes, base64url. */
  token: string;
  /** Opens GET/HEAD on the vendor API and the world endpoints marked "read": `tok_r_` + 32 bytes. */
  readToken: string;
}

/** 32 bytes from the CSPRNG (Web Crypto: the same on Node and workerd), base64url: a token's, a key's or a session id's secret. */
export function randomPart(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** Random characters that do not make a token look like a read token (`tok_r_`) or a named key (`tok_k_`). */
function unprefixedPart(): string {
  for (;;) {
    const part = randomPart();
    if (!part.startsWith('r_') && !part.startsWith('k_')) return part;
  }
}

/** Mints a fresh pair from the CSPRNG. */
export function mintTokens(): WorldTokens {
  return { token: `tok_${unprefixedPart()}`, readToken: `tok_r_${randomPart()}` };
}

/** Where a credential was found. `authorization` means the app's API-key slot carried the world's token. */
export type CredentialSource = 'x-kit-token' | 'x-twins-key' | 'authorization';

export interface Credential {
  value: string;
  source: CredentialSource;
}

/** Longer than any token we mint by far; longer values are not hashed, just refused. */
const MAX_CREDENTIAL_LENGTH = 1024;

/** The credential in an `Authorization` value: Bearer, and unless `bearerOnly`, token and Basic. */
function fromAuthorization(header: string, bearerOnly: boolean): string | null {
  const space = header.indexOf(' ');
  if (space <= 0) return null;
  const scheme = header.slice(0, space).toLowerCase();
  const rest = header.slice(space + 1).trim();
  if (rest === '') return null;
  if (scheme === 'bearer') return rest;
  if (bearerOnly) return null;
  if (scheme === 'token') return rest;
  if (scheme === 'basic') {
    // The password part: `user:<token>` as Twilio- or git-style clients send it; with no
    // password, the user name: `<token>:` as Stripe's `curl -u sk_test_…:` sends its key.
    const decoded = Buffer.from(rest, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return null;
    const password = decoded.slice(colon + 1);
    if (password !== '') return password;
    return colon === 0 ? null : decoded.slice(0, colon);
  }
  return null;
}

/**
 * The credential a request presents. The world API reads `x-kit-token` and `x-twins-key`
 * (an attached app sends its requests to the world's own paths with the token there,
 * spec Authentication 3); the vendor API also the app's own `Authorization` (Bearer,
 * token, Basic password, or Basic user name with no password).
 * `x-kit-token` wins over `x-twins-key`, which wins over `Authorization`, so an app whose
 * `Authorization` is the vendor's key keeps it when the world's token rides beside it.
 * A host's admin surface reads `x-kit-token`, `x-twins-key` and a bearer (spec: the edge
 * variant's admin token is sent as `x-kit-token` or as a bearer).
 */
export function findCredential(headers: Record<string, string>, surface: 'api' | 'vendor' | 'admin'): Credential | null {
  const kit = headers['x-kit-token'];
  if (kit !== undefined) return { value: kit.trim(), source: 'x-kit-token' };
  const key = headers['x-twins-key'];
  if (key !== undefined) return { value: key.trim(), source: 'x-twins-key' };
  if (surface === 'api') return null;
  const authorization = headers['authorization'];
  if (authorization !== undefined) {
    const value = fromAuthorization(authorization.trim(), surface === 'admin');
    if (value !== null) return { value, source: 'authorization' };
  }
  return null;
}

/** `crypto.hash` (Node 20.12+) is the one-shot form, about 20% cheaper than a Hash object. */
const oneShot = (nodeCrypto as { hash?: ((algorithm: string, data: string, encoding: 'buffer') => Buffer) & ((algorithm: string, data: string, encoding: 'hex') => string) }).hash;

function digest(value: string): Buffer {
  return oneShot !== undefined ? oneShot('sha256', value, 'buffer') : createHash('sha256').update(value).digest();
}

/** SHA-256 of `value` as hex: how a named key or a session id is kept (host/core/access/world-access.ts). */
export function sha256Hex(value: string): string {
  return oneShot !== undefined ? oneShot('sha256', value, 'hex') : createHash('sha256').update(value).digest('hex');
}

/** Tells which of a world's tokens a presented value is, in constant time. */
export class TokenVerifier {
  readonly #token: Buffer;
  readonly #readToken: Buffer;

  constructor(tokens: WorldTokens) {
    if (tokens.token === '' || tokens.readToken === '' || tokens.token === tokens.readToken) {
      throw new TypeError('a world needs two distinct, non-empty tokens');
    }
    this.#token = digest(tokens.token);
    this.#readToken = digest(tokens.readToken);
  }

  /** `write` for the token, `read` for the read token, null for anything else. */
  scopeOf(presented: string): Scope | null {
    if (presented.length === 0 || presented.length > MAX_CREDENTIAL_LENGTH) return null;
    const d = digest(presented);
    // Both comparisons always run: which one matched is not to be read from the timing.
    const write = timingSafeEqual(d, this.#token);
    const read = timingSafeEqual(d, this.#readToken);
    return write ? 'write' : read ? 'read' : null;
  }
}
