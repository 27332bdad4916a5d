/**
 * How a page reads and writes a world: same-origin `fetch` carrying the browser's session
 * cookie (never a token: the page holds none). Every refusal becomes an `ApiError` with the
 * host's or the twin's code, so the page can show it.
 */
import type { PageConfig } from './config.js';

/** What the host (or a twin) answered when it refused, or what kept the request from reaching it. */
export class ApiError extends Error {
  constructor(
    /** The HTTP status; 0 when no answer came (network error). */
    readonly status: number,
    /** The host's or the twin's error code, e.g. `unauthenticated`, `resource_missing`. */
    readonly code: string,
    message: string,
    readonly param?: string,
    /** Every other field of the error body (a scenario's `field`, `problem`, `handler`; a 409's `origin`). */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export interface CallOptions {
  method?: string;
  /** An object is sent as JSON; a string or `URLSearchParams` as they are. */
  body?: unknown;
  headers?: Record<string, string>;
  /** `same-origin` (the session cookie) unless said; the console sends its token and `omit`s cookies. */
  credentials?: RequestCredentials;
  /** Answer the body as text whatever its type (a document to edit as it was stored). */
  text?: boolean;
}

/** The error in any of the shapes a twin or the host answers: `{ error: { code|type, message } }`, `{ message }`. */
function errorOf(status: number, text: string, what: string): ApiError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new ApiError(status, `http_${status}`, `${what} answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`);
  }
  const p = parsed as { error?: Record<string, unknown>; message?: unknown } | null;
  const e = typeof p?.error === 'object' && p.error !== null ? p.error : undefined;
  const code = typeof e?.['code'] === 'string' ? e['code'] : typeof e?.['type'] === 'string' ? e['type'] : `http_${status}`;
  const message = typeof e?.['message'] === 'string' ? e['message'] : typeof p?.message === 'string' ? p.message : `${what} answered ${status}`;
  // The rest of the body (top level and inside `error`), so a page can read `origin`, `field`, `handler`.
  const { error: _error, message: _message, ...top } = (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {}) as Record<string, unknown>;
  const { code: _code, type: _type, message: _m, param, ...inner } = e ?? {};
  return new ApiError(status, code, message, typeof param === 'string' ? param : undefined, { ...top, ...inner });
}

/** One call on this origin with the session; JSON in and out (text when the answer is not JSON). */
export async function call<T>(url: string, options: CallOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: BodyInit | undefined;
  if (options.body instanceof URLSearchParams) {
    body = options.body;
  } else if (typeof options.body === 'string') {
    body = options.body;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body, credentials: options.credentials ?? 'same-origin' });
  } catch (e) {
    throw new ApiError(0, 'network', `${method} ${url} did not reach the host: ${String(e)}`);
  }
  const text = await res.text();
  if (!res.ok) throw errorOf(res.status, text, `${method} ${url.split('?')[0]}`);
  if (text === '') return undefined as T;
  return (options.text !== true && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text) as T;
}

/** Paths of one world, from the page's config. */
export class World {
  constructor(readonly config: PageConfig) {}

  /** `{world_api}<path>`. */
  api<T>(path: string, options?: CallOptions): Promise<T> {
    return call<T>(`${this.config.worldApi}${path}`, options);
  }

  /** `{world_url}/<vendor><path>`: the twin's vendor API. */
  vendor<T>(vendor: string, path: string, options?: CallOptions): Promise<T> {
    return call<T>(`${this.config.worldUrl}/${vendor}${path}`, options);
  }

  /** `{world_url}/<vendor>/twin/store/<name>`: a twin's named projection. */
  store<T>(vendor: string, name: string, query = ''): Promise<T> {
    return call<T>(`${this.config.worldUrl}/${vendor}/twin/store/${encodeURIComponent(name)}${query === '' ? '' : `?${query}`}`);
  }
}
