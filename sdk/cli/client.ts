/**
 * The HTTP client of `kit world …` and `kit host …`: Node's fetch, the token in
 * `x-kit-token`, and every failure turned into a `CliError` with a stable code (the world's
 * own code for an error it answered), which the CLI prints on one line and exits 1.
 */

/** A failure the CLI reports as `kit: <message> (<code>)`. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    /**
     * The world's or the host's error code when it answered one (`clock_backward`,
     * `invalid_scenario`, …); else one of the CLI's own: `unreachable`, `timeout`,
     * `no_world`, `no_host`, `bad_answer`, `http_<status>`, `token_file_corrupt`,
     * `unreadable_file`.
     */
    readonly code: string,
    message: string,
    /** What else the server's error said beside its code and message (a failed refresh's report), and its `Retry-After` in seconds. */
    readonly extra: { details?: Record<string, unknown>; retryAfterS?: number } = {},
  ) {
    super(message);
  }
}

/** Where requests go: `{world_api}` or the host's base URL, and the token that opens it. */
export interface Endpoint {
  /** No trailing slash. */
  base: string;
  token: string;
}

export interface RequestOptions {
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | undefined>;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is, with `contentType`. */
  body?: Uint8Array | string;
  contentType?: string;
  /** Default 60 s: a world that accepts the connection and never answers is reported, not waited on for ever. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/** Why a connection failed, in words, from the error code Node gives. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'the connection was reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name did not resolve',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_SOCKET: 'the connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
};

/** The deepest `code` on an error's cause chain (fetch wraps the socket's error once or twice). */
function causeCode(e: unknown): string | undefined {
  let code: string | undefined;
  for (let cause = e, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const c = (cause as NodeJS.ErrnoException).code;
    if (typeof c === 'string') code = c;
  }
  return code;
}

/** A URL as it goes in a message: without its query (which may be long) and any user:password. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return url;
  }
}

/** The answer's error as `{ error: { code, message } }` says it, or a description of the status. */
async function errorOf(response: Response, method: string, url: string): Promise<CliError> {
  let text = '';
  try {
    text = await response.text();
  } catch {
    // The body is lost: the status still says what happened.
  }
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } & Record<string, unknown> };
    const error = body.error;
    if (typeof error === 'object' && error !== null && typeof error.code === 'string') {
      const message = typeof error.message === 'string' && error.message !== '' ? error.message : `${method} ${shown(url)} answered ${response.status}`;
      const details = Object.fromEntries(Object.entries(error).filter(([field]) => field !== 'code' && field !== 'message'));
      const retryAfter = response.headers.get('retry-after');
      return new CliError(error.code, message, { details, ...(retryAfter !== null && /^\d{1,9}$/.test(retryAfter) ? { retryAfterS: Number(retryAfter) } : {}) });
    }
  } catch {
    // Not JSON: not a kit answer (a proxy's page, another server on that port).
  }
  return new CliError(`http_${response.status}`, `${method} ${shown(url)} answered ${response.status} ${response.statusText}`.trimEnd());
}

/**
 * Sends one request and answers the response when its status is 2xx; throws `CliError` for an
 * error answer (the world's code and message), an unreachable server (naming the URL) or a timeout.
 */
export async function request(endpoint: Endpoint, method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  let url = `${endpoint.base}${path}`;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) params.set(name, String(value));
  const search = params.toString();
  if (search !== '') url += `?${search}`;
  const headers: Record<string, string> = { 'x-kit-token': endpoint.token, accept: 'application/json' };
  let body: Uint8Array<ArrayBuffer> | string | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = 'application/json';
  } else if (options.body !== undefined) {
    // A copy over an ArrayBuffer of its own: fetch takes no view of a shared one.
    body = typeof options.body === 'string' ? options.body : new Uint8Array(options.body);
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let response: Response;
  try {
    response = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
      throw new CliError('timeout', `${shown(url)} did not answer within ${Math.round(timeoutMs / 1000)} s`);
    }
    const code = causeCode(e);
    const reason = (code !== undefined ? NETWORK_REASONS[code] : undefined) ?? (code ?? (e instanceof Error ? e.message : String(e)));
    throw new CliError('unreachable', `cannot reach ${shown(url)}: ${reason}`);
  }
  if (response.status >= 200 && response.status < 300) return response;
  throw await errorOf(response, method, url);
}

/** `request` and its body as JSON (`bad_answer` when it is not: no kit world at that URL), with the text kept for `--json` (printed as answered). */
export async function requestJson<T>(endpoint: Endpoint, method: string, path: string, options?: RequestOptions): Promise<{ value: T; text: string }> {
  const response = await request(endpoint, method, path, options);
  const text = await response.text();
  try {
    return { value: JSON.parse(text) as T, text };
  } catch {
    throw new CliError('bad_answer', `${shown(response.url)} answered ${response.status} with a body that is not JSON; is it a kit world or host?`);
  }
}

/** A path segment of a name given on the command line (a twin, a check), escaped. */
export function segment(name: string): string {
  return encodeURIComponent(name);
}
