/**
 * The GitHub twin behind a real socket, for the unmodified `@octokit/rest` to talk to.
 *
 * `startGithubTwin` serves the built twin as a user's world does: the world runner (engine,
 * QuickJS sandbox, in-memory storage) behind the single-world server (uWS), the world clock
 * set and frozen for determinism. Octokit's `baseUrl` is `{world_url}/github` (what the attach
 * manifest's `GITHUB_API_URL` says). The admin client presents the world token as its GitHub
 * token (`Authorization: token …`), so the twin acts as its site admin; a user's client
 * presents that user's own token and the world token rides in `x-twins-key`, as the attach
 * injector adds it.
 *
 * `GITHUB_TWIN_HARNESS=edge` serves it from the edge variant instead (dist/edge/ in workerd
 * through miniflare; needs `make build`): a world of the GitHub twin made with `POST /-/worlds`
 * adopting TOKENS, Octokit at `{edge}/<org>/<world>/github`, the world API over HTTP. The
 * edge's deliverer sends webhooks with workerd's own fetch; miniflare hands what the Worker
 * fetches to the same stand-in receiver (`received`, `respond`) instead of the network.
 */
import { Octokit } from '@octokit/rest';
import { serveWorld, type ServedWorld } from '../../../test/helpers/served-world.js';
import { openWorldRunner } from '../../../runtime/runner/index.js';
import { MemoryStorage } from '../../../runtime/store/index.js';
import type { RecordWrite } from '../../../runtime/world/types.js';
import { buildGuestRuntime, buildTwin, type BuiltTwin } from '../../../sdk/twin/build.js';

export const TWIN_ENTRY = 'twins/github/twin/index.ts';
export const START = Date.parse('2026-01-01T00:00:00.000Z');
export const TOKENS = { token: 'tok_githubConformanceWorldToken0000000001', readToken: 'tok_r_githubConformanceReadToken000000001' };

let built: Promise<BuiltTwin> | undefined;
export function githubBundle(): Promise<BuiltTwin> {
  built ??= buildTwin(TWIN_ENTRY);
  return built;
}

export interface LogEntryEvent { type: string; data: unknown }

/** A log entry as `GET {world_api}/log/github` answers it (the parts the suites read). */
interface LogEntry { position: number; cause: { kind: string; move?: string }; events?: LogEntryEvent[] }

/** A webhook request the world's deliverer sent (to the harness's stand-in for the network). */
export interface Received { url: string; headers: Record<string, string>; body: string }

export interface GithubTwin {
  /** Octokit with the world token as its GitHub token: the site admin. */
  admin: Octokit;
  /** Octokit with a user's token (and the world token in x-twins-key). */
  as(token: string): Octokit;
  /** Octokit with the world's read token (a read-scoped credential). */
  reader: Octokit;
  /** Octokit without any GitHub credential (the world token in x-twins-key only). */
  anonymous: Octokit;
  baseUrl: string;
  /** Makes a user and a token for it through the admin API; answers the token. */
  user(login: string, email?: string): Promise<string>;
  advance(ms: number): Promise<void>;
  /** Events recorded on the twin's log entries, oldest first. */
  events(): Promise<LogEntryEvent[]>;
  /**
   * Resolves once the outcome of every webhook the log asks for is on the log too (a
   * `webhook.result` entry each; the stand-in takes every delivery at its first attempt), so the
   * next request's entry lands at the same position however long the deliveries took.
   */
  settled(): Promise<void>;
  raw(method: string, path: string, init?: { headers?: Record<string, string>; body?: string }): Promise<{ status: number; headers: Record<string, string>; text: string }>;
  /** Webhook requests the world's deliverer sent, in the order sent. */
  received: Received[];
  /** The status the stand-in receiver answers for a URL (default 200). */
  respond: (url: string) => number;
  /** Resolves once `ok()` holds, checking as deliveries arrive (fails after 20 s). */
  until(ok: () => boolean): Promise<void>;
  /**
   * Writes records into the twin's tree as one entry, past every rule of the twin and the runner
   * (records from elsewhere): through the world engine in this thread, through export and import on the edge.
   */
  writeRecords(writes: RecordWrite[]): Promise<void>;
  /** What the suite runs against, for the report. */
  readonly served: 'world-server' | 'edge';
  close(): Promise<void>;
}

/** The cause of the entries `writeRecords` makes. */
const RECORDS_FROM_ELSEWHERE = 'test: records from elsewhere';

/** The stand-in for the network the world's deliverer sends webhooks to: it records each request. */
function standInReceiver(): { received: Received[]; control: { respond: (url: string) => number }; take(url: string, headers: Headers, body: string): number } {
  const received: Received[] = [];
  const control = { respond: (_url: string): number => 200 };
  return {
    received,
    control,
    take(url, headers, body) {
      const flat: Record<string, string> = {};
      headers.forEach((v, k) => { flat[k] = v; });
      received.push({ url, headers: flat, body });
      return control.respond(url);
    },
  };
}

