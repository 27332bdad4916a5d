/** The host-side router's contract: what it is given and what it answers. */

export interface RouteRequest {
  /** Upper case. */
  method: string;
  /** The path with percent-encoding intact, starting with `/`, no query. */
  path: string;
  query: Record<string, string | string[]>;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: unknown;
}

export interface RouteMatch<T> {
  value: T;
  /** The route's index in the list given to `compileRouter`. */
  index: number;
  /** Path parameters, URL-decoded; a `*name` rest is decoded as a whole. */
  params: Record<string, string>;
}

/** Which part of a route's matcher failed, in the order they are checked. */
export type MissPart = 'method' | 'path' | 'query' | 'headers' | 'body';

/** The route that came closest to a request no route matched. */
export interface NearMiss {
  index: number;
  name: string;
  failed: MissPart;
  /** For people: `method is GET, the route wants POST`, `body "amount" is "100", the route wants 2000`. */
  detail: string;
}

export interface CompiledRouter<T> {
  /** The most specific matching route (then the first declared), or null. */
  match(req: RouteRequest): RouteMatch<T> | null;
  /** Every matching route, most specific first, then in declaration order. */
  matchAll(req: RouteRequest): RouteMatch<T>[];
  /**
   * When no route matches: the one that came closest and which part failed. Null when one
   * matches or none is close. Routes in `ignore` are left out, as if not declared (a twin's
   * catch-all, whose taking a request is itself the miss).
   */
  nearestMiss(req: RouteRequest, ignore?: ReadonlySet<number>): NearMiss | null;
  /** The routes whose path pattern is a rest alone (`/*rest`, `/*`): they take every path. */
  readonly catchAll: ReadonlySet<number>;
  readonly size: number;
}
