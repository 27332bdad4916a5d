/**
 * Twins an admin installs (`/-/twins`), as the multi-world host and the edge variant answer them:
 * installed, listed, served to a world (its vendor API, its store), kept across a restart,
 * replaced (the world's code changes, its state stays), refused removal while a world serves
 * it, and every bad upload refused with its code while what was installed stays as it was.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { errorCode, send, type Answer } from './fixture.js';
import { clashingRoutesBundle, helloBundle } from './twin-bundles.js';

/** A host with an admin surface that can be restarted over its own state. */
export interface InstallHost {
  readonly url: string;
  readonly adminToken: string;
  /**
   * How a bundle over 4 MiB is refused: `body_too_large` where the host's request limit is the
   * bundle limit (its adapter answers before the admin reads the head), else `twin_too_large`.
   */
  readonly tooLargeCode: 'twin_too_large' | 'body_too_large';
  /** Stops the host and starts it again over what it kept (the Node host's folder, the edge's objects); `url` may change. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface InstallHostSpec {
  readonly name: string;
  start(): Promise<InstallHost>;
}

const JS = { 'content-type': 'application/javascript' };

export function runInstalledTwinCases(spec: InstallHostSpec): void {
  describe(`installed twins on ${spec.name}`, () => {
    let host: InstallHost;
    let acme1: string;
    let acme2: string;
    const admin = (): Record<string, string> => ({ 'x-kit-token': host.adminToken });
    const put = (vendor: string, body: string | Uint8Array, headers: Record<string, string> = JS): Promise<Answer> =>
      send('PUT', `${host.url}/-/twins/${vendor}`, { headers: { ...admin(), ...headers }, body });
    const twinsList = async (): Promise<{ vendor: string; installed: boolean; version: string; sha256: string | null }[]> => {
      const a = await send('GET', `${host.url}/-/twins`, { headers: admin() });
      expect(a.status, a.text).toBe(200);
      return (a.json() as { twins: { vendor: string; installed: boolean; version: string; sha256: string | null }[] }).twins;
    };
    const vendors = async (): Promise<string[]> => ((await send('GET', `${host.url}/-/vendors`, { headers: admin() })).json() as { vendors: string[] }).vendors;
    const refused = (a: Answer, status: number, code: string): void => expect([a.status, errorCode(a)], a.text).toEqual([status, code]);
    // Named, not addressed: a restarted host may listen on another port.
    let world: { name: string; token: string };
    const wire = (method: string, path: string, body?: object): Promise<Answer> =>
      send(method, `${host.url}/${world.name}${path}`, { headers: { authorization: `Bearer ${world.token}` }, ...(body !== undefined ? { body } : {}) });

    beforeAll(async () => {
      [acme1, acme2] = await Promise.all([helloBundle('acme', '1.0.0'), helloBundle('acme', '2.0.0')]);
      host = await spec.start();
    }, 120_000);
    afterAll(async () => {
      await host?.close();
    });

    test('PUT /-/twins/<vendor> installs a bundle: 201 with its version, SHA-256, time and manifest; listed beside the built-in twins and among the vendors', async () => {
      const a = await put('acme', acme1);
      expect(a.status, a.text).toBe(201);
      const body = a.json() as { vendor: string; version: string; sha256: string; installedAt: string; manifest: { vendor: string; routes: unknown[] } };
      expect(body).toMatchObject({ vendor: 'acme', version: '1.0.0', sha256: createHash('sha256').update(acme1).digest('hex') });
      expect(Date.parse(body.installedAt)).toBeGreaterThan(Date.now() - 60_000);
      expect(body.manifest.vendor).toBe('acme');
      expect(body.manifest.routes.length).toBeGreaterThan(0);
      const rows = await twinsList();
      expect(rows.find((r) => r.vendor === 'acme')).toMatchObject({ installed: true, version: '1.0.0', sha256: body.sha256 });
      expect(rows.find((r) => r.vendor === 'hello')).toMatchObject({ installed: false, sha256: null });
      const one = await send('GET', `${host.url}/-/twins/acme`, { headers: admin() });
      expect(one.json()).toMatchObject({ vendor: 'acme', installed: true, worlds: [], manifest: { vendor: 'acme' } });
      expect(await vendors()).toEqual(expect.arrayContaining(['acme', 'hello', 'stripe']));
    });

    test("a world made with the installed vendor serves it: its vendor API, its store projection, its manifest", async () => {
      const made = await send('POST', `${host.url}/-/worlds`, { headers: admin(), body: { org: 'byot', world: 'shop', vendors: ['acme', 'hello'] } });
      expect(made.status, made.text).toBe(201);
      const row = made.json() as { name: string; token: string; twins: { vendor: string }[] };
      expect(row.twins.map((t) => t.vendor)).toEqual(['acme', 'hello']);
      world = { name: row.name, token: row.token };
      const created = await wire('POST', '/acme/v1/greetings', { name: 'Ada' });
      expect(created.status, created.text).toBe(200);
      const id = (created.json() as { id: string }).id;
      expect((await wire('GET', `/acme/v1/greetings/${id}`)).json()).toMatchObject({ id, name: 'Ada' });
      // The built-in hello beside it has its own state.
      expect(((await wire('GET', '/hello/v1/greetings')).json() as { data: unknown[] }).data).toEqual([]);
      const store = await wire('GET', '/acme/twin/store/greetings');
      expect(store.status, store.text).toBe(200);
      expect(store.json()).toMatchObject({ count: 1, greetings: [{ id, name: 'Ada' }] });
      expect((await wire('GET', '/acme/twin')).json()).toMatchObject({ vendor: 'acme', version: '1.0.0' });
      // Served untrusted: in QuickJS, which has no WebAssembly global (a trusted twin's V8 realm has one).
      expect((await wire('GET', '/acme/v1/engine')).json()).toEqual({ webAssembly: 'undefined' });
      expect((await send('GET', `${host.url}/-/twins/acme`, { headers: admin() })).json()).toMatchObject({ worlds: [world.name] });
      // The world's own status says where each twin came from.
      const api = `${host.url}/-/${world.name}`;
      const status = async (vendor: string): Promise<unknown> => (await send('GET', `${api}/twins/${vendor}/status`, { headers: { 'x-kit-token': world.token } })).json();
      expect(await status('acme')).toMatchObject({ source: { kind: 'installed' } });
      expect(await status('hello')).toMatchObject({ source: { kind: 'builtin' } });
    });

    test('the world token opens nothing under /-/twins', async () => {
      refused(await send('GET', `${host.url}/-/twins`, { headers: { 'x-kit-token': world.token } }), 401, 'unauthenticated');
      refused(await send('PUT', `${host.url}/-/twins/other`, { headers: { authorization: `Bearer ${world.token}`, ...JS }, body: acme1 }), 401, 'unauthenticated');
      refused(await send('DELETE', `${host.url}/-/twins/acme`, { headers: { 'x-kit-token': world.token } }), 401, 'unauthenticated');
    });

    test('after a restart the host still has the installed twin, and the world serves it with its state', async () => {
      const before = await wire('GET', '/acme/twin/store/greetings');
      await host.restart();
      expect((await twinsList()).find((r) => r.vendor === 'acme')).toMatchObject({ installed: true, sha256: createHash('sha256').update(acme1).digest('hex') });
      const after = await wire('GET', '/acme/twin/store/greetings');
      expect(after.status, after.text).toBe(200);
      expect(after.json()).toEqual(before.json());
      expect(after.headers['x-kit-world-code']).toBe(before.headers['x-kit-world-code']);
    }, 120_000);

    test("a replacement answers 200; the world runs the new code from its next request, under a new x-kit-world-code, its state kept", async () => {
      const before = await wire('GET', '/acme/twin');
      expect(before.json()).toMatchObject({ version: '1.0.0' });
      const a = await put('acme', acme2);
      expect(a.status, a.text).toBe(200);
      expect(a.json()).toMatchObject({ vendor: 'acme', version: '2.0.0', sha256: createHash('sha256').update(acme2).digest('hex') });
      const after = await wire('GET', '/acme/twin');
      expect(after.json()).toMatchObject({ vendor: 'acme', version: '2.0.0' });
      expect(after.headers['x-kit-world-code']).not.toBe(before.headers['x-kit-world-code']);
      expect((await wire('GET', '/acme/twin/store/greetings')).json()).toMatchObject({ count: 1, greetings: [{ name: 'Ada' }] });
      expect((await twinsList()).find((r) => r.vendor === 'acme')).toMatchObject({ version: '2.0.0' });
    });

    test('bad uploads are refused, each with its code, and what was installed stays as it was', async () => {
      const kept = (await twinsList()).find((r) => r.vendor === 'acme');
      refused(await put('acme', acme1, { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
      refused(await put('acme', acme1, {}), 415, 'unsupported_media_type');
      refused(await put('acme', new Uint8Array([0xff, 0xfe, 0x00, 0x80])), 400, 'invalid_twin');
      refused(await put('acme', ''), 400, 'invalid_twin');
      const tooBig = await put('acme', 'x'.repeat(4 * 1024 * 1024 + 1));
      refused(tooBig, 413, host.tooLargeCode);
      refused(await put('acme', 'this is not ( javascript'), 400, 'invalid_twin');
      refused(await put('acme', 'var nothing = 1;'), 400, 'invalid_twin');
      refused(await put('other', acme1), 400, 'twin_vendor_mismatch');
      refused(await put('hello', await helloBundle('hello')), 409, 'twin_exists');
      const clash = await put('clashy', clashingRoutesBundle('clashy'));
      refused(clash, 400, 'invalid_twin');
      expect(clash.json()).toMatchObject({ error: { field: 'routes[1]' } });
      refused(await put('Not_A_Vendor', acme1), 400, 'invalid_vendor');
      expect((await twinsList()).find((r) => r.vendor === 'acme')).toEqual(kept);
      expect((await twinsList()).map((r) => r.vendor)).not.toContain('other');
      expect((await wire('GET', '/acme/twin')).json()).toMatchObject({ version: '2.0.0' });
    });

    test('a bundle that loops or allocates while it loads is ended by the sandbox budget; the host keeps serving', async () => {
      const loop = await put('loopy', 'for (;;) {}');
      refused(loop, 400, 'invalid_twin');
      const hog = await put('hoggy', 'var keep = []; for (;;) keep.push(new Array(1 << 16).fill(1.5));');
      refused(hog, 400, 'invalid_twin');
      expect((await send('GET', `${host.url}/-/ping`)).status).toBe(200);
      expect((await wire('GET', '/acme/twin/store/greetings')).json()).toMatchObject({ count: 1 });
      expect((await twinsList()).map((r) => r.vendor)).not.toEqual(expect.arrayContaining(['loopy']));
      // And an install after them works.
      const again = await put('acme', acme2);
      expect(again.status, again.text).toBe(200);
    }, 60_000);

    test('a bundle over 1 MiB (split across rows on the edge) installs, serves a world and reads back whole after a restart', async () => {
      const bulky = `${await helloBundle('bulky')}\n// ${'padding '.repeat(200_000)}\n`;
      expect(bulky.length).toBeGreaterThan(1.5 * 1024 * 1024);
      const a = await put('bulky', bulky);
      expect(a.status, a.text).toBe(201);
      const made = await send('POST', `${host.url}/-/worlds`, { headers: admin(), body: { org: 'byot', world: 'bulk', vendors: ['bulky'] } });
      expect(made.status, made.text).toBe(201);
      const w = made.json() as { name: string; token: string };
      await host.restart();
      const answer = await send('GET', `${host.url}/${w.name}/bulky/twin`, { headers: { authorization: `Bearer ${w.token}` } });
      expect(answer.json()).toMatchObject({ vendor: 'bulky' });
      expect((await twinsList()).find((r) => r.vendor === 'bulky')).toMatchObject({ sha256: createHash('sha256').update(bulky).digest('hex') });
      expect((await send('DELETE', `${host.url}/-/worlds/${w.name}`, { headers: admin() })).status).toBe(204);
      expect((await send('DELETE', `${host.url}/-/twins/bulky`, { headers: admin() })).status).toBe(204);
    }, 120_000);

    test('a twin is not removed while a world serves it (409 naming the world); a built-in never; then removed, it is gone everywhere', async () => {
      const busy = await send('DELETE', `${host.url}/-/twins/acme`, { headers: admin() });
      refused(busy, 409, 'twin_in_use');
      expect(busy.json()).toMatchObject({ error: { worlds: [world.name] } });
      refused(await send('DELETE', `${host.url}/-/twins/hello`, { headers: admin() }), 409, 'twin_builtin');
      refused(await send('DELETE', `${host.url}/-/twins/nobody`, { headers: admin() }), 404, 'unknown_twin');
      expect((await send('DELETE', `${host.url}/-/worlds/${world.name}`, { headers: admin() })).status).toBe(204);
      expect((await send('DELETE', `${host.url}/-/twins/acme`, { headers: admin() })).status).toBe(204);
      refused(await send('GET', `${host.url}/-/twins/acme`, { headers: admin() }), 404, 'unknown_twin');
      expect(await vendors()).not.toContain('acme');
      refused(await send('POST', `${host.url}/-/worlds`, { headers: admin(), body: { org: 'byot', world: 'late', vendors: ['acme'] } }), 400, 'unknown_vendor');
      expect((await twinsList()).map((r) => r.vendor)).toEqual(['github', 'hello', 'smtp', 'stripe']);
    });
  });
}
