/**
 * `twinkit/twin/testing` for a twin's own tests: `world()`, the world `kit twin test` serves
 * the twin in, as its environment names it (`KIT_WORLD`, `KIT_WORLD_TOKEN`, `KIT_WORLD_API`,
 * `KIT_WORLD_READ_TOKEN`, `KIT_TWIN`). Plain `fetch`, nothing else: it runs in the test's own
 * Node process, bundled into the test by `kit twin test`, and any client the author prefers
 * (the vendor's SDK, `fetch`, curl) reaches the same world at `twinUrl` with `token`.
 */

/** One entry of a twin's log (`GET {world_api}/log/<twin>`), as the world answers it. */
export interface TestLogEntry {
  position: number;
  occurredAt: string;
  cause: Record<string, unknown>;
  writes: { type: string; id: string; value: unknown }[];
  events: { type: string; data: unknown }[];
  [field: string]: unknown;
}

/** The twin's manifest (`GET {world_url}/<vendor>/twin`). */
export interface TestManifest {
  vendor: string;
  version: string;
  protocol: string;
  models: { hosts: string[]; resources: string[]; endpointEnv?: string[] };
  /** The route table: each route's name and its matcher's fields (`method`, `path`, …). */
  matchers: { name: string; method?: string | string[]; path: string; [field: string]: unknown }[];
  stores: string[];
  moves: string[];
  [field: string]: unknown;
}

export interface TwinTestWorld {
  /** `{world_url}`: each twin answers at `{world_url}/<vendor>/…`. */
  readonly url: string;
  /** `{world_api}`: the world's own endpoints (clock, log, scenario, …). */
  readonly api: string;
  /** The world's token: send it as the vendor's API key (`Authorization: Bearer …`) or in `x-kit-token`. */
  readonly token: string;
  /** The read token: GET and HEAD only. */
  readonly readToken: string;
  /** The twin under test. */
  readonly vendor: string;
  /** `{world_url}/<vendor>`: where a client of the vendor's API points (its base URL). */
  readonly twinUrl: string;
  /** The world clock's instant (ISO 8601). `kit twin test` sets it before the tests run, so it stands still until moved. */
  now(): Promise<string>;
  /** Sets the clock (never backward); answers the new instant. */
  setClock(at: string): Promise<string>;
  /** Moves the clock forward by `<N><s|m|h|d>` (`'90s'`, `'2d'`); timed moves fall due on the twin's next request. */
  advance(by: string): Promise<string>;
  /** A store of the twin (`GET {twinUrl}/twin/store/<name>`). */
  store<T = unknown>(name: string, query?: Record<string, string>): Promise<T>;
  /** The twin's manifest, as the world serves it. */
  manifest(): Promise<TestManifest>;
  /** The twin's log entries after position `after` (default 0: all of them), oldest first, read page by page. */
  log(after?: number): Promise<TestLogEntry[]>;
}

/** A world API or store call that did not answer 2xx. */
export class WorldCallError extends Error {
  override readonly name = 'WorldCallError';
  constructor(
    readonly status: number,
    readonly body: unknown,
    message: string,
  ) {
    super(message);
  }
}

function required(env: Record<string, string | undefined>, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') {
    throw new Error(`twinkit/twin/testing: ${name} is not set. Run the twin's tests with \`kit twin test\`, which serves the twin in a world and sets it.`);
  }
  return value;
}

async function call<T>(token: string, method: string, url: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { 'x-kit-token': token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: kept as text in the error below.
  }
  if (!res.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new WorldCallError(res.status, parsed, `${method} ${url} answered ${res.status}${error?.code !== undefined ? ` ${error.code}` : ''}: ${error?.message ?? text.slice(0, 300)}`);
  }
  return parsed as T;
}

/**
 * The world `kit twin test` serves the twin in. One world for the whole run: the test files run
 * one after another in it, so a test makes what it reads (and finds it by id), rather than
 * counting on an empty world.
 */
export function world(env: Record<string, string | undefined> = process.env): TwinTestWorld {
  const url = required(env, 'KIT_WORLD').replace(/\/+$/, '');
  const api = required(env, 'KIT_WORLD_API').replace(/\/+$/, '');
  const token = required(env, 'KIT_WORLD_TOKEN');
  const readToken = env['KIT_WORLD_READ_TOKEN'] ?? token;
  const vendor = required(env, 'KIT_TWIN');
  const twinUrl = `${url}/${vendor}`;
  return {
    url,
    api,
    token,
    readToken,
    vendor,
    twinUrl,
    now: async () => (await call<{ at: string }>(token, 'GET', `${api}/clock`)).at,
    setClock: async (at) => (await call<{ at: string }>(token, 'PUT', `${api}/clock`, { at })).at,
    advance: async (by) => (await call<{ at: string }>(token, 'POST', `${api}/clock/advance`, { by })).at,
    store: (name, query = {}) => {
      const q = new URLSearchParams(query).toString();
      return call(token, 'GET', `${twinUrl}/twin/store/${encodeURIComponent(name)}${q === '' ? '' : `?${q}`}`);
    },
    manifest: () => call<TestManifest>(token, 'GET', `${twinUrl}/twin`),
    log: async (after = 0) => {
      const entries: TestLogEntry[] = [];
      for (let from: number | null = after; from !== null; ) {
        const page: { entries: TestLogEntry[]; next: number | null } = await call(token, 'GET', `${api}/log/${encodeURIComponent(vendor)}?after=${from}&limit=1000`);
        entries.push(...page.entries);
        from = page.entries.length === 0 ? null : page.next;
      }
      return entries;
    },
  };
}
