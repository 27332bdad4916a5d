import { afterEach, describe, expect, it } from 'vitest';
import { openTestWorld, type TestWorld } from '../../test/helpers/world.js';
import { matchWorldApi, worldApiScope, WORLD_API_ENDPOINTS } from './api.js';

let world: TestWorld;
afterEach(async () => {
  await world?.close();
});

const CHECK = 'export const check = { name: "c1", run() { return true; } };';

describe('the world API route table', () => {
  it("names every endpoint the runner serves, with the spec's read column as its scope", () => {
    expect(WORLD_API_ENDPOINTS.map((e) => `${e.method} ${e.path} ${e.scope}`)).toEqual([
      'GET /log/:twin read',
      'GET /checkpoint/:twin read',
      'GET /map read',
      'GET /timeline read',
      'GET /diff read',
      'GET /clock read',
      'PUT /clock write',
      'POST /clock/advance write',
      'GET /history read',
      'GET /twins read',
      'GET /twins/:vendor/status write',
      'GET /twins/:vendor/scenario write',
      'PUT /twins/:vendor/scenario write',
      'DELETE /twins/:vendor/scenario write',
      'GET /twins/:vendor/export write',
      'GET /twins/:vendor/root write',
      'PUT /twins/:vendor/root write',
      'GET /twins/:vendor/credential write',
      'PUT /twins/:vendor/credential write',
      'DELETE /twins/:vendor/credential write',
      'POST /twins/:vendor/refresh write',
      'POST /twins/:vendor/ingest write',
      'GET /links write',
      'PUT /links/:name write',
      'DELETE /links/:name write',
      'GET /checks write',
      'GET /checks/:name write',
      'PUT /checks/:name write',
      'DELETE /checks/:name write',
      'GET /changesets read',
      'POST /changesets write',
      'GET /changesets/:name read',
      'POST /changesets/:name/verify write',
      'POST /changesets/:name/approve write',
      'POST /push write',
      'POST /deploy write',
      'POST /deploy/:name write',
      'GET /origin write',
      'PUT /origin write',
      'POST /origin/pull write',
      'POST /origin/push write',
      'GET /requests read',
      'GET /branches read',
      'POST /branches write',
      'DELETE /branches/:org/:world write',
    ]);
  });

  it('answers 405 with the methods a path takes, and 404 for a path that names no endpoint', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const cases: [string, string, number, string, string | undefined][] = [
      ['DELETE', '/map', 405, 'method_not_allowed', 'GET'],
      ['POST', '/clock', 405, 'method_not_allowed', 'GET, PUT'],
      ['GET', '/clock/advance', 405, 'method_not_allowed', 'POST'],
      ['POST', '/twins/hello/scenario', 405, 'method_not_allowed', 'GET, PUT, DELETE'],
      ['PATCH', '/checks/c1', 405, 'method_not_allowed', 'GET, PUT, DELETE'],
      ['POST', '/log', 404, 'not_found', undefined],
      ['GET', '/log/hello/more', 404, 'not_found', undefined],
      ['GET', '/twins/hello', 404, 'not_found', undefined],
      ['GET', '/twins/nope/status', 404, 'unknown_twin', undefined],
      ['GET', '/log/%ZZ', 400, 'bad_request', undefined],
    ];
    for (const [method, path, status, code, allow] of cases) {
      const res = await world.api(method, path);
      expect([method, path, res.status, res.json.error.code, res.json.error.allow]).toEqual([method, path, status, code, allow]);
    }
    expect((await world.api('HEAD', '/clock/advance')).json.error.message).toBe('/clock/advance answers POST, not HEAD.');
    expect((await world.api('GET', '/nowhere')).json.error.message).toBe('No world endpoint GET /nowhere.');
  });

  it('answers HEAD as GET, a trailing or doubled slash as without', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    expect((await world.api('PUT', '/checks/c1', CHECK)).status).toBe(200);
    for (const path of ['/clock', '/checks/c1', '/twins/hello/status']) {
      const get = await world.api('GET', path);
      const head = await world.api('HEAD', path);
      expect([path, head.status, head.headers, head.text]).toEqual([path, 200, get.headers, get.text]);
    }
    expect((await world.api('GET', '//checks//c1/')).text).toBe(CHECK);
  });

  it('has no branches on a server that makes none, whatever the method or path below /branches', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    for (const [method, path] of [['GET', '/branches'], ['POST', '/branches'], ['PUT', '/branches'], ['DELETE', '/branches/acme/w1'], ['GET', '/branches/acme/w1'], ['GET', '/branches/acme']]) {
      const res = await world.api(method!, path!);
      expect([method, path, res.status, res.json.error]).toEqual([method, path, 404, { code: 'not_found', message: 'This server makes no branches; the multi-world host does.' }]);
    }
    await world.close();
    // Under a host that makes branches, the host serves them before the runner is asked.
    world = await openTestWorld({ vendors: ['hello'], branches: true });
    expect((await world.api('GET', '/branches')).json.error).toEqual({ code: 'not_found', message: 'No world endpoint GET /branches.' });
  });
});

describe('worldApiScope', () => {
  it('reads a path as the runner routes it', () => {
    const cases: [string, string, string | null][] = [
      ['GET', '/log/stripe', 'read'],
      ['HEAD', '/map', 'read'],
      ['GET', '/log/stripe/', 'read'],
      ['GET', '/%6cog/stripe', 'read'],
      ['GET', '/twins/stripe/status', 'write'],
      ['PUT', '/clock', 'write'],
      ['DELETE', '/branches/acme/w1', 'write'],
      // 405 and 404 at the runner: no endpoint, so no scope.
      ['POST', '/map', null],
      ['GET', '/branches/acme/w1', null],
      ['GET', '/log', null],
      ['GET', '/nowhere', null],
      ['GET', '/log/%ZZ', null],
    ];
    for (const [method, path, scope] of cases) expect([method, path, worldApiScope(method, path)]).toEqual([method, path, scope]);
  });

  it('matches an endpoint with its parameters, or names the methods its path takes', () => {
    expect(matchWorldApi('DELETE', '/branches/acme/w%201')).toEqual({ endpoint: { method: 'DELETE', path: '/branches/:org/:world', scope: 'write' }, params: { org: 'acme', world: 'w 1' } });
    expect(matchWorldApi('POST', '/clock')).toEqual({ allow: ['GET', 'PUT'] });
    expect(matchWorldApi('GET', '/nowhere')).toBeNull();
  });
});
