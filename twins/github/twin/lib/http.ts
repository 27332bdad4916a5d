/**
 * The request frame every GitHub route runs in: who is calling (the world token acts as the
 * site admin; other tokens are the twin's own users'), the read-scope gate, a thrown GhError
 * answered in GitHub's error shape (../errors.ts), rate-limit headers on every answer, ETag /
 * If-None-Match, and page slicing with a `Link` header; and the readers of request input.
 */
import type { Handler, ReadTree, TwinContext, TwinRequest, TwinResponse } from '../../../../sdk/twin/index.js';
import { GhError, forbidden, malformedRecord, requiresAuth, validation, type FieldError } from '../errors.js';
import { fingerprint } from './hash.js';
import { authenticate, type Caller } from './users.js';

export type Obj = Record<string, unknown>;

/**
 * GitHub's caps on free text, in characters (code points, as Ruby counts them): issue and pull
 * request bodies and comments 65,536, titles 256, release bodies 125,000 and names 256 (GitHub's
 * own 422 messages), repository descriptions 350, label descriptions 100. Sources in the README.
 */
export const TEXT_LIMITS = { body: 65_536, title: 256, releaseBody: 125_000, releaseName: 256, repoDescription: 350, labelDescription: 100 } as const;

/** Whether `text` has more than `max` characters (code points: an emoji is one, as GitHub counts). */
export function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  if (text.length > 2 * max) return true;
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one character.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    if (++n > max) return true;
  }
  return false;
}

/**
 * Refuses text over a cap with GitHub's answer: 422 `{ resource, code: 'custom', field, message:
 * '<field> is too long (maximum is <max> characters)' }`. `error` overrides parts of the entry
 * where GitHub words it otherwise (issue comments). Every capped field goes through here, so
 * nothing the twin stores and repeats in lists (an issue in every page, a label on every issue)
 * can grow to the 4 MiB a request may carry.
 */
export function maxLength(text: string | null | undefined, max: number, resource: string, field: string, error: Partial<FieldError> = {}): void {
  if (text === null || text === undefined || !longerThan(text, max)) return;
  throw validation([{ resource, code: 'custom', field, message: `${field} is too long (maximum is ${max} characters)`, ...error }]);
}

export interface Call {
  req: TwinRequest;
  ctx: TwinContext;
  caller: Caller | null;
  /** Response headers to add (Link, Location, …). */
  headers: Record<string, string>;
}

export type GhHandler = (call: Call) => { status?: number; body?: unknown } | undefined;

const RATE_LIMIT = 5000;

/** GitHub's rate-limit headers. Limits are not enforced: the counters would turn every read into a write. */
function rateHeaders(ctx: TwinContext, caller: Caller | null): Record<string, string> {
  const reset = Math.floor(ctx.nowMs() / 3_600_000 + 1) * 3600;
  const limit = caller === null ? 60 : RATE_LIMIT;
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(limit),
    'x-ratelimit-reset': String(reset),
    'x-ratelimit-used': '0',
    'x-ratelimit-resource': 'core',
  };
}

function baseHeaders(req: TwinRequest, ctx: TwinContext, caller: Caller | null): Record<string, string> {
  const h: Record<string, string> = {
    ...rateHeaders(ctx, caller),
    'x-github-media-type': 'github.v3; format=json',
    'x-github-api-version-selected': '2022-11-28',
    'x-github-request-id': req.requestId,
  };
  if (caller !== null && caller.kind === 'token') h['x-oauth-scopes'] = caller.scopes.join(', ');
  return h;
}

/** A refusal: answered in GitHub's shape, keeping nothing the handler wrote before it. */
function errorAnswer(e: GhError, headers: Record<string, string>): TwinResponse {
  return { status: e.status, headers: { ...headers, ...e.headers }, body: e.body(), discardWrites: true };
}

