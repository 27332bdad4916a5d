import { describe, expect, it } from 'vitest';
import { echoWorld } from '../echo-world.js';
import { createSingleWorldCore } from '../single-world.js';
import type { TwinScopes } from '../single-world.js';
import { parseAttachManifest, fillStreamEnv } from '../../sdk/attach/manifest.js';
import type { AttachManifest } from '../../sdk/attach/manifest.js';
import { buildAttachManifest, streamVariable } from './manifest.js';

const tokens = { token: 'tok_manifest-write-0123456789abcdef', readToken: 'tok_r_manifest-read-0123456789abcdef' };
const twins: TwinScopes[] = [
  { vendor: 'stripe', requestScopes: [], protocol: 'http', hosts: ['api.stripe.com'], endpointEnv: ['STRIPE_API_BASE'] },
  { vendor: 'github', requestScopes: ['read'], protocol: 'http', hosts: ['api.github.com', 'github.com'], endpointEnv: ['GITHUB_API_URL'] },
  { vendor: 'smtp', requestScopes: [], protocol: 'smtp', hosts: ['smtp.example.com'], endpointEnv: ['SMTP_HOST', 'SMTP_PORT'] },
  { vendor: 'hello', requestScopes: [] },
];
const ca = { pem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n', sha256: 'ab'.repeat(32) };

function core() {
  const c = createSingleWorldCore({ world: echoWorld('shop'), org: 'acme', worldName: 'shop', tokens, twins });
  c.publish({ baseUrl: 'http://127.0.0.1:4440', proxyUrl: 'http://127.0.0.1:4441', ca });
  return c;
}

describe('GET {world_url}/.well-known/kit-world', () => {
  it('answers a token holder the whole manifest: vendors, hosts, CA, proxy, env and streams', async () => {
    const r = await core().dispatch({ method: 'GET', url: '/acme/shop/.well-known/kit-world', headers: { 'x-kit-token': tokens.token } });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    const m = JSON.parse(r.body as string) as AttachManifest;
    expect(m).toEqual({
      name: 'shop',
      vendors: {
        stripe: 'http://127.0.0.1:4440/acme/shop/stripe',
        github: 'http://127.0.0.1:4440/acme/shop/github',
        smtp: 'http://127.0.0.1:4440/acme/shop/smtp',
        hello: 'http://127.0.0.1:4440/acme/shop/hello',
      },
      hosts: { 'api.stripe.com': 'stripe', 'api.github.com': 'github', 'github.com': 'github' },
      ca,
      proxy: { url: 'http://127.0.0.1:4441', hosts: ['api.stripe.com', 'api.github.com', 'github.com'] },
      env: {
        KIT_TWINS_KEY: tokens.token,
        STRIPE_API_BASE: 'http://127.0.0.1:4440/acme/shop/stripe',
        GITHUB_API_URL: 'http://127.0.0.1:4440/acme/shop/github',
      },
      streams: {
        smtp: { url: 'ws://127.0.0.1:4440/-/acme/shop/streams/smtp', protocol: 'smtp', env: { SMTP_HOST: '{host}', SMTP_PORT: '{port}' } },
      },
    });
    // What the server answers is what an attacher accepts.
    expect(parseAttachManifest(m)).toEqual(m);
    expect(fillStreamEnv(m.streams['smtp']!, '127.0.0.1', 2525)).toEqual({ SMTP_HOST: '127.0.0.1', SMTP_PORT: '2525' });
  });

  it('hands the read token a manifest whose KIT_TWINS_KEY is the read token, never the world token', async () => {
    const presented: Record<string, string>[] = [{ 'x-kit-token': tokens.readToken }, { authorization: `Bearer ${tokens.readToken}` }];
    for (const headers of presented) {
      const r = await core().dispatch({ method: 'GET', url: '/acme/shop/.well-known/kit-world', headers });
      expect(r.status).toBe(200);
      const text = r.body as string;
      expect(text).not.toContain(tokens.token);
      expect((JSON.parse(text) as AttachManifest).env['KIT_TWINS_KEY']).toBe(tokens.readToken);
    }
  });

  it('refuses no token and a wrong token with 401, and other methods with 405', async () => {
    const c = core();
    const none = await c.dispatch({ method: 'GET', url: '/acme/shop/.well-known/kit-world' });
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body as string)).toMatchObject({ error: { code: 'unauthenticated' } });
    const wrong = await c.dispatch({ method: 'GET', url: '/acme/shop/.well-known/kit-world', headers: { 'x-kit-token': 'tok_nope' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body as string).not.toContain('KIT_TWINS_KEY');
    const post = await c.dispatch({ method: 'POST', url: '/acme/shop/.well-known/kit-world', headers: { 'x-kit-token': tokens.token } });
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
  });

  it('names the host the client used when the server listens on every address, so another machine can attach', async () => {
    const c = createSingleWorldCore({ world: echoWorld('shop'), org: 'acme', worldName: 'shop', tokens, twins });
    c.publish({ baseUrl: 'http://127.0.0.1:4440', proxyUrl: 'http://127.0.0.1:4441', ca, everyAddress: true });
    const manifestFor = async (host: string | undefined): Promise<AttachManifest> => {
      const r = await c.dispatch({ method: 'GET', url: '/acme/shop/.well-known/kit-world', headers: { 'x-kit-token': tokens.token, ...(host === undefined ? {} : { host }) } });
      return JSON.parse(r.body as string) as AttachManifest;
    };
    const remote = await manifestFor('192.0.2.7:4440');
    expect(remote.vendors['stripe']).toBe('http://192.0.2.7:4440/acme/shop/stripe');
    expect(remote.env['STRIPE_API_BASE']).toBe('http://192.0.2.7:4440/acme/shop/stripe');
    expect(remote.streams['smtp']?.url).toBe('ws://192.0.2.7:4440/-/acme/shop/streams/smtp');
    expect(remote.proxy?.url).toBe('http://192.0.2.7:4441');
    // What the remote attacher checks against the world URL it used: it accepts it.
    expect(parseAttachManifest(remote, { worldUrl: 'http://192.0.2.7:4440/acme/shop' })).toEqual(remote);
    // A name and an IPv6 literal, as sent; a port-forwarded one keeps the port the client used.
    expect((await manifestFor('kit.example.test:8080')).vendors['hello']).toBe('http://kit.example.test:8080/acme/shop/hello');
    expect((await manifestFor('kit.example.test:8080')).proxy?.url).toBe('http://kit.example.test:4441');
    expect((await manifestFor('[fd00::2]:4440')).proxy?.url).toBe('http://[fd00::2]:4441');
    // A Host that is no authority (or none at all) gets the published address.
    for (const host of [undefined, 'a/b', 'x:99999', 'evil.test:1@x', '']) {
      expect((await manifestFor(host)).vendors['stripe'], String(host)).toBe('http://127.0.0.1:4440/acme/shop/stripe');
    }
    // A server on one address names that address whatever the Host says.
    const one = await core().dispatch({ method: 'GET', url: '/acme/shop/.well-known/kit-world', headers: { 'x-kit-token': tokens.token, host: '192.0.2.7:4440' } });
    expect((JSON.parse(one.body as string) as AttachManifest).vendors['stripe']).toBe('http://127.0.0.1:4440/acme/shop/stripe');
  });

  it('names no CA and no proxy when the server runs none', async () => {
    const c = createSingleWorldCore({ world: echoWorld('shop'), org: 'acme', worldName: 'shop', tokens, twins });
    c.publish({ baseUrl: 'http://127.0.0.1:9', proxyUrl: null, ca: null });
    const m = JSON.parse((await c.dispatch({ method: 'GET', url: '/acme/shop/.well-known/kit-world', headers: { 'x-kit-token': tokens.token } })).body as string) as AttachManifest;
    expect([m.ca, m.proxy]).toEqual([null, null]);
    expect(m.hosts['api.stripe.com']).toBe('stripe');
  });
});

describe('buildAttachManifest', () => {
  it('gives a host claimed by two twins to the first, and never lets a twin set KIT_TWINS_KEY', () => {
    const m = buildAttachManifest({
      name: 'w',
      worldUrl: 'http://h/o/w',
      worldApi: 'http://h/-/o/w',
      token: 't',
      twins: [
        { vendor: 'a', hosts: ['API.x.com'], endpointEnv: ['KIT_TWINS_KEY', 'A_URL', 'bad name'] },
        { vendor: 'b', hosts: ['api.x.com'] },
      ],
      ca: null,
      proxyUrl: null,
    });
    expect(m.hosts).toEqual({ 'api.x.com': 'a' });
    expect(m.env).toEqual({ KIT_TWINS_KEY: 't', A_URL: 'http://h/o/w/a' });
  });

  it('templates stream variables by what their names say', () => {
    expect(['SMTP_HOST', 'SMTP_PORT', 'DBVENDOR_MYSQL_TWIN_URL', 'REDIS_ADDR'].map((n) => streamVariable(n, 'mysql'))).toEqual([
      '{host}',
      '{port}',
      'mysql://{host}:{port}',
      '{host}:{port}',
    ]);
  });
});

describe('parseAttachManifest', () => {
  it('refuses a manifest an attacher must not act on, naming the field', () => {
    const good = buildAttachManifest({ name: 'w', worldUrl: 'http://h/o/w', worldApi: 'http://h/-/o/w', token: 't', twins: [{ vendor: 'a', hosts: ['a.com'] }], ca, proxyUrl: 'http://h:1' });
    expect(parseAttachManifest(JSON.parse(JSON.stringify(good)))).toEqual(good);
    const bad: [unknown, RegExp][] = [
      [null, /not a JSON object/],
      [{ ...good, name: 3 }, /name/],
      [{ ...good, vendors: { a: 'file:///etc/passwd' } }, /vendors\.a/],
      [{ ...good, hosts: { 'a.com': 'nobody' } }, /hosts\.a\.com/],
      [{ ...good, env: { 'A B': 'x' } }, /env has a bad name/],
      [{ ...good, env: { A: 1 } }, /env\.A/],
      [{ ...good, ca: { pem: 'x', sha256: 'y' } }, /ca\.pem/],
      [{ ...good, proxy: { url: 'socks5://h:1', hosts: [] } }, /proxy\.url/],
      [{ ...good, streams: { smtp: { url: 'http://h', env: {} } } }, /streams\.smtp\.url/],
    ];
    for (const [raw, message] of bad) expect(() => parseAttachManifest(raw)).toThrow(message);
  });
});
