/**
 * The edge variant beyond the shared world-endpoint suite (test/hosts/edge.test.ts), over HTTP
 * against the built Worker (dist/edge/) in workerd: what an eviction must leave — worlds,
 * tokens, branches, the scenario and checks, timed moves, webhook retries, branch expiries —
 * with workerd restarted over the persisted objects (`edge.restart()`: what Cloudflare's
 * eviction leaves, only what the objects stored); a world moved here from a local server by
 * its export files; and the admin input the edge refuses.
 *
 * Timed work after a restart is proved done by the object's alarm, not by a request: the test
 * asks nothing of that world until what the alarm does is seen from outside (a webhook at a
 * receiver, a row gone from the index).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalWorld, twinFilePath } from '../../runtime/runner/index.js';
import { serveWorld, type ServingWorld } from '../../sdk/cli/serve.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/node.js';
import { kit as kitCli } from '../../test/helpers/kit-cli.js';
import { api, bearer, kit, vendor } from '../../test/hosts/calls.js';
import { errorCode, send, type Answer, type HostWorld } from '../../test/hosts/fixture.js';
import type { WorldRow } from '../multi-world/worlds.js';
import { startEdgeDev, type EdgeDev } from './dev.js';

const ADMIN = `tok_a_${'d'.repeat(32)}`;
const admin = kit(ADMIN);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const form = (token: string) => ({ ...bearer(token), 'content-type': 'application/x-www-form-urlencoded' });

let edge: EdgeDev;
let dir: string;
/** Made before every other case, so that the shortest ttl there is (60 s) runs out while they run. */
let expiring: { parent: HostWorld; branch: HostWorld; expiresAt: number; evictions: number };
/** How many times workerd was restarted (`evict`). */
let evictions = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-edge-durability-'));
  edge = await startEdgeDev({ port: 0, adminToken: ADMIN, persist: dir });
  const parent = await makeWorld({ world: 'expiring', vendors: ['hello'] });
  const made = await api(parent, 'POST', '/branches', { ttl: 60 });
  expect(made.status, made.text).toBe(201);
  const b = made.json() as { name: string; token: string; readToken: string; expiresAt: string };
  expiring = { parent, branch: worldOf(b.name, b.token, b.readToken), expiresAt: Date.parse(b.expiresAt), evictions };
}, 60_000);

