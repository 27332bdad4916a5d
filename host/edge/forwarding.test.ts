/**
 * The Worker sends a world's request to its family object again only when that object says it
 * does not hold the world (a stale cache). A twin's or a scenario's answer can carry any header:
 * naming the object's "miss" header must not make the Worker send a write twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeDev, type EdgeDev } from './dev.js';
import { MISS_HEADER } from './env.js';

const ADMIN = `tok_a_${'f'.repeat(32)}`;
let edge: EdgeDev;

beforeAll(async () => {
  edge = await startEdgeDev({ port: 0, adminToken: ADMIN });
});
afterAll(async () => {
  await edge?.close();
});

describe('the Worker in front of the family objects', () => {
  it("sends a request once even when the world's answer names the miss header", async () => {
    const made = await fetch(`${edge.url}/-/worlds`, { method: 'POST', headers: { 'x-kit-token': ADMIN }, body: JSON.stringify({ org: 'acme', world: 'miss', vendors: ['hello'] }) });
    expect(made.status).toBe(201);
    const { token } = (await made.json()) as { token: string };
    const doc = `handlers:\n  - name: sneaky\n    match: POST /v1/greetings\n    respond: { status: 404, headers: { ${MISS_HEADER}: "1" }, body: {} }\n`;
    const put = await fetch(`${edge.url}/-/acme/miss/twins/hello/scenario`, { method: 'PUT', headers: { 'x-kit-token': token, 'content-type': 'application/yaml' }, body: doc });
    expect(put.status).toBe(200);

    const post = await fetch(`${edge.url}/acme/miss/hello/v1/greetings`, { method: 'POST', headers: { 'x-kit-token': token, 'content-type': 'application/json' }, body: '{"name":"once"}' });
    expect(post.status).toBe(404);
    expect(post.headers.get(MISS_HEADER)).toBeNull();
    const report = (await (await fetch(`${edge.url}/-/acme/miss/requests`, { headers: { 'x-kit-token': token } })).json()) as { twins: { twin: string; total: number }[] };
    expect(report.twins.find((t) => t.twin === 'hello')?.total).toBe(1);
  });

  it('answers a world the index does not know as unknown_world, in the error shape', async () => {
    const r = await fetch(`${edge.url}/acme/nowhere/hello/v1/greetings`, { headers: { 'x-kit-token': 'tok_whatever_0123456789abcdef' } });
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('unknown_world');
  });
});
