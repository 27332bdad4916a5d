/**
 * A small route table for the world API: each route one method, a path pattern of literal
 * segments and `:name` parameters (`/twins/:vendor/status`), and the scope that opens it.
 * A path is matched as the runner reads it: split on `/`, empty segments dropped (so a
 * trailing or doubled slash changes nothing), each segment percent-decoded.
 */
import { decodeSegment } from './request.js';
import type { Scope } from './types.js';

/** One endpoint: what a host needs to know of it without its handler. */
export interface Endpoint {
  /** Upper case. HEAD is answered as GET wherever GET is. */
  readonly method: string;
  /** Literal segments and `:name` parameters: `/log/:twin`. */
  readonly path: string;
  /** The token that opens it: `read` the read token (and the world's), `write` the world's token only. */
  readonly scope: Scope;
  /** Opened with no credential at all (a vendor's webhook: its signature is the credential). */
  readonly keyless?: true;
}

type Segment = { literal: string } | { param: string };

export interface RouteTable<R extends Endpoint> {
  readonly routes: readonly R[];
  readonly patterns: readonly (readonly Segment[])[];
}

export type RouteMatch<R extends Endpoint> =
  | { kind: 'route'; route: R; params: Record<string, string> }
  /** The path names an endpoint, but not with this method: the methods it takes, in table order. */
  | { kind: 'method_not_allowed'; allow: string[] }
  | { kind: 'not_found' };

/** Compiles a table once; a malformed pattern is a programmer's error (TypeError). */
export function routeTable<R extends Endpoint>(routes: readonly R[]): RouteTable<R> {
  const patterns = routes.map((r) => {
    if (!r.path.startsWith('/') || r.method !== r.method.toUpperCase()) throw new TypeError(`routeTable: ${r.method} ${r.path} is not an upper-case method and a path starting with '/'.`);
    const segments: Segment[] = r.path.split('/').filter((s) => s !== '').map((s) => (s.startsWith(':') ? { param: s.slice(1) } : { literal: s }));
    const names = segments.flatMap((s) => ('param' in s ? [s.param] : []));
    if (names.some((n) => n === '') || new Set(names).size !== names.length) throw new TypeError(`routeTable: ${r.path} names a parameter twice or not at all.`);
    return segments;
  });
  return { routes, patterns };
}

/** A request path's segments as the table matches them; throws KitError `bad_request` for bad percent-encoding. */
export function pathSegments(path: string): string[] {
  return path.split('/').filter((s) => s !== '').map(decodeSegment);
}

function paramsOf(pattern: readonly Segment[], segments: readonly string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    const s = segments[i]!;
    if ('param' in p) params[p.param] = s;
    else if (p.literal !== s) return null;
  }
  return params;
}

/** The first route whose pattern and method match (HEAD as GET); else the methods the path takes, if any. */
export function matchRoute<R extends Endpoint>(table: RouteTable<R>, method: string, segments: readonly string[]): RouteMatch<R> {
  const wanted = method === 'HEAD' ? 'GET' : method;
  const allow: string[] = [];
  for (let i = 0; i < table.routes.length; i++) {
    const params = paramsOf(table.patterns[i]!, segments);
    if (params === null) continue;
    const route = table.routes[i]!;
    if (route.method === wanted) return { kind: 'route', route, params };
    if (!allow.includes(route.method)) allow.push(route.method);
  }
  return allow.length > 0 ? { kind: 'method_not_allowed', allow } : { kind: 'not_found' };
}
