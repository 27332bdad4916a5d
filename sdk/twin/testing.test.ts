import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTwin } from './build.js';
import { createGuestHarness } from './testing.js';

const HELLO = fileURLToPath(new URL('../../twins/hello/twin/index.ts', import.meta.url));
let source = '';
beforeAll(async () => {
  source = (await buildTwin(HELLO)).source;
});

describe('createGuestHarness', () => {
  it('answers 404 no_handler with the nearest miss when no route matches, and writes nothing', () => {
    const h = createGuestHarness(source);
    const r = h.request('PUT', '/v1/greetings');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: { code: 'no_handler', nearestMiss: { failed: 'method' } } });
    expect(h.head).toBe(0);
  });

  it('routes HEAD to a GET route, and decodes path parameters', () => {
    const h = createGuestHarness(source);
    const r = h.request('HEAD', '/v1/greetings/grt_%41');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: { message: "No such greeting: 'grt_A'" } });
  });

  it('refuses a route it does not know and a clock moved backward', () => {
    const h = createGuestHarness(source, { now: '2026-01-02T00:00:00.000Z' });
    expect(() => h.invoke('nope')).toThrow(TypeError);
    expect(() => h.setNow('2026-01-01T00:00:00.000Z')).toThrow(RangeError);
    h.advance(1000);
    expect(h.nowMs()).toBe(Date.parse('2026-01-02T00:00:01.000Z'));
  });

  it('makes one log entry per call that writes, stamped with the clock', () => {
    const h = createGuestHarness(source, { now: '2026-01-02T00:00:00.000Z' });
    const r = h.request('POST', '/v1/greetings', { body: { name: 'Ada' } });
    expect(r.position).toBe(1);
    expect(h.log[0]).toMatchObject({ position: 1, occurredAt: '2026-01-02T00:00:00.000Z', cause: { kind: 'request', route: 'greetings.create', status: 200 } });
    expect(h.request('GET', '/v1/greetings').position).toBeUndefined();
    expect(h.head).toBe(1);
  });

  it('stamps a move that fell due before the latest entry at that entry, never earlier', () => {
    const h = createGuestHarness(source, { now: '2026-01-02T00:00:00.000Z' });
    const g = h.request('POST', '/v1/greetings', { body: { name: 'Ada', expires_in: 10 } }).body as { id: string };
    h.advance(60_000);
    // Performed directly (no due moves first), so the expiry is still pending at a later entry.
    h.invoke('greetings.update', { method: 'POST', path: `/v1/greetings/${g.id}`, params: { id: g.id }, body: { name: 'Ada L.' } });
    h.runDue();
    expect(h.log.map((e) => [e.cause.kind, e.occurredAt])).toEqual([
      ['request', '2026-01-02T00:00:00.000Z'],
      ['request', '2026-01-02T00:01:00.000Z'],
      ['move', '2026-01-02T00:01:00.000Z'],
    ]);
  });
});