export async function startGithubTwin(): Promise<GithubTwin> {
  if (process.env.GITHUB_TWIN_HARNESS === 'edge') return startGithubTwinOnEdge();
  const bundle = await githubBundle();
  const receiver = standInReceiver();
  // The network is loopback only: the world's deliverer sends webhooks to this stand-in.
  const fakeFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    const body = typeof init?.body === 'string' ? init.body : new TextDecoder().decode(init?.body as Uint8Array);
    return new Response('', { status: receiver.take(url, new Headers(init?.headers), body) });
  }) as typeof fetch;
  const runner = await openWorldRunner({
    storage: new MemoryStorage(),
    world: 'github-conformance',
    twins: [bundle],
    guestRuntime: await buildGuestRuntime(),
    now: () => START,
    webhooks: { fetch: fakeFetch, baseDelayMs: 20, maxAttempts: 3 },
    // The step budget (the same count of QuickJS steps on any machine) still ends a runaway
    // handler; the wall-clock limit, 2.5 s by default, would fail the suites' big-object cases
    // on a slow machine (they took 2.7–4.8 s on one where the sandbox ran 3× slower).
    limits: { callMs: 20_000 },
  });
  const { server, api } = await serveWorld(runner, { vendor: 'github', requestScopes: ['read'], tokens: TOKENS, start: START });
  return githubTwinAt({
    served: 'world-server',
    baseUrl: `${server.worldUrl}/github`,
    api,
    receiver,
    writeRecords: async (writes) => { runner.world.append('github', { cause: { kind: 'system', reason: RECORDS_FROM_ELSEWHERE }, writes }); },
    close: () => server.close(),
  });
}

/** The edge variant (dist/edge/ in workerd through miniflare), reached only over HTTP. */
export async function startGithubTwinOnEdge(): Promise<GithubTwin> {
  // Loaded here: the other mode never starts miniflare.
  const [{ openEdgeWorld }, { Response: OutboundResponse }] = await Promise.all([import('../../../test/helpers/edge-world.js'), import('miniflare')]);
  const receiver = standInReceiver();
  const world = await openEdgeWorld({
    vendors: ['github'],
    tokens: TOKENS,
    start: START,
    outbound: async (request) => new OutboundResponse('', { status: receiver.take(request.url, request.headers as unknown as Headers, await request.text()) }),
  });
  return githubTwinAt({
    served: 'edge',
    baseUrl: `${world.url}/github`,
    api: world.api,
    receiver,
    writeRecords: (writes) => world.appendEntry('github', writes, RECORDS_FROM_ELSEWHERE),
    close: () => world.close(),
  });
}

interface Serving {
  served: GithubTwin['served'];
  baseUrl: string;
  api: ServedWorld['api'];
  receiver: ReturnType<typeof standInReceiver>;
  writeRecords: GithubTwin['writeRecords'];
  close(): Promise<void>;
}

function githubTwinAt({ served, baseUrl, api, receiver, writeRecords, close }: Serving): GithubTwin {
  const make = (auth: string | undefined, extra: Record<string, string> = {}): Octokit => {
    const octokit = new Octokit({ baseUrl, ...(auth === undefined ? {} : { auth }), log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
    // The attach injector's part: the world token in its own header, the app's credential untouched.
    octokit.hook.before('request', (options) => {
      Object.assign(options.headers, extra);
    });
    return octokit;
  };
  const admin = make(TOKENS.token);
  const { received, control } = receiver;
  const logEntries = async (): Promise<LogEntry[]> => {
    const out: LogEntry[] = [];
    let after = 0;
    for (;;) {
      const res = await api('GET', `/log/github?after=${after}&limit=500`);
      if (res.status !== 200) throw new Error(`reading the log failed: ${JSON.stringify(res.json)}`);
      const log = res.json as { entries: LogEntry[]; next: number | null };
      out.push(...log.entries);
      if (log.entries.length === 0 || log.next === null) return out;
      after = (log.entries[log.entries.length - 1] as LogEntry).position;
    }
  };
  return {
    served,
    admin,
    baseUrl,
    as: (token) => make(token, { 'x-twins-key': TOKENS.token }),
    reader: make(TOKENS.readToken),
    anonymous: make(undefined, { 'x-twins-key': TOKENS.token }),
    async user(login, email) {
      await admin.request('POST /admin/users', { login, email: email ?? `${login}@example.test` });
      const res = await admin.request('POST /admin/users/{username}/authorizations', { username: login, scopes: ['repo'] });
      return (res.data as { token: string }).token;
    },
    async advance(ms) {
      const res = await api('POST', '/clock/advance', { by: `${Math.round(ms / 1000)}s` });
      if (res.status !== 200) throw new Error(`advancing the clock failed: ${JSON.stringify(res.json)}`);
    },
    async events() {
      return (await logEntries()).flatMap((e) => e.events ?? []);
    },
    async settled() {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const entries = await logEntries();
        const asked = entries.flatMap((e) => e.events ?? []).filter((e) => e.type === 'webhook.delivery').length;
        const answered = entries.filter((e) => e.cause.kind === 'move' && e.cause.move === 'webhook.result').length;
        if (answered >= asked) return;
        if (Date.now() > deadline) throw new Error(`gave up waiting for webhook results: ${answered} of ${asked}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async raw(method, path, init = {}) {
      const res = await fetch(`${baseUrl}${path}`, { method, headers: { 'x-twins-key': TOKENS.token, ...init.headers }, ...(init.body === undefined ? {} : { body: init.body }) });
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => { headers[k] = v; });
      return { status: res.status, headers, text: await res.text() };
    },
    received,
    get respond() { return control.respond; },
    set respond(fn) { control.respond = fn; },
    async until(ok) {
      const deadline = Date.now() + 20_000;
      while (!ok()) {
        if (Date.now() > deadline) throw new Error('gave up waiting for webhook deliveries');
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    writeRecords,
    close,
  };
}
