import { describe, expect, it } from 'vitest';
import { echoWorld } from './echo-world.js';
import type { EchoBody } from './echo-world.js';
import { createSingleWorldCore, startSingleWorldServer } from './single-world.js';
import type { HttpAnswer } from './http/types.js';

const tokens = { token: 'tok_sw-write-token-abcdefghijkl', readToken: 'tok_r_sw-read-token-abcdefghijkl' };
const auth = { 'x-kit-token': tokens.token };

function text(a: HttpAnswer): string {
  return typeof a.body === 'string' ? a.body : Buffer.from(a.body).toString('utf8');
}
function body(a: HttpAnswer): { error?: { code: string; message: string } } & Partial<EchoBody> {
  return JSON.parse(text(a)) as { error?: { code: string; message: string } } & Partial<EchoBody>;
}

describe('single-world routing', () => {
  const world = echoWorld('shop', 'v3');
  const { dispatch } = createSingleWorldCore({ world, org: 'local', tokens, twins: [] });

  it('maps {world_url}/<vendor>/… to the vendor surface and {world_api}/… to the api surface', async () => {
    expect(body(await dispatch({ method: 'get', url: '/local/shop/hello/v1/x?q=1', headers: auth }))).toMatchObject({
      surface: 'vendor', method: 'GET', path: '/hello/v1/x', query: 'q=1',
    });
    expect(body(await dispatch({ method: 'GET', url: 'http://127.0.0.1:9/-/local/shop/clock', headers: auth }))).toMatchObject({
      surface: 'api', path: '/clock', query: '',
    });
  });

  it('drops a trailing slash on the world API and folds doubled slashes', async () => {
    expect(body(await dispatch({ method: 'GET', url: '/-/local/shop/timeline/?limit=2', headers: auth }))).toMatchObject({ path: '/timeline', query: 'limit=2' });
    expect(body(await dispatch({ method: 'GET', url: '//-/local//shop/map', headers: auth }))).toMatchObject({ surface: 'api', path: '/map' });
    expect(body(await dispatch({ method: 'GET', url: '/local/shop/hello//v1/x', headers: auth }))).toMatchObject({ path: '/hello/v1/x' });
    expect(body(await dispatch({ method: 'GET', url: '/-/local/shop', headers: auth }))).toMatchObject({ surface: 'api', path: '/' });
  });

  it('answers 404 in the error shape for other worlds, other paths and a missing vendor', async () => {
    const cases: [string, string][] = [
      ['/', 'not_found'],
      ['/favicon.ico', 'not_found'],
      ['/local/other/hello/x', 'unknown_world'],
      ['/-/local/other/clock', 'unknown_world'],
      ['/local/shopping/hello', 'unknown_world'],
      ['/local/shop', 'not_found'],
      ['/local/shop/', 'not_found'],
    ];
    for (const [url, code] of cases) {
      const a = await dispatch({ method: 'GET', url, headers: auth });
      expect([url, a.status, body(a).error?.code]).toEqual([url, 404, code]);
      expect(a.headers['x-kit-world-code']).toBe('v3');
      expect(a.headers['content-type']).toBe('application/json');
    }
  });

  it('passes a failure of the world through as its error code, and hides an unexpected one behind 500 internal', async () => {
    const kit = await dispatch({ method: 'PUT', url: '/-/local/shop/clock', headers: { ...auth, 'x-echo-throw': 'kit' } });
    expect([kit.status, body(kit).error?.code]).toEqual([409, 'clock_backward']);
    const original = console.error;
    console.error = () => {};
    try {
      const plain = await dispatch({ method: 'GET', url: '/-/local/shop/map', headers: { ...auth, 'x-echo-throw': 'plain' } });
      expect([plain.status, body(plain).error?.code]).toEqual([500, 'internal']);
      expect(text(plain)).not.toContain('echo world internal failure');
    } finally {
      console.error = original;
    }
  });

  it('refuses a body over the limit with 413 body_too_large through dispatch too', async () => {
    const small = createSingleWorldCore({ world, org: 'local', tokens, twins: [], maxBodyBytes: 10 });
    const a = await small.dispatch({ method: 'POST', url: '/local/shop/hello/x', headers: auth, body: '12345678901' });
    expect([a.status, body(a).error?.code]).toEqual([413, 'body_too_large']);
    const b = await small.dispatch({ method: 'POST', url: '/local/shop/hello/x', headers: auth, body: '1234567890' });
    expect(b.status).toBe(200);
  });

  it('gives every request its own id', async () => {
    const a = body(await dispatch({ method: 'GET', url: '/local/shop/hello/x', headers: auth }));
    const b = body(await dispatch({ method: 'GET', url: '/local/shop/hello/x', headers: auth }));
    expect(a.requestId).toMatch(/^req_/);
    expect(a.requestId).not.toBe(b.requestId);
  });

  it('refuses bad names and equal tokens at construction', () => {
    expect(() => createSingleWorldCore({ world, org: 'Local', tokens, twins: [] })).toThrow(TypeError);
    expect(() => createSingleWorldCore({ world, org: 'local', worldName: '../x', tokens, twins: [] })).toThrow(TypeError);
    expect(() => createSingleWorldCore({ world, org: 'local', tokens: { token: 'a', readToken: 'a' }, twins: [] })).toThrow(TypeError);
  });
});

