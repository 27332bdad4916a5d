/**
 * The host-side router: a segment trie over path patterns. Lookup walks literal
 * children before the parameter child before rest routes, so a depth-first walk meets
 * routes in order of specificity (a literal beats a parameter whatever the declaration
 * order); routes ending at one node keep declaration order. Method, query, headers and
 * body are checked only on routes whose path matched.
 */

import { KitError } from '../errors.js';
import type { Matcher } from '../../sdk/twin/types.js';
import { bodyAt, bodyEquals, failsCondition, normalizeMatcher, show, type NormalMatcher } from './matcher.js';
import { compareSpecificity, clip, splitPath, type Segment } from './pattern.js';
import { decodeStrict, getOwn, setOwn } from './query.js';
import type { CompiledRouter, MissPart, NearMiss, RouteMatch, RouteRequest } from './types.js';

interface Compiled<T> {
  index: number;
  name: string;
  value: T;
  m: NormalMatcher;
  methods: Set<string> | null;
  /** [segment position, name] of each `:name`. */
  params: [number, string][];
  /** Position and name of a trailing `*name`; name null for a bare `*`. */
  rest: [number, string | null] | null;
  /** Position in the order of specificity, for breaking ties in nearestMiss. */
  rank: number;
}

interface Node {
  literal: Map<string, Node> | null;
  param: Node | null;
  /** Routes whose pattern ends here, in declaration order. */
  end: number[];
  /** Routes whose pattern has `*` at this depth, in declaration order. */
  rest: number[];
}

function node(): Node {
  return { literal: null, param: null, end: [], rest: [] };
}

/**
 * A request's path cut into segments. Segments are decoded when first needed (null
 * where an escape is malformed): a lookup looks at no more segments than the deepest
 * pattern has, however long the path.
 */
class Cut {
  private readonly cache: (string | null | undefined)[] = [];
  constructor(readonly raw: string[]) {}
  decoded(i: number): string | null {
    let d = this.cache[i];
    if (d === undefined) d = this.cache[i] = decodeStrict(this.raw[i] ?? '');
    return d;
  }
}

/**
 * Compiles routes into a router. A malformed matcher is refused with KitError
 * `invalid_twin` naming the route and the field (scenario documents are checked
 * before they get here, with their own error).
 */
export function compileRouter<T>(routes: readonly { name: string; match: Matcher; value: T }[]): CompiledRouter<T> {
  const compiled: Compiled<T>[] = routes.map((r, index) => {
    const n = normalizeMatcher(r.match);
    if (!n.ok) {
      const field = n.field === '' ? 'match' : `match.${n.field}`;
      throw new KitError('invalid_twin', `routes[${index}] (${clip(String(r.name))}).${field}: ${n.problem}`, { route: index, name: r.name, field });
    }
    const params: [number, string][] = [];
    let rest: [number, string | null] | null = null;
    n.value.segments.forEach((s, i) => {
      if (s.kind === 'param') params.push([i, s.name]);
      else if (s.kind === 'rest') rest = [i, s.name];
    });
    return { index, name: r.name, value: r.value, m: n.value, methods: n.value.methods ? new Set(n.value.methods) : null, params, rest, rank: 0 };
  });
  [...compiled]
    .sort((a, b) => compareSpecificity(a.m.segments, b.m.segments) || a.index - b.index)
    .forEach((c, rank) => { c.rank = rank; });

  const root = node();
  for (const c of compiled) insert(root, c.m.segments, c.index);
  const catchAll = new Set(compiled.filter((c) => c.m.segments.length === 1 && c.m.segments[0]?.kind === 'rest').map((c) => c.index));
  return new TrieRouter(compiled, root, catchAll);
}

function insert(root: Node, segments: Segment[], index: number): void {
  let cur = root;
  for (const s of segments) {
    if (s.kind === 'literal') {
      cur.literal ??= new Map();
      let next = cur.literal.get(s.value);
      if (!next) cur.literal.set(s.value, (next = node()));
      cur = next;
    } else if (s.kind === 'param') {
      cur = cur.param ??= node();
    } else {
      cur.rest.push(index);
      return;
    }
  }
  cur.end.push(index);
}

class TrieRouter<T> implements CompiledRouter<T> {
  constructor(
    private readonly routes: Compiled<T>[],
    private readonly root: Node,
    readonly catchAll: ReadonlySet<number>,
  ) {}

  get size(): number {
    return this.routes.length;
  }

  match(req: RouteRequest): RouteMatch<T> | null {
    const cut = cutPath(req.path);
    if (cut === null) return null;
    let found: RouteMatch<T> | null = null;
    const take = (c: Compiled<T>, params: Record<string, string>): boolean => {
      found = { value: c.value, index: c.index, params };
      return true;
    };
    this.walk(this.root, cut, 0, req, req.method, take);
    // HEAD is answered by a GET route when no route takes HEAD itself.
    if (found === null && req.method === 'HEAD') this.walk(this.root, cut, 0, req, 'GET', take);
    return found;
  }

