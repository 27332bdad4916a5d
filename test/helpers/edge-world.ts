/**
 * A world on the edge variant for the conformance suites (`STRIPE_TWIN_HARNESS=edge`,
 * `GITHUB_TWIN_HARNESS=edge`, the attach end-to-end): the built Worker (dist/edge/, `make
 * build` writes it) in workerd through miniflare, as `kit edge dev` runs it, one edge per
 * world. The world is made through `POST /-/worlds` with the admin token, adopting the
 * suite's fixed tokens, its request budget off (as the suites' single-world servers run
 * without one), and its clock set and frozen at `start` through the world API over HTTP.
 *
 * Nothing here reaches into the edge's objects: every call is HTTP, as a client's would be.
 */
import { startEdgeDev, type EdgeDev, type EdgeOutbound } from '../../host/edge/dev.js';
import type { RecordWrite } from '../../runtime/world/types.js';

export interface EdgeWorldOptions {
  vendors: string[];
  tokens: { token: string; readToken: string };
  /** The world clock's start (ms), set and frozen; absent, the clock is left unset. */
  start?: number;
  /** Default `edge`/`<first vendor>-conformance`. */
  org?: string;
  world?: string;
  /** Where the edge's own fetches go (webhook deliveries); absent, the real network. */
  outbound?: EdgeOutbound;
}

export interface ApiAnswer {
  status: number;
  json: unknown;
}

export interface EdgeWorld {
  readonly edge: EdgeDev;
  /** `<org>/<world>`. */
  readonly name: string;
  /** `{world_url}`. */
  readonly url: string;
  /** `{world_api}`. */
  readonly apiUrl: string;
  /** A world API call over HTTP with the world's token: `api('POST', '/clock/advance', { by: '1h' })`. */
  api(method: string, path: string, body?: unknown): Promise<ApiAnswer>;
  /**
   * Appends one entry of `writes` to a twin's log, past every rule of the twin and the runner,
   * the only way records come into an edge world from elsewhere: the twin's state is exported
   * (`GET {world_api}/twins/<twin>/export`), the entry added to its log, and the world made
   * again with the same tokens and the files imported (`PUT /-/worlds/<name>/import`). Only for
   * a world of that one twin (the others' state would be lost); pending webhook attempts are.
   */
  appendEntry(twin: string, writes: RecordWrite[], reason: string): Promise<void>;
  close(): Promise<void>;
}

const ADMIN_TOKEN = `tok_a_edgeConformance${'0'.repeat(24)}`;

async function call(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<ApiAnswer> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown = text === '' ? undefined : text;
  try { json = text === '' ? undefined : JSON.parse(text); } catch { /* not JSON: the text */ }
  return { status: res.status, json };
}

function expectStatus(what: string, answer: ApiAnswer, status: number): void {
  if (answer.status !== status) throw new Error(`${what} answered ${answer.status}: ${JSON.stringify(answer.json)}`);
}

export async function openEdgeWorld(options: EdgeWorldOptions): Promise<EdgeWorld> {
  const edge = await startEdgeDev({ port: 0, adminToken: ADMIN_TOKEN, ...(options.outbound ? { outbound: options.outbound } : {}) });
  const org = options.org ?? 'edge';
  const world = options.world ?? `${options.vendors[0] ?? 'world'}-conformance`;
  const name = `${org}/${world}`;
  const admin = { 'x-kit-token': ADMIN_TOKEN };
  const worldHeaders = { 'x-kit-token': options.tokens.token };
  const apiUrl = `${edge.url}/-/${name}`;
  const api: EdgeWorld['api'] = (method, path, body) => call(method, `${apiUrl}${path}`, worldHeaders, body);

  const make = async (): Promise<void> => {
    expectStatus('POST /-/worlds', await call('POST', `${edge.url}/-/worlds`, admin, { org, world, vendors: options.vendors, ...options.tokens }), 201);
    expectStatus('PUT /-/worlds/…/budget', await call('PUT', `${edge.url}/-/worlds/${name}/budget`, admin, { budget: 'off' }), 200);
  };
  try {
    await make();
    if (options.start !== undefined) expectStatus('PUT …/clock', await api('PUT', '/clock', { at: new Date(options.start).toISOString() }), 200);
  } catch (e) {
    await edge.close();
    throw e;
  }

  return {
    edge,
    name,
    url: `${edge.url}/${name}`,
    apiUrl,
    api,
    async appendEntry(twin, writes, reason) {
      if (options.vendors.length !== 1 || options.vendors[0] !== twin) throw new Error(`appendEntry needs a world of the one twin ${twin}`);
      const exported = await api('GET', `/twins/${twin}/export`);
      expectStatus(`GET …/twins/${twin}/export`, exported, 200);
      const body = exported.json as { twin: string; files: Record<string, string> };
      const logPath = `.kit/world/${twin}/log.jsonl`;
      const manifestPath = `.kit/world/${twin}/twin.json`;
      const clock = JSON.parse(body.files['.kit/world/clock.json'] ?? 'null') as { at: string } | null;
      const manifest = JSON.parse(body.files[manifestPath] ?? '{}') as { entries: number };
      const occurredAt = clock?.at ?? new Date().toISOString();
      const entry = { position: manifest.entries + 1, occurredAt, cause: { kind: 'system', reason }, writes };
      body.files[logPath] = `${body.files[logPath] ?? ''}${JSON.stringify(entry)}\n`;
      body.files[manifestPath] = JSON.stringify({ ...manifest, entries: manifest.entries + 1 });
      const removed = await call('DELETE', `${edge.url}/-/worlds/${name}`, admin);
      expectStatus('DELETE /-/worlds/…', removed, 204);
      await make();
      expectStatus('PUT /-/worlds/…/import', await call('PUT', `${edge.url}/-/worlds/${name}/import`, admin, body), 200);
    },
    close: () => edge.close(),
  };
}
