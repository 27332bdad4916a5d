/**
 * A world moved from `kit world serve` to a multi-world host, as a person moves it: the `kit`
 * executable serves a directory in a process of its own (Stripe customers and a product, a
 * GitHub repository holding a binary file, a scenario, the clock set and moved on); `kit world
 * export` reads it through that server while it serves, and from its store once it stopped
 * (the same files both ways); each twin goes to `PUT /-/worlds/local/demo/import` on a host;
 * and the host's world answers every read the local one answered, byte for byte.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMultiWorldHost, type MultiWorldHost } from '../../host/index.js';
import { NO_PAGES } from '../../host/core/pages.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../twin/build.js';
import { kit } from '../../test/helpers/kit-cli.js';
import { EXPORT_USAGE } from './export.js';

let bundleDir: string;
let worldDir: string;
let hostDir: string;
let server: ChildProcess | null = null;
let host: MultiWorldHost | null = null;
/** The local world as `kit world serve` printed it. */
let local: { url: string; api: string; token: string };
/** Every read, as the local world answered it while it served. */
let before: Map<string, { status: number; body: string }>;
let blobBytes: Buffer;
interface Ids {
  ada: string;
  gone: string;
  product: string;
  /** The git blob of the binary file. */
  blob: string;
}
/** What the local world made. */
let ids: Ids;
let devToken: string;

const SCENARIO = JSON.stringify({ handlers: [{ name: 'teapot', match: 'GET /v1/balance', respond: { status: 418 } }] });

