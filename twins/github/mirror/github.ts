/**
 * Reading the GitHub twin from the page: `GET {world_url}/github/<path>` with the browser's
 * session (same-origin fetch; the host marks the session's requests as the world's own, which
 * the twin treats as the site admin). Unlike pages/ui/api.ts `call`, an answer keeps its `Link`
 * header: GitHub's lists page with it (`per_page`, `page`; `next`, `last`, …).
 */
import { ApiError } from '../../../pages/ui/api.js';

/** The page numbers a list's `Link` header names (null where it names none). */
export interface Pages {
  next: number | null;
  prev: number | null;
  first: number | null;
  last: number | null;
}

export interface Answer<T> {
  data: T;
  pages: Pages;
}

export type Query = Record<string, string | number | null | undefined>;

const NO_PAGES: Pages = { next: null, prev: null, first: null, last: null };

/**
 * `Link: <https://…?page=2>; rel="next", <…?page=5>; rel="last"` (RFC 8288, as GitHub writes it)
 * → `{ next: 2, last: 5 }`. Only the `page` numbers are kept: the URLs are absolute, under
 * whatever address the twin was reached at, and the mirror makes its own paths.
 */
export function parseLinks(header: string | null): Pages {
  if (header === null || header === '') return NO_PAGES;
  const out: Pages = { ...NO_PAGES };
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*((?:;[^;]*)*)$/.exec(part);
    if (m === null) continue;
    const rels = /;\s*rel="?([^";]+)"?/i.exec(m[2] ?? '')?.[1]?.toLowerCase().split(/\s+/) ?? [];
    let page: number;
    try {
      page = Number(new URL(m[1] ?? '', 'http://link.invalid/').searchParams.get('page') ?? 'NaN');
    } catch {
      continue;
    }
    if (!Number.isInteger(page) || page < 1) continue;
    for (const rel of rels) if (rel === 'next' || rel === 'prev' || rel === 'first' || rel === 'last') out[rel] = page;
  }
  return out;
}

/** GitHub's error body (`{ message, errors?, documentation_url, status }`) or the host's (`{ error: { code, message } }`) as an `ApiError`. */
export function errorOf(status: number, text: string, what: string): ApiError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new ApiError(status, `http_${status}`, `${what} answered ${status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`);
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as { message?: unknown; error?: { code?: unknown; message?: unknown } };
  if (typeof b.error === 'object' && b.error !== null) {
    const code = typeof b.error.code === 'string' ? b.error.code : `http_${status}`;
    return new ApiError(status, code, typeof b.error.message === 'string' ? b.error.message : `${what} answered ${status}`);
  }
  // GitHub's own errors carry no code; the status is what a reader looks up.
  return new ApiError(status, `http_${status}`, typeof b.message === 'string' ? `${what}: ${b.message}` : `${what} answered ${status}`);
}

function withQuery(path: string, query: Query): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${s}`;
}

/** The twin's vendor API and stores under `base` (`{worldUrl}/github`). */
export class GitHub {
  constructor(readonly base: string) {}

  /** `GET <base><path>?<query>`: the JSON body and the `Link` pages. */
  async get<T>(path: string, query: Query = {}): Promise<Answer<T>> {
    const url = withQuery(`${this.base}${path}`, query);
    let res: Response;
    try {
      // `no-store`: the same URL is also a page of the mirror (a navigation to it gets the shell);
      // a cached JSON answer would be what the browser shows on the next visit to that address
      // (it revalidates with the twin's ETag, the twin answers 304, and the JSON is the page).
      res = await fetch(url, { headers: { accept: 'application/vnd.github+json' }, credentials: 'same-origin', cache: 'no-store' });
    } catch (e) {
      throw new ApiError(0, 'network', `GET ${path} did not reach the host: ${String(e)}`);
    }
    const text = await res.text();
    if (!res.ok) throw errorOf(res.status, text, `GET ${path}`);
    let data: T;
    try {
      data = JSON.parse(text) as T;
    } catch {
      throw new ApiError(res.status, 'not_json', `GET ${path} answered something that is not JSON`);
    }
    return { data, pages: parseLinks(res.headers.get('link')) };
  }

  /** The body alone. */
  async body<T>(path: string, query: Query = {}): Promise<T> {
    return (await this.get<T>(path, query)).data;
  }

  /** `GET <base>/twin/store/<name>`: one of the twin's projections (twin/stores.ts). */
  store<T>(name: string, query: Query = {}): Promise<T> {
    return this.body<T>(`/twin/store/${encodeURIComponent(name)}`, query);
  }
}

/** A repository's API path: `/repos/<owner>/<repo>`, each part encoded. */
export function repoPath(owner: string, repo: string): string {
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
}

/**
 * A base64 file body (the contents API's, wrapped at 60 columns) as text, or null when it is
 * binary (a NUL in its first 8,000 bytes, as git decides, or not UTF-8).
 */
export function decodeContent(b64: string): { text: string | null; bytes: number } {
  const bin = atob(b64.replace(/\s+/g, ''));
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  if (bytes.subarray(0, 8000).includes(0)) return { text: null, bytes: bytes.length };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), bytes: bytes.length };
  } catch {
    return { text: null, bytes: bytes.length };
  }
}