afterAll(async () => {
  await edge?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function worldOf(name: string, token: string, readToken: string, base = edge.url): HostWorld {
  const [org, world] = name.split('/') as [string, string];
  return { name, org, world, base, url: `${base}/${name}`, api: `${base}/-/${name}`, token, readToken };
}

async function makeWorld(body: { world: string; vendors: string[]; org?: string; [field: string]: unknown }): Promise<HostWorld & { row: WorldRow }> {
  const a = await send('POST', `${edge.url}/-/worlds`, { headers: admin, body: { org: 'acme', ...body } });
  expect(a.status, a.text).toBe(201);
  const row = a.json() as WorldRow;
  return { ...worldOf(row.name, row.token, row.readToken), row };
}

async function rows(): Promise<WorldRow[]> {
  return ((await send('GET', `${edge.url}/-/worlds`, { headers: admin })).json() as { worlds: WorldRow[] }).worlds;
}

/** Restarts workerd over the persisted objects; when it began and when it was serving again. */
async function evict(): Promise<{ began: number; ended: number }> {
  const began = Date.now();
  await edge.restart();
  evictions++;
  return { began, ended: Date.now() };
}

function expectCode(a: Answer, status: number, code: string, what = ''): void {
  expect([what, a.status, errorCode(a)]).toEqual([what, status, code]);
}

interface Arrival {
  at: number;
  status: number;
  body: string;
  event: { id: string; type: string; created: number; data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> } };
}

/** A webhook endpoint on loopback that refuses (500) its first `refusals` deliveries. */
class Receiver {
  readonly got: Arrival[] = [];
  url = '';
  #server: Server | null = null;

  constructor(private refusals = 0) {}

  async start(): Promise<this> {
    this.#server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const status = this.refusals-- > 0 ? 500 : 200;
        this.got.push({ at: Date.now(), status, body, event: JSON.parse(body) as Arrival['event'] });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`;
    return this;
  }

  /** Waits until `n` deliveries (of `type`, if given) arrived. */
  async arrived(n: number, ms: number, type?: string): Promise<Arrival[]> {
    const end = Date.now() + ms;
    for (;;) {
      const got = this.got.filter((a) => type === undefined || a.event.type === type);
      if (got.length >= n) return got;
      if (Date.now() > end) throw new Error(`${got.length} of ${n} deliveries${type === undefined ? '' : ` of ${type}`} arrived in ${ms} ms`);
      await sleep(25);
    }
  }

  stop(): void {
    this.#server?.close();
  }
}

/** Stripe's wire of `w`: POST a form, answer parsed (200 expected). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test convenience: Stripe objects read field by field
async function stripe(w: HostWorld, path: string, formBody: string): Promise<Record<string, any>> {
  const a = await vendor(w, 'POST', `/stripe${path}`, formBody, form(w.token));
  expect([path, a.status, a.text.slice(0, 300)]).toEqual([path, 200, expect.any(String)]);
  return a.json() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

describe('the edge variant after an eviction', () => {
  it('keeps worlds, adopted and rotated tokens, branches, records, the scenario and checks', async () => {
    const token = `adopted_${'w'.repeat(30)}`;
    const readToken = `adopted_${'r'.repeat(30)}`;
    const shop = await makeWorld({ world: 'shop', vendors: ['hello', 'stripe'], owner: 'acme', token, readToken });
    expect([shop.token, shop.readToken]).toEqual([token, readToken]);
    const ada = await stripe(shop, '/v1/customers', 'email=ada%40example.com&name=Ada');
    await stripe(shop, '/v1/customers', 'email=grace%40example.com');
    expect((await vendor(shop, 'POST', '/hello/v1/greetings', { name: 'Before' })).status).toBe(200);
    const doc = 'handlers:\n  - name: teapot\n    match: GET /v1/teapot\n    respond: { status: 418 }\n';
    expect((await api(shop, 'PUT', '/twins/hello/scenario', doc, shop.token, { 'content-type': 'application/yaml' })).status).toBe(200);
    const check = "export const check = { name: 'short names', run(entry) { return entry.writes.every((w) => String(w.value?.name ?? '').length <= 6) || 'too long'; } };";
    expect((await api(shop, 'PUT', '/checks/short', check, shop.token, { 'content-type': 'text/javascript' })).status).toBe(200);
    // A branch made by the admin (`from`), one over HTTP with a ttl, then more in the parent alone.
    const copy = await makeWorld({ world: 'shop-copy', vendors: ['hello', 'stripe'], from: shop.name });
    const madeBranch = await api(shop, 'POST', '/branches', { ttl: 3600, label: 'try' });
    expect(madeBranch.status, madeBranch.text).toBe(201);
    const b = madeBranch.json() as { name: string; token: string; readToken: string; expiresAt: string };
    const branch = worldOf(b.name, b.token, b.readToken);
    expect((await vendor(shop, 'POST', '/hello/v1/greetings', { name: 'After' })).status).toBe(200);
    expect((await vendor(branch, 'POST', '/hello/v1/greetings', { name: 'Branch' })).status).toBe(200);
    // A world whose tokens were rotated: the old ones must stay refused.
    const rotated = await makeWorld({ world: 'rotated', vendors: ['hello'] });
    const r = await send('POST', `${edge.url}/-/worlds/${rotated.name}/rotate`, { headers: admin });
    expect(r.status).toBe(200);
    const fresh = worldOf(rotated.name, r.json().token as string, r.json().readToken as string);

    const reads: [HostWorld, string, 'wire' | 'api'][] = [
      [shop, `/stripe/v1/customers/${ada.id as string}`, 'wire'],
      [shop, '/stripe/v1/customers?limit=10', 'wire'],
      [shop, '/hello/v1/greetings', 'wire'],
      [shop, '/log/hello', 'api'],
      [shop, '/timeline?limit=100', 'api'],
      [shop, '/branches', 'api'],
      [shop, '/twins/hello/scenario', 'api'],
      [shop, '/checks/short', 'api'],
      [shop, '/checks', 'api'],
      [copy, '/hello/v1/greetings', 'wire'],
      [copy, '/stripe/v1/customers?limit=10', 'wire'],
      [branch, '/hello/v1/greetings', 'wire'],
      [branch, '/log/hello', 'api'],
      [fresh, '/hello/v1/greetings', 'wire'],
    ];
    const readAll = async () => {
      const out = new Map<string, string>();
      for (const [w, path, surface] of reads) {
        const a = surface === 'wire' ? await vendor(w, 'GET', path) : await api(w, 'GET', path);
        out.set(`${w.name} ${path}`, `${a.status} ${a.text}`);
      }
      return out;
    };
    const before = { rows: await rows(), reads: await readAll() };
    expect(before.rows.map((row) => row.name)).toEqual(expect.arrayContaining([shop.name, copy.name, branch.name, rotated.name]));
    // The branches as made: the admin's copy, and the one over HTTP with its expiry.
    expect(JSON.parse(before.reads.get(`${shop.name} /branches`)!.slice('200 '.length))).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: copy.name, from: shop.name, expiresAt: null }), expect.objectContaining({ name: branch.name, from: shop.name, expiresAt: b.expiresAt })]),
    );

    await evict();

    // The index's rows and every read, byte for byte.
    expect(await rows()).toEqual(before.rows);
    const after = await readAll();
    expect([...after.keys()]).toEqual([...before.reads.keys()]);
    for (const [read, answer] of before.reads) expect([read, after.get(read)]).toEqual([read, answer]);
    for (const [read, answer] of after) expect([read, answer.slice(0, 4)]).toEqual([read, '200 ']);
    // The copy and the branch kept their own ways: neither sees shop's later greeting, only the branch its own.
    expect(after.get(`${copy.name} /hello/v1/greetings`)).toContain('Before');
    expect(after.get(`${copy.name} /hello/v1/greetings`)).not.toContain('After');
    expect(after.get(`${branch.name} /hello/v1/greetings`)).toContain('Branch');
    expect(after.get(`${branch.name} /hello/v1/greetings`)).not.toContain('After');
    expect(after.get(`${shop.name} /checks`)).toContain('"declared":"short names"');
    // The scenario is in force; the read token is still the read token.
    expect((await vendor(shop, 'GET', '/hello/v1/teapot')).status).toBe(418);
    expectCode(await api(shop, 'PUT', '/clock', { at: '2031-01-01T00:00:00.000Z' }, shop.readToken), 403, 'forbidden');
    // Rotated: the new tokens open the world, the old ones do not.
    for (const old of [rotated.token, rotated.readToken]) {
      expectCode(await api(rotated, 'GET', '/map', undefined, old), 401, 'unauthenticated', 'old token');
      expect((await vendor(rotated, 'GET', '/hello/v1/greetings', undefined, bearer(old))).status).toBe(401);
    }
    expect((await api(fresh, 'GET', '/map', undefined, fresh.readToken)).status).toBe(200);
  }, 60_000);

  it("performs a twin's timed move on the object's alarm after an eviction, with no request made: a trial ends and its webhook arrives", async () => {
    const receiver = await new Receiver().start();
    try {
      // The world's clock is not set: its moves fall due on the wall clock.
      const w = await makeWorld({ world: 'trial', vendors: ['stripe'] });
      expect((await api(w, 'GET', '/clock')).json().frozen).toBe(false);
      await stripe(w, '/v1/webhook_endpoints', `url=${encodeURIComponent(receiver.url)}&enabled_events[]=customer.subscription.updated`);
      const product = await stripe(w, '/v1/products', 'name=Plan');
      const price = await stripe(w, '/v1/prices', `product=${product.id as string}&unit_amount=1000&currency=usd&recurring[interval]=month`);
      const customer = await stripe(w, '/v1/customers', 'email=trial%40example.com');
      const trialEnd = Math.ceil(Date.now() / 1000) + 5;
      const sub = await stripe(w, '/v1/subscriptions', `customer=${customer.id as string}&items[0][price]=${price.id as string}&trial_end=${trialEnd}`);
      expect(sub.status).toBe('trialing');

      const evicted = await evict();
      // Evicted before the move fell due; from here the test asks nothing of the world until its webhook came.
      expect(evicted.ended).toBeLessThan(trialEnd * 1000);
      const [arrival] = await receiver.arrived(1, 20_000, 'customer.subscription.updated');
      expect(arrival!.at).toBeGreaterThanOrEqual(trialEnd * 1000);
      expect(arrival!.event.data.object).toMatchObject({ id: sub.id, trial_end: trialEnd });
      expect(arrival!.event.data.object['status']).not.toBe('trialing');
      expect(arrival!.event.data.previous_attributes).toMatchObject({ status: 'trialing' });
      // The log holds the move, stamped when it fell due.
      const log = (await api(w, 'GET', '/log/stripe')).json().entries as { occurredAt: string; cause: { kind: string; move?: string; dueAt?: string } }[];
      const due = new Date(trialEnd * 1000).toISOString();
      expect(log.filter((e) => e.cause.kind === 'move' && e.cause.dueAt === due)).toEqual([expect.objectContaining({ occurredAt: due, cause: { kind: 'move', move: 'renew', dueAt: due } })]);
      console.log(`timed move: due ${due}; evicted ${trialEnd * 1000 - evicted.began} ms before it for ${evicted.ended - evicted.began} ms; webhook arrived ${arrival!.at - trialEnd * 1000} ms after it fell due`);
    } finally {
      receiver.stop();
    }
  }, 60_000);

  it('retries a refused webhook delivery after an eviction, on the alarm, at the backoff it had', async () => {
    // Refused three times (retries 1 s, then 2 s, then 4 s after: the runner's backoff), so the
    // fourth attempt is due well after workerd is back.
    const receiver = await new Receiver(3).start();
    try {
      const w = await makeWorld({ world: 'hooks', vendors: ['stripe'] });
      await stripe(w, '/v1/webhook_endpoints', `url=${encodeURIComponent(receiver.url)}&enabled_events[]=customer.created`);
      const customer = await stripe(w, '/v1/customers', 'email=hooked%40example.com');
      await receiver.arrived(3, 15_000);
      // The third refusal recorded in the outbox and the alarm set for the next attempt.
      await sleep(300);
      const evicted = await evict();
      const got = await receiver.arrived(4, 20_000);
      expect(got.map((a) => a.status)).toEqual([500, 500, 500, 200]);
      expect(new Set(got.map((a) => a.body)).size).toBe(1);
      expect(got[0]!.event).toMatchObject({ type: 'customer.created', data: { object: { id: customer.id } } });
      const gaps = got.slice(1).map((a, i) => a.at - got[i]!.at);
      expect(got[3]!.at).toBeGreaterThan(evicted.ended);
      expect(gaps[0]).toBeGreaterThanOrEqual(1000);
      expect(gaps[1]).toBeGreaterThanOrEqual(2000);
      // The backoff as it was before the eviction: 4 s after the third, not at once when the object came back.
      expect(gaps[2]).toBeGreaterThanOrEqual(4000);
      expect(gaps[2]).toBeLessThan(6000);
      console.log(`webhook retries: gaps ${gaps.join(', ')} ms; evicted ${evicted.began - got[2]!.at} ms after the third for ${evicted.ended - evicted.began} ms; the fourth ${got[3]!.at - evicted.ended} ms after workerd was back`);
      // Delivered: the outbox is empty, nothing more is sent.
      await sleep(1500);
      expect(receiver.got).toHaveLength(4);
    } finally {
      receiver.stop();
    }
  }, 60_000);
});

describe('a world moved here from a local server', () => {
  const T0 = '2031-03-01T10:00:00.000Z';
  let local: ServingWorld | null = null;
  let localDir: string;

  afterAll(async () => {
    await local?.server.close();
    if (localDir !== undefined) await rm(localDir, { recursive: true, force: true });
  });

  it('answers the reads the local world answered, after `kit world export` and PUT …/import; bad imports are refused and change nothing', async () => {
    localDir = await mkdtemp(join(tmpdir(), 'kit-edge-local-'));
    const builtins = await loadBuiltinTwins();
    const guestRuntime = await buildGuestRuntime();
    local = await serveWorld(
      { dir: localDir, port: 0, host: '127.0.0.1', org: 'local', world: 'demo', twins: ['hello', 'stripe'] },
      { loadTwins: async () => builtins, openWorld: (options) => openLocalWorld({ ...options, guestRuntime }) },
    );
    const from = worldOf('local/demo', local.tokens.token, local.tokens.readToken, local.server.url);
    const src: HostWorld = { ...from, url: local.server.worldUrl, api: local.server.worldApi };
    expect((await api(src, 'PUT', '/clock', { at: T0 })).status).toBe(200);
    const ada = await stripe(src, '/v1/customers', 'email=ada%40example.com&name=Ada&metadata[team]=analytical');
    const gone = await stripe(src, '/v1/customers', 'email=gone%40example.com');
    const product = await stripe(src, '/v1/products', 'name=Engine');
    expect((await api(src, 'POST', '/clock/advance', { by: '1h' })).status).toBe(200);
    await stripe(src, `/v1/customers/${ada.id as string}`, 'description=first');
    expect((await vendor(src, 'DELETE', `/stripe/v1/customers/${gone.id as string}`)).status).toBe(200);
    expect((await vendor(src, 'POST', '/hello/v1/greetings', { name: 'Ada', expires_in: 86_400 })).status).toBe(200);
    expect((await api(src, 'POST', '/clock/advance', { by: '1d' })).status).toBe(200);
    const scenario = JSON.stringify({ handlers: [{ name: 'teapot', match: 'GET /v1/balance', respond: { status: 418 } }] });
    expect((await api(src, 'PUT', '/twins/stripe/scenario', scenario, src.token, { 'content-type': 'application/json' })).status).toBe(200);

    const reads = [
      `wire /stripe/v1/customers/${ada.id as string}`,
      `wire /stripe/v1/customers/${gone.id as string}`,
      'wire /stripe/v1/customers?limit=10',
      `wire /stripe/v1/products/${product.id as string}`,
      'wire /stripe/v1/balance',
      'wire /hello/v1/greetings',
      'api /log/stripe',
      'api /log/hello',
      'api /timeline?limit=500',
      'api /checkpoint/stripe?at=2',
      'api /clock',
      'api /map',
      'api /twins/stripe/scenario',
    ];
    const readAll = async (w: HostWorld) => {
      const out = new Map<string, string>();
      for (const read of reads) {
        const [surface, path] = read.split(' ') as ['wire' | 'api', string];
        const a = surface === 'wire' ? await vendor(w, 'GET', path) : await api(w, 'GET', path);
        // A twin writes absolute links from where it was reached.
        out.set(read, `${a.status} ${a.text.replaceAll(new URL(w.url).origin, 'http://<host>')}`);
      }
      // A history cut names the world (`demo@stripe:3` there, `local/demo@stripe:3` here): its positions agree.
      for (const instant of ['2031-03-01T09:59:59.000Z', T0, '2031-03-01T11:00:00.000Z', '2031-03-03T00:00:00.000Z']) {
        const views = (await api(w, 'GET', `/history?at=${instant}`)).json().views as Record<string, { position: number }>;
        out.set(`cut ${instant}`, JSON.stringify(Object.entries(views).map(([twin, v]) => [twin, v.position])));
      }
      return out;
    };
    const before = await readAll(src);

    const exported = await kitCli(['world', 'export', '--world', src.url, '--token', src.token]);
    expect(exported.code, exported.err.join('\n')).toBe(0);
    const twins = JSON.parse(exported.stdout.toString('utf8')) as { twin: string; files: Record<string, string> }[];
    expect(twins.map((t) => t.twin)).toEqual(['hello', 'stripe']);
    await local.server.close();
    local = null;

    const moved = await makeWorld({ org: 'local', world: 'demo', vendors: ['hello', 'stripe'] });
    for (const t of twins) {
      const placed = await send('PUT', `${edge.url}/-/worlds/${moved.name}/import`, { headers: admin, body: t });
      expect(placed.status, placed.text).toBe(200);
      const entries = (JSON.parse(t.files[twinFilePath(t.twin, 'twin')]!) as { entries: number }).entries;
      expect(placed.json()).toEqual({ twin: t.twin, entries, position: entries, scenario: t.twin === 'stripe', clock: { at: '2031-03-02T11:00:00.000Z', frozen: true } });
    }
    const after = await readAll(moved);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [read, answer] of before) expect([read, after.get(read)]).toEqual([read, answer]);
    expect(after.get('wire /stripe/v1/balance')).toMatch(/^418 /);
    expect(after.get(`wire /stripe/v1/customers/${gone.id as string}`)).toContain('"deleted":true');
    expect(after.get(`cut ${T0}`)).toBe('[["hello",0],["stripe",3]]');

    // Bad imports into a world with a life of its own (hello's history, its clock set), each refused whole.
    const target = await makeWorld({ org: 'local', world: 'target', vendors: ['hello', 'stripe'] });
    expect((await api(target, 'PUT', '/clock', { at: '2031-01-01T00:00:00.000Z' })).status).toBe(200);
    expect((await vendor(target, 'POST', '/hello/v1/greetings', { name: 'Own' })).status).toBe(200);
    const state = async () => {
      const out: string[] = [];
      for (const path of ['/twins/hello/export', '/twins/stripe/export', '/map', '/clock']) out.push((await api(target, 'GET', path)).text);
      return out;
    };
    const unchanged = await state();
    const good = twins.find((t) => t.twin === 'stripe')!;
    const withFiles = (files: Record<string, string>) => ({ twin: 'stripe', files: { ...good.files, ...files } });
    const asGithub = { twin: 'github', files: Object.fromEntries(Object.entries(good.files).map(([p, c]) => [p.replace('/stripe/', '/github/'), c.replace('"twin":"stripe"', '"twin":"github"')])) };
    const cases: [string, string, string | object, number, string][] = [
      ['a path climbing out', target.name, withFiles({ '.kit/world/../../etc/passwd': 'x' }), 400, 'invalid_import'],
      ['an absolute path', target.name, withFiles({ '/etc/passwd': 'x' }), 400, 'invalid_import'],
      ['another root', target.name, withFiles({ '.kit/token': '{}' }), 400, 'invalid_import'],
      ['a backslash', target.name, withFiles({ '.kit\\world\\stripe\\log.jsonl': 'x' }), 400, 'invalid_import'],
      // Past the edge's 4 MB body (the engine's 8 MiB a file is out of reach here).
      ['a file too large', target.name, withFiles({ [twinFilePath('stripe', 'log')]: 'x'.repeat(4 * 1024 * 1024) }), 413, 'body_too_large'],
      ['a twin not in the world', target.name, asGithub, 404, 'unknown_twin'],
      ['a twin whose log is not empty', target.name, twins.find((t) => t.twin === 'hello')!, 409, 'twin_not_empty'],
      ['a field too many', target.name, { ...good, more: 1 }, 400, 'bad_request'],
      ['a body that is not JSON', target.name, '{"twin":', 400, 'invalid_json'],
      ['a world the edge does not have', 'local/nowhere', good, 404, 'unknown_world'],
    ];
    for (const [what, name, body, status, code] of cases) {
      expectCode(await send('PUT', `${edge.url}/-/worlds/${name}/import`, { headers: { ...admin, 'content-type': 'application/json' }, body }), status, code, what);
    }
    expect(await state()).toEqual(unchanged);
    // Its stripe log still empty: the good export goes in.
    expect((await send('PUT', `${edge.url}/-/worlds/${target.name}/import`, { headers: admin, body: good })).status).toBe(200);
  }, 90_000);
});

describe("the edge's admin endpoints", () => {
  it('refuse bad names, unknown fields and an import body over 4 MB with stable codes, and change nothing', async () => {
    const w = await makeWorld({ world: 'admin-kept', vendors: ['hello'] });
    const before = await rows();
    const post = (body: object) => send('POST', `${edge.url}/-/worlds`, { headers: admin, body: { org: 'acme', world: 'fresh', vendors: ['hello'], ...body } });
    const cases: [string, Promise<Answer>, number, string][] = [
      ['an upper-case org', post({ org: 'Acme' }), 400, 'invalid_name'],
      ['an underscore', post({ world: 'a_b' }), 400, 'invalid_name'],
      ['a leading dash', post({ world: '-x' }), 400, 'invalid_name'],
      ['64 characters', post({ world: 'a'.repeat(64) }), 400, 'invalid_name'],
      ['a number', post({ world: 7 }), 400, 'invalid_name'],
      ['an org of the admin paths', post({ org: 'worlds' }), 400, 'reserved_name'],
      ['an owner that is no name', post({ owner: 'Not A Name' }), 400, 'invalid_name'],
      ['from without a world', post({ from: 'acme' }), 400, 'invalid_name'],
      ['from with a bad name', post({ from: 'acme/Shop' }), 400, 'invalid_name'],
      ['from naming no world', post({ from: 'acme/nowhere' }), 404, 'unknown_world'],
      ['a vendor the edge lacks', post({ vendors: ['hello', 'nope'] }), 400, 'unknown_vendor'],
      ['no vendors', post({ vendors: [] }), 400, 'bad_request'],
      ['an unknown field', post({ colour: 'red' }), 400, 'bad_request'],
      ['a body that is not JSON', send('POST', `${edge.url}/-/worlds`, { headers: admin, body: '{"org":' }), 400, 'invalid_json'],
      ['an array', send('POST', `${edge.url}/-/worlds`, { headers: admin, body: '[]' }), 400, 'bad_request'],
      ['a bad name in the path', send('GET', `${edge.url}/-/worlds/acme/Shop`, { headers: admin }), 400, 'invalid_name'],
      ['a bad escape in the path', send('POST', `${edge.url}/-/worlds/acme/%E0%A4%A/rotate`, { headers: admin }), 400, 'invalid_name'],
      ['a world the edge lacks', send('POST', `${edge.url}/-/worlds/acme/nowhere/rotate`, { headers: admin }), 404, 'unknown_world'],
      ['an owner with a field too many', send('PUT', `${edge.url}/-/worlds/${w.name}/owner`, { headers: admin, body: { owner: 'acme', since: 1 } }), 400, 'bad_request'],
      ['an owner that is no name', send('PUT', `${edge.url}/-/worlds/${w.name}/owner`, { headers: admin, body: { owner: 'ACME' } }), 400, 'invalid_name'],
      ['a budget of a field too many', send('PUT', `${edge.url}/-/worlds/${w.name}/budget`, { headers: admin, body: { budget: null, size: 1 } }), 400, 'bad_request'],
      ['a budget that is no budget', send('PUT', `${edge.url}/-/worlds/${w.name}/budget`, { headers: admin, body: { budget: 'lots' } }), 400, 'invalid_budget'],
      ['an import of a field too many', send('PUT', `${edge.url}/-/worlds/${w.name}/import`, { headers: admin, body: { twin: 'hello', files: {}, from: 'x' } }), 400, 'bad_request'],
      ['an import body over 4 MB', send('PUT', `${edge.url}/-/worlds/${w.name}/import`, { headers: { ...admin, 'content-type': 'application/json' }, body: `{"twin":"hello","files":{"x":"${'x'.repeat(4 * 1024 * 1024)}"}}` }), 413, 'body_too_large'],
    ];
    for (const [what, answer, status, code] of cases) expectCode(await answer, status, code, what);
    // Sent without a length (chunked), the body is counted as it is read.
    const chunk = new TextEncoder().encode('x'.repeat(1024 * 1024));
    const streamed = await fetch(`${edge.url}/-/worlds/${w.name}/import`, {
      method: 'PUT',
      headers: { ...admin, 'content-type': 'application/json' },
      body: new ReadableStream({
        start(c) {
          for (let i = 0; i < 5; i++) c.enqueue(chunk);
          c.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect([streamed.status, ((await streamed.json()) as { error: { code: string } }).error.code]).toEqual([413, 'body_too_large']);
    expect(await rows()).toEqual(before);
  });

  it('refuse every request when ADMIN_TOKEN is unset or shorter than 24 characters', async () => {
    const short = 'tok_short_23_characters';
    expect(short).toHaveLength(23);
    const edges = await Promise.all([startEdgeDev({ port: 0, adminToken: '' }), startEdgeDev({ port: 0, adminToken: short })]);
    try {
      for (const [i, e] of edges.entries()) {
        expect((await send('GET', `${e.url}/-/ping`)).json()).toEqual({ ok: true, worlds: [] });
        const given = i === 0 ? '' : short;
        for (const headers of [{}, kit(given), bearer(given), kit(ADMIN), kit(`unset-${'0'.repeat(30)}`)]) {
          for (const [method, path] of [['GET', '/-/worlds'], ['POST', '/-/worlds'], ['GET', '/-/vendors'], ['GET', '/-/worlds/acme/shop'], ['PUT', '/-/worlds/acme/shop/import'], ['DELETE', '/-/worlds/acme/shop']] as const) {
            const body = method === 'POST' ? { org: 'acme', world: 'shop', vendors: ['hello'] } : method === 'PUT' ? { twin: 'hello', files: {} } : undefined;
            expectCode(await send(method, `${e.url}${path}`, { headers, ...(body !== undefined ? { body } : {}) }), 401, 'unauthenticated', `${given === '' ? 'unset' : 'short'} ${JSON.stringify(headers)} ${method} ${path}`);
          }
        }
        expect((await send('GET', `${e.url}/-/ping`)).json()).toEqual({ ok: true, worlds: [] });
      }
    } finally {
      await Promise.all(edges.map((e) => e.close()));
    }
  });
});

// Last: the branch made before every other case has had most of its 60 s meanwhile.
describe('a branch past its ttl', () => {
  it('goes on the alarm, the object evicted in between: 404 unknown_world, gone from GET /-/worlds and from its parent', async () => {
    const { parent, branch, expiresAt } = expiring;
    // Evicted once more here unless it is too close to running out (the cases before evicted it too).
    if (expiresAt - Date.now() > 3000) {
      expect((await rows()).map((r) => r.name)).toContain(branch.name);
      await evict();
    }
    expect(evictions).toBeGreaterThan(expiring.evictions);
    // Nothing is asked of the branch's object since it was made: only the index (GET /-/worlds) is read.
    let goneAt = 0;
    while (goneAt === 0) {
      if (Date.now() > expiresAt + 15_000) throw new Error(`${branch.name} still listed 15 s after its ttl ran out`);
      if (!(await rows()).some((r) => r.name === branch.name)) goneAt = Date.now();
      else await sleep(200);
    }
    expect(goneAt).toBeGreaterThanOrEqual(expiresAt);
    console.log(`branch ttl: gone from GET /-/worlds ${goneAt - expiresAt} ms after it ran out`);
    expectCode(await api(branch, 'GET', '/map'), 404, 'unknown_world');
    expectCode(await vendor(branch, 'GET', '/hello/v1/greetings'), 404, 'unknown_world');
    expectCode(await send('GET', `${edge.url}/-/worlds/${branch.name}`, { headers: admin }), 404, 'unknown_world');
    expect((await api(parent, 'GET', '/branches')).json()).toEqual([]);
    expect((await api(parent, 'GET', '/map')).status).toBe(200);
  }, 90_000);
});
