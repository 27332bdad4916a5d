/**
 * Where GitHub's objects live, as its answers name them: the API's and the site's addresses, and
 * the node ids a client echoes. Imports nothing, so the request frame (http.ts) and the accounts
 * (users.ts) both use it.
 */

export const API = 'https://api.github.com';
export const WEB = 'https://github.com';

export function nodeId(kind: string, id: number): string {
  // GitHub's legacy global ids are base64 of `<len>:<Type><id>`; close enough for a client that only echoes them.
  const raw = `0${kind.length}:${kind}${id}`;
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < raw.length; i += 3) {
    const a = raw.charCodeAt(i), b = raw.charCodeAt(i + 1), c = raw.charCodeAt(i + 2);
    const n = (a << 16) | ((b || 0) << 8) | (c || 0);
    out += A.charAt((n >> 18) & 63) + A.charAt((n >> 12) & 63) + (Number.isNaN(b) ? '=' : A.charAt((n >> 6) & 63)) + (Number.isNaN(c) ? '=' : A.charAt(n & 63));
  }
  return out;
}
