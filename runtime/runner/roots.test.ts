import { afterEach, describe, expect, it } from 'vitest';
import { fixtureTwin, openTestWorld, type TestWorld } from '../../test/helpers/world.js';
import { MemoryStorage } from '../store/index.js';
import type { OutboundAnswer, OutboundFetch, OutboundRequest } from '../roots/outbound.js';
import { createSealer, newSealingKey, sealingKeyBytes } from '../roots/sealing.js';
import { stripeSignature } from '../roots/signatures.js';
import { KitError } from '../errors.js';

const SECRET = 'sk_live_51Hsealed0secret0value';
const SIGNING = 'whsec_notes_signing_secret';
const ROOT = 'https://api.notes.test';

/** The vendor behind the root: notes in pages of two, and every request it was sent. */
class NotesVendor {
  notes = new Map<string, string>([
    ['n1', 'one'],
    ['n2', 'two'],
    ['n3', 'three'],
    ['n4', 'four'],
    ['n5', 'five'],
  ]);
  seen: OutboundRequest[] = [];
  failWith: number | null = null;
  /** Held until released, to keep a refresh running. */
  gate: Promise<void> | null = null;

  fetch: OutboundFetch = async (request) => {
    this.seen.push(request);
    if (this.gate) await this.gate;
    const url = new URL(request.url);
    if (this.failWith !== null) return answer(this.failWith, { error: `bad key ${request.headers['authorization']}` });
    if (url.origin === 'https://echo.test') return answer(200, { method: request.method, path: url.pathname + url.search, headers: request.headers });
    const page = Number(url.searchParams.get('page') ?? '1');
    const all = [...this.notes].map(([id, text]) => ({ id, text }));
    const slice = all.slice((page - 1) * 2, page * 2);
    return answer(200, { notes: slice, next: page * 2 < all.length ? page + 1 : null });
  };
}

function answer(status: number, body: unknown): OutboundAnswer {
  return { status, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode(JSON.stringify(body)) };
}

let world: TestWorld;
let vendor: NotesVendor;
let wall = Date.parse('2026-01-01T00:00:00.000Z');
afterEach(async () => {
  await world?.close();
});

async function rootedWorld(options: { sealer?: boolean } = {}): Promise<TestWorld> {
  vendor = new NotesVendor();
  wall = Date.parse('2026-01-01T00:00:00.000Z');
  world = await openTestWorld({
    vendors: ['hello'],
    more: [await fixtureTwin('notes')],
    storage: new MemoryStorage(),
    now: () => wall,
    outbound: vendor.fetch,
    ...(options.sealer === false ? {} : { sealer: createSealer(sealingKeyBytes(newSealingKey())) }),
  });
  return world;
}

/** Every value in the world's storage, as text. */
function everythingStored(w: TestWorld): string {
  return JSON.stringify([...w.storage.range({ start: [' '], end: ['\uffff'] })]);
}

