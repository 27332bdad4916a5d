/**
 * `PUT /-/worlds/<org>/<world>/import` over real HTTP: a twin exported from one world of the
 * host (`GET …/twins/<vendor>/export`) placed into another, which then answers as the first;
 * an import into an open world that its runner does not outlive; and every bad import refused
 * with its code, the target world's state unchanged. (A world moved from `kit world serve`:
 * sdk/cli/export.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/build.js';
import { MAX_IMPORT_FILE_BYTES, twinFilePath, type TwinFiles } from '../../runtime/runner/index.js';
import { startMultiWorldHost, type MultiWorldHost } from './host.js';

let host: MultiWorldHost;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kit-import-'));
  const twins = [...(await loadBuiltinTwins()).values()];
  // A body limit above the engine's own, so that its import_too_large is reached over HTTP.
  host = await startMultiWorldHost({ dir, twins, guestRuntime: await buildGuestRuntime(), consoleDir: null, maxBodyBytes: 3 * MAX_IMPORT_FILE_BYTES });
}, 60_000);
afterAll(async () => {
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience
  text: string;
}

async function call(url: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const body = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  const res = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers: init.headers ?? {}, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, json, text };
}

const admin = () => ({ 'x-kit-token': host.adminToken, 'content-type': 'application/json' });

async function createWorld(org: string, world: string, vendors = ['hello', 'stripe']): Promise<{ name: string; token: string }> {
  const a = await call(`${host.url}/-/worlds`, { headers: admin(), body: { org, world, vendors } });
  expect(a.status, a.text).toBe(201);
  return a.json;
}

function importTwin(name: string, body: unknown, headers: Record<string, string> = admin()): Promise<Answer> {
  return call(`${host.url}/-/worlds/${name}/import`, { method: 'PUT', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** A world of the host with history: greetings, Stripe customers, a scenario, the clock set and moved. */
