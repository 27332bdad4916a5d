/**
 * The single-world server over sockets in front of the real world runner (in-process,
 * in-memory storage, the hello twin): what an app with a plain HTTP client sees.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestWorld } from '../test/helpers/world.js';
import type { TestWorld } from '../test/helpers/world.js';
import { startSingleWorldServer } from './single-world.js';
import type { SingleWorldServer } from './single-world.js';

const tokens = { token: 'tok_e2e-write-token-0123456789abcdef', readToken: 'tok_r_e2e-read-token-0123456789abcdef' };
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
let world: TestWorld;
let server: SingleWorldServer;

beforeAll(async () => {
  world = await openTestWorld({ vendors: ['hello'], world: 'shop' });
  server = await startSingleWorldServer({
    world: world.runner,
    org: 'local',
    worldName: 'shop',
    tokens,
    twins: [{ vendor: 'hello', requestScopes: [] }],
  });
});
afterAll(async () => {
  // Closes the runner too.
  await server?.close();
});

describe('single-world server with the real runner', () => {
  it("creates through the vendor wire with the token as the app's API key, and records the traceparent", async () => {
    const created = await fetch(`${server.worldUrl}/hello/v1/greetings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.token}`, 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ name: 'Ada' }),
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('x-kit-world-code')).toBe(world.runner.code);
    const greeting = (await created.json()) as { id: string; name: string };
    expect(greeting.name).toBe('Ada');

    const read = await fetch(`${server.worldUrl}/hello/v1/greetings/${greeting.id}`, { headers: { 'x-twins-key': tokens.readToken } });
    expect(((await read.json()) as { name: string }).name).toBe('Ada');

    const timeline = await fetch(`${server.worldApi}/timeline?trace=${TRACE_ID}`, { headers: { 'x-kit-token': tokens.readToken } });
    const page = (await timeline.json()) as { entries: { twin: string; entry: { traceparent?: string; cause: { route?: string } } }[] };
    expect(page.entries).toHaveLength(1);
    expect(page.entries[0]?.entry.cause.route).toBe('greetings.create');
    expect(page.entries[0]?.entry.traceparent).toContain(TRACE_ID);
  });

  it('refuses the read token a write, and the runner never sees it', async () => {
    const before = world.runner.world.head('hello');
    const r = await fetch(`${server.worldUrl}/hello/v1/greetings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.readToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Mallory' }),
    });
    expect(r.status).toBe(403);
    expect(world.runner.world.head('hello')).toBe(before);
  });

  it("passes the runner's own errors through in the one error shape: a clock set backward is 409", async () => {
    const put = (at: string) =>
      fetch(`${server.worldApi}/clock`, { method: 'PUT', headers: { 'x-kit-token': tokens.token, 'content-type': 'application/json' }, body: JSON.stringify({ at }) });
    expect((await put('2030-01-01T00:00:00.000Z')).status).toBe(200);
    const back = await put('2029-01-01T00:00:00.000Z');
    expect(back.status).toBe(409);
    expect(((await back.json()) as { error: { code: string } }).error.code).toBe('clock_backward');
    expect(back.headers.get('x-kit-world-code')).toBe(world.runner.code);
    const clock = await fetch(`${server.worldApi}/clock/`, { headers: { 'x-kit-token': tokens.readToken } });
    expect(await clock.json()).toEqual({ at: '2030-01-01T00:00:00.000Z', frozen: true });
  });

  it('answers malformed JSON on the world API with a 4xx, never a 500', async () => {
    const r = await fetch(`${server.worldApi}/clock`, { method: 'PUT', headers: { 'x-kit-token': tokens.token, 'content-type': 'application/json' }, body: '{"at": ' });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
  });
});