describe('a twin with a root', () => {
  it('sets, shows and clears a root; refuses what it must not reach', async () => {
    const w = await rootedWorld();
    expect((await w.api('GET', '/twins/notes/root')).json).toBeNull();
    const set = await w.api('PUT', '/twins/notes/root', { url: ROOT, refresh: { atMost: '5m' } });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ url: ROOT, deploy: 'manual', refresh: { atMost: '5m' } });
    expect((await w.api('GET', '/twins/notes/root')).json).toEqual(set.json);
    for (const [url, code] of [
      ['http://api.notes.test', 'destination_refused'],
      ['http://127.0.0.1:9/x', 'destination_refused'],
      ['ftp://api.notes.test', 'destination_refused'],
    ] as const) {
      const refused = await w.api('PUT', '/twins/notes/root', { url });
      expect(refused.status, url).toBe(400);
      expect(refused.json.error.code, url).toBe(code);
    }
    expect((await w.api('PUT', '/twins/notes/root', { url: ROOT, deploy: 'sometimes' })).json.error.code).toBe('invalid_root');
    expect((await w.api('PUT', '/twins/notes/root', { url: ROOT, refresh: { every: '10s' } })).json.error.code).toBe('invalid_root');
    expect((await w.api('PUT', '/twins/hello/root', { url: ROOT })).json.error.code).toBe('invalid_root');
    // Refusals kept the root that was set.
    expect((await w.api('GET', '/twins/notes/root')).json.url).toBe(ROOT);
    expect((await w.api('PUT', '/twins/notes/root', null)).json).toBeNull();
    expect((await w.api('GET', '/twins/notes/status')).json.root).toBeNull();
  });

  it('seals a credential it never shows again, anywhere', async () => {
    const w = await rootedWorld();
    const sealed = await w.api('PUT', '/twins/notes/credential', { bearer: SECRET, signingSecret: SIGNING });
    expect(sealed.status).toBe(200);
    expect(sealed.json).toEqual({ sealed: true, sealedAt: '2026-01-01T00:00:00.000Z' });
    expect((await w.api('GET', '/twins/notes/credential')).json).toEqual({ sealed: true, sealedAt: '2026-01-01T00:00:00.000Z' });
    expect((await w.api('GET', '/twins/hello/credential')).json).toEqual({ sealed: false, sealedAt: null });
    // The sealed box is there (the scan sees the runner's keys), the secrets are not.
    expect(everythingStored(w)).toContain('"credential","notes"');
    expect(everythingStored(w)).not.toContain(SECRET);
    expect(everythingStored(w)).not.toContain(SIGNING);

    const tooLarge = await w.api('PUT', '/twins/notes/credential', { headers: { 'x-pad': 'a'.repeat(20_000) } });
    expect([tooLarge.status, tooLarge.json.error.code]).toEqual([413, 'credential_too_large']);
    const notJson = await w.api('PUT', '/twins/notes/credential', `{ "bearer": "${SECRET}"`);
    expect(notJson.json.error.code).toBe('invalid_json');
    expect(notJson.text).not.toContain(SECRET);
    const badHeader = await w.api('PUT', '/twins/notes/credential', { headers: { authorization: `Bearer ${SECRET}\r\nx-evil: 1` } });
    expect(badHeader.json.error.code).toBe('invalid_credential');
    expect(badHeader.text).not.toContain(SECRET);
    expect((await w.api('PUT', '/twins/nobody/credential', { bearer: SECRET })).json.error.code).toBe('unknown_twin');
  });

  it('answers sealing_unavailable on a host without a sealing key', async () => {
    const w = await rootedWorld({ sealer: false });
    const refused = await w.api('PUT', '/twins/notes/credential', { bearer: SECRET });
    expect([refused.status, refused.json.error.code]).toEqual([503, 'sealing_unavailable']);
  });

  it('refreshes: every page into the log as entries caused by the refresh, the credential added by the host', async () => {
    const w = await rootedWorld();
    await w.api('PUT', '/twins/notes/root', { url: ROOT });
    await w.api('PUT', '/twins/notes/credential', { bearer: SECRET });
    const before = await w.vendor('GET', '/notes/v1/notes');
    expect(before.headers['x-kit-observed-at']).toBeUndefined();

    wall += 1000;
    const refreshed = await w.api('POST', '/twins/notes/refresh');
    expect(refreshed.status).toBe(200);
    expect(refreshed.json.refresh).toMatchObject({ ok: true, reads: 3, entries: 3, written: 5, deleted: 0, observedAt: '2026-01-01T00:00:01.000Z' });
    expect(vendor.seen.map((r) => r.url)).toEqual([`${ROOT}/v1/notes?page=1`, `${ROOT}/v1/notes?page=2`, `${ROOT}/v1/notes?page=3`]);
    expect(vendor.seen.every((r) => r.headers['authorization'] === `Bearer ${SECRET}` && r.method === 'GET')).toBe(true);

    const after = await w.vendor('GET', '/notes/v1/notes/n4');
    expect(after.json).toEqual({ id: 'n4', text: 'four' });
    expect(after.headers['x-kit-observed-at']).toBe('2026-01-01T00:00:01.000Z');
    const log = await w.api('GET', '/log/notes');
    expect(log.json.entries.map((e: { cause: { kind: string } }) => e.cause.kind)).toEqual(['refresh', 'refresh', 'refresh']);
    const status = (await w.api('GET', '/twins/notes/status')).json;
    expect(status).toMatchObject({ root: { url: ROOT }, credential: { sealed: true }, lastRefresh: { ok: true, reads: 3 }, position: 3 });
    // The map names the root; the markers beside the records are no resource of the vendor's.
    const mapped = (await w.api('GET', '/map')).json.twins.find((t: { twin: string }) => t.twin === 'notes');
    expect(mapped).toMatchObject({ root: { url: ROOT }, resources: [{ type: 'note', count: 5 }] });
    expect(status.resources).toEqual([{ type: 'note', count: 5 }]);
    // Nothing the world shows holds the secret.
    for (const path of ['/log/notes', '/timeline', '/diff', '/checkpoint/notes', '/twins', '/twins/notes/export']) expect((await w.api('GET', path)).text, path).not.toContain(SECRET);
    expect(everythingStored(w)).not.toContain(SECRET);
  });

  it('keeps the world edits of what the root left alone, takes the root changes, deletes what it no longer has; history still shows the empty twin', async () => {
    const w = await rootedWorld();
    await w.api('PUT', '/twins/notes/root', { url: ROOT });
    wall += 1000;
    await w.api('POST', '/twins/notes/refresh');
    wall += 1000;
    expect((await w.vendor('PATCH', '/notes/v1/notes/n3', { text: 'three, edited in the world' })).status).toBe(200);
    vendor.notes.set('n1', 'one, changed at the root');
    vendor.notes.delete('n2');
    vendor.notes.set('n6', 'six');

    wall += 1000;
    const throttled = await w.api('POST', '/twins/notes/refresh');
    expect([throttled.status, throttled.json.error.code]).toEqual([429, 'refresh_throttled']);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    const forced = await w.api('POST', '/twins/notes/refresh?force=1');
    expect(forced.json.refresh).toMatchObject({ ok: true, written: 2, deleted: 1 });

    expect((await w.vendor('GET', '/notes/v1/notes/n1')).json.text).toBe('one, changed at the root');
    expect((await w.vendor('GET', '/notes/v1/notes/n2')).status).toBe(404);
    expect((await w.vendor('GET', '/notes/v1/notes/n3')).json.text).toBe('three, edited in the world');
    expect((await w.vendor('GET', '/notes/v1/notes/n6')).json.text).toBe('six');

    // A refresh with nothing new writes nothing.
    wall += 120_000;
    const quiet = await w.api('POST', '/twins/notes/refresh');
    expect(quiet.json.refresh).toMatchObject({ ok: true, entries: 0, written: 0, deleted: 0 });

    const cut = await w.api('GET', '/history?at=2026-01-01T00:00:00.500Z');
    expect(cut.json.views.notes.position).toBe(0);
  });

  it('fails a refresh whole when the vendor refuses: nothing swept, the last refresh kept, no secret in the error', async () => {
    const w = await rootedWorld();
    await w.api('PUT', '/twins/notes/root', { url: ROOT });
    await w.api('PUT', '/twins/notes/credential', { bearer: SECRET });
    await w.api('POST', '/twins/notes/refresh');
    const head = w.runner.world.head('notes');
    vendor.failWith = 401;
    const failed = await w.api('POST', '/twins/notes/refresh?force=1');
    expect([failed.status, failed.json.error.code]).toEqual([502, 'refresh_failed']);
    expect(failed.text).not.toContain(SECRET);
    expect(failed.text).toContain('[sealed]');
    expect(w.runner.world.head('notes')).toBe(head);
    const status = (await w.api('GET', '/twins/notes/status')).json;
    expect(status.lastRefresh.ok).toBe(true);
    expect(status.lastRefreshAttempt).toMatchObject({ ok: false, error: { code: 'refresh_failed' } });
    expect(JSON.stringify(status)).not.toContain(SECRET);
    expect((await w.vendor('GET', '/notes/v1/notes/n1')).status).toBe(200);
  });

  it('refreshes on its schedule: the host learns when, and a wake-up performs it', async () => {
    const w = await rootedWorld();
    await w.api('PUT', '/twins/notes/root', { url: ROOT, refresh: { every: '10m' } });
    const setAt = wall;
    // Nothing is due before the schedule, whatever the world's clock says.
    expect(w.runner.nextMoveDueMs()).toBe(setAt + 600_000);
    expect((await w.api('GET', '/twins/notes/status')).json.nextRefreshAt).toBe(new Date(setAt + 600_000).toISOString());
    expect(await w.runner.performDueMoves()).toBe(0);
    expect(vendor.seen).toHaveLength(0);
    wall = setAt + 600_001;
    await w.runner.performDueMoves();
    expect(vendor.seen).toHaveLength(3);
    expect((await w.vendor('GET', '/notes/v1/notes/n5')).json.text).toBe('five');
    // The next one counts from this one's start.
    expect(w.runner.nextMoveDueMs()).toBe(setAt + 600_001 + 600_000);
    // A clock set on the world does not hold the schedule back: it keeps the vendor's time.
    await w.api('PUT', '/clock', { at: '2027-01-01T00:00:00.000Z' });
    expect(w.runner.nextMoveDueMs()).toBe(setAt + 1_200_001);
  });

  it('runs one refresh of a twin at a time', async () => {
    const w = await rootedWorld();
    await w.api('PUT', '/twins/notes/root', { url: ROOT });
    let release!: () => void;
    vendor.gate = new Promise((r) => (release = r));
    const first = w.api('POST', '/twins/notes/refresh');
    await new Promise((r) => setTimeout(r, 10));
    const second = await w.api('POST', '/twins/notes/refresh?force=1');
    expect([second.status, second.json.error.code]).toEqual([409, 'refresh_in_progress']);
    release();
    vendor.gate = null;
    expect((await first).status).toBe(200);
  });

  it('folds a signed webhook; refuses a forged, stale or replayed one and keeps nothing of it', async () => {
    const w = await rootedWorld();
    await w.api('PUT', '/twins/notes/root', { url: ROOT });
    expect((await w.api('POST', '/twins/notes/ingest', '{}')).json.error.code).toBe('no_credential');
    await w.api('PUT', '/twins/notes/credential', { bearer: SECRET, signingSecret: SIGNING });
    await w.api('POST', '/twins/notes/refresh');
    const head = w.runner.world.head('notes');
    const body = JSON.stringify({ id: 'evt_1', type: 'note.updated', note: { id: 'n2', text: 'two, from a webhook' } });
    const nowS = Math.floor(wall / 1000);

    const forged = await w.api('POST', '/twins/notes/ingest', body, { 'stripe-signature': stripeSignature('whsec_someone_else', body, nowS) });
    expect([forged.status, forged.json.error.code]).toEqual([401, 'webhook_unverified']);
    const stale = await w.api('POST', '/twins/notes/ingest', body, { 'stripe-signature': stripeSignature(SIGNING, body, nowS - 301) });
    expect([stale.status, stale.json.error.code]).toEqual([401, 'webhook_stale']);
    const unsigned = await w.api('POST', '/twins/notes/ingest', body);
    expect(unsigned.json.error.code).toBe('webhook_unverified');
    expect(w.runner.world.head('notes')).toBe(head);

    const ok = await w.api('POST', '/twins/notes/ingest', body, { 'stripe-signature': stripeSignature(SIGNING, body, nowS) });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ received: true, event: 'evt_1', position: head + 1 });
    expect((await w.vendor('GET', '/notes/v1/notes/n2')).json.text).toBe('two, from a webhook');
    const entry = (await w.api('GET', `/log/notes?after=${head}`)).json.entries[0];
    expect(entry.cause).toEqual({ kind: 'ingest', source: 'stripe:evt_1' });

    const replayed = await w.api('POST', '/twins/notes/ingest', body, { 'stripe-signature': stripeSignature(SIGNING, body, nowS) });
    expect([replayed.status, replayed.json.error.code]).toEqual([409, 'webhook_replayed']);
    expect(w.runner.world.head('notes')).toBe(head + 1);
    // A twin that takes no webhooks says so.
    expect((await w.api('POST', '/twins/hello/ingest', body)).json.error.code).toBe('no_ingest');
  });
});