  matchAll(req: RouteRequest): RouteMatch<T>[] {
    const cut = cutPath(req.path);
    if (cut === null) return [];
    const out: RouteMatch<T>[] = [];
    const seen = new Set<number>();
    const take = (c: Compiled<T>, params: Record<string, string>): boolean => {
      if (!seen.has(c.index)) {
        seen.add(c.index);
        out.push({ value: c.value, index: c.index, params });
      }
      return false;
    };
    this.walk(this.root, cut, 0, req, req.method, take);
    if (req.method === 'HEAD') this.walk(this.root, cut, 0, req, 'GET', take);
    return out;
  }

  /** Depth-first in order of specificity; stops when `take` answers true. */
  private walk(
    n: Node,
    cut: Cut,
    depth: number,
    req: RouteRequest,
    method: string,
    take: (c: Compiled<T>, params: Record<string, string>) => boolean,
  ): boolean {
    if (depth === cut.raw.length) {
      for (const i of n.end) if (this.tryRoute(i, cut, req, method, take)) return true;
    } else {
      const d = cut.decoded(depth);
      if (n.literal !== null) {
        const next = n.literal.get(d ?? (cut.raw[depth] as string));
        if (next !== undefined && this.walk(next, cut, depth + 1, req, method, take)) return true;
      }
      if (n.param !== null && d !== null && d !== '') {
        if (this.walk(n.param, cut, depth + 1, req, method, take)) return true;
      }
    }
    for (const i of n.rest) if (this.tryRoute(i, cut, req, method, take)) return true;
    return false;
  }

  private tryRoute(
    i: number,
    cut: Cut,
    req: RouteRequest,
    method: string,
    take: (c: Compiled<T>, params: Record<string, string>) => boolean,
  ): boolean {
    const c = this.routes[i] as Compiled<T>;
    if (c.methods !== null && !c.methods.has(method)) return false;
    if (firstFailing(c.m, req) !== null) return false;
    const params: Record<string, string> = {};
    for (const [pos, name] of c.params) setOwn(params, name, cut.decoded(pos) as string);
    if (c.rest !== null) {
      const [pos, name] = c.rest;
      const value = decodeStrict(cut.raw.slice(pos).join('/'));
      if (value === null) return false; // a malformed escape: no match rather than a crash
      if (name !== null) setOwn(params, name, value);
    }
    return take(c, params);
  }

  nearestMiss(req: RouteRequest, ignore?: ReadonlySet<number>): NearMiss | null {
    const cut = cutPath(req.path);
    if (cut === null || this.routes.length === 0) return null;
    if (ignore === undefined || ignore.size === 0 ? this.match(req) !== null : this.matchesOutside(req, cut, ignore)) return null;
    const likeness = new Map<string, number>();
    let best: (Score & { c: Compiled<T> }) | null = null;
    for (const c of this.routes) {
      if (ignore?.has(c.index)) continue;
      const r = scoreRoute(c, cut, req, likeness);
      if (r === null) continue;
      if (best === null || closer(r, c.rank, best, best.c.rank)) best = { ...r, c };
    }
    return best === null ? null : { index: best.c.index, name: best.c.name, failed: best.failed, detail: best.detail() };
  }

  /** Whether a route outside `ignore` matches. */
  private matchesOutside(req: RouteRequest, cut: Cut, ignore: ReadonlySet<number>): boolean {
    const take = (c: Compiled<T>): boolean => !ignore.has(c.index);
    return this.walk(this.root, cut, 0, req, req.method, take) || (req.method === 'HEAD' && this.walk(this.root, cut, 0, req, 'GET', take));
  }
}

/** How close a route came to a request; compared by `closer`. */
interface Score {
  /** The stage reached and how much held within it. */
  score: number;
  /** For a literal path segment that differed: how alike the two are, 0 to 1. */
  likeness: number;
  /** For a path miss: 2 when the route takes the request's method, plus 1 when it has as many segments. */
  fit: number;
  failed: MissPart;
  detail: () => string;
}

/** Whether `a` came closer than `b`: further through the checks, then more alike, a better fit, the more specific. */
function closer(a: Score, aRank: number, b: Score, bRank: number): boolean {
  if (a.score !== b.score) return a.score > b.score;
  if (a.likeness !== b.likeness) return a.likeness > b.likeness;
  if (a.fit !== b.fit) return a.fit > b.fit;
  return aRank < bRank;
}

/** Segments longer than this are not compared letter by letter (they are unlike every literal). */
const MAX_COMPARED = 64;

/** 1 less the edit distance over the longer length: `customer` and `customers` are 0.89 alike. */
function likenessOf(a: string, b: string): number {
  if (a.length > MAX_COMPARED || b.length > MAX_COMPARED) return 0;
  const longest = Math.max(a.length, b.length);
  if (longest === 0) return 1;
  let prev: number[] = [];
  for (let j = 0; j <= b.length; j++) prev.push(j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const swap = (prev[j - 1] as number) + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1);
      cur.push(Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, swap));
    }
    prev = cur;
  }
  return 1 - (prev[b.length] as number) / longest;
}

