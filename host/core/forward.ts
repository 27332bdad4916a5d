/**
 * Turning an authenticated head into the plain `WorldRequest` a world's runner takes: the
 * host's own headers stripped, what the credential was said in `x-kit-auth`, the read scope
 * said in `x-kit-read-only`, and where the client addressed the twin in `x-kit-twin-url`.
 */
import type { Scope } from '../../runtime/runner/types.js';
import { findCredential } from './credentials.js';

/** Headers a client may not set: the host alone says what the credential was. */
const HOST_HEADERS = ['x-kit-token', 'x-twins-key', 'x-kit-auth', 'x-kit-read-only', 'x-kit-twin-url'] as const;

/** A `Host` header a URL can carry: a name or IPv4 address, or a bracketed IPv6 one, and a port. */
export const URL_AUTHORITY = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * Whether the app's own `Authorization` (sent beside `x-twins-key`, as through the proxy or
 * the attach entry) is a token of this world, so the twin takes it as the app's key as it
 * does when it opens the world. Only a value that looks like a minted token (`tok_`) is
 * hashed: a vendor key (`sk_test_…`) costs a substring test.
 */
function authorizationIsWorldToken(authorization: string | undefined, scopeOf: (token: string) => Scope | null): boolean {
  // Basic hides the value in base64: decoded only then.
  if (authorization === undefined || (!authorization.includes('tok_') && !/^\s*basic\s/i.test(authorization))) return false;
  const inIt = findCredential({ authorization }, 'vendor');
  return inIt !== null && inIt.value.startsWith('tok_') && scopeOf(inIt.value) !== null;
}

/**
 * Where the client addressed the twin a vendor path `/<vendor>/…` goes to: the scheme the
 * host is published with, the client's own `Host` (the name it used, as a vendor's links
 * would), the world's prefix and the vendor's segment as sent. Null when neither the request
 * nor the published address names a host (a twin then writes relative links).
 */
export function twinUrlOf(publishedBase: string | null, host: string | undefined, worldPrefix: string, sub: string): string | null {
  const scheme = publishedBase !== null && publishedBase.startsWith('https:') ? 'https' : 'http';
  let authority: string;
  if (host !== undefined && URL_AUTHORITY.test(host)) authority = host;
  else if (publishedBase !== null) authority = publishedBase.slice(publishedBase.indexOf('//') + 2).replace(/\/.*$/, '');
  else return null;
  const slash = sub.indexOf('/', 1);
  return `${scheme}://${authority}${worldPrefix}${slash < 0 ? sub : sub.slice(0, slash)}`;
}

/** Rewrites `headers` in place for the world (see the file's comment). */
export function forwardHeaders(
  headers: Record<string, string>,
  how: { surface: 'api' | 'vendor'; credentialSource: string; readOnly: boolean; twinUrl: string | null; scopeOf: (token: string) => Scope | null },
): void {
  for (const name of HOST_HEADERS) delete headers[name];
  if (how.credentialSource === 'authorization' || (how.surface === 'vendor' && authorizationIsWorldToken(headers['authorization'], how.scopeOf))) {
    headers['x-kit-auth'] = 'authorization';
  }
  if (how.readOnly) headers['x-kit-read-only'] = '1';
  if (how.twinUrl !== null) headers['x-kit-twin-url'] = how.twinUrl;
}
