/**
 * A local world served as `kit world serve` serves it: in this thread on LMDB in a directory,
 * its untrusted code in worker threads under a watchdog; and, as a host may, the whole world in
 * a worker thread of its own. Needs the compiled workers (`make build`).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLocalWorld, type WorldHandle, type WorldRequest } from './index.js';
import { buildGuestRuntime, loadBuiltinTwins } from '../../sdk/twin/build.js';

const dirs: string[] = [];
const handles: WorldHandle[] = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(dir: string, callTimeoutMs = 1500, thread?: 'worker'): Promise<WorldHandle> {
  const hello = (await loadBuiltinTwins()).get('hello')!;
  const world = await openLocalWorld({ dir, org: 'local', world: 'w', twins: [hello], guestRuntime: await buildGuestRuntime(), callTimeoutMs, ...(thread ? { thread } : {}) });
  handles.push(world);
  return world;
}

function req(surface: 'api' | 'vendor', method: string, path: string, body?: unknown, contentType = 'application/json'): WorldRequest {
  const r: WorldRequest = { surface, method, path, query: '', headers: {}, scope: 'write', requestId: 'req_local', receivedAt: Date.now() };
  if (body !== undefined) {
    r.headers['content-type'] = contentType;
    r.body = new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body));
  }
  return r;
}

const text = (body: Uint8Array | string) => (typeof body === 'string' ? body : new TextDecoder().decode(body));

describe('a local world', () => {
  it('ends a scenario script stuck in native work, answers the world API meanwhile, and keeps the script', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-local-'));
    dirs.push(dir);
    const world = await open(dir);
    const created = await world.handle(req('vendor', 'POST', '/hello/v1/greetings', { name: 'Ada' }));
    expect(created.status).toBe(200);
    const id = (JSON.parse(text(created.body)) as { id: string }).id;

    // Native-heavy work between interpreter steps: the interrupts barely see it, the lane's watchdog does.
    const scenario = { handlers: [{ name: 'native-loop', match: { path: '/v1/heavy' }, js: 'for (let i = 0; i < 1e7; i++) Array(1e5).fill(0); return { status: 200 };' }] };
    expect((await world.handle(req('api', 'PUT', '/twins/hello/scenario', scenario))).status).toBe(200);
    const started = performance.now();
    const heavy = world.handle(req('vendor', 'GET', '/hello/v1/heavy'));
    // The world's endpoints are not held by it.
    const clock = await world.handle(req('api', 'GET', '/clock'));
    expect(clock.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1000);
    const answered = await heavy;
    expect(answered.status).toBe(500);
    expect(JSON.parse(text(answered.body)).error.code).toBe('handler_timeout');

    const again = await world.handle(req('vendor', 'GET', `/hello/v1/greetings/${id}`));
    expect(again.status).toBe(200);
    expect(JSON.parse(text(again.body)).name).toBe('Ada');
    // The scenario was kept in storage, and the local world wrote its file beside the state.
    expect(readFileSync(join(dir, '.kit', 'scenarios', 'hello.json'), 'utf8')).toContain('native-loop');
  });

  it('keeps every acknowledged entry across a close and a reopen of the directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-local-'));
    dirs.push(dir);
    let world = await open(dir);
    await world.handle(req('api', 'PUT', '/clock', { at: '2026-04-01T00:00:00Z' }));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => world.handle(req('vendor', 'POST', '/hello/v1/greetings', `name=g${i}`, 'application/x-www-form-urlencoded'))));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    await world.close();
    handles.splice(handles.indexOf(world), 1);

    world = await open(dir);
    const map = JSON.parse(text((await world.handle(req('api', 'GET', '/map'))).body));
    expect(map.twins[0].position).toBe(20);
    expect(JSON.parse(text((await world.handle(req('api', 'GET', '/clock'))).body))).toEqual({ at: '2026-04-01T00:00:00.000Z', frozen: true });
  });

  it('serves the same directory in a worker thread of its own, whose watchdog ends a stuck world, and this thread reopens what it wrote', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kit-local-'));
    dirs.push(dir);
    let world = await open(dir, 1500, 'worker');
    const created = await world.handle(req('vendor', 'POST', '/hello/v1/greetings', { name: 'Ada' }));
    expect(created.status).toBe(200);
    const id = (JSON.parse(text(created.body)) as { id: string }).id;
    const scenario = { handlers: [{ name: 'spin', match: { path: '/v1/spin' }, js: 'for (;;) {}' }] };
    expect((await world.handle(req('api', 'PUT', '/twins/hello/scenario', scenario))).status).toBe(200);
    const spun = await world.handle(req('vendor', 'GET', '/hello/v1/spin'));
    expect(JSON.parse(text(spun.body)).error.code).toBe('handler_timeout');
    await world.close();
    handles.splice(handles.indexOf(world), 1);

    world = await open(dir);
    const again = await world.handle(req('vendor', 'GET', `/hello/v1/greetings/${id}`));
    expect(JSON.parse(text(again.body)).name).toBe('Ada');
  });
});
