/**
 * Locating what a path names: `{base}/<org>/<world>/<vendor>/…` (the vendor wire),
 * `{base}/-/<org>/<world>/…` (the world's own endpoints), or `{base}/-/<name>/…` where
 * `<name>` is one of the host's own admin paths (`/-/worlds`, `/-/ping`, …).
 */

/** Org and world names: lower case, digits and dashes, up to 63 characters. */
export const NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

export type Located =
  | { kind: 'world'; surface: 'api' | 'vendor'; org: string; world: string; sub: string }
  | { kind: 'admin'; sub: string }
  | { kind: 'none'; namesWorld: boolean };

/**
 * Where `path` goes. Doubled slashes are folded (a client joining a base URL that ends in
 * `/`); a trailing slash is dropped on the world API only (a vendor's path is the twin's
 * business). `adminNames` are the first segments after `/-/` that belong to the host.
 */
export function locate(rawPath: string, adminNames: ReadonlySet<string>): Located {
  const path = rawPath.includes('//') ? rawPath.replace(/\/{2,}/g, '/') : rawPath;
  if (path.charCodeAt(0) !== 47 /* / */) return { kind: 'none', namesWorld: false };
  const api = path.startsWith('/-/');
  const start = api ? 3 : 1;
  const slash1 = path.indexOf('/', start);
  const org = slash1 < 0 ? path.slice(start) : path.slice(start, slash1);
  if (api && adminNames.has(org)) return { kind: 'admin', sub: path.slice(2) };
  if (slash1 < 0 || org === '') return { kind: 'none', namesWorld: false };
  const slash2 = path.indexOf('/', slash1 + 1);
  const world = slash2 < 0 ? path.slice(slash1 + 1) : path.slice(slash1 + 1, slash2);
  if (world === '') return { kind: 'none', namesWorld: false };
  let sub = slash2 < 0 ? '' : path.slice(slash2);
  if (api) {
    if (sub.length > 1 && sub.endsWith('/')) sub = sub.slice(0, -1);
    if (sub === '') sub = '/';
  }
  return { kind: 'world', surface: api ? 'api' : 'vendor', org, world, sub };
}

/** The raw URL of a test's request split into path and query (a full URL's origin dropped). */
export function splitUrl(url: string): { path: string; query: string } {
  let rest = url;
  const scheme = rest.indexOf('://');
  if (scheme > 0 && scheme < 10) {
    const slash = rest.indexOf('/', scheme + 3);
    rest = slash < 0 ? '/' : rest.slice(slash);
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  return q < 0 ? { path: rest, query: '' } : { path: rest.slice(0, q), query: rest.slice(q + 1) };
}
