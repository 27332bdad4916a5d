import { describe, expect, it } from 'vitest';
import { echoWorld } from '../echo-world.js';
import { createSingleWorldCore } from '../single-world.js';
import { worldAtHost, worldOriginOf, type WorldOriginRule } from './access/origins.js';
import { pageFilesOf } from './pages.js';
import type { HttpAnswer } from './types.js';

const tokens = { token: 'tok_browser-write-token-abcdefgh', readToken: 'tok_r_browser-read-token-abcdefgh' };
const local: WorldOriginRule = { scheme: 'http', suffix: '.localhost', port: 4440, loopback: true };
const text = (a: HttpAnswer): string => (typeof a.body === 'string' ? a.body : Buffer.from(a.body).toString('utf8'));

/** The page config a shell carries, as the page reads it. */
function configOf(a: HttpAnswer): Record<string, unknown> {
  const m = /<script type="application\/json" id="kit-page">(.*?)<\/script>/.exec(text(a));
  if (m === null) throw new Error(`no page config in ${text(a).slice(0, 200)}`);
  return JSON.parse(m[1]!) as Record<string, unknown>;
}

describe("a world's own origin", () => {
  it('is <world>--<org> under the suffix, and only a label that says where the name ends has one', () => {
    expect(worldOriginOf(local, 'acme', 'shop')).toBe('http://shop--acme.localhost:4440');
    expect(worldOriginOf({ scheme: 'https', suffix: '.worlds.example.com', port: null, loopback: false }, 'acme', 'shop')).toBe('https://shop--acme.worlds.example.com');
    expect(worldOriginOf(local, 'acme', 'my--shop')).toBeNull();
    expect(worldOriginOf(local, 'a'.repeat(30), 'b'.repeat(32))).toBeNull();
    expect(worldAtHost(local, 'shop--acme.localhost:4440')).toEqual({ org: 'acme', world: 'shop' });
    expect(worldAtHost(local, 'SHOP--ACME.localhost:4440')).toEqual({ org: 'acme', world: 'shop' });
    // The org may hold `--`: the world's name ends at the first.
    expect(worldAtHost(local, 'shop--acme--eu.localhost:4440')).toEqual({ org: 'acme--eu', world: 'shop' });
    for (const host of ['shop--acme.localhost:4441', 'shop--acme.localhost', 'shop-acme.localhost:4440', '--acme.localhost:4440', 'shop--.localhost:4440', 'shop--acme.evil.com:4440', 'x.shop--acme.localhost:4440', '127.0.0.1:4440', undefined]) {
      expect([host, worldAtHost(local, host)]).toEqual([host, null]);
    }
    const hosted: WorldOriginRule = { scheme: 'https', suffix: '.worlds.example.com', port: null, loopback: false };
    expect(worldAtHost(hosted, 'shop--acme.worlds.example.com')).toEqual({ org: 'acme', world: 'shop' });
    expect(worldAtHost(hosted, 'shop--acme.worlds.example.com:443')).toEqual({ org: 'acme', world: 'shop' });
    expect(worldAtHost(hosted, 'shop--acme.worlds.example.com:8443')).toBeNull();
  });
});

