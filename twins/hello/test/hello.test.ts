import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTwin } from '../../../sdk/twin/build.js';
import { createGuestHarness } from '../../../sdk/twin/testing.js';
import type { GuestHarness } from '../../../sdk/twin/testing.js';

interface Greeting {
  id: string;
  object: string;
  name: string;
  message: string;
  status: string;
  created: number;
  expires_at: number | null;
  metadata: Record<string, string>;
}
interface List {
  object: string;
  has_more: boolean;
  data: Greeting[];
}

const ENTRY = fileURLToPath(new URL('../twin/index.ts', import.meta.url));
const T0 = '2026-01-01T00:00:00.000Z';
let source = '';
let hello: GuestHarness;

beforeAll(async () => {
  source = (await buildTwin(ENTRY)).source;
});

function fresh(): GuestHarness {
  hello = createGuestHarness(source, { world: 'demo', now: T0 });
  return hello;
}

function create(body: unknown): Greeting {
  const r = hello.request('POST', '/v1/greetings', { body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as Greeting;
}

describe('hello: greetings', () => {
  it('creates a greeting from a JSON body, and emits greeting.created', () => {
    fresh();
    const r = hello.request('POST', '/v1/greetings', { body: { name: 'Ada', metadata: { team: 'core' } } });
    expect(r.status).toBe(200);
    const g = r.body as Greeting;
    expect(g).toMatchObject({ object: 'greeting', name: 'Ada', message: 'Hello, Ada!', status: 'active', created: Date.parse(T0) / 1000, expires_at: null, metadata: { team: 'core' } });
    expect(g.id).toMatch(/^grt_[0-9A-Za-z]{14}$/);
    expect(r.events).toEqual([{ type: 'greeting.created', data: g }]);
    expect(hello.request('GET', `/v1/greetings/${g.id}`).body).toEqual(g);
  });

  it('creates a greeting from a form body, as a Stripe-style SDK sends it', () => {
    fresh();
    const g = create('name=Grace+Hopper&message=Hi%21&metadata[ship]=USS+Hopper&expires_in=30');
    expect(g).toMatchObject({ name: 'Grace Hopper', message: 'Hi!', metadata: { ship: 'USS Hopper' }, expires_at: Date.parse(T0) / 1000 + 30 });
  });

  it('answers the vendor-shaped 404 for a greeting that does not exist', () => {
    fresh();
    const r = hello.request('GET', '/v1/greetings/grt_nope');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: { type: 'invalid_request_error', code: 'resource_missing', message: "No such greeting: 'grt_nope'", param: 'id' } });
  });

  it('refuses bad input with a 400 naming the parameter, and writes nothing', () => {
    fresh();
    const cases: [unknown, string, string][] = [
      [{}, 'parameter_missing', 'name'],
      [{ name: '' }, 'parameter_invalid_string', 'name'],
      [{ name: 'x', colour: 'red' }, 'parameter_unknown', 'colour'],
      [{ name: 'x', expires_in: 0 }, 'parameter_invalid_integer', 'expires_in'],
      [{ name: 'x', expires_in: '1.5' }, 'parameter_invalid_integer', 'expires_in'],
      [{ name: 'x', metadata: { k: { deep: 1 } } }, 'parameter_invalid', 'metadata[k]'],
    ];
    for (const [body, code, param] of cases) {
      const r = hello.request('POST', '/v1/greetings', { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body, JSON.stringify(body)).toMatchObject({ error: { type: 'invalid_request_error', code, param } });
    }
    expect(hello.request('GET', '/v1/greetings?limit=0').body).toMatchObject({ error: { code: 'parameter_invalid_integer', param: 'limit' } });
    expect(hello.head).toBe(0);
  });

  it('lists newest first with cursor pagination and has_more', () => {
    fresh();
    const made: Greeting[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(create({ name: `n${i}` }));
      hello.advance(1000);
    }
    const newest = made.map((g) => g.id).reverse();
    const first = hello.request('GET', '/v1/greetings?limit=2').body as List;
    expect(first.object).toBe('list');
    expect(first.data.map((g) => g.id)).toEqual(newest.slice(0, 2));
    expect(first.has_more).toBe(true);
    const second = hello.request('GET', `/v1/greetings?limit=2&starting_after=${first.data[1]!.id}`).body as List;
    expect(second.data.map((g) => g.id)).toEqual(newest.slice(2, 4));
    expect(second.has_more).toBe(true);
    const third = hello.request('GET', `/v1/greetings?limit=2&starting_after=${second.data[1]!.id}`).body as List;
    expect(third.data.map((g) => g.id)).toEqual(newest.slice(4));
    expect(third.has_more).toBe(false);
    expect((hello.request('GET', '/v1/greetings').body as List).data).toHaveLength(5);
    const bad = hello.request('GET', '/v1/greetings?starting_after=grt_gone');
    expect(bad.status).toBe(404);
    expect(bad.body).toMatchObject({ error: { code: 'resource_missing', param: 'starting_after' } });
  });

  it('updates with POST or PATCH; an empty metadata value removes the key', () => {
    fresh();
    const g = create({ name: 'Ada', metadata: { a: '1', b: '2' } });
    const posted = hello.request('POST', `/v1/greetings/${g.id}`, { body: 'message=Welcome&metadata[a]=&metadata[c]=3' });
    expect(posted.status).toBe(200);
    expect(posted.body).toMatchObject({ id: g.id, name: 'Ada', message: 'Welcome', metadata: { b: '2', c: '3' } });
    const patched = hello.request('PATCH', `/v1/greetings/${g.id}`, { body: { name: 'Ada L.' } });
    expect(patched.body).toMatchObject({ name: 'Ada L.', message: 'Welcome' });
    expect(hello.request('GET', `/v1/greetings/${g.id}`).body).toEqual(patched.body);
    expect(hello.request('PATCH', '/v1/greetings/grt_nope', { body: { name: 'x' } }).status).toBe(404);
  });

  it('deletes a greeting: gone from get and list, and its expiry cancelled', () => {
    fresh();
    const g = create({ name: 'Ada', expires_in: 60 });
    const keep = create({ name: 'Bob' });
    expect(hello.records('__due')).toHaveLength(1);
    const r = hello.request('DELETE', `/v1/greetings/${g.id}`);
    expect(r.body).toEqual({ id: g.id, object: 'greeting', deleted: true });
    expect(hello.request('GET', `/v1/greetings/${g.id}`).status).toBe(404);
    expect((hello.request('GET', '/v1/greetings').body as List).data.map((x) => x.id)).toEqual([keep.id]);
    expect(hello.records('__due')).toEqual([]);
    expect(hello.request('DELETE', `/v1/greetings/${g.id}`).status).toBe(404);
  });

  it('routes /v1/greetings/search to search, never to retrieve by id', () => {
    fresh();
    create({ name: 'Ada' });
    create({ name: 'Bob', message: 'Ahoy ADA fans' });
    create({ name: 'Cy' });
    const r = hello.request('GET', '/v1/greetings/search?q=ada');
    expect(r.status).toBe(200);
    const body = r.body as List;
    expect(body.object).toBe('search_result');
    expect(body.data.map((g) => g.name)).toEqual(['Bob', 'Ada']);
    expect(hello.request('GET', '/v1/greetings/search').body).toMatchObject({ error: { code: 'parameter_missing', param: 'q' } });
  });

  it('searches newest first across pages of the creation index, with has_more past the limit', () => {
    fresh();
    const made = Array.from({ length: 230 }, (_, i) => create({ name: i % 10 === 3 ? `Match ${i}` : `Other ${i}` }));
    const names = (q: string): { names: string[]; hasMore: boolean } => {
      const body = hello.request('GET', `/v1/greetings/search?${q}`).body as List & { has_more: boolean };
      return { names: body.data.map((g) => g.name), hasMore: body.has_more };
    };
    expect(names('q=match&limit=3')).toEqual({ names: ['Match 223', 'Match 213', 'Match 203'], hasMore: true });
    const all = names('q=match&limit=100');
    expect(all.hasMore).toBe(false);
    expect(all.names).toEqual(made.filter((_, i) => i % 10 === 3).reverse().map((g) => g.name));
    expect(names('q=match&limit=23')).toEqual({ names: all.names, hasMore: false });
    expect(names('q=match&limit=22').hasMore).toBe(true);
  });

  it('expires a greeting at the instant expires_in says, in an entry stamped then, emitting greeting.expired', () => {
    fresh();
    const g = create({ name: 'Ada', expires_in: 90 });
    hello.advance(89_000);
    expect((hello.request('GET', `/v1/greetings/${g.id}`).body as Greeting).status).toBe('active');
    hello.advance(3_600_000);
    const after = hello.request('GET', `/v1/greetings/${g.id}`).body as Greeting;
    expect(after.status).toBe('expired');
    const entry = hello.log.find((e) => e.cause.kind === 'move');
    expect(entry?.occurredAt).toBe('2026-01-01T00:01:30.000Z');
    expect(entry?.events).toEqual([{ type: 'greeting.expired', data: after }]);
    expect(hello.records('__due')).toEqual([]);
  });

  it('a new expires_in on update replaces the old schedule', () => {
    fresh();
    const g = create({ name: 'Ada', expires_in: 60 });
    hello.advance(30_000);
    hello.request('POST', `/v1/greetings/${g.id}`, { body: { expires_in: 600 } });
    expect(hello.records('__due')).toHaveLength(1);
    hello.advance(60_000);
    expect((hello.request('GET', `/v1/greetings/${g.id}`).body as Greeting).status).toBe('active');
    hello.advance(600_000);
    expect((hello.request('GET', `/v1/greetings/${g.id}`).body as Greeting).status).toBe('expired');
  });

  it('serves the greetings store: a deterministic projection, oldest first', () => {
    fresh();
    const a = create({ name: 'Ada', expires_in: 5 });
    const b = create({ name: 'Bob' });
    hello.advance(10_000);
    hello.runDue();
    const all = hello.store('greetings');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ count: 2, byStatus: { active: 1, expired: 1 } });
    expect((all.body as { greetings: Greeting[] }).greetings.map((g) => g.id)).toEqual([a.id, b.id]);
    expect((hello.store('greetings', { status: 'active' }).body as { greetings: Greeting[] }).greetings.map((g) => g.id)).toEqual([b.id]);
    expect(JSON.stringify(hello.store('greetings').body)).toBe(JSON.stringify(all.body));
  });

  it('gives the same ids and answers for the same requests in the same world', () => {
    const run = () => {
      fresh();
      const out = [create({ name: 'Ada' }), create({ name: 'Bob', expires_in: 1 })];
      hello.advance(5000);
      return JSON.stringify([out, hello.request('GET', '/v1/greetings').body, hello.log]);
    };
    expect(run()).toBe(run());
  });

  it('documents every route it serves, and no other, in the README table', async () => {
    const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
    const documented = [...readme.matchAll(/^\| `([a-z]+\.[a-z]+)` \|/gm)].map((m) => m[1]);
    const served = (await buildTwin(ENTRY)).manifest.routes.map((r) => r.name);
    expect(documented.sort()).toEqual([...served].sort());
  });
});
