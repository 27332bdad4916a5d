/**
 * The Stripe twin behind a real socket, for the official `stripe` package to talk to.
 *
 * `startStripeTwin` serves the built twin the way a user's world does: the world runner
 * (engine, QuickJS sandbox, in-memory storage) behind the single-world server (uWS), with
 * the world clock set and frozen for determinism. The SDK reaches `{world_url}/stripe/v1/…`
 * through an HTTP client that adds the world path and the world token (`x-twins-key`), as
 * the attach injector does for an app; the Stripe key stays in `Authorization`.
 *
 * `startStripeTwinInGuestHarness` is the earlier stand-in (the SDK's guest harness in
 * `node:vm` behind `node:http`), kept for quick debugging of twin code: run the suite with
 * `STRIPE_TWIN_HARNESS=guest` to use it. `STRIPE_TWIN_HARNESS=local` serves the world in a
 * worker thread on LMDB storage (`openLocalWorld`, as `kit` does; needs `make build`).
 * `STRIPE_TWIN_HARNESS=edge` serves it from the edge variant (dist/edge/ in workerd through
 * miniflare; needs `make build`): a world of the Stripe twin made with `POST /-/worlds`
 * adopting TOKENS, the SDK at `{edge}/<org>/<world>/stripe`, the world API over HTTP.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { serveWorld, type ServedWorld } from '../../../test/helpers/served-world.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalWorld, openWorldRunner } from '../../../runtime/runner/index.js';
import { WorldRunner } from '../../../runtime/runner/world-runner.js';
import type { RecordWrite } from '../../../runtime/world/types.js';
import { MemoryStorage } from '../../../runtime/store/index.js';
import { buildGuestRuntime, buildTwin, type BuiltTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness } from '../../../sdk/twin/testing.js';

export const TWIN_ENTRY = 'twins/stripe/twin/index.ts';
/** The frozen world clock's start: 2026-01-01T00:00:00Z. */
export const START = Date.parse('2026-01-01T00:00:00.000Z');
export const TEST_KEY = 'sk_test_twinkitConformance0001';
const TOKENS = { token: 'tok_stripeConformanceWorldToken0000000001', readToken: 'tok_r_stripeConformanceReadToken000000001' };

let built: Promise<BuiltTwin> | undefined;
export function stripeBundle(): Promise<BuiltTwin> {
  built ??= buildTwin(TWIN_ENTRY);
  return built;
}

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

export interface StripeTwin {
  stripe: Stripe;
  /** A client with another key (another account). */
  client(key: string): Stripe;
  /** A client whose API key is the world's token, as an app started by `kit world attach` has (the default account). */
  worldTokenClient(): Stripe;
  /** Moves the frozen world clock forward; timed moves due by then happen before the next request. */
  advance(ms: number): Promise<void>;
  nowMs(): number;
  /** How many records of a type the twin's tree holds (from the world map). */
  recordCount(type: string): Promise<number>;
  /** The event types of the newest log entry. */
  lastEntryEvents(): Promise<string[]>;
  /** A raw HTTP request to the twin's vendor API (`path` starts with `/v1/`); the world token rides in x-twins-key unless `worldToken: false`. */
  raw(method: string, path: string, init?: { headers?: Record<string, string>; body?: string | Uint8Array }): Promise<RawAnswer>;
  /** The world's own endpoints, called in-process (`worldApi('PUT', '/twins/stripe/scenario', doc)`); null on the guest harness, which has no world. */
  readonly worldApi: ServedWorld['api'] | null;
  /**
   * Writes records into the twin's tree as one entry of its own, past every rule of the twin and
   * the runner (records brought in from elsewhere): through the world engine when the world runs
   * in this thread, through export and import on the edge; null otherwise.
   */
  readonly writeRecords: ((writes: RecordWrite[]) => Promise<void>) | null;
  /** What the suite runs against, for the report. */
  readonly served: 'world-server' | 'guest-harness' | 'edge';
  close(): Promise<void>;
}