describe('pages the core serves', () => {
  const pages = pageFilesOf({
    world: { 'app.js': 'console.log("world page")', 'app.css': 'body{}' },
    stripe: { 'app.js': 'console.log("stripe mirror")', 'logo.svg': '<svg/>' },
  });
  const world = echoWorld('shop', 'v3');
  const core = createSingleWorldCore({ world, org: 'acme', tokens, pages, twins: [{ vendor: 'stripe', requestScopes: [] }, { vendor: 'hello', requestScopes: [] }] });
  core.publish({ baseUrl: 'http://127.0.0.1:4440', proxyUrl: null, ca: null, worldOrigins: local });
  const atOrigin = { host: 'shop--acme.localhost:4440' };

  it("answers the world page at its origin's root, keyless, with its config and a strict CSP", async () => {
    const a = await core.dispatch({ method: 'GET', url: '/', headers: atOrigin });
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(a.headers['content-security-policy']).toContain("default-src 'self'");
    // Scripts from the page's own files only, not from any path of the origin (a twin's stored file).
    expect(a.headers['content-security-policy']).toContain('script-src http://shop--acme.localhost:4440/.kit/world/');
    expect(text(a)).toContain('<script type="module" src="/.kit/world/app.js">');
    expect(text(a)).toContain('href="/.kit/world/app.css"');
    expect(configOf(a)).toEqual({
      page: 'world', org: 'acme', world: 'shop', worldUrl: '/acme/shop', worldApi: '/-/acme/shop', base: 'http://127.0.0.1:4440', origin: 'http://shop--acme.localhost:4440', loopback: true,
      vendor: null, assets: '/.kit/world', twins: [{ vendor: 'stripe', mirror: true }, { vendor: 'hello', mirror: false }], branches: false,
    });
    const js = await core.dispatch({ method: 'GET', url: '/.kit/world/app.js', headers: atOrigin });
    expect([js.status, js.headers['content-type'], text(js)]).toEqual([200, 'text/javascript; charset=utf-8', 'console.log("world page")']);
    for (const [method, url, status] of [['GET', '/.kit/world/nope.js', 404], ['GET', '/.kit/world/../app.js', 404], ['POST', '/', 405]] as const) {
      expect([url, (await core.dispatch({ method, url, headers: atOrigin })).status]).toEqual([url, status]);
    }
    // At the host's own address, `/` is no page.
    expect((await core.dispatch({ method: 'GET', url: '/' })).status).toBe(404);
  });

  it("serves a twin's mirror keyless at any origin, and 404 no_mirror for a twin without one", async () => {
    const shell = await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/mirror/' });
    expect(shell.status).toBe(200);
    expect(configOf(shell)).toMatchObject({ page: 'mirror', vendor: 'stripe', assets: '/acme/shop/stripe/mirror/assets' });
    // No css was built for it: the shell names none.
    expect(text(shell)).not.toContain('app.css');
    const svg = await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/mirror/assets/logo.svg' });
    expect([svg.status, svg.headers['content-type']]).toEqual([200, 'image/svg+xml']);
    const none = await core.dispatch({ method: 'GET', url: '/acme/shop/hello/mirror/' });
    expect([none.status, JSON.parse(text(none)).error.code]).toEqual([404, 'no_mirror']);
    expect((await core.dispatch({ method: 'POST', url: '/acme/shop/stripe/mirror/' })).status).toBe(405);
    // Not a twin of this world: the path is the vendor wire's as ever (the credential first).
    expect((await core.dispatch({ method: 'GET', url: '/acme/shop/github/mirror/' })).status).toBe(401);
  });

  it("shows the mirror's shell to a browser opening a twin's URL, with or without a session; an API client gets the twin", async () => {
    const nav = { 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate' };
    const keyless = await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/v1/customers/cus_1', headers: nav });
    expect([keyless.status, configOf(keyless)['vendor']]).toEqual([200, 'stripe']);
    // With a credential the twin answers (the echo world answers JSON, not a page): the shell still.
    const withToken = await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/v1/customers/cus_1', headers: { ...nav, 'x-kit-token': tokens.token } });
    expect(configOf(withToken)['vendor']).toBe('stripe');
    expect((await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/v1/customers/cus_1', headers: { 'sec-fetch-dest': 'iframe' } })).headers['content-type']).toContain('text/html');
    // Not a navigation, another method, or a twin without a mirror: as ever.
    expect((await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/v1/customers/cus_1' })).status).toBe(401);
    expect((await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/v1/customers/cus_1', headers: { 'sec-fetch-dest': 'empty' } })).status).toBe(401);
    expect((await core.dispatch({ method: 'POST', url: '/acme/shop/stripe/v1/customers', headers: nav })).status).toBe(401);
    expect((await core.dispatch({ method: 'GET', url: '/acme/shop/hello/v1/x', headers: nav })).status).toBe(401);
    const api = await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/v1/customers/cus_1', headers: { 'x-kit-token': tokens.token } });
    expect(api.headers['content-type']).toContain('application/json');
    expect(api.headers['content-security-policy']).toBeUndefined();
    // At the world's origin a twin's answer is sandboxed: nothing it holds runs as a page there.
    const there = await core.dispatch({ method: 'GET', url: '/acme/shop/stripe/v1/customers/cus_1', headers: { 'x-kit-token': tokens.token, ...atOrigin } });
    expect([there.headers['content-security-policy'], there.headers['x-content-type-options']]).toEqual(['sandbox', 'nosniff']);
  });
});
