/**
 * The console's HTTP client: the host's admin endpoints (`/-/worlds`, `/-/vendors`) with the
 * admin token, and one world's own endpoints (`/-/<org>/<world>/…`) with that world's token.
 * Every failure becomes an ApiError (pages/ui) carrying the host's `{ error: { code, message } }`,
 * so the page can show it instead of losing it.
 */
import { ApiError, call as callHost } from '../../pages/ui/index.js';
import type { Clock, TimelinePage, WorldMap } from '../../pages/ui/index.js';

export { ApiError };
export type { Clock, TimelineItem, TimelinePage, WorldMap } from '../../pages/ui/index.js';

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

/** One call with a token; the cookie of any page session is left out (the console speaks with tokens only). */
async function call<T>(url: string, token: string, method = 'GET', body?: unknown, onRefused?: () => void): Promise<T> {
  try {
    return await callHost<T>(url, { method, body, headers: { 'x-kit-token': token }, credentials: 'omit' });
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) onRefused?.();
    throw e;
  }
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