async function sourceWorld(world: string): Promise<{ api: string; url: string; token: string; ids: string[] }> {
  const made = await createWorld('acme', world);
  const api = `${host.url}/-/acme/${world}`;
  const url = `${host.url}/acme/${world}`;
  const h = { 'x-kit-token': made.token, 'content-type': 'application/json' };
  expect((await call(`${api}/clock`, { method: 'PUT', headers: h, body: { at: '2026-02-01T00:00:00.000Z' } })).status).toBe(200);
  const ids: string[] = [];
  for (const email of ['a@example.com', 'b@example.com']) {
    const c = await call(`${url}/stripe/v1/customers`, { headers: { authorization: `Bearer ${made.token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `email=${encodeURIComponent(email)}` });
    expect(c.status).toBe(200);
    ids.push(c.json.id);
    await call(`${api}/clock/advance`, { headers: h, body: { by: '1h' } });
  }
  expect((await call(`${url}/hello/v1/greetings`, { headers: { 'x-kit-token': made.token, 'content-type': 'application/json' }, body: { name: 'Ada', expires_in: 86_400 } })).status).toBe(200);
  const scenario = JSON.stringify({ handlers: [{ name: 'teapot', match: 'GET /v1/balance', respond: { status: 418 } }] });
  expect((await call(`${api}/twins/stripe/scenario`, { method: 'PUT', headers: h, body: scenario })).status).toBe(200);
  return { api, url, token: made.token, ids };
}

async function exportOf(api: string, token: string, twin: string): Promise<TwinFiles> {
  const e = await call(`${api}/twins/${twin}/export`, { headers: { 'x-kit-token': token } });
  expect(e.status, e.text).toBe(200);
  return e.json;
}

/** What a reader of the world sees: each twin's export (log, scenario, clock) and the map. */
async function state(api: string, token: string): Promise<string> {
  const out: unknown[] = [];
  for (const twin of ['hello', 'stripe']) out.push(await exportOf(api, token, twin));
  out.push((await call(`${api}/map`, { headers: { 'x-kit-token': token } })).json);
  return JSON.stringify(out);
}

describe('PUT /-/worlds/<org>/<world>/import', () => {
  it("places a twin exported from one world into another, which answers as the first (the scenario in force included), and refuses it a second time", async () => {
    const src = await sourceWorld('origin');
    const moved = await createWorld('acme', 'moved');
    const movedApi = `${host.url}/-/acme/moved`;
    // Opened before the import: the runner must not outlive it with an empty twin in memory.
    expect((await call(`${host.url}/acme/moved/stripe/v1/customers`, { headers: { authorization: `Bearer ${moved.token}` } })).json.data).toEqual([]);
    expect(host.pool.isOpen('acme/moved')).toBe(true);
    for (const twin of ['stripe', 'hello']) {
      const e = await exportOf(src.api, src.token, twin);
      const placed = await importTwin('acme/moved', e);
      expect(placed.status, placed.text).toBe(200);
      const entries = JSON.parse(e.files[twinFilePath(twin, 'twin')]!).entries as number;
      expect(placed.json).toEqual({ twin, entries, position: entries, scenario: twin === 'stripe', clock: { at: '2026-02-01T02:00:00.000Z', frozen: true } });
    }
    for (const path of ['/log/stripe', '/log/hello', '/timeline', '/diff', '/clock', '/checkpoint/stripe?at=1', '/twins/stripe/scenario']) {
      const [a, b] = await Promise.all([call(`${src.api}${path}`, { headers: { 'x-kit-token': src.token } }), call(`${movedApi}${path}`, { headers: { 'x-kit-token': moved.token } })]);
      expect([path, b.status, b.text]).toEqual([path, 200, a.text]);
    }
    for (const id of src.ids) {
      const [a, b] = await Promise.all([
        call(`${src.url}/stripe/v1/customers/${id}`, { headers: { authorization: `Bearer ${src.token}` } }),
        call(`${host.url}/acme/moved/stripe/v1/customers/${id}`, { headers: { authorization: `Bearer ${moved.token}` } }),
      ]);
      expect([b.status, b.text]).toEqual([200, a.text]);
    }
    expect((await call(`${host.url}/acme/moved/stripe/v1/balance`, { headers: { authorization: `Bearer ${moved.token}` } })).status).toBe(418);
    const again = await importTwin('acme/moved', await exportOf(src.api, src.token, 'stripe'));
    expect([again.status, again.json.error.code]).toEqual([409, 'twin_not_empty']);
  });

  it('refuses each bad import with a stable code, and leaves the world as it was', async () => {
    const src = await sourceWorld('source2');
    const good = await exportOf(src.api, src.token, 'stripe');
    // The target has a life of its own: hello's history, its clock set.
    const target = await sourceWorld('target2');
    const log = good.files[twinFilePath('stripe', 'log')]!.trimEnd().split('\n');
    const withFiles = (files: Record<string, unknown>): unknown => ({ twin: 'stripe', files: { ...good.files, ...files } });
    const withLog = (lines: string[]): unknown => withFiles({ [twinFilePath('stripe', 'log')]: `${lines.join('\n')}\n`, [twinFilePath('stripe', 'twin')]: JSON.stringify({ version: 1, twin: 'stripe', entries: lines.length }) });
    // Its stripe log is emptied the only way there is: a world made without history of it.
    const empty = await createWorld('acme', 'empty2');
    const emptyApi = `${host.url}/-/acme/empty2`;
    // A set clock (the wall clock's would move between two reads of the state), earlier than the export's.
    expect((await call(`${emptyApi}/clock`, { method: 'PUT', headers: { 'x-kit-token': empty.token, 'content-type': 'application/json' }, body: { at: '2026-01-01T00:00:00.000Z' } })).status).toBe(200);
    const cases: [string, string, unknown, number, string][] = [
      ['a path climbing out', 'acme/empty2', withFiles({ '.kit/world/../../etc/passwd': 'x' }), 400, 'invalid_import'],
      ['an absolute path', 'acme/empty2', withFiles({ '/etc/passwd': 'x' }), 400, 'invalid_import'],
      ['another root', 'acme/empty2', withFiles({ '.kit/token': '{}' }), 400, 'invalid_import'],
      ['a file too large', 'acme/empty2', withFiles({ [twinFilePath('stripe', 'log')]: 'x'.repeat(MAX_IMPORT_FILE_BYTES + 1) }), 413, 'import_too_large'],
      ['a bad entry', 'acme/empty2', withLog([log[0]!.replace('"writes":[', '"writes":[{"type":"customer"},')]), 400, 'invalid_import'],
      ['positions with a gap', 'acme/empty2', withLog([log[0]!, log[2]!]), 400, 'invalid_import'],
      ['a body that is not JSON', 'acme/empty2', '{"twin":', 400, 'invalid_json'],
      ['a field too many', 'acme/empty2', { ...good, more: 1 }, 400, 'bad_request'],
      ['a twin not in the world', 'acme/empty2', { twin: 'github', files: Object.fromEntries(Object.entries(good.files).map(([p, c]) => [p.replace('/stripe/', '/github/'), c.replace('"twin":"stripe"', '"twin":"github"')])) }, 404, 'unknown_twin'],
      ['a world the host does not have', 'acme/nowhere', good, 404, 'unknown_world'],
      ['a twin whose log is not empty', 'acme/target2', good, 409, 'twin_not_empty'],
      ['a clock it would move back', 'acme/later2', good, 409, 'clock_backward'],
    ];
    const later = await createWorld('acme', 'later2');
    const laterApi = `${host.url}/-/acme/later2`;
    expect((await call(`${laterApi}/clock`, { method: 'PUT', headers: { 'x-kit-token': later.token, 'content-type': 'application/json' }, body: { at: '2027-01-01T00:00:00.000Z' } })).status).toBe(200);
    const worlds: Record<string, [string, string]> = { 'acme/empty2': [emptyApi, empty.token], 'acme/target2': [target.api, target.token], 'acme/later2': [laterApi, later.token] };
    const before: Record<string, string> = {};
    for (const [name, [api, token]] of Object.entries(worlds)) before[name] = await state(api, token);
    for (const [name, world, body, status, code] of cases) {
      const a = await importTwin(world, body);
      expect([name, a.status, a.json?.error?.code]).toEqual([name, status, code]);
      for (const [w, [api, token]] of Object.entries(worlds)) expect([name, w, await state(api, token)]).toEqual([name, w, before[w]]);
    }
    // The admin's credential and method, as on every admin path.
    expect((await importTwin('acme/empty2', good, { 'content-type': 'application/json' })).status).toBe(401);
    expect((await importTwin('acme/empty2', good, { 'x-kit-token': empty.token })).status).toBe(401);
    const get = await call(`${host.url}/-/worlds/acme/empty2/import`, { headers: admin() });
    expect([get.status, get.json.error.code]).toEqual([405, 'method_not_allowed']);
    // After them all the good one goes in, and moves the clock on to the export's.
    const placed = await importTwin('acme/empty2', good);
    expect([placed.status, placed.json.clock]).toEqual([200, { at: '2026-02-01T02:00:00.000Z', frozen: true }]);
  });

  it('refuses a body over the host\'s limit before reading it (413 body_too_large)', async () => {
    const a = await importTwin('acme/empty2', { twin: 'stripe', files: { [twinFilePath('stripe', 'log')]: 'x'.repeat(3 * MAX_IMPORT_FILE_BYTES) } });
    expect([a.status, a.json.error.code]).toEqual([413, 'body_too_large']);
  });
});