describe('request budget through the server', () => {
  it('answers 429 request_budget_exhausted with Retry-After once spent, and passes again after the wait', async () => {
    let now = 1_000_000;
    const world = echoWorld('w');
    const { dispatch } = createSingleWorldCore({
      world, org: 'local', tokens, twins: [], budget: { size: 3, windowMs: 30_000, now: () => now },
    });
    const ask = () => dispatch({ method: 'GET', url: '/local/w/hello/x', headers: auth });
    for (let i = 0; i < 3; i++) expect((await ask()).status).toBe(200);
    const spent = await ask();
    expect([spent.status, body(spent).error?.code]).toEqual([429, 'request_budget_exhausted']);
    // One request refills every 10 s.
    expect(spent.headers['retry-after']).toBe('10');
    expect(spent.headers['x-kit-world-code']).toBe('echo-1');
    now += 9_000;
    const soon = await ask();
    expect([soon.status, soon.headers['retry-after']]).toEqual([429, '1']);
    now += 1_000;
    expect((await ask()).status).toBe(200);
    expect(world.received).toHaveLength(4);
  });

  it('does not spend the budget on refused credentials', async () => {
    const world = echoWorld('w');
    const { dispatch } = createSingleWorldCore({ world, org: 'local', tokens, twins: [], budget: { size: 1, windowMs: 60_000, now: () => 0 } });
    for (let i = 0; i < 5; i++) expect((await dispatch({ method: 'GET', url: '/local/w/hello/x' })).status).toBe(401);
    expect((await dispatch({ method: 'GET', url: '/local/w/hello/x', headers: auth })).status).toBe(200);
  });

  it('answers 429 with Retry-After over a socket', async () => {
    const world = echoWorld('w');
    const server = await startSingleWorldServer({ world, org: 'local', tokens, twins: [], budget: { size: 1, windowMs: 60_000 } });
    try {
      expect((await fetch(`${server.worldUrl}/hello/x`, { headers: auth })).status).toBe(200);
      const r = await fetch(`${server.worldUrl}/hello/x`, { headers: auth });
      expect(r.status).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
      expect(r.headers.get('x-kit-world-code')).toBe('echo-1');
    } finally {
      await server.close();
    }
  });
});

describe('stopping', () => {
  it('answers 503 shutting_down through dispatch once closed, and closes the world once', async () => {
    const world = echoWorld('w');
    let closes = 0;
    const close = world.close.bind(world);
    world.close = async () => {
      closes++;
      await close();
    };
    const server = await startSingleWorldServer({ world, org: 'local', tokens, twins: [] });
    await Promise.all([server.close(), server.close()]);
    const a = await server.dispatch({ method: 'GET', url: '/local/w/hello/x', headers: auth });
    expect([a.status, body(a).error?.code]).toEqual([503, 'shutting_down']);
    expect(closes).toBe(1);
  });
});
