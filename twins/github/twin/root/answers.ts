/**
 * Reading what the real GitHub answers a refresh, and the root's URL. Everything here comes from
 * outside the world (the vendor, or whatever the root's URL points at), so every shape is
 * checked and a wrong one fails the refresh with an error that says which answer and which field.
 */
import type { RootAnswer } from '../../../../sdk/twin/types.js';

export type Obj = Record<string, unknown>;

/** The repository a root names, and where its API lives. */
export interface RepoRoot {
  /** The root's URL as the world's `…/twins/github/root` holds it. */
  url: string;
  /** `https://api.github.com` (scheme, host and port). */
  origin: string;
  /** The API's base: the root's URL without `/repos/<owner>/<repo>` (`https://api.github.com`, or a GHES `…/api/v3`). */
  apiBase: string;
  owner: string;
  repo: string;
}

/** GitHub's rules for account and repository names (a login: letters, digits, single hyphens; a repository: also `.` and `_`). */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;

/** A failure of the refresh or ingest: the runner reports its message (`refresh_failed`). */
export function rootError(message: string): Error {
  return new Error(`github root: ${message}`);
}

/**
 * `https://api.github.com/repos/<owner>/<repo>` (or any base ending in `/repos/<owner>/<repo>`:
 * another world's GitHub twin, `http://127.0.0.1:<port>/<org>/<world>/github/repos/o/r`).
 */
export function parseRoot(url: string): RepoRoot {
  const m = /^(https?:\/\/[^/?#\s]+)(\/[^?#\s]*)?$/.exec(url);
  if (m === null) throw rootError(`the root ${JSON.stringify(url.slice(0, 200))} is not an http(s) URL without query or fragment`);
  const origin = m[1] as string;
  const path = (m[2] ?? '').replace(/\/+$/, '');
  const parts = path.split('/');
  const repo = parts[parts.length - 1] ?? '';
  const owner = parts[parts.length - 2] ?? '';
  if (parts.length < 4 || parts[parts.length - 3] !== 'repos' || !OWNER.test(owner) || !REPO.test(repo) || repo === '.' || repo === '..') {
    throw rootError(`the root ${JSON.stringify(url.slice(0, 200))} does not end in /repos/<owner>/<repo>`);
  }
  return { url: origin + path, origin, apiBase: origin + parts.slice(0, -3).join('/'), owner, repo };
}

/** The answer's JSON: the parsed body, or the text parsed when the host did not (a JSON answer without a JSON content type). */
export function jsonOf(answer: RootAnswer, what: string): unknown {
  if (answer.body !== undefined) return answer.body;
  try {
    return JSON.parse(answer.bodyText) as unknown;
  } catch {
    throw rootError(`${what} did not answer JSON (${answer.bodyText.length} characters)`);
  }
}

export function succeeded(answer: RootAnswer): boolean {
  return answer.status >= 200 && answer.status < 300;
}

/** The error for an answer the refresh cannot go on without: GitHub's own message, and the rate limit when that is why. */
export function answerFailed(answer: RootAnswer, what: string): Error {
  let message = '';
  try {
    const body = answer.body ?? JSON.parse(answer.bodyText);
    if (isObj(body) && typeof body['message'] === 'string') message = `: ${body['message'].slice(0, 200)}`;
  } catch {
    // Not JSON: the status says enough.
  }
  if ((answer.status === 403 || answer.status === 429) && answer.headers['x-ratelimit-remaining'] === '0') {
    const reset = Number(answer.headers['x-ratelimit-reset']);
    const when = Number.isFinite(reset) ? ` until ${new Date(reset * 1000).toISOString()}` : '';
    return rootError(`${what} answered ${answer.status}: the credential's rate limit is spent${when}`);
  }
  return rootError(`${what} answered ${answer.status}${message}`);
}

/**
 * The `Link` header's `next` page, checked to be on the root's own origin and under its API
 * (GitHub's may name the repository by id, `/repositories/<id>/issues?page=2`); undefined on the last page.
 */
export function nextPage(answer: RootAnswer, root: RepoRoot, what: string): string | undefined {
  const link = answer.headers['link'];
  if (link === undefined) return undefined;
  for (const part of link.split(',')) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (m === null || !/(?:^|;)\s*rel="?next"?\s*(?:;|$)/.test(m[2] as string)) continue;
    const url = m[1] as string;
    if (!url.startsWith(root.apiBase + '/') || /[\s#]/.test(url)) throw rootError(`${what} links its next page outside the root's API: ${JSON.stringify(url.slice(0, 200))}`);
    return url;
  }
  return undefined;
}

// ------------------------------------------------------------------ shapes

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(v: unknown, what: string): Obj {
  if (!isObj(v)) throw rootError(`${what} is not an object`);
  return v;
}

export function list(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw rootError(`${what} is not a list`);
  return v;
}

export function num(o: Obj, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw rootError(`${what}.${key} is not a whole number`);
  return v;
}

export function text(o: Obj, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw rootError(`${what}.${key} is not a string`);
  return v;
}

/** A string or null; absent is `fallback`. */
export function textOrNull(o: Obj, key: string, what: string, fallback: string | null = null): string | null {
  const v = o[key];
  if (v === undefined || v === null) return v === null ? null : fallback;
  if (typeof v !== 'string') throw rootError(`${what}.${key} is not a string`);
  return v;
}

export function flag(o: Obj, key: string, fallback: boolean): boolean {
  const v = o[key];
  return typeof v === 'boolean' ? v : fallback;
}

/**
 * An instant as the twin stores them (ISO 8601, whole seconds, `Z`). GitHub writes most as
 * `2011-01-26T19:01:12Z`; a push webhook's repository has unix seconds, and its commits a zone
 * (`2015-05-05T19:40:15-04:00`).
 */
export function instant(o: Obj, key: string, what: string): string {
  const v = o[key];
  const ms = typeof v === 'number' ? v * 1000 : typeof v === 'string' ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw rootError(`${what}.${key} is not an instant`);
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function instantOrNull(o: Obj, key: string, what: string): string | null {
  return o[key] === undefined || o[key] === null ? null : instant(o, key, what);
}

export const SHA = /^[0-9a-f]{40}$/;

export function sha(o: Obj, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string' || !SHA.test(v)) throw rootError(`${what}.${key} is not an object id`);
  return v;
}
