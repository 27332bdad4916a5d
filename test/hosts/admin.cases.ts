/**
 * Worlds side by side on one host, and the host's admin surface, as every host with more than one
 * world answers them. Called by `runWorldEndpointCases` with its case helpers (browser-access.cases.ts
 * has the `CaseKit` they share).
 */
import { expect } from 'vitest';
import type { CaseKit } from './browser-access.cases.js';
import { api, bearer, createGreeting, expectRefused, kit, vendor } from './calls.js';
import { FIXTURE_VENDORS, send, type HostWorld } from './fixture.js';

const T0 = '2030-01-01T00:00:00.000Z';

export function worldsSideBySideCases({ test, group, host }: CaseKit): void {
  group('worlds side by side on one host, and their admin', () => {
    test("a world's tokens never open another world's endpoints", async () => {
      const a = await host().openWorld();
      const b = await host().openWorld();
      expect(b.base).toBe(a.base);
      for (const [x, y] of [[a, b], [b, a]] as const) {
        for (const token of [x.token, x.readToken]) {
          expectRefused(await api(y, 'GET', '/map', undefined, token), 401, 'unauthenticated');
          for (const headers of [kit(token), bearer(token), { 'x-twins-key': token }]) {
            expect((await vendor(y, 'GET', '/hello/v1/greetings', undefined, headers)).status).toBe(401);
          }
          expect((await vendor(y, 'GET', '/.well-known/kit-world', undefined, kit(token))).status).toBe(401);
        }
      }
    }, ['secondWorld']);

    test("one world's spent budget does not hold up another's", async () => {
      const spent = await host().openWorld({ budget: '1/1m' });
      const other = await host().openWorld({ budget: '1/1m' });
      expect((await api(spent, 'GET', '/clock')).status).toBe(200);
      expectRefused(await api(spent, 'GET', '/clock'), 429, 'request_budget_exhausted');
      expect((await api(other, 'GET', '/clock')).status).toBe(200);
    }, ['secondWorld']);

    test('the admin token opens nothing under a world', async () => {
      const w = await host().openWorld();
      const admin = host().adminToken!;
      for (const headers of [kit(admin), bearer(admin), { 'x-twins-key': admin }]) {
        expectRefused(await send('GET', `${w.api}/map`, { headers }), 401, 'unauthenticated');
        expectRefused(await send('GET', `${w.url}/hello/v1/greetings`, { headers }), 401, 'unauthenticated');
      }
    }, ['admin']);

    test("rotated tokens: the world's old ones are refused from the next request", async () => {
      const w = await host().openWorld();
      const rotated = await send('POST', `${w.base}/-/worlds/${w.name}/rotate`, { headers: kit(host().adminToken!) });
      expect(rotated.status).toBe(200);
      const fresh = rotated.json() as { token: string; readToken: string };
      for (const old of [w.token, w.readToken]) {
        expectRefused(await api(w, 'GET', '/clock', undefined, old), 401, 'unauthenticated');
        expect((await vendor(w, 'GET', '/hello/v1/greetings', undefined, bearer(old))).status).toBe(401);
      }
      for (const token of [fresh.token, fresh.readToken]) {
        expect((await api(w, 'GET', '/clock', undefined, token)).status).toBe(200);
        expect((await vendor(w, 'GET', '/hello/v1/greetings', undefined, bearer(token))).status).toBe(200);
      }
    }, ['admin']);

    test('a removed world answers 404 unknown_world at each of its endpoints', async () => {
      const w = await host().openWorld();
      await createGreeting(w, 'Gone');
      expect((await send('DELETE', `${w.base}/-/worlds/${w.name}`, { headers: kit(host().adminToken!) })).status).toBe(204);
      expectRefused(await api(w, 'GET', '/clock'), 404, 'unknown_world');
      expectRefused(await vendor(w, 'GET', '/hello/v1/greetings'), 404, 'unknown_world');
    }, ['admin']);

    test('POST /-/worlds from a world: a branch at its current position, named as asked; a world with branches is not removed', async () => {
      const parent = await host().openWorld();
      const before = await createGreeting(parent, 'Before');
      const admin = kit(host().adminToken!);
      const name = `${parent.world}-copy`;
      const made = await send('POST', `${parent.base}/-/worlds`, { headers: admin, body: { org: parent.org, world: name, vendors: FIXTURE_VENDORS, from: parent.name } });
      expect(made.status, made.text).toBe(201);
      const row = made.json() as { name: string; base: string; token: string; readToken: string };
      expect(row).toMatchObject({ name: `${parent.org}/${name}`, base: parent.name });
      const branch: HostWorld = { ...parent, name: row.name, world: name, url: `${parent.base}/${row.name}`, api: `${parent.base}/-/${row.name}`, token: row.token, readToken: row.readToken };
      expect((await vendor(branch, 'GET', `/hello/v1/greetings/${before}`)).json()).toMatchObject({ id: before, name: 'Before' });
      // From here the two go their own ways.
      const after = await createGreeting(parent, 'After');
      expect((await vendor(branch, 'GET', `/hello/v1/greetings/${after}`)).status).toBe(404);
      const own = await createGreeting(branch, 'Own');
      expect((await vendor(parent, 'GET', `/hello/v1/greetings/${own}`)).status).toBe(404);
      expect((await api(parent, 'GET', '/branches')).json()).toEqual(expect.arrayContaining([expect.objectContaining({ name: row.name, from: parent.name })]));

      expectRefused(await send('DELETE', `${parent.base}/-/worlds/${parent.name}`, { headers: admin }), 409, 'world_has_branches');
      expect((await vendor(parent, 'GET', `/hello/v1/greetings/${before}`)).status).toBe(200);
      expect((await send('DELETE', `${parent.base}/-/worlds/${row.name}`, { headers: admin })).status).toBe(204);
      expectRefused(await api(branch, 'GET', '/clock'), 404, 'unknown_world');
      expect((await send('DELETE', `${parent.base}/-/worlds/${parent.name}`, { headers: admin })).status).toBe(204);
    }, ['admin', 'branches']);

    test('POST /-/worlds: adopted tokens open the world; tokens out of range, a taken name, from naming no world or one of another owner are refused', async () => {
      const w = await host().openWorld();
      const admin = kit(host().adminToken!);
      const post = (body: object) => send('POST', `${w.base}/-/worlds`, { headers: admin, body: { org: w.org, vendors: FIXTURE_VENDORS, ...body } });
      const token = `adopted_${'t'.repeat(40)}`;
      const readToken = `adopted-${'r'.repeat(247)}`; // 255 characters
      const made = await post({ world: `${w.world}-adopted`, token, readToken, owner: 'globex' });
      expect(made.status, made.text).toBe(201);
      expect(made.json()).toMatchObject({ token, readToken, owner: 'globex' });
      const adopted: HostWorld = { ...w, name: `${w.org}/${w.world}-adopted`, world: `${w.world}-adopted`, url: `${w.base}/${w.org}/${w.world}-adopted`, api: `${w.base}/-/${w.org}/${w.world}-adopted`, token, readToken };
      expect((await api(adopted, 'GET', '/clock')).status).toBe(200);
      expect((await api(adopted, 'GET', '/clock', undefined, readToken)).status).toBe(200);
      expectRefused(await api(adopted, 'PUT', '/clock', { at: T0 }, readToken), 403, 'forbidden');

      for (const [what, body] of [
        ['23 characters', { token: 'a'.repeat(23), readToken: 'b'.repeat(30) }],
        ['257 characters', { token: 'a'.repeat(257), readToken: 'b'.repeat(30) }],
        ['a dot', { token: `${'a'.repeat(30)}.x`, readToken: 'b'.repeat(30) }],
        ['a space', { token: 'a'.repeat(30), readToken: `${'b'.repeat(30)} ` }],
        ['a token alone', { token: 'a'.repeat(30) }],
        ['a number', { token: 1234567890123456789012345, readToken: 'b'.repeat(30) }],
        ['the same twice', { token: 'a'.repeat(30), readToken: 'a'.repeat(30) }],
      ] as const) {
        expectRefused(await post({ world: `${w.world}-bad`, ...body }), 400, 'invalid_token', what);
      }
      expectRefused(await post({ world: `${w.world}-bad`, from: 'acme' }), 400, 'invalid_name', 'from without a world');
      expectRefused(await post({ world: `${w.world}-bad`, from: `${w.org}/no-such-world` }), 404, 'unknown_world', 'from naming no world');
      expectRefused(await post({ world: `${w.world}-bad`, from: adopted.name, owner: 'initech' }), 409, 'other_owner', 'from a world of another owner');
      expectRefused(await post({ world: w.world }), 409, 'world_exists', 'a taken name');
      expectRefused(await post({ world: `${w.world}-adopted`, from: w.name }), 409, 'world_exists', 'a taken name, from');
      // Nothing of the refused ones was made, and the worlds there are untouched.
      const names = ((await send('GET', `${w.base}/-/worlds`, { headers: admin })).json() as { worlds: { name: string }[] }).worlds.map((r) => r.name);
      expect(names).not.toContain(`${w.org}/${w.world}-bad`);
      expect((await api(adopted, 'GET', '/clock')).status).toBe(200);
      expect((await api(w, 'GET', '/clock')).status).toBe(200);

      // An owner is recorded once.
      expect((await send('PUT', `${w.base}/-/worlds/${w.name}/owner`, { headers: admin, body: { owner: 'globex' } })).status).toBe(200);
      expectRefused(await send('PUT', `${w.base}/-/worlds/${w.name}/owner`, { headers: admin, body: { owner: 'initech' } }), 409, 'owner_recorded');
    }, ['admin', 'branches']);

    test("a world's token opens nothing under /-/ but the keyless ping", async () => {
      const w = await host().openWorld();
      for (const token of [w.token, w.readToken]) {
        for (const [method, path] of [['GET', '/-/worlds'], ['POST', '/-/worlds'], ['GET', '/-/vendors'], ['GET', `/-/worlds/${w.name}`], ['DELETE', `/-/worlds/${w.name}`], ['POST', `/-/worlds/${w.name}/rotate`]] as const) {
          for (const headers of [kit(token), bearer(token)]) {
            expectRefused(await send(method, `${w.base}${path}`, { headers, ...(method === 'POST' ? { body: {} } : {}) }), 401, 'unauthenticated', `${method} ${path}`);
          }
        }
      }
      expect((await send('GET', `${w.base}/-/ping`)).json()).toMatchObject({ ok: true, worlds: expect.arrayContaining([w.name]) });
      expect((await api(w, 'GET', '/clock')).status).toBe(200);
    }, ['admin']);
  });
}
