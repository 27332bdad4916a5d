/**
 * The guest runtime inside the real QuickJS sandbox (the other tests use node:vm): the probe
 * twin's clock, generator, tree merge and failure paths behave the same there.
 */
import { fileURLToPath } from 'node:url';
import { parseGuestOutput } from '../protocol.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idSource } from '../../../runtime/world/ids.js';
import { loadSandboxModule, WorldSandbox } from '../../../runtime/sandbox/index.js';
import type { CallResult, HostCall } from '../../../runtime/sandbox/index.js';
import { buildTwin } from '../build.js';
import { compareIds } from './runtime.js';

const PROBE = fileURLToPath(new URL('./fixtures/probe.ts', import.meta.url));
const HELLO = fileURLToPath(new URL('../../../twins/hello/twin/index.ts', import.meta.url));
const NOW = Date.parse('2026-03-04T05:06:07.089Z');

let sandbox: WorldSandbox;
const records = new Map<string, Map<string, string>>();
const hostCall: HostCall = (op, argJson) => {
  const arg = JSON.parse(argJson) as { type: string; id?: string; after?: string; limit?: number };
  const of = records.get(arg.type) ?? new Map<string, string>();
  if (op === 'get') return of.get(arg.id ?? '') ?? 'null';
  if (op === 'count') return String(of.size);
  const ids = [...of.keys()].sort(compareIds).filter((id) => arg.after === undefined || compareIds(id, arg.after) > 0);
  const page = ids.slice(0, arg.limit ?? ids.length);
  return JSON.stringify({ items: page.map((id) => ({ id, value: JSON.parse(of.get(id)!) })), hasMore: page.length < ids.length });
};

function ok(r: CallResult): string {
  if ('error' in r) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.ok;
}

interface Out {
  response: { status: number; body: unknown };
  writes: { type: string; id: string; value: unknown }[];
  events: unknown[];
  thrown?: { message: string };
}

function invoke(context: string, route: number, request: Record<string, unknown>, position = 1): Out {
  const input = { kind: 'route', index: route, request: { params: {}, query: {}, headers: {}, requestId: 'r', readOnly: false, ...request }, world: 'w1', twin: context, position, nowMs: NOW };
  return parseGuestOutput(ok(sandbox.call(context, '__kit_invoke', JSON.stringify(input), hostCall))) as Out;
}

function apply(out: Out): void {
  for (const w of out.writes) {
    let of = records.get(w.type);
    if (!of) records.set(w.type, (of = new Map()));
    if (w.value === null) of.delete(w.id);
    else of.set(w.id, JSON.stringify(w.value));
  }
}

beforeAll(async () => {
  sandbox = WorldSandbox.create(await loadSandboxModule());
  ok(sandbox.load('probe', (await buildTwin(PROBE)).source, { hostCall: true }));
  ok(sandbox.load('hello', (await buildTwin(HELLO)).source, { hostCall: true }));
});
afterAll(() => sandbox.dispose());

describe('the guest runtime in QuickJS', () => {
  it('answers the manifest', () => {
    expect(JSON.parse(ok(sandbox.call('probe', '__kit_manifest', '')))).toMatchObject({ vendor: 'probe', moves: ['tick'] });
  });

  it('gives Date the world clock and Math.random the seeded generator', () => {
    const body = invoke('probe', 0, { method: 'GET', path: '/clock' }).response.body as Record<string, unknown>;
    const expected = idSource('w1', 'probe', 1);
    expect(body).toMatchObject({ now: NOW, newDate: NOW, ctxNow: '2026-03-04T05:06:07.089Z', fixed: '1970-01-02T00:00:00.000Z', isDate: true, parsed: 946684800000 });
    expect(body['random']).toEqual([expected.random(), expected.random(), expected.random()]);
    expect(body['id']).toBe(expected.id('x_'));
  });

  it('merges buffered writes into reads, and discards them when the handler throws', () => {
    records.clear();
    const out = invoke('probe', 1, { method: 'POST', path: '/ops', body: { ops: [
      { op: 'put', type: 'thing', id: 'b', value: 2 },
      { op: 'put', type: 'thing', id: 'a', value: 1 },
      { op: 'list', type: 'thing', options: { limit: 1 } },
      { op: 'count', type: 'thing' },
    ] } });
    expect((out.response.body as { results: unknown[] }).results).toEqual([{ items: [{ id: 'a', value: 1 }], hasMore: true }, 2]);
    const thrown = invoke('probe', 3, { method: 'POST', path: '/throw', body: { what: 'hostile' } });
    expect(thrown.response.status).toBe(500);
    expect(thrown.writes).toEqual([]);
    expect(thrown.thrown?.message).toBe('a value that cannot be described was thrown');
  });

  it('serves hello: create, then read it back through the host', () => {
    records.clear();
    const created = invoke('hello', 0, { method: 'POST', path: '/v1/greetings', body: { name: 'Ada', expires_in: 60 } });
    expect(created.response.status).toBe(200);
    apply(created);
    const id = (created.response.body as { id: string }).id;
    const got = invoke('hello', 2, { method: 'GET', path: `/v1/greetings/${id}`, params: { id } }, 2);
    expect(got.response.body).toEqual(created.response.body);
    expect(records.get('__due')?.size).toBe(1);
  });
});