function cutPath(path: string): Cut | null {
  const raw = splitPath(path);
  if (raw === null) return null;
  return new Cut(raw);
}

/** The first of query, headers, body that fails, with how many conditions held before it. */
function firstFailing(m: NormalMatcher, req: RouteRequest): { part: MissPart; held: number; detail: () => string } | null {
  let held = 0;
  for (const [name, want] of m.query) {
    const have = getOwn(req.query, name);
    if (failsCondition(have, want)) return { part: 'query', held, detail: () => `query "${name}" is ${show(have)}, the route wants ${want === true ? 'it present' : show(want)}` };
    held++;
  }
  for (const [name, want] of m.headers) {
    const have = getOwn(req.headers, name);
    if (failsCondition(have, want)) return { part: 'headers', held, detail: () => `header "${name}" is ${show(have)}, the route wants ${want === true ? 'it present' : show(want)}` };
    held++;
  }
  for (const [path, dotted, want] of m.body) {
    const have = bodyAt(req.body, path);
    const ok = want === true ? have !== undefined : bodyEquals(want, have);
    if (!ok) return { part: 'body', held, detail: () => `body "${dotted}" is ${show(have)}, the route wants ${want === true ? 'it present' : show(want)}` };
    held++;
  }
  return null;
}

// Stages of a near miss, from farthest to closest: a route that got further scores higher.
const STAGE: Record<MissPart, number> = { path: 0, method: 1, query: 2, headers: 2, body: 2 };
const STAGE_WIDTH = 1_000_000;

/**
 * How close a route came. The path is checked first, then the method, then query,
 * headers and body; a route scores by the stage it reached and, within it, by how much
 * held (leading path segments, or conditions). Among routes whose path failed at the same
 * segment, a literal more like the request's segment is closer (`customer` for `customers`),
 * then a route taking the request's method and as many segments. Null for a route that
 * shares nothing with the request (not even its first segment).
 */
// Details are closures: only the closest route's is ever written out. `likeness` caches the
// likeness of a request segment (by position) and a literal, shared by the routes of one call.
function scoreRoute<T>(c: Compiled<T>, cut: Cut, req: RouteRequest, likeness: Map<string, number>): Score | null {
  const segs = c.m.segments;
  let i = 0;
  // Each problem ends the loop at once, so the closures see the final `i`.
  let pathProblem: (() => string) | null = null;
  let alike = 0;
  for (; i < segs.length; i++) {
    const s = segs[i] as Segment;
    if (s.kind === 'rest') {
      if (decodeStrict(cut.raw.slice(i).join('/')) === null) pathProblem = () => `the rest of the path from segment ${i + 1} has a malformed percent escape`;
      break;
    }
    if (i >= cut.raw.length) {
      pathProblem = () => `the path ends after ${cut.raw.length} segment${cut.raw.length === 1 ? '' : 's'}, the pattern ${clip(c.m.matcher.path)} has ${segs.length}`;
      break;
    }
    const d = cut.decoded(i);
    const raw = cut.raw[i] as string;
    if (s.kind === 'literal') {
      if ((d ?? raw) !== s.value) {
        const key = `${i}/${s.value}`;
        let l = likeness.get(key);
        if (l === undefined) likeness.set(key, (l = likenessOf(d ?? raw, s.value)));
        alike = l;
        pathProblem = () => `segment ${i + 1} is "${clip(d ?? raw)}", the pattern wants "${clip(s.value)}"`;
        break;
      }
    } else if (d === null) {
      pathProblem = () => `segment ${i + 1} (:${s.name}) has a malformed percent escape`;
      break;
    } else if (d === '') {
      pathProblem = () => `segment ${i + 1} (:${s.name}) is empty`;
      break;
    }
  }
  if (pathProblem === null && i === segs.length && cut.raw.length > segs.length) {
    pathProblem = () => `the path has ${cut.raw.length} segments, the pattern ${clip(c.m.matcher.path)} has ${segs.length}`;
  }
  const method = req.method;
  const takesMethod = c.methods === null || c.methods.has(method) || (method === 'HEAD' && c.methods.has('GET'));
  if (pathProblem !== null) {
    if (i === 0) return null;
    const sameLength = c.rest !== null ? cut.raw.length >= segs.length - 1 : cut.raw.length === segs.length;
    return { score: STAGE.path * STAGE_WIDTH + i, likeness: alike, fit: (takesMethod ? 2 : 0) + (sameLength ? 1 : 0), failed: 'path', detail: pathProblem };
  }
  if (!takesMethod) {
    const want = c.m.methods ?? [];
    return { score: STAGE.method * STAGE_WIDTH, likeness: 0, fit: 0, failed: 'method', detail: () => `method is ${clip(method, 32)}, the route wants ${want.length === 1 ? want[0] : `one of ${want.join(', ')}`}` };
  }
  const f = firstFailing(c.m, req);
  if (f === null) return null; // it matches (cannot happen: nearestMiss runs only when nothing matches)
  return { score: STAGE[f.part] * STAGE_WIDTH + 1 + f.held, likeness: 0, fit: 0, failed: f.part, detail: f.detail };
}