function rawRequest(url: URL, method: string, headers: Record<string, string>, body?: string | Uint8Array): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try { parsed = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** An SDK HTTP client that prefixes the world's vendor path and adds the world token. */
function worldHttpClient(prefix: string, token: string | null): Stripe.HttpClient {
  const base = Stripe.createNodeHttpClient();
  const client = Object.create(base) as Stripe.HttpClient;
  client.makeRequest = (host, port, path, method, headers, requestData, protocol, timeout) =>
    base.makeRequest(host, port, prefix + path, method, token === null ? headers : { ...headers, 'x-twins-key': token }, requestData, protocol, timeout);
  return client;
}

/** The cause of the entries `writeRecords` makes. */
const RECORDS_FROM_ELSEWHERE = 'test: records from elsewhere';

/** The world clock, frozen at START, moved through the world API (whole seconds), and where it stands. */
function frozenClock(api: ServedWorld['api']): Pick<StripeTwin, 'nowMs' | 'advance'> {
  let now = START;
  return {
    nowMs: () => now,
    async advance(ms) {
      if (ms % 1000 !== 0) throw new RangeError('advance in whole seconds');
      const res = await api('POST', '/clock/advance', { by: `${ms / 1000}s` });
      if (res.status !== 200) throw new Error(`advancing the clock failed: ${JSON.stringify(res.json)}`);
      now += ms;
    },
  };
}

async function recordCountOf(api: ServedWorld['api'], type: string): Promise<number> {
  const map = (await api('GET', '/map')).json as { twins: { twin: string; resources: { type: string; count: number }[] }[] };
  return map.twins.find((t) => t.twin === 'stripe')?.resources.find((r) => r.type === type)?.count ?? 0;
}

async function lastEntryEventsOf(api: ServedWorld['api']): Promise<string[]> {
  const map = (await api('GET', '/map')).json as { twins: { twin: string; position: number }[] };
  const head = map.twins.find((t) => t.twin === 'stripe')?.position ?? 0;
  const res = await api('GET', `/log/stripe?after=${head - 1}`);
  if (res.status !== 200) throw new Error(`reading the log failed: ${JSON.stringify(res.json)} (map ${JSON.stringify(map)})`);
  const log = res.json as { entries: { events?: { type: string }[] }[] };
  return (log.entries[0]?.events ?? []).map((e) => e.type);
}

export async function startStripeTwin(): Promise<StripeTwin> {
  if (process.env.STRIPE_TWIN_HARNESS === 'guest') return startStripeTwinInGuestHarness();
  if (process.env.STRIPE_TWIN_HARNESS === 'edge') return startStripeTwinOnEdge();
  const bundle = await stripeBundle();
  // `local`: the world in a worker thread on LMDB, as `kit` serves it (needs `make build`).
  const dir = process.env.STRIPE_TWIN_HARNESS === 'local' ? mkdtempSync(join(tmpdir(), 'stripe-world-')) : null;
  const runner = dir !== null
    // With the guest runtime, as `kit` opens it, so scenarios' js handlers run.
    ? await openLocalWorld({ dir, org: 'local', world: 'stripe-conformance', twins: [bundle], guestRuntime: await buildGuestRuntime() })
    : await openWorldRunner({
      storage: new MemoryStorage(),
      world: 'stripe-conformance',
      twins: [bundle],
      guestRuntime: await buildGuestRuntime(),
      now: () => START,
    });
  const { server, api } = await serveWorld(runner, { vendor: 'stripe', requestScopes: [], tokens: TOKENS, start: START });
  const inThread = runner instanceof WorldRunner ? runner.world : null;
  const url = new URL(server.worldUrl);
  const prefix = `${url.pathname}/stripe`;
  const client = (key: string): Stripe => new Stripe(key, {
    host: url.hostname, port: Number(url.port), protocol: 'http', maxNetworkRetries: 0, telemetry: false,
    httpClient: worldHttpClient(prefix, TOKENS.token),
  });
  return {
    served: 'world-server',
    worldApi: api,
    writeRecords: inThread === null ? null : async (writes) => { inThread.append('stripe', { cause: { kind: 'system', reason: RECORDS_FROM_ELSEWHERE }, writes }); },
    stripe: client(TEST_KEY),
    client,
    worldTokenClient: () => new Stripe(TOKENS.token, {
      host: url.hostname, port: Number(url.port), protocol: 'http', maxNetworkRetries: 0, telemetry: false,
      httpClient: worldHttpClient(prefix, null),
    }),
    ...frozenClock(api),
    recordCount: (type) => recordCountOf(api, type),
    lastEntryEvents: () => lastEntryEventsOf(api),
    raw: (method, path, init = {}) => rawRequest(new URL(`${server.worldUrl}/stripe${path}`), method, { 'x-twins-key': TOKENS.token, ...init.headers }, init.body),
    close: async () => {
      await server.close();
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The edge variant (dist/edge/ in workerd through miniflare), reached only over HTTP. */
export async function startStripeTwinOnEdge(): Promise<StripeTwin> {
  // Loaded here: the other modes never start miniflare.
  const { openEdgeWorld } = await import('../../../test/helpers/edge-world.js');
  const world = await openEdgeWorld({ vendors: ['stripe'], tokens: TOKENS, start: START });
  const api = world.api;
  const url = new URL(world.url);
  const prefix = `${url.pathname}/stripe`;
  const options = { host: url.hostname, port: Number(url.port), protocol: 'http', maxNetworkRetries: 0, telemetry: false } as const;
  const client = (key: string): Stripe => new Stripe(key, { ...options, httpClient: worldHttpClient(prefix, TOKENS.token) });
  return {
    served: 'edge',
    worldApi: api,
    writeRecords: (writes) => world.appendEntry('stripe', writes, RECORDS_FROM_ELSEWHERE),
    stripe: client(TEST_KEY),
    client,
    worldTokenClient: () => new Stripe(TOKENS.token, { ...options, httpClient: worldHttpClient(prefix, null) }),
    ...frozenClock(api),
    recordCount: (type) => recordCountOf(api, type),
    lastEntryEvents: () => lastEntryEventsOf(api),
    raw: (method, path, init = {}) => rawRequest(new URL(`${world.url}/stripe${path}`), method, { 'x-twins-key': TOKENS.token, ...init.headers }, init.body),
    close: () => world.close(),
  };
}

/** The earlier stand-in: the built twin in the SDK's guest harness behind `node:http`. */
export async function startStripeTwinInGuestHarness(): Promise<StripeTwin> {
  const bundle = await stripeBundle();
  const harness = createGuestHarness(bundle.source, { now: START, world: 'stripe-conformance' });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
      } catch {
        // As the host refuses it (runtime/runner/request.ts).
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'bad_request', message: 'The form body is not valid UTF-8.' } }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      const contentType = headers['content-type'];
      delete headers['content-type'];
      let out;
      try {
        out = harness.request(req.method ?? 'GET', req.url ?? '/', text === '' ? { headers } : { headers, body: text, contentType: contentType ?? 'application/x-www-form-urlencoded' });
      } catch (e) {
        // A body the form parser refuses: 400, as the runner answers it (the twin's errorBody).
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'bad_request', message: e instanceof Error ? e.message : String(e) } }));
        return;
      }
      res.writeHead(out.status, { 'content-type': 'application/json', ...out.headers });
      res.end(typeof out.body === 'string' ? out.body : JSON.stringify(out.body ?? null));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client = (key: string): Stripe => new Stripe(key, { host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false });
  return {
    served: 'guest-harness',
    worldApi: null,
    writeRecords: null,
    stripe: client(TEST_KEY),
    client,
    worldTokenClient: () => new Stripe('sk_test_unused', {
      host: '127.0.0.1', port, protocol: 'http', maxNetworkRetries: 0, telemetry: false,
      httpClient: Object.assign(Object.create(Stripe.createNodeHttpClient()) as Stripe.HttpClient, {
        makeRequest(this: Stripe.HttpClient, ...args: Parameters<Stripe.HttpClient['makeRequest']>) {
          const [h, p, path, m, headers, data, proto, t] = args;
          return Stripe.createNodeHttpClient().makeRequest(h, p, path, m, { ...headers, 'x-kit-auth': 'authorization' }, data, proto, t);
        },
      }),
    }),
    nowMs: () => harness.nowMs(),
    advance: async (ms) => harness.advance(ms),
    recordCount: async (type) => harness.records(type).length,
    lastEntryEvents: async () => (harness.log[harness.log.length - 1]?.events ?? []).map((e) => e.type),
    raw: (method, path, init = {}) => rawRequest(new URL(`http://127.0.0.1:${port}${path}`), method, init.headers ?? {}, init.body),
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((e) => (e ? reject(e) : resolve()));
    }),
  };
}

/**
 * Every id of a list, newest first, walking forward with `starting_after` (`page(after)` asks
 * for one page). A page that says there is more must hold something.
 */
export async function idsForward<T extends { id: string }>(page: (after?: string) => Promise<Stripe.ApiList<T>>): Promise<string[]> {
  const ids: string[] = [];
  for (let p = await page(); ; p = await page(ids[ids.length - 1])) {
    ids.push(...p.data.map((x) => x.id));
    if (!p.has_more) return ids;
    if (p.data.length === 0) throw new Error('an empty page said there was more');
  }
}

/**
 * Every id of a list from its oldest one, walking backward with `ending_before` (`page(before)`)
 * and putting each page in front: the same newest-first order as idsForward.
 */
export async function idsBackward<T extends { id: string }>(oldest: string, page: (before: string) => Promise<Stripe.ApiList<T>>): Promise<string[]> {
  const ids = [oldest];
  for (;;) {
    const p = await page(ids[0] as string);
    ids.unshift(...p.data.map((x) => x.id));
    if (!p.has_more) return ids;
  }
}
