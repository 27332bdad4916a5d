/**
 * hello through the whole engine: the host-side request parsing and router, the QuickJS
 * sandbox, storage and the world clock (the harness tests in hello.test.ts use node:vm).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openTestWorld } from '../../../test/helpers/world.js';
import type { TestWorld } from '../../../test/helpers/world.js';

let world: TestWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('hello in a world', () => {
  it('takes a form body in bracket syntax, and answers a literal route before the parameter', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const created = await world.vendor('POST', '/hello/v1/greetings', 'name=Grace+Hopper&metadata[ship]=USS%20Hopper&expires_in=30', FORM);
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({ object: 'greeting', name: 'Grace Hopper', metadata: { ship: 'USS Hopper' }, status: 'active' });
    const search = await world.vendor('GET', '/hello/v1/greetings/search?q=grace');
    expect(search.status).toBe(200);
    expect(search.json.data.map((g: { id: string }) => g.id)).toEqual([created.json.id]);
    const missing = await world.vendor('GET', '/hello/v1/greetings/grt_nope');
    expect([missing.status, missing.json]).toEqual([404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: "No such greeting: 'grt_nope'", param: 'id' } }]);
  });

  it('pages newest first and serves the greetings store', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await world.vendor('POST', '/hello/v1/greetings', { name })).json.id);
    const page1 = await world.vendor('GET', '/hello/v1/greetings?limit=2');
    expect([page1.json.data.map((g: { id: string }) => g.id), page1.json.has_more]).toEqual([[ids[2], ids[1]], true]);
    const page2 = await world.vendor('GET', `/hello/v1/greetings?limit=2&starting_after=${ids[1]}`);
    expect([page2.json.data.map((g: { id: string }) => g.id), page2.json.has_more]).toEqual([[ids[0]], false]);
    const store = await world.vendor('GET', '/hello/twin/store/greetings');
    expect(store.json).toMatchObject({ count: 3, byStatus: { active: 3, expired: 0 } });
    expect(store.json.greetings.map((g: { id: string }) => g.id)).toEqual(ids);
  });

  it('answers byte for byte the same in two worlds of the same name given the same requests', async () => {
    const run = async () => {
      const w = await openTestWorld({ vendors: ['hello'], world: 'same' });
      const texts = [
        (await w.vendor('POST', '/hello/v1/greetings', { name: 'Ada', expires_in: 60 })).text,
        (await w.vendor('POST', '/hello/v1/greetings', 'name=Bob', FORM)).text,
        (await w.vendor('GET', '/hello/v1/greetings')).text,
      ];
      await w.close();
      return texts;
    };
    expect(await run()).toEqual(await run());
  });

  it('answers a malformed greeting record with a 500 in its error shape naming it, never an object without its id', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    const ids: string[] = [];
    for (const name of ['a', 'b']) ids.push((await world.vendor('POST', '/hello/v1/greetings', { name })).json.id);
    // Written straight through the engine, past the twin and the runner: a record from elsewhere.
    world.runner.world.append('hello', { cause: { kind: 'system', reason: 'test' }, writes: [{ type: 'greeting', id: ids[0]!, value: { garbage: true } }] });
    for (const [method, path] of [['GET', `/hello/v1/greetings/${ids[0]}`], ['POST', `/hello/v1/greetings/${ids[0]}`], ['GET', '/hello/v1/greetings']] as const) {
      const res = await world.vendor(method, path, method === 'POST' ? { name: 'c' } : undefined);
      expect(res.status).toBe(500);
      expect(res.json.error).toMatchObject({ type: 'api_error', code: 'handler_error', message: expect.stringContaining(`record of type 'greeting' and id '${ids[0]}' is malformed`) });
    }
    expect((await world.vendor('GET', `/hello/v1/greetings/${ids[1]}`)).json).toMatchObject({ id: ids[1], object: 'greeting', name: 'b' });
  });
});