/** The environment without the developer's KIT_*. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KIT_')));
}

/** `kit world serve <dir>` in a process of its own, until it prints that it serves. */
async function serve(script: string, dir: string): Promise<{ child: ChildProcess; url: string; api: string; token: string }> {
  const child = spawn(process.execPath, [script, 'world', 'serve', dir, '--port', '0', '--world', 'demo', '--twins', 'github,stripe'], { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kit world serve did not start: ${out}`)), 60_000);
    child.stdout!.on('data', () => {
      if (out.includes('Ctrl-C stops the server.')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', () => reject(new Error(`kit world serve ended: ${out}`)));
  });
  const field = (name: string): string => new RegExp(`^  ${name}\\s+(\\S+)`, 'm').exec(out)![1]!;
  return { child, url: field('world URL'), api: field('world API'), token: field('token') };
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  return exited;
}

async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string; json: any }> {
  const res = await fetch(url, { method: init.method ?? 'GET', headers: init.headers ?? {}, ...(init.body !== undefined ? { body: init.body } : {}) });
  const body = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(body);
  } catch {
    // not JSON
  }
  return { status: res.status, body, json };
}

function octokit(worldUrl: string, worldToken: string): Octokit {
  const o = new Octokit({ baseUrl: `${worldUrl}/github`, auth: devToken, log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
  o.hook.before('request', (options) => {
    Object.assign(options.headers, { 'x-twins-key': worldToken });
  });
  return o;
}

/** The reads compared: vendor wire and world API, each with the world's own URL and token. */
function readPaths(ids: Ids): { name: string; path: (w: { url: string; api: string }) => string; auth: 'bearer' | 'kit' | 'github' }[] {
  const wire = (p: string, auth: 'bearer' | 'github' = 'bearer') => ({ name: p, path: (w: { url: string }) => `${w.url}${p}`, auth });
  const api = (p: string) => ({ name: p, path: (w: { api: string }) => `${w.api}${p}`, auth: 'kit' as const });
  return [
    wire(`/stripe/v1/customers/${ids.ada}`),
    wire(`/stripe/v1/customers/${ids.gone}`),
    wire('/stripe/v1/customers?limit=10'),
    wire(`/stripe/v1/products/${ids.product}`),
    wire('/stripe/v1/balance'),
    wire('/github/repos/dev/notes', 'github'),
    wire('/github/repos/dev/notes/contents/blob.bin', 'github'),
    wire(`/github/repos/dev/notes/git/blobs/${ids.blob}`, 'github'),
    wire('/github/repos/dev/notes/commits', 'github'),
    api('/log/stripe'),
    api('/log/github?limit=1000'),
    api('/timeline?limit=500'),
    api('/checkpoint/stripe?at=2'),
    api('/checkpoint/github'),
    api('/clock'),
    api('/map'),
    api('/diff'),
    api('/twins/stripe/scenario'),
  ];
}

async function readAll(w: { url: string; api: string; token: string }, ids: Ids): Promise<Map<string, { status: number; body: string }>> {
  const out = new Map<string, { status: number; body: string }>();
  for (const r of readPaths(ids)) {
    const headers: Record<string, string> =
      r.auth === 'kit' ? { 'x-kit-token': w.token } : r.auth === 'bearer' ? { authorization: `Bearer ${w.token}` } : { authorization: `token ${devToken}`, 'x-twins-key': w.token };
    const a = await call(r.path(w), { headers });
    // A twin writes absolute links from where it was reached: the world's own address.
    out.set(r.name, { status: a.status, body: a.body.replaceAll(new URL(w.url).origin, 'http://<host>') });
  }
  // A history cut names the world's engine (`demo@stripe:3` here, `local/demo@stripe:3` on the host): its positions must agree.
  for (const at of ['2026-03-01T09:59:59.000Z', '2026-03-01T10:00:00.000Z', '2026-03-01T11:00:00.000Z', '2026-03-03T00:00:00.000Z']) {
    const cut = await call(`${w.api}/history?at=${at}`, { headers: { 'x-kit-token': w.token } });
    out.set(`/history?at=${at}`, { status: cut.status, body: JSON.stringify(Object.entries(cut.json.views as Record<string, { position: number }>).map(([t, v]) => [t, v.position])) });
  }
  return out;
}

beforeAll(async () => {
  bundleDir = await mkdtemp(join(process.cwd(), 'sdk', 'cli', '.kit-test-export-'));
  worldDir = await mkdtemp(join(tmpdir(), 'kit-export-'));
  hostDir = await mkdtemp(join(tmpdir(), 'kit-export-host-'));
  // The executable as kit.test.ts builds it: three levels below the repository, as dist/sdk/cli/kit.js is.
  const script = join(bundleDir, 'kit.mjs');
  await esbuild.build({ entryPoints: [join(process.cwd(), 'sdk', 'cli', 'kit.ts')], bundle: true, platform: 'node', format: 'esm', packages: 'external', outfile: script, logLevel: 'silent' });
  const served = await serve(script, worldDir);
  server = served.child;
  local = { url: served.url, api: served.api, token: served.token };

  const kitApi = (method: string, path: string, body: unknown) =>
    call(`${local.api}${path}`, { method, headers: { 'x-kit-token': local.token, 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const stripe = (path: string, form?: string, method = 'POST') =>
    call(`${local.url}/stripe${path}`, { method, headers: { authorization: `Bearer ${local.token}`, 'content-type': 'application/x-www-form-urlencoded' }, ...(form !== undefined ? { body: form } : {}) });
  expect((await kitApi('PUT', '/clock', { at: '2026-03-01T10:00:00.000Z' })).status).toBe(200);
  const ada = await stripe('/v1/customers', 'email=ada%40example.com&name=Ada%20Lovelace&metadata[team]=analytical');
  const gone = await stripe('/v1/customers', 'email=gone%40example.com');
  const product = await stripe('/v1/products', 'name=Difference%20Engine&metadata[gear]=brass');
  ids = { ada: ada.json.id, gone: gone.json.id, product: product.json.id, blob: '' };
  expect((await kitApi('POST', '/clock/advance', { by: '1h' })).status).toBe(200);
  expect((await stripe(`/v1/customers/${ids.ada}`, 'description=first%20programmer')).status).toBe(200);
  expect((await stripe(`/v1/customers/${ids.gone}`, undefined, 'DELETE')).status).toBe(200);
  // GitHub: a user, a repository, and a file of every byte value (git objects kept as base64).
  const admin = new Octokit({ baseUrl: `${local.url}/github`, auth: local.token, log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
  await admin.request('POST /admin/users', { login: 'dev', email: 'dev@example.test' });
  devToken = ((await admin.request('POST /admin/users/{username}/authorizations', { username: 'dev', scopes: ['repo'] })).data as { token: string }).token;
  const gh = octokit(local.url, local.token);
  await gh.repos.createForAuthenticatedUser({ name: 'notes', auto_init: true });
  blobBytes = Buffer.from(Array.from({ length: 1024 }, (_, i) => (i * 7 + (i >> 8)) & 0xff));
  const file = await gh.repos.createOrUpdateFileContents({ owner: 'dev', repo: 'notes', path: 'blob.bin', message: 'every byte', content: blobBytes.toString('base64') });
  ids.blob = file.data.content!.sha!;
  expect((await kitApi('POST', '/clock/advance', { by: '1d' })).status).toBe(200);
  expect((await call(`${local.api}/twins/stripe/scenario`, { method: 'PUT', headers: { 'x-kit-token': local.token, 'content-type': 'application/json' }, body: SCENARIO })).status).toBe(200);
  before = await readAll(local, ids);
}, 180_000);

afterAll(async () => {
  if (server !== null) await stop(server);
  await host?.close();
  for (const d of [bundleDir, worldDir, hostDir]) if (d) await rm(d, { recursive: true, force: true });
});

describe('kit world export, then PUT …/import on a host', () => {
  let served: string;
  let stopped: string;

  it('reads a served world through its server (its store is the server\'s), one twin or all', async () => {
    const r = await kit(['world', 'export', worldDir, '--out', join(worldDir, 'served.json')], { env: {}, cwd: worldDir });
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.err).toEqual([
      expect.stringMatching(new RegExp(`^kit: exported github: \\d+ entries, [\\d.]+ KiB \\(through ${local.url.replaceAll('.', '\\.')}\\)$`)),
      expect.stringMatching(/^kit: exported stripe: 5 entries, /),
    ]);
    served = await readFile(join(worldDir, 'served.json'), 'utf8');
    const all = JSON.parse(served) as { twin: string; files: Record<string, string> }[];
    expect(all.map((t) => t.twin)).toEqual(['github', 'stripe']);
    expect(Object.keys(all[1]!.files).sort()).toEqual(['.kit/world/clock.json', '.kit/world/stripe/log.jsonl', '.kit/world/stripe/scenario.json', '.kit/world/stripe/twin.json']);
    // One twin to standard output: the object an import takes.
    const one = await kit(['world', 'export', '--twin', 'stripe'], { env: {}, cwd: worldDir });
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout.toString('utf8'))).toEqual(all[1]);
    // Any world, named by its URL and token, through its server.
    const named = await kit(['world', 'export', '--world', local.url, '--token', local.token, '--twin', 'github']);
    expect([named.code, JSON.parse(named.stdout.toString('utf8'))]).toEqual([0, all[0]]);
  });

  it('reads a stopped world from its store: the same files', async () => {
    expect(await stop(server!)).toBe(0);
    server = null;
    const r = await kit(['world', 'export', worldDir, '--out', join(worldDir, 'stopped.json')], { env: {}, cwd: tmpdir() });
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.err[0]).toContain(`(from ${join(worldDir, '.kit', 'world')})`);
    stopped = await readFile(join(worldDir, 'stopped.json'), 'utf8');
    expect(stopped).toBe(served);
  });

  it('moves each twin to a world of the host, which answers every read as the local world did', async () => {
    // No pages, as the bundled local server has none beside it: the map's `mirror` is the host's pages, not the world's data.
    host = await startMultiWorldHost({ dir: hostDir, twins: [...(await loadBuiltinTwins()).values()], guestRuntime: await buildGuestRuntime(), consoleDir: null, pages: NO_PAGES });
    const admin = { 'x-kit-token': host.adminToken, 'content-type': 'application/json' };
    const made = await call(`${host.url}/-/worlds`, { method: 'POST', headers: admin, body: JSON.stringify({ org: 'local', world: 'demo', vendors: ['github', 'stripe'] }) });
    expect(made.status).toBe(201);
    for (const twin of JSON.parse(stopped) as { twin: string }[]) {
      const placed = await call(`${host.url}/-/worlds/local/demo/import`, { method: 'PUT', headers: admin, body: JSON.stringify(twin) });
      expect(placed.status, placed.body).toBe(200);
      expect(placed.json).toMatchObject({ twin: twin.twin, scenario: twin.twin === 'stripe', clock: { at: '2026-03-02T11:00:00.000Z', frozen: true } });
    }
    const moved = { url: `${host.url}/local/demo`, api: `${host.url}/-/local/demo`, token: made.json.token as string };
    const after = await readAll(moved, ids);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [name, answer] of before) expect([name, after.get(name)]).toEqual([name, answer]);
    // What the reads hold: the binary file byte for byte (as its content and as its git blob), the deleted customer, the scenario in force.
    const gh = octokit(moved.url, moved.token);
    const content = await gh.repos.getContent({ owner: 'dev', repo: 'notes', path: 'blob.bin' });
    expect(Buffer.from((content.data as { content: string }).content, 'base64').equals(blobBytes)).toBe(true);
    const blob = await gh.git.getBlob({ owner: 'dev', repo: 'notes', file_sha: ids.blob });
    expect(Buffer.from(blob.data.content, 'base64').equals(blobBytes)).toBe(true);
    expect(JSON.parse(after.get(`/stripe/v1/customers/${ids.gone}`)!.body)).toMatchObject({ deleted: true });
    expect(after.get('/stripe/v1/balance')!.status).toBe(418);
    // The moved world goes on from there: a new customer, on its own.
    const next = await call(`${moved.url}/stripe/v1/customers`, { method: 'POST', headers: { authorization: `Bearer ${moved.token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=next%40example.com' });
    expect(next.status).toBe(200);
    expect((await call(`${moved.api}/log/stripe`, { headers: { 'x-kit-token': moved.token } })).json.entries.at(-1)).toMatchObject({ position: 6, occurredAt: '2026-03-02T11:00:00.000Z' });
  }, 120_000);

  it('says what it needs: usage errors exit 2, a directory without a world exits 1', async () => {
    const help = await kit(['world', 'export', '--help']);
    expect([help.code, help.out.join('\n')]).toEqual([0, EXPORT_USAGE]);
    for (const argv of [['a', 'b'], ['--world', 'http://x/o/w'], ['--twin', '../x'], ['--nope']]) {
      const r = await kit(['world', 'export', ...argv]);
      expect([argv.join(' '), r.code, r.err.at(-1)]).toEqual([argv.join(' '), 2, EXPORT_USAGE]);
    }
    const none = await kit(['world', 'export', hostDir]);
    expect([none.code, none.err]).toEqual([1, [expect.stringMatching(/^kit: no world is kept in .*\(no_world\)$/)]]);
  });
});
