/**
 * The scenario report's unmatched requests (`GET {world_url}/<vendor>/twin/scenario`) through
 * the whole runner: listed whether or not a scenario is in force, with the nearest of the
 * twin's own routes, a twin's catch-all counted as a miss, and the list starting over whenever
 * a scenario is put or removed.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openTestWorld, type TestWorld } from '../../test/helpers/world.js';

let world: TestWorld;
afterEach(async () => {
  await world?.close();
});

interface Unmatched {
  requestId: string;
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  scenario: unknown;
  twin: { matched: boolean; route?: string; answeredBy?: string; nearestMiss?: { name: string; failed: string; detail: string } | null } | null;
}

async function report(vendor: string): Promise<{ handlers: unknown[]; unmatched: Unmatched[]; unmatchedTotal: number }> {
  const res = await world.vendor('GET', `/${vendor}/twin/scenario`);
  expect(res.status).toBe(200);
  return res.json;
}

describe('unmatched requests with no scenario in force', () => {
  it('lists a request none of the twin\'s routes took, with the nearest route and what failed, and not the ones they took', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    expect((await world.vendor('POST', '/hello/v1/greetings', { name: 'Ada' })).status).toBe(200);
    const typo = await world.vendor('GET', '/hello/v1/greeting?limit=2');
    expect([typo.status, typo.json.error.code]).toEqual([404, 'no_handler']);
    expect((await world.vendor('PUT', '/hello/v1/greetings')).status).toBe(404);
    expect((await world.vendor('GET', '/hello/v1/greetings')).status).toBe(200);

    const r = await report('hello');
    expect(r.handlers).toEqual([]);
    expect(r.unmatchedTotal).toBe(2);
    expect(r.unmatched.map((u) => [u.method, u.path, u.scenario])).toEqual([['GET', '/v1/greeting', null], ['PUT', '/v1/greetings', null]]);
    expect(r.unmatched[0]?.query).toEqual({ limit: '2' });
    // The GET list route, not the POST create one beside it: alike segment, same method and length.
    expect(r.unmatched[0]?.twin).toEqual({ matched: false, nearestMiss: { index: 1, name: 'greetings.list', failed: 'path', detail: 'segment 2 is "greeting", the pattern wants "greetings"' } });
    expect(r.unmatched[1]?.twin).toMatchObject({ matched: false, nearestMiss: { failed: 'method', detail: expect.stringContaining('method is PUT') } });
    expect(r.unmatched[0]?.requestId).not.toBe(r.unmatched[1]?.requestId);
  });

  it('starts the list over when a scenario is put, lists both sides while it is in force, and starts over when it is removed', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    await world.vendor('GET', '/hello/v1/before');
    expect((await report('hello')).unmatchedTotal).toBe(1);

    const doc = { handlers: [{ name: 'slow-creates', match: { method: 'POST', path: '/v1/greetings' }, delay: '1ms' }] };
    expect((await world.api('PUT', '/twins/hello/scenario', doc)).status).toBe(200);
    expect((await report('hello')).unmatched).toEqual([]);
    await world.vendor('GET', '/hello/v1/during');
    const during = await report('hello');
    expect(during.unmatched).toHaveLength(1);
    expect(during.unmatched[0]).toMatchObject({
      path: '/v1/during',
      scenario: { matched: false, nearestMiss: { name: 'slow-creates', failed: 'path' } },
      twin: { matched: false, nearestMiss: { failed: 'path' } },
    });

    expect((await world.api('DELETE', '/twins/hello/scenario')).status).toBe(204);
    expect(await report('hello')).toEqual({ state: 'started', initialState: 'started', handlers: [], unmatched: [], unmatchedTotal: 0 });
    await world.vendor('GET', '/hello/v1/after');
    expect((await report('hello')).unmatched.map((u) => [u.path, u.scenario])).toEqual([['/v1/after', null]]);
  });

  it('keeps the last 100 and counts them all', async () => {
    world = await openTestWorld({ vendors: ['hello'] });
    for (let i = 0; i < 105; i++) await world.vendor('GET', `/hello/v1/nothing/${i}`);
    const r = await report('hello');
    expect(r.unmatchedTotal).toBe(105);
    expect(r.unmatched).toHaveLength(100);
    expect([r.unmatched[0]?.path, r.unmatched[99]?.path]).toEqual(['/v1/nothing/5', '/v1/nothing/104']);
  });
});

describe("a twin's catch-all route", () => {
  const key = { authorization: 'Bearer sk_test_scenarioReport0001' };

  it("lists a request only Stripe's Unrecognized request URL took, naming it, with the nearest real route", async () => {
    world = await openTestWorld({ vendors: ['stripe'] });
    const unknown = await world.vendor('GET', '/stripe/v1/customer', undefined, key);
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.message).toContain('Unrecognized request URL');
    expect((await world.vendor('POST', '/stripe/v1/customer', undefined, key)).status).toBe(404);
    expect((await world.vendor('GET', '/stripe/v1/customers', undefined, key)).status).toBe(200);

    const r = await report('stripe');
    expect(r.unmatchedTotal).toBe(2);
    expect(r.unmatched.map((u) => [u.method, u.path, u.twin?.answeredBy, u.twin?.nearestMiss?.name, u.twin?.nearestMiss?.failed])).toEqual([
      ['GET', '/v1/customer', 'unrecognized', 'customers.list', 'path'],
      ['POST', '/v1/customer', 'unrecognized', 'customers.create', 'path'],
    ]);
  });

  it('is counted as a miss while a scenario is in force too', async () => {
    world = await openTestWorld({ vendors: ['stripe'] });
    const doc = { handlers: [{ name: 'slow-lists', match: { method: 'GET', path: '/v1/customers' }, delay: '1ms' }] };
    expect((await world.api('PUT', '/twins/stripe/scenario', doc)).status).toBe(200);
    await world.vendor('GET', '/stripe/v1/customers', undefined, key);
    await world.vendor('GET', '/stripe/v1/subscription', undefined, key);
    const r = await report('stripe');
    expect(r.unmatched).toHaveLength(1);
    expect(r.unmatched[0]).toMatchObject({
      path: '/v1/subscription',
      scenario: { matched: false, nearestMiss: { name: 'slow-lists' } },
      twin: { matched: false, answeredBy: 'unrecognized', nearestMiss: { name: 'subscriptions.list', failed: 'path' } },
    });
  });

  it('answers as the example in docs/scenarios.md says', async () => {
    const doc = readFileSync(fileURLToPath(new URL('../../docs/scenarios.md', import.meta.url)), 'utf8');
    const section = doc.slice(doc.indexOf('### With no scenario in force'));
    const example = JSON.parse(/```json\n([\s\S]*?)```/.exec(section)?.[1] ?? 'null') as { unmatched: { requestId: string; twin: { nearestMiss: object } }[] };
    world = await openTestWorld({ vendors: ['stripe'] });
    await world.vendor('GET', '/stripe/v1/subscription?limit=3', undefined, key);
    const r = await report('stripe');
    // Not the request's id, nor the route's position among the twin's routes (it moves as routes are added).
    const ours = (i: number) => ({ requestId: r.unmatched[i]?.requestId, index: (r.unmatched[i]?.twin?.nearestMiss as { index?: number } | undefined)?.index });
    expect(r).toEqual({
      ...example,
      unmatched: example.unmatched.map((u, i) => ({ ...u, requestId: ours(i).requestId, twin: { ...u.twin, nearestMiss: { ...u.twin.nearestMiss, index: ours(i).index } } })),
    });
  });
});