/** Wraps a GitHub handler: a GhError it throws is answered, and whatever it wrote first is not kept. */
export function route(fn: GhHandler, options: { auth?: 'optional' | 'required' } = {}): Handler {
  return (req, ctx) => {
    let caller: Caller | null = null;
    let headers: Record<string, string> = baseHeaders(req, ctx, null);
    try {
      caller = authenticate(req, ctx);
      headers = baseHeaders(req, ctx, caller);
      const write = req.method !== 'GET' && req.method !== 'HEAD';
      if (write && caller === null && options.auth !== 'optional') throw requiresAuth();
      if (options.auth === 'required' && caller === null) throw requiresAuth();
      if (write && req.readOnly) throw forbidden('Resource not accessible by integration: this credential is read-only');
      const call: Call = { req, ctx, caller, headers: {} };
      const out = fn(call) ?? {};
      const status = out.status ?? 200;
      const all = { ...headers, ...call.headers };
      if (out.body === undefined) return { status, headers: all };
      if (req.method === 'GET' && status === 200) {
        const text = JSON.stringify(out.body);
        // Hashing is a loop over every character, about 0.1 µs each in QuickJS: a 7 MB tree
        // listing's ETag took 0.9 s of the sandbox's 2.5 s. Past ETAG_MAX_CHARS no ETag is sent,
        // so such an answer is always sent whole (never a stale 304).
        if (text.length > ETAG_MAX_CHARS) return { status, headers: { ...all, 'content-type': 'application/json; charset=utf-8' }, body: text };
        const etag = `W/"${fingerprint(text)}"`;
        all['etag'] = etag;
        const inm = req.headers['if-none-match'];
        if (inm !== undefined && inm.split(',').some((t) => t.trim() === etag || t.trim() === etag.slice(2) || t.trim() === '*')) {
          return { status: 304, headers: all };
        }
        return { status, headers: { ...all, 'content-type': 'application/json; charset=utf-8' }, body: text };
      }
      return { status, headers: { ...all, 'content-type': 'application/json; charset=utf-8' }, body: out.body };
    } catch (e) {
      if (e instanceof GhError) return errorAnswer(e, headers);
      throw e;
    }
  };
}

/** The largest answer given an ETag (and answered 304 to a matching If-None-Match). */
export const ETAG_MAX_CHARS = 1024 * 1024;

// ------------------------------------------------------------------ input

/**
 * The request's JSON body as an object. GitHub reads every body as JSON whatever its content
 * type says: `curl -d '{"name":"x"}'` sends a form's, and GitHub takes it.
 */
