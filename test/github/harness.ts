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
 */
import { Octokit } from '@octokit/rest';
import { serveWorld } from '../helpers/served-world.js';
import { openWorldRunner } from '../../runtime/runner/index.js';
import { MemoryStorage } from '../../runtime/store/index.js';
import type { RecordWrite } from '../../runtime/world/types.js';
import { buildGuestRuntime, buildTwin, type BuiltTwin } from '../../sdk/twin/build.js';

export const TWIN_ENTRY = 'twins/github/twin/index.ts';
export const START = Date.parse('2026-01-01T00:00:00.000Z');
export const TOKENS = { token: 'tok_githubConformanceWorldToken0000000001', readToken: 'tok_r_githubConformanceReadToken000000001' };

let built: Promise<BuiltTwin> | undefined;
export function githubBundle(): Promise<BuiltTwin> {
  built ??= buildTwin(TWIN_ENTRY);
  return built;
}

export interface LogEntryEvent { type: string; data: unknown }

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
  raw(method: string, path: string, init?: { headers?: Record<string, string>; body?: string }): Promise<{ status: number; headers: Record<string, string>; text: string }>;
  /** Webhook requests the world's deliverer sent, in the order sent. */
  received: Received[];
  /** The status the stand-in receiver answers for a URL (default 200). */
  respond: (url: string) => number;
  /** Resolves once `ok()` holds, checking as deliveries arrive (fails after 20 s). */
  until(ok: () => boolean): Promise<void>;
  /** Writes records into the twin's tree through the world engine, as one entry, past every rule of the twin and the runner (records from elsewhere). */
  writeRecords(writes: RecordWrite[]): void;
  close(): Promise<void>;
}

export async function startGithubTwin(): Promise<GithubTwin> {
  const bundle = await githubBundle();
  const received: Received[] = [];
  const control = { respond: (_url: string): number => 200 };
  // The network is loopback only: the world's deliverer sends webhooks to this stand-in.
  const fakeFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => { headers[k] = v; });
    received.push({ url, headers, body: typeof init?.body === 'string' ? init.body : new TextDecoder().decode(init?.body as Uint8Array) });
    return new Response('', { status: control.respond(url) });
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
  const baseUrl = `${server.worldUrl}/github`;
  const make = (auth: string | undefined, extra: Record<string, string> = {}): Octokit => {
    const octokit = new Octokit({ baseUrl, ...(auth === undefined ? {} : { auth }), log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
    // The attach injector's part: the world token in its own header, the app's credential untouched.
    octokit.hook.before('request', (options) => {
      Object.assign(options.headers, extra);
    });
    return octokit;
  };
  const admin = make(TOKENS.token);
  return {
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
      const out: LogEntryEvent[] = [];
      let after = 0;
      for (;;) {
        const res = await api('GET', `/log/github?after=${after}&limit=500`);
        if (res.status !== 200) throw new Error(`reading the log failed: ${JSON.stringify(res.json)}`);
        const log = res.json as { entries: { position: number; events?: LogEntryEvent[] }[]; next: number | null };
        for (const e of log.entries) {
          for (const ev of e.events ?? []) out.push(ev);
          after = e.position;
        }
        if (log.entries.length === 0 || log.next === null) break;
      }
      return out;
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
    writeRecords: (writes) => { runner.world.append('github', { cause: { kind: 'system', reason: 'test: records from elsewhere' }, writes }); },
    close: () => server.close(),
  };
}
