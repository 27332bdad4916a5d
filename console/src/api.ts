/**
 * The console's HTTP client: the host's admin endpoints (`/-/worlds`, `/-/vendors`) with the
 * admin token, and one world's own endpoints (`/-/<org>/<world>/…`) with that world's token.
 * Every failure becomes an ApiError carrying the host's `{ error: { code, message } }`, so the
 * page can show it instead of losing it.
 */

/** A world as `GET /-/worlds` lists it (the host's world list row). */
export interface WorldRow {
  org: string;
  world: string;
  name: string;
  /** The world this one is a branch of, or null. */
  base: string | null;
  owner: string | null;
  token: string;
  readToken: string;
  twins: { vendor: string; protocol: string; root: unknown }[];
  createdAt: string;
  expiresAt: string | null;
  budget: string;
  open: boolean;
}

export interface Tokens {
  name: string;
  token: string;
  readToken: string;
}

export interface Clock {
  at: string;
  frozen: boolean;
}

export interface WorldMap {
  twins: { twin: string; position: number; mirror: string | null; root: unknown; resources: { type: string; count: number }[] }[];
}

export type EntryCause =
  | { kind: 'request'; method: string; route: string; path: string; status: number; requestId: string }
  | { kind: 'move'; move: string; dueAt: string }
  | { kind: 'ingest'; source: string }
  | { kind: 'refresh' }
  | { kind: 'system'; reason: string };

export interface TimelineItem {
  twin: string;
  position: number;
  entry: {
    position: number;
    occurredAt: string;
    cause: EntryCause;
    writes: { type: string; id: string; value: unknown }[];
    events?: { type: string; data: unknown }[];
  };
}

export interface TimelinePage {
  entries: TimelineItem[];
  next: string | null;
}

/** What the host answered when it refused, or what kept the request from reaching it. */
export class ApiError extends Error {
  constructor(
    /** The HTTP status; 0 when no answer came (network error). */
    readonly status: number,
    /** The host's error code, e.g. `unauthenticated`, `world_has_branches`. */
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

/** The host's base URL: the page's address up to `/-/console`. */
export function hostBase(location: Location): string {
  const at = location.pathname.indexOf('/-/console');
  const prefix = at === -1 ? '' : location.pathname.slice(0, at);
  return `${location.origin}${prefix}`;
}

/** A world's name as a URL path: each segment encoded, though the host only makes names of `[a-z0-9-]`. */
function namePath(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}

async function call<T>(url: string, token: string, method = 'GET', body?: unknown, onRefused?: () => void): Promise<T> {
  const headers: Record<string, string> = { 'x-kit-token': token, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' });
  } catch (e) {
    throw new ApiError(0, 'network', `${method} ${url} did not reach the host: ${String(e)}`);
  }
  const text = await res.text();
  if (res.status === 401) onRefused?.();
  if (res.ok) return (text === '' ? undefined : JSON.parse(text)) as T;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError(res.status, `http_${res.status}`, `${method} ${new URL(url).pathname} answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
  }
  const error = (parsed as { error?: { code?: unknown; message?: unknown; param?: unknown } } | null)?.error;
  const code = typeof error?.code === 'string' ? error.code : `http_${res.status}`;
  const message = typeof error?.message === 'string' ? error.message : `${method} ${new URL(url).pathname} answered ${res.status}`;
  throw new ApiError(res.status, code, message, typeof error?.param === 'string' ? error.param : undefined);
}

/** The admin endpoints, all with the admin token. */
export class AdminApi {
  constructor(
    readonly base: string,
    private readonly token: string,
    /** Called when the host refuses the token (401), before the call's ApiError is thrown. */
    private readonly onRefused?: () => void,
  ) {}

  private call<T>(path: string, method = 'GET', body?: unknown): Promise<T> {
    return call<T>(`${this.base}${path}`, this.token, method, body, this.onRefused);
  }

  async worlds(): Promise<WorldRow[]> {
    return (await this.call<{ worlds: WorldRow[] }>('/-/worlds')).worlds;
  }

  async vendors(): Promise<string[]> {
    return (await this.call<{ vendors: string[] }>('/-/vendors')).vendors;
  }

  create(input: { org: string; world: string; vendors: string[]; owner?: string }): Promise<WorldRow> {
    return this.call<WorldRow>('/-/worlds', 'POST', input);
  }

  rotate(name: string): Promise<Tokens> {
    return this.call<Tokens>(`/-/worlds/${namePath(name)}/rotate`, 'POST');
  }

  remove(name: string): Promise<void> {
    return this.call<void>(`/-/worlds/${namePath(name)}`, 'DELETE');
  }
}

/** One world's own endpoints, with the world's token from its row. */
export class WorldApi {
  readonly url: string;
  readonly api: string;

  constructor(base: string, name: string, private readonly token: string) {
    this.url = `${base}/${namePath(name)}`;
    this.api = `${base}/-/${namePath(name)}`;
  }

  clock(): Promise<Clock> {
    return call<Clock>(`${this.api}/clock`, this.token);
  }

  setClock(at: string): Promise<Clock> {
    return call<Clock>(`${this.api}/clock`, this.token, 'PUT', { at });
  }

  advanceClock(by: string): Promise<Clock> {
    return call<Clock>(`${this.api}/clock/advance`, this.token, 'POST', { by });
  }

  map(): Promise<WorldMap> {
    return call<WorldMap>(`${this.api}/map`, this.token);
  }

  timeline(before?: string): Promise<TimelinePage> {
    const query = new URLSearchParams({ limit: '50' });
    if (before !== undefined) query.set('before', before);
    return call<TimelinePage>(`${this.api}/timeline?${query}`, this.token);
  }
}