describe('links', () => {
  it('forwards with the sealed credential over the caller’s, keeps nothing, opens to the world token only', async () => {
    const w = await rootedWorld();
    expect((await w.api('PUT', '/links/notes', { origin: 'https://echo.test' })).json.error.code).toBe('link_names_twin');
    expect((await w.api('PUT', '/links/echo', { origin: 'http://echo.test' })).json.error.code).toBe('destination_refused');
    expect((await w.api('PUT', '/links/echo', { origin: 'https://echo.test/v1' })).json.error.code).toBe('invalid_link');
    expect((await w.api('PUT', '/links/Echo', { origin: 'https://echo.test' })).json.error.code).toBe('invalid_link');
    const made = await w.api('PUT', '/links/echo', { origin: 'https://echo.test' });
    expect(made.json).toMatchObject({ name: 'echo', origin: 'https://echo.test' });
    await w.api('PUT', '/twins/echo/credential', { headers: { authorization: `Bearer ${SECRET}`, 'x-api-version': '2' } });
    expect((await w.api('GET', '/links')).json.links).toEqual([{ name: 'echo', origin: 'https://echo.test', createdAt: '2026-01-01T00:00:00.000Z', credential: { sealed: true, sealedAt: '2026-01-01T00:00:00.000Z' } }]);

    const heads = w.runner.world.twins().map((t) => w.runner.world.head(t));
    const forwarded = await w.vendor('POST', '/echo/v1/things?a=1', { x: 1 }, { authorization: 'Bearer app-key', 'x-api-version': '1', 'x-kit-auth': 'authorization', 'x-request-mark': 'kept' });
    expect(forwarded.status).toBe(200);
    expect(forwarded.json.method).toBe('POST');
    expect(forwarded.json.path).toBe('/v1/things?a=1');
    expect(forwarded.json.headers).toMatchObject({ authorization: `Bearer ${SECRET}`, 'x-api-version': '2', 'x-request-mark': 'kept' });
    expect(forwarded.json.headers['x-kit-auth']).toBeUndefined();
    expect(w.runner.world.twins().map((t) => w.runner.world.head(t))).toEqual(heads);

    const read = await w.vendor('GET', '/echo/v1/things', undefined, {}, 'read');
    expect([read.status, read.json.error.code]).toEqual([403, 'link_needs_token']);
    expect((await w.api('DELETE', '/links/echo')).status).toBe(204);
    expect((await w.api('GET', '/twins/echo/credential')).json.error.code).toBe('unknown_twin');
    expect((await w.vendor('GET', '/echo/v1/things')).json.error.code).toBe('unknown_twin');
  });
});

describe('sealing', () => {
  it('opens only under the key and the name it was sealed for', async () => {
    const key = sealingKeyBytes(newSealingKey());
    const box = await createSealer(key).seal('secret', 'world a');
    expect(await createSealer(key).open(box, 'world a')).toBe('secret');
    await expect(createSealer(key).open(box, 'world b')).rejects.toBeInstanceOf(KitError);
    await expect(createSealer(sealingKeyBytes(newSealingKey())).open(box, 'world a')).rejects.toMatchObject({ code: 'sealing_unavailable' });
    expect(() => sealingKeyBytes('too short')).toThrow(KitError);
  });
});