export function bodyObject(req: TwinRequest): Obj {
  let b = req.body;
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (!type.includes('json') && req.bodyText !== undefined && req.bodyText.trim() !== '') {
    try {
      b = JSON.parse(req.bodyText) as unknown;
    } catch {
      throw new GhError(400, 'Problems parsing JSON');
    }
  }
  if (b === undefined || b === null || b === '') return {};
  if (typeof b !== 'object' || Array.isArray(b)) throw new GhError(400, 'Problems parsing JSON');
  return b as Obj;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * A time filter of a list (`since`, `until`) as epoch ms, or undefined when absent. GitHub
 * answers one it cannot read with 422 and says the format, instead of listing nothing.
 */
export function instantParam(query: TwinRequest['query'], name: string): number | undefined {
  const raw = str(query, name);
  if (raw === undefined || raw === '') return undefined;
  // A time without a zone is UTC, as GitHub reads it (JavaScript would read it as local time).
  const text = raw.replace(' ', 'T');
  const ms = ISO_8601.test(raw) ? Date.parse(text.includes('T') && !/(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) ? `${text}Z` : text) : NaN;
  if (Number.isNaN(ms)) throw new GhError(422, `The ${name} parameter needs to be in ISO 8601 format: YYYY-MM-DDTHH:MM:SSZ`);
  return ms;
}

export function str(query: TwinRequest['query'], name: string): string | undefined {
  const v = query[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
}

/** A required string body field (422 missing_field otherwise). */
export function reqString(body: Obj, field: string, resource: string): string {
  const v = body[field];
  if (v === undefined || v === null) throw validation([{ resource, field, code: 'missing_field' }]);
  if (typeof v !== 'string') throw invalidField(resource, field, v);
  return v;
}

export function optString(body: Obj, field: string, resource: string): string | undefined {
  const v = body[field];
  if (v === undefined) return undefined;
  if (v === null) return undefined;
  if (typeof v !== 'string') throw invalidField(resource, field, v);
  return v;
}

export function optBool(body: Obj, field: string, resource: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw invalidField(resource, field, v);
  return v;
}

export function optStringArray(body: Obj, field: string, resource: string): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalidField(resource, field, v);
  return v as string[];
}

export function invalidField(resource: string, field: string, value: unknown): GhError {
  return validation([{ resource, field, code: 'invalid', value }]);
}

// ------------------------------------------------------------------ pages

export interface Page {
  page: number;
  perPage: number;
}

export function pageOf(req: TwinRequest, maxPerPage = 100): Page {
  const pp = str(req.query, 'per_page');
  const p = str(req.query, 'page');
  let perPage = pp === undefined || !/^\d+$/.test(pp) ? 30 : Math.min(maxPerPage, Number(pp));
  if (perPage < 1) perPage = 30;
  const page = p === undefined || !/^\d+$/.test(p) || Number(p) < 1 ? 1 : Math.min(Number(p), 1_000_000);
  return { page, perPage };
}

function encodeQuery(query: TwinRequest['query'], page: number, perPage: number): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(query)) {
    if (k === 'page' || k === 'per_page') continue;
    for (const x of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(x)}`);
  }
  parts.push(`per_page=${perPage}`, `page=${page}`);
  return parts.join('&');
}

/**
 * Slices a full list into the requested page and sets `Link`. The URLs are absolute, as
 * GitHub's are, under the address the client used for the twin (`x-kit-twin-url`, which the
 * host sets); without it (a request made in-process) they are relative to the twin's root.
 */
export function paginate<T>(call: Call, items: T[]): T[] {
  const { page, perPage } = pageOf(call.req);
  pageLinks(call, items.length);
  return items.slice((page - 1) * perPage, page * perPage);
}

/**
 * Sets `Link` (prev, next, last, first) for the request's page of a list of `total` items,
 * `perPage` to a page (the request's by default). With `exact: false`, the list was not read to
 * its end and `total` is only as many as were counted: `next` always (the next page may find
 * none), no `last`, as GitHub leaves it out of lists too long to count.
 */
export function pageLinks(call: Call, total: number, perPage = pageOf(call.req).perPage, exact = true): void {
  const { page } = pageOf(call.req);
  const last = Math.max(1, Math.ceil(total / perPage));
  const links: string[] = [];
  const base = call.req.headers['x-kit-twin-url'] ?? '';
  const url = (n: number): string => `<${base}${call.req.path}?${encodeQuery(call.req.query, n, perPage)}>`;
  if (page > 1) links.push(`${url(exact ? Math.min(page - 1, last) : page - 1)}; rel="prev"`);
  if (page < last || !exact) links.push(`${url(page + 1)}; rel="next"`);
  if (page < last && exact) links.push(`${url(last)}; rel="last"`);
  if (page > 1) links.push(`${url(1)}; rel="first"`);
  if (links.length > 0) call.headers['link'] = links.join(', ');
}

/**
 * Sets `Link` for a list paged by cursor (GitHub's webhook deliveries): `next` and `prev` carry
 * the cursor of that page, with the request's other parameters kept.
 */
export function cursorLinks(call: Call, perPage: number, cursors: { next?: string; prev?: string }): void {
  const base = call.req.headers['x-kit-twin-url'] ?? '';
  const url = (cursor: string): string => {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(call.req.query)) {
      if (k === 'cursor' || k === 'per_page' || k === 'page') continue;
      for (const x of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(x)}`);
    }
    parts.push(`per_page=${perPage}`, `cursor=${encodeURIComponent(cursor)}`);
    return `<${base}${call.req.path}?${parts.join('&')}>`;
  };
  const links: string[] = [];
  if (cursors.next !== undefined) links.push(`${url(cursors.next)}; rel="next"`);
  if (cursors.prev !== undefined) links.push(`${url(cursors.prev)}; rel="prev"`);
  if (links.length > 0) call.headers['link'] = links.join(', ');
}

export function sortBy<T>(items: T[], key: (x: T) => string | number, direction: 'asc' | 'desc'): T[] {
  const sign = direction === 'asc' ? 1 : -1;
  return items.slice().sort((a, b) => {
    const x = key(a), y = key(b);
    return x < y ? -sign : x > y ? sign : 0;
  });
}

/** GitHub's timestamps: ISO 8601 in whole seconds. */
export function isoNow(ctx: TwinContext): string {
  return ctx.now().replace(/\.\d{3}Z$/, 'Z');
}

/** The next number of a counter record (1 when there is none); ids are made from it, so a malformed one is refused. */
export function counterNext(tree: ReadTree, name: string): number {
  const c = tree.get<{ next?: unknown }>('counter', name);
  if (c === undefined) return 1;
  const next = typeof c === 'object' && c !== null ? c.next : undefined;
  if (typeof next !== 'number' || !Number.isSafeInteger(next) || next < 1) throw malformedRecord('counter', name, 'next must be a whole number from 1');
  return next;
}

/** A counter record: the next number of a sequence. */
export function nextNumber(ctx: TwinContext, name: string): number {
  const next = counterNext(ctx.tree, name);
  ctx.tree.put('counter', name, { next: next + 1 });
  return next;
}

export function pad(n: number, width = 10): string {
  return String(n).padStart(width, '0');
}
