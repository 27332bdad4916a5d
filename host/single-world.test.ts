import { describe, expect, it } from 'vitest';
import { echoWorld } from './echo-world.js';
import type { EchoBody } from './echo-world.js';
import { createSingleWorldCore, startSingleWorldServer } from './single-world.js';
import type { HttpAnswer } from './core/types.js';

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

describe('the app key beside x-twins-key', () => {
  const world = echoWorld('shop', 'v3');
  const { dispatch } = createSingleWorldCore({ world, org: 'local', tokens, twins: [] });
  const seen = async (authorization: string): Promise<string | undefined> =>
    body(await dispatch({ method: 'GET', url: '/local/shop/stripe/v1/customers', headers: { 'x-twins-key': tokens.token, authorization } })).headers?.['x-kit-auth'];

  it("tells the twin when the app's own key is the world's token, in any form, as when that key opens the world", async () => {
    expect(await seen(`Bearer ${tokens.token}`)).toBe('authorization');
    expect(await seen(`Basic ${Buffer.from(`${tokens.token}:`).toString('base64')}`)).toBe('authorization');
    expect(await seen(`Bearer ${tokens.readToken}`)).toBe('authorization');
    expect(await seen('Bearer sk_test_appKey0001')).toBeUndefined();
    expect(await seen('Bearer tok_not-this-worlds-token-0123456789')).toBeUndefined();
    expect(await seen(`Basic ${Buffer.from('sk_test_x:').toString('base64')}`)).toBeUndefined();
  });
});

describe('CORS: a page of another origin calls a twin', () => {
  const world = echoWorld('shop', 'v3');
  const { dispatch } = createSingleWorldCore({ world, org: 'local', tokens, twins: [], maxBodyBytes: 10 });
  const origin = 'http://app.localhost:5173';
  const preflight = (url: string, extra: Record<string, string> = {}) =>
    dispatch({ method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': 'POST', ...extra } });

  it('answers a preflight without a credential, allowing the method and the headers it asks for, on both surfaces', async () => {
    const before = world.received.length;
    for (const url of ['/local/shop/stripe/v1/customers', '/-/local/shop/clock']) {
      const a = await preflight(url, { 'access-control-request-headers': 'authorization,content-type, stripe-version' });
      expect([url, a.status, text(a)]).toEqual([url, 204, '']);
      expect(a.headers).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-headers': 'authorization,content-type, stripe-version',
        'access-control-max-age': '300',
        'x-kit-world-code': 'v3',
      });
      expect(a.headers['access-control-allow-methods']?.split(', ')).toContain('POST');
      expect(a.headers['access-control-allow-credentials']).toBeUndefined();
    }
    // The twin never sees a preflight.
    expect(world.received.length).toBe(before);
  });

  it('allows a method outside the usual ones when asked, echoes no malformed header list, and answers Private Network Access', async () => {
    const a = await dispatch({
      method: 'OPTIONS',
      url: '/local/shop/github/repos/o/r',
      headers: { origin, 'access-control-request-method': 'PROPFIND', 'access-control-request-headers': 'x-a\r\nset-cookie: 1', 'access-control-request-private-network': 'true' },
    });
    expect(a.status).toBe(204);
    expect(a.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, PROPFIND');
    expect(a.headers['access-control-allow-headers']).toBeUndefined();
    expect(a.headers['access-control-allow-private-network']).toBe('true');
    const odd = await preflight('/local/shop/stripe/v1/x', { 'access-control-request-method': 'GE T' });
    expect(odd.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
  });

  it('treats an OPTIONS that is not a preflight as a request for the twin: credential first', async () => {
    const bare = await dispatch({ method: 'OPTIONS', url: '/local/shop/stripe/v1/customers', headers: { origin } });
    expect([bare.status, body(bare).error?.code]).toEqual([401, 'unauthenticated']);
    const sent = await dispatch({ method: 'OPTIONS', url: '/local/shop/stripe/v1/customers', headers: auth });
    expect(body(sent)).toMatchObject({ method: 'OPTIONS', path: '/stripe/v1/customers' });
  });

  it('lets the page read every answer to a request with Origin, refusals and 413 included, and leaves other answers alone', async () => {
    const ok = await dispatch({ method: 'GET', url: '/local/shop/stripe/v1/customers', headers: { ...auth, origin } });
    expect([ok.status, ok.headers['access-control-allow-origin'], ok.headers['access-control-expose-headers']]).toEqual([200, '*', '*']);
    const refused = await dispatch({ method: 'GET', url: '/local/shop/stripe/v1/customers', headers: { origin, authorization: 'Bearer nope' } });
    expect([refused.status, refused.headers['access-control-allow-origin']]).toEqual([401, '*']);
    const big = await dispatch({ method: 'POST', url: '/local/shop/stripe/v1/customers', headers: { ...auth, origin }, body: 'x'.repeat(11) });
    expect([big.status, big.headers['access-control-allow-origin']]).toEqual([413, '*']);
    const missing = await dispatch({ method: 'GET', url: '/local/other/stripe/v1/customers', headers: { ...auth, origin } });
    expect([missing.status, missing.headers['access-control-allow-origin']]).toEqual([404, '*']);
    const plain = await dispatch({ method: 'GET', url: '/local/shop/stripe/v1/customers', headers: auth });
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
    expect(plain.headers['access-control-expose-headers']).toBeUndefined();
  });

  it("keeps a twin's own CORS answer", async () => {
    const a = await dispatch({
      method: 'GET',
      url: '/local/shop/s3/bucket/key',
      headers: { ...auth, origin, 'x-echo-set-header': 'access-control-allow-origin: https://only.example' },
    });
    expect(a.headers['access-control-allow-origin']).toBe('https://only.example');
    expect(a.headers['access-control-expose-headers']).toBeUndefined();
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
