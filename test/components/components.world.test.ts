/**
 * WebAssembly component twins (runtime/component/) served in a world beside the JavaScript
 * twins: the notes twin (test/components/notes/), componentized here from its sources with
 * jco's QuickJS backend, reached through the world's vendor URL; a component that loops or
 * hogs memory fails its own request only; WASI clocks read the call's instant; a component
 * importing sockets is refused when it is loaded.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSingleWorldServer } from '../../host/single-world.js';
import { openLocalWorld, worldCode } from '../../runtime/runner/index.js';
import { loadComponentTwin } from '../../runtime/component/index.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import { idSource } from '../../runtime/world/ids.js';
import { buildTwin } from '../../sdk/twin/build.js';
import { inlineGuestEngines } from '../../runtime/runner/engines.js';
import { importEdgeSandboxModule } from '../../runtime/sandbox/fixtures/edge-modules.js';
import { edgeTrustedRealms } from '../../runtime/sandbox/trusted-edge.js';
import { FROZEN_NOW, openTestWorld, type TestWorld } from '../helpers/world.js';
import { componentBytes, componentTwin } from './build.js';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

let notes: TwinBundle;
beforeAll(async () => {
  notes = await componentTwin('notes');
}, 180_000);

describe('the notes component twin in a world', () => {
  it('creates, lists and gets notes beside hello, with ids from the world sequence and its own error shape', async () => {
    world = await openTestWorld({ vendors: ['hello'], more: [notes] });
    const made = await world.vendor('POST', '/notes/v1/notes', { title: 'Groceries', body: 'milk' });
    expect(made.status).toBe(201);
    // The entropy import is the world's generator for (world, twin, position): the id a JavaScript twin would draw.
    const expectedId = idSource('test', 'notes', 1).id('note_', 14);
    expect(made.json).toEqual({ id: expectedId, object: 'note', title: 'Groceries', body: 'milk', archived: false, archive_at: null, created_ms: FROZEN_NOW });
    expect((await world.vendor('GET', `/notes/v1/notes/${expectedId}`)).json).toEqual(made.json);

    const second = (await world.vendor('POST', '/notes/v1/notes', { title: 'Call Ada' })).json;
    const list = await world.vendor('GET', '/notes/v1/notes');
    expect([list.status, list.json.data.map((n: { id: string }) => n.id), list.json.has_more]).toEqual([200, [second.id, expectedId], false]);
    const page = await world.vendor('GET', '/notes/v1/notes?limit=1');
    expect([page.json.data.map((n: { id: string }) => n.id), page.json.has_more]).toEqual([[second.id], true]);
    expect((await world.vendor('GET', `/notes/v1/notes?after=${second.id}`)).json.data.map((n: { id: string }) => n.id)).toEqual([expectedId]);

    const refused = await world.vendor('POST', '/notes/v1/notes', { title: '' });
    expect([refused.status, refused.json]).toEqual([400, { errors: [{ status: '400', code: 'invalid_field', detail: 'title must be a non-empty string of at most 200 characters.', source: { pointer: '/title' } }] }]);
    const missing = await world.vendor('GET', '/notes/v1/notes/note_nope');
    expect([missing.status, missing.json]).toEqual([404, { errors: [{ status: '404', code: 'not_found', detail: "No note 'note_nope'." }] }]);

    // The JavaScript twin beside it is untouched.
    expect((await world.vendor('POST', '/hello/v1/greetings', { name: 'Grace' })).status).toBe(200);
    // Each create is one entry of the twin's log, with its event.
    const log = await world.api('GET', '/log/notes');
    expect(log.status).toBe(200);
    expect(JSON.stringify(log.json)).toContain('note.created');
  });

  it('answers its manifest at /twin and its store projection', async () => {
    world = await openTestWorld({ vendors: [], more: [notes] });
    const manifest = await world.vendor('GET', '/notes/twin');
    expect(manifest.status).toBe(200);
    expect(manifest.json).toMatchObject({
      vendor: 'notes',
      version: '0.1.0',
      protocol: 'http',
      models: { hosts: ['api.notes.test'], resources: ['note'], endpointEnv: ['NOTES_API_URL'] },
      matchers: [
        { name: 'notes.create', method: ['POST'], path: '/v1/notes' },
        { name: 'notes.list', method: ['GET'], path: '/v1/notes' },
        { name: 'notes.get', method: ['GET'], path: '/v1/notes/:id' },
        { name: 'notes.archive', method: ['POST'], path: '/v1/notes/:id/archive' },
      ],
      stores: ['notes'],
      moves: ['archive'],
    });
    const a = (await world.vendor('POST', '/notes/v1/notes', { title: 'a' })).json.id;
    const b = (await world.vendor('POST', '/notes/v1/notes', { title: 'b' })).json.id;
    const store = await world.vendor('GET', '/notes/twin/store/notes');
    expect([store.status, store.json.count, store.json.archived, store.json.notes.map((n: { id: string }) => n.id)]).toEqual([200, 2, 0, [a, b]]);
  });

  it('performs its timed move when the world clock passes it', async () => {
    world = await openTestWorld({ vendors: [], more: [notes] });
    const id = (await world.vendor('POST', '/notes/v1/notes', { title: 'Temporary' })).json.id;
    const scheduled = await world.vendor('POST', `/notes/v1/notes/${id}/archive`, { in_seconds: 60 });
    expect([scheduled.status, scheduled.json.archive_at, scheduled.json.archived]).toEqual([200, new Date(FROZEN_NOW + 60_000).toISOString(), false]);
    const setClock = async (ms: number) => expect((await world!.api('PUT', '/clock', { at: new Date(ms).toISOString() })).status).toBe(200);
    await setClock(FROZEN_NOW + 30_000);
    expect((await world.vendor('GET', `/notes/v1/notes/${id}`)).json.archived).toBe(false);
    await setClock(FROZEN_NOW + 61_000);
    expect((await world.vendor('GET', `/notes/v1/notes/${id}`)).json.archived).toBe(true);
    const store = await world.vendor('GET', '/notes/twin/store/notes');
    expect(store.json.archived).toBe(1);
    // The move removed its own schedule: nothing is due any more.
    expect(world.runner.world.listRecords('notes', '__due', {}).records).toEqual([]);
  });

  it('is reached over HTTP by its own client (fetch) through the single-world server', async () => {
    world = await openTestWorld({ vendors: ['hello'], more: [notes] });
    const tokens = { token: 'kit_test_component_token', readToken: 'kit_test_component_read' };
    const server = await startSingleWorldServer({ world: world.runner, org: 'local', tokens, twins: [notes, { vendor: 'hello', requestScopes: [] }].map((t) => ({ vendor: t.vendor, requestScopes: 'manifest' in t ? t.manifest.requestScopes : t.requestScopes })), budget: false });
    try {
      const auth = { authorization: `Bearer ${tokens.token}` };
      const made = await fetch(`${server.worldUrl}/notes/v1/notes`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Over the wire' }) });
      expect(made.status).toBe(201);
      const note = (await made.json()) as { id: string };
      const got = await fetch(`${server.worldUrl}/notes/v1/notes/${note.id}`, { headers: auth });
      expect([got.status, got.headers.get('content-type'), ((await got.json()) as { title: string }).title]).toEqual([200, 'application/json', 'Over the wire']);
      const greeted = await fetch(`${server.worldUrl}/hello/v1/greetings`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"name":"Ada"}' });
      expect(greeted.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('a component twin in a local world', () => {
  it('is served by a world in a worker thread of its own (its compiled modules cross threads twice), and names its code by its bytes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kit-component-'));
    const local = await openLocalWorld({ dir, org: 'local', world: 'shop', twins: [notes], thread: 'worker' });
    try {
      const made = await local.handle({ surface: 'vendor', method: 'POST', path: '/notes/v1/notes', query: '', headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"title":"threads"}'), scope: 'write', requestId: 'req_1', receivedAt: FROZEN_NOW });
      expect([made.status, JSON.parse(String(made.body)).title]).toEqual([201, 'threads']);
      // The world's code version changes with the component's bytes (its script text is empty).
      expect(local.code).toBe(worldCode([notes]));
      expect(worldCode([{ ...notes, component: { ...notes.component!, sha256: '0'.repeat(64) } }])).not.toBe(local.code);
    } finally {
      await local.close();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('one twin, two forms', () => {
  it('answers byte for byte what the same notes code answers as a JavaScript twin in QuickJS', async () => {
    const script = await buildTwin(fileURLToPath(new URL('./notes/twin.ts', import.meta.url)));
    const session = async (bundle: TwinBundle): Promise<string[]> => {
      const w = await openTestWorld({ vendors: [], more: [bundle], world: 'same' });
      try {
        const texts: string[] = [];
        const a = await w.vendor('POST', '/notes/v1/notes', { title: 'a', body: 'first' });
        texts.push(a.text, (await w.vendor('POST', '/notes/v1/notes', { title: 'b' })).text);
        texts.push((await w.vendor('GET', `/notes/v1/notes/${a.json.id}`)).text, (await w.vendor('GET', '/notes/v1/notes?limit=5')).text);
        texts.push((await w.vendor('POST', '/notes/v1/notes', { title: 7 })).text, (await w.vendor('POST', `/notes/v1/notes/${a.json.id}/archive`, { in_seconds: 5 })).text);
        await w.api('PUT', '/clock', { at: new Date(FROZEN_NOW + 10_000).toISOString() });
        texts.push((await w.vendor('GET', '/notes/twin/store/notes')).text);
        texts.push(JSON.stringify((await w.api('GET', '/log/notes')).json));
        return texts;
      } finally {
        await w.close();
      }
    };
    const asComponent = await session(notes);
    expect(asComponent).toEqual(await session({ ...script, trusted: false }));
    expect(asComponent[6]).toContain('"archived":1');
  }, 60_000);
});

describe('a component twin that misbehaves', () => {
  it('loops: its request fails once under the lane watchdog, and the world answers the next, the other twins meanwhile', async () => {
    const loop = await componentTwin('loop');
    world = await openTestWorld({ vendors: ['hello'], more: [loop, notes], limits: { callMs: 400 } });
    expect((await world.vendor('GET', '/loop/v1/ok')).status).toBe(200);
    const started = performance.now();
    const spinning = world.vendor('POST', '/loop/v1/spin');
    // While it spins in the lane's worker, a trusted twin answers in this thread.
    expect((await world.vendor('POST', '/hello/v1/greetings', { name: 'Meanwhile' })).status).toBe(200);
    const spun = await spinning;
    const took = performance.now() - started;
    expect([spun.status, spun.json.error.code]).toEqual([500, 'handler_timeout']);
    expect(took).toBeGreaterThan(350);
    expect(took).toBeLessThan(5000);
    expect((await world.vendor('GET', '/loop/v1/ok')).json).toEqual({ ok: true, position: 1 });
    // The lane's worker started again with every twin it ran.
    expect((await world.vendor('POST', '/notes/v1/notes', { title: 'after' })).status).toBe(201);
    expect(world.runner.lane.restarts).toBe(1);
  }, 30_000);

  it('allocates past its capped memory: that request fails, and the next is answered', async () => {
    const loop = await componentTwin('loop', { memoryBytes: 24 * 1024 * 1024 });
    world = await openTestWorld({ vendors: [], more: [loop], limits: { callMs: 10_000 } });
    const hog = await world.vendor('POST', '/loop/v1/hog');
    expect([hog.status, hog.json.error.code]).toEqual([500, 'handler_out_of_memory']);
    expect(hog.json.error.message).toContain('loop: the component ran out of its 25165824 bytes of memory');
    expect((await world.vendor('GET', '/loop/v1/ok')).status).toBe(200);
  }, 30_000);

  it("reads WASI clocks as the call's instant (a component built with WASI gets stubs, never the host's clock)", async () => {
    const clock = await componentTwin('clock', { stubWasi: false });
    expect(clock.component!.imports).toEqual(expect.arrayContaining(['wasi:clocks/wall-clock', 'wasi:filesystem/preopens', 'wasi:random/insecure-seed']));
    world = await openTestWorld({ vendors: [], more: [clock] });
    const first = await world.vendor('GET', '/clock/v1/now');
    expect(first.json).toEqual({ date_now: FROZEN_NOW, new_date: new Date(FROZEN_NOW).toISOString(), context_now: FROZEN_NOW });
    expect((await world.api('PUT', '/clock', { at: new Date(FROZEN_NOW + 3_600_000).toISOString() })).status).toBe(200);
    expect((await world.vendor('GET', '/clock/v1/now')).json.date_now).toBe(FROZEN_NOW + 3_600_000);
  }, 60_000);

  it('imports wasi:sockets: refused when loaded, with an error naming the interface', async () => {
    const witDir = fileURLToPath(new URL('./spy/wit', import.meta.url));
    const bytes = await componentBytes('spy', { witDir, world: 'spy', stubWasi: false });
    await expect(loadComponentTwin(bytes, { label: 'spy.wasm', cacheDir: null })).rejects.toMatchObject({
      code: 'invalid_twin',
      message: expect.stringMatching(/^spy\.wasm: the component is refused: it imports wasi:sockets\/instance-network: a twin has no network \(sockets are refused\); it imports wasi:sockets\/network/),
      details: { label: 'spy.wasm', field: 'imports', imports: ['wasi:sockets/instance-network', 'wasi:sockets/network'] },
    });
  }, 60_000);

  it("is refused on the edge variant's engines (no worker, no WebAssembly compiled at run time), saying where it runs", async () => {
    const engines = inlineGuestEngines(importEdgeSandboxModule(), edgeTrustedRealms(new Map()));
    await expect(openTestWorld({ vendors: [], more: [notes], engines })).rejects.toMatchObject({
      code: 'invalid_twin',
      message: expect.stringMatching(/^Twin 'notes' failed to load: 'notes' is a WebAssembly component twin, and this host cannot run one .*serve it from the Node host$/),
    });
  });

  it('is not a component: a core module and other bytes are refused, named', async () => {
    const core = Uint8Array.of(0, 0x61, 0x73, 0x6d, 1, 0, 0, 0);
    await expect(loadComponentTwin(core, { label: 'core.wasm', cacheDir: null })).rejects.toMatchObject({ code: 'invalid_twin', message: expect.stringContaining('core.wasm: this is a core WebAssembly module, not a component') });
    await expect(loadComponentTwin(new TextEncoder().encode('export default 1'), { label: 'twin.js', cacheDir: null })).rejects.toMatchObject({ code: 'invalid_twin', message: 'twin.js: this is not a WebAssembly component' });
    await expect(loadComponentTwin('/nonexistent/twin.wasm')).rejects.toMatchObject({ code: 'invalid_twin', message: expect.stringContaining('/nonexistent/twin.wasm: the component cannot be read') });
  });
});
