/**
 * The authentication matrix (spec: Authentication 1, 2, 11; the "read" column of the
 * endpoint tables), run through `dispatch`: every world endpoint × { no credential,
 * read token, token, wrong token }, and every credential form on the vendor API.
 */
import { describe, expect, it } from 'vitest';
import { echoWorld } from './echo-world.js';
import type { EchoBody } from './echo-world.js';
import { createSingleWorldCore } from './single-world.js';
import type { HttpAnswer } from './core/types.js';

const TOKEN = 'tok_matrix-write-token-0123456789';
const READ = 'tok_r_matrix-read-token-0123456789';
const WRONG = 'tok_not-this-worlds-token-012345';

function core() {
  const world = echoWorld('w', 'code-1');
  const c = createSingleWorldCore({
    world,
    org: 'acme',
    tokens: { token: TOKEN, readToken: READ },
    twins: [
      { vendor: 'hello', requestScopes: [] },
      { vendor: 'gitvendor', requestScopes: ['read'] },
    ],
  });
  // The attach manifest names the server's address, known once it listens.
  c.publish({ baseUrl: 'http://127.0.0.1:4440', proxyUrl: null, ca: null });
  return { world, dispatch: c.dispatch };
}

function text(a: HttpAnswer): string {
  return typeof a.body === 'string' ? a.body : Buffer.from(a.body).toString('utf8');
}
function errorCode(a: HttpAnswer): string | undefined {
  return (JSON.parse(text(a)) as { error?: { code?: string } }).error?.code;
}
function echo(a: HttpAnswer): EchoBody {
  return JSON.parse(text(a)) as EchoBody;
}

/** Every world endpoint of the spec tables, with whether the read token opens it. */
const WORLD_ENDPOINTS: { method: string; path: string; read: boolean; status?: number }[] = [
  // History
  { method: 'GET', path: '/log/hello?after=3', read: true },
  { method: 'GET', path: '/checkpoint/hello?at=2', read: true },
  { method: 'GET', path: '/checkpoint/hello', read: true },
  { method: 'GET', path: '/changesets', read: true },
  { method: 'GET', path: '/changesets/cs-1', read: true },
  { method: 'GET', path: '/requests?hours=24', read: true },
  // Pushing and deploying
  { method: 'POST', path: '/push', read: false },
  { method: 'POST', path: '/changesets/cs-1/verify', read: false },
  { method: 'POST', path: '/changesets/cs-1/approve', read: false },
  { method: 'POST', path: '/deploy', read: false },
  { method: 'POST', path: '/deploy/cs-1', read: false },
  { method: 'POST', path: '/changesets', read: false },
  // A twin's root and the world's relations
  { method: 'GET', path: '/twins', read: true },
  { method: 'GET', path: '/twins/hello/status', read: false },
  { method: 'GET', path: '/twins/hello/root', read: false },
  { method: 'PUT', path: '/twins/hello/root', read: false },
  { method: 'PUT', path: '/twins/hello/credential', read: false },
  { method: 'GET', path: '/twins/hello/credential', read: false },
  { method: 'GET', path: '/twins/hello/scenario', read: false },
  { method: 'PUT', path: '/twins/hello/scenario', read: false },
  { method: 'DELETE', path: '/twins/hello/scenario', read: false },
  { method: 'POST', path: '/twins/hello/refresh?force=1', read: false },
  { method: 'GET', path: '/origin', read: false },
  { method: 'PUT', path: '/origin', read: false },
  { method: 'POST', path: '/origin/pull', read: false },
  { method: 'POST', path: '/origin/push', read: false },
  { method: 'GET', path: '/links', read: false },
  { method: 'PUT', path: '/links/real', read: false },
  { method: 'DELETE', path: '/links/real', read: false },
  { method: 'GET', path: '/checks', read: false },
  { method: 'PUT', path: '/checks/no-negative', read: false },
  { method: 'DELETE', path: '/checks/no-negative', read: false },
  // Sessions and keys
  { method: 'POST', path: '/session', read: true },
  { method: 'DELETE', path: '/session', read: true },
  { method: 'GET', path: '/keys', read: false },
  { method: 'POST', path: '/keys', read: false },
  { method: 'DELETE', path: '/keys/key-1', read: false },
  { method: 'DELETE', path: '/keys?person=someone', read: false },
  // Looking into a world
  { method: 'GET', path: '/map', read: true },
  { method: 'GET', path: '/timeline?limit=10&twin=hello', read: true },
  { method: 'GET', path: '/diff', read: true },
  { method: 'GET', path: '/clock', read: true },
  { method: 'PUT', path: '/clock', read: false },
  { method: 'POST', path: '/clock/advance', read: false },
  { method: 'GET', path: '/history?at=2026-01-01T00:00:00.000Z', read: true },
  // The single-world server makes no branches: 404 once authenticated.
  { method: 'GET', path: '/branches', read: true, status: 404 },
  { method: 'POST', path: '/branches', read: false, status: 404 },
  { method: 'DELETE', path: '/branches/acme/w-x-1a2b', read: false, status: 404 },
];

describe('authentication matrix: world endpoints', () => {
  for (const e of WORLD_ENDPOINTS) {
    const url = `/-/acme/w${e.path}`;
    const opened = e.status ?? 200;

    it(`${e.method} …${e.path}`, async () => {
      const { world, dispatch } = core();
      const body = e.method === 'GET' || e.method === 'DELETE' ? undefined : '{}';
      const ask = (headers: Record<string, string>) => dispatch({ method: e.method, url, headers: { 'content-type': 'application/json', ...headers }, body });

      const none = await ask({});
      expect([none.status, errorCode(none)]).toEqual([401, 'unauthenticated']);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer realm=/);

      const wrong = await ask({ 'x-kit-token': WRONG });
      expect([wrong.status, errorCode(wrong)]).toEqual([401, 'unauthenticated']);

      // The world API reads x-kit-token, and x-twins-key from an attached app (Authentication 3);
      // an Authorization header is the vendor's and never opens it.
      const bearer = await ask({ authorization: `Bearer ${TOKEN}` });
      expect(bearer.status).toBe(401);
      const twinsKey = await ask({ 'x-twins-key': TOKEN });
      expect(twinsKey.status).toBe(opened);

      const read = await ask({ 'x-kit-token': READ });
      if (e.read) expect(read.status).toBe(opened);
      else expect([read.status, errorCode(read)]).toEqual([403, 'forbidden']);

      const full = await ask({ 'x-kit-token': TOKEN });
      expect(full.status).toBe(opened);
      for (const a of [none, wrong, read, full]) expect(a.headers['x-kit-world-code']).toBe('code-1');

      // What reached the world, and as what.
      const reached = world.received.map((r) => `${r.scope} ${r.method} ${r.path}?${r.query}`);
      const [path, query = ''] = e.path.split('?');
      const expected = [];
      if (opened === 200) expected.push(`write ${e.method} ${path}?${query}`); // the x-twins-key request
      if (opened === 200 && e.read) expected.push(`read ${e.method} ${path}?${query}`);
      if (opened === 200) expected.push(`write ${e.method} ${path}?${query}`);
      expect(reached).toEqual(expected);
      for (const r of world.received) {
        expect(r.surface).toBe('api');
        expect(r.headers['x-kit-token']).toBeUndefined();
      }
    });
  }

  it('a HEAD on a read endpoint is opened by the read token like its GET', async () => {
    const { dispatch } = core();
    const a = await dispatch({ method: 'HEAD', url: '/-/acme/w/map', headers: { 'x-kit-token': READ } });
    expect(a.status).toBe(200);
  });

  it('twins/<vendor>/status is not a read endpoint though twins is', async () => {
    const { dispatch } = core();
    expect((await dispatch({ method: 'GET', url: '/-/acme/w/twins', headers: { 'x-kit-token': READ } })).status).toBe(200);
    expect((await dispatch({ method: 'GET', url: '/-/acme/w/twins/', headers: { 'x-kit-token': READ } })).status).toBe(200);
    expect((await dispatch({ method: 'GET', url: '/-/acme/w/twins/hello', headers: { 'x-kit-token': READ } })).status).toBe(403);
    expect((await dispatch({ method: 'GET', url: '/-/acme/w/twins/hello/status', headers: { 'x-kit-token': READ } })).status).toBe(403);
  });

  it('a token of another length or a huge header is refused, not crashed on', async () => {
    const { dispatch } = core();
    for (const t of ['', 'x', TOKEN.slice(0, -1), `${TOKEN}x`, 'a'.repeat(5000), `${READ} `]) {
      const a = await dispatch({ method: 'GET', url: '/-/acme/w/map', headers: { 'x-kit-token': t } });
      // A trailing space is trimmed, so `${READ} ` opens as the read token.
      expect(a.status).toBe(t === `${READ} ` ? 200 : 401);
    }
  });
});

const VENDOR_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** Each way a credential rides on the vendor wire, and whether it arrives through Authorization. */
const FORMS: { name: string; headers: (t: string) => Record<string, string>; viaAuthorization: boolean }[] = [
  { name: 'x-kit-token', headers: (t) => ({ 'x-kit-token': t }), viaAuthorization: false },
  { name: 'x-twins-key', headers: (t) => ({ 'x-twins-key': t }), viaAuthorization: false },
  { name: 'Bearer', headers: (t) => ({ authorization: `Bearer ${t}` }), viaAuthorization: true },
  { name: 'bearer (lower case)', headers: (t) => ({ authorization: `bearer ${t}` }), viaAuthorization: true },
  { name: 'token', headers: (t) => ({ authorization: `token ${t}` }), viaAuthorization: true },
  { name: 'Basic password', headers: (t) => ({ authorization: basic('AC123', t) }), viaAuthorization: true },
  { name: 'Basic password, empty user', headers: (t) => ({ authorization: basic('', t) }), viaAuthorization: true },
  { name: 'Basic user name, no password (curl -u <token>:)', headers: (t) => ({ authorization: basic(t, '') }), viaAuthorization: true },
];

describe('authentication matrix: vendor API', () => {
  for (const form of FORMS) {
    for (const method of VENDOR_METHODS) {
      it(`${form.name} × ${method}`, async () => {
        const { world, dispatch } = core();
        const ask = (vendor: string, headers: Record<string, string>) =>
          dispatch({ method, url: `/acme/w/${vendor}/v1/things?a=1`, headers, body: method === 'POST' ? 'n=1' : undefined });
        const reads = method === 'GET' || method === 'HEAD';

        // A HEAD's answer has no body (the core drops it, keeping the GET's length): what the
        // world was handed is read from the echo world itself.
        const handed = (a: HttpAnswer): EchoBody => {
          if (method !== 'HEAD') return echo(a);
          expect([text(a), Number(a.headers['content-length'])]).toEqual(['', expect.any(Number)]);
          expect(Number(a.headers['content-length'])).toBeGreaterThan(0);
          const r = world.received[world.received.length - 1]!;
          return { surface: r.surface, method: r.method, path: r.path, query: r.query, headers: { ...r.headers }, scope: r.scope } as EchoBody;
        };
        const full = await ask('hello', form.headers(TOKEN));
        expect(full.status).toBe(200);
        const seen = handed(full);
        expect(seen).toMatchObject({ surface: 'vendor', method, path: '/hello/v1/things', query: 'a=1', scope: 'write' });
        expect(seen.headers['x-kit-token']).toBeUndefined();
        expect(seen.headers['x-twins-key']).toBeUndefined();
        expect(seen.headers['x-kit-auth']).toBe(form.viaAuthorization ? 'authorization' : undefined);
        expect(seen.headers['x-kit-read-only']).toBeUndefined();

        const read = await ask('hello', form.headers(READ));
        if (reads) {
          expect(read.status).toBe(200);
          expect(handed(read).scope).toBe('read');
        } else {
          expect([read.status, errorCode(read)]).toEqual([403, 'read_only']);
        }

        // A twin that enforces the read scope itself gets the request, marked.
        const readAtScoped = await ask('gitvendor', form.headers(READ));
        expect(readAtScoped.status).toBe(200);
        const marked = handed(readAtScoped);
        expect(marked.scope).toBe('read');
        expect(marked.headers['x-kit-read-only']).toBe(reads ? undefined : '1');

        // A HEAD's error has no body to read a code from: its status says it.
        const codeOf = (a: HttpAnswer): string | undefined => (method === 'HEAD' ? (text(a) === '' ? 'unauthenticated' : 'a body on HEAD') : errorCode(a));
        const wrong = await ask('hello', form.headers(WRONG));
        expect([wrong.status, codeOf(wrong)]).toEqual([401, 'unauthenticated']);
        expect(wrong.headers['www-authenticate']).toContain('Basic realm=');

        const none = await ask('hello', {});
        expect([none.status, codeOf(none)]).toEqual([401, 'unauthenticated']);

        const count = reads ? 3 : 2;
        expect(world.received).toHaveLength(count);
      });
    }
  }

  it("with x-twins-key the app's own Authorization reaches the twin untouched", async () => {
    const { dispatch } = core();
    const a = await dispatch({
      method: 'POST',
      url: '/acme/w/hello/v1/customers',
      headers: { 'x-twins-key': TOKEN, authorization: 'Bearer sk_test_vendor_key' },
    });
    const seen = echo(a);
    expect(seen.headers['authorization']).toBe('Bearer sk_test_vendor_key');
    expect(seen.headers['x-kit-auth']).toBeUndefined();
    expect(seen.headers['x-twins-key']).toBeUndefined();
  });

  it('a vendor key in Authorization without the world token is refused', async () => {
    const { dispatch } = core();
    const a = await dispatch({ method: 'GET', url: '/acme/w/hello/v1/customers', headers: { authorization: 'Bearer sk_test_vendor_key' } });
    expect(a.status).toBe(401);
    const b = await dispatch({ method: 'GET', url: '/acme/w/hello/v1/customers', headers: { authorization: 'AWS4-HMAC-SHA256 Credential=x' } });
    expect(b.status).toBe(401);
    const c = await dispatch({ method: 'GET', url: '/acme/w/hello/v1/customers', headers: { authorization: 'Basic !!!not-base64' } });
    expect(c.status).toBe(401);
  });

  it('a client cannot forge the headers the host sets', async () => {
    const { dispatch } = core();
    const a = await dispatch({
      method: 'POST',
      url: '/acme/w/hello/v1/x',
      headers: { 'x-twins-key': TOKEN, 'x-kit-auth': 'authorization', 'x-kit-read-only': '1' },
    });
    const seen = echo(a);
    expect(seen.headers['x-kit-auth']).toBeUndefined();
    expect(seen.headers['x-kit-read-only']).toBeUndefined();
    const b = await dispatch({ method: 'GET', url: '/acme/w/hello/v1/x', headers: { 'x-twins-key': TOKEN, 'x-kit-twin-url': 'https://evil.example' } });
    expect(echo(b).headers['x-kit-twin-url']).toBe('http://127.0.0.1:4440/acme/w/hello');
  });

  it('tells the twin where the client addressed it: the Host it sent, else the published address', async () => {
    const { dispatch } = core();
    const seenWith = async (url: string, host?: string): Promise<string | undefined> => {
      const headers: Record<string, string> = { 'x-twins-key': TOKEN };
      if (host !== undefined) headers['host'] = host;
      return echo(await dispatch({ method: 'GET', url, headers })).headers['x-kit-twin-url'];
    };
    expect(await seenWith('/acme/w/hello/repos/o/r/issues', 'localhost:4440')).toBe('http://localhost:4440/acme/w/hello');
    expect(await seenWith('/acme/w/hello', 'w--acme.localhost:4440')).toBe('http://w--acme.localhost:4440/acme/w/hello');
    expect(await seenWith('/acme/w/hello/x', '[::1]:4440')).toBe('http://[::1]:4440/acme/w/hello');
    // The vendor segment as the client wrote it, doubled slashes folded as routing folds them.
    expect(await seenWith('/acme/w//gitvendor/x', 'localhost:4440')).toBe('http://localhost:4440/acme/w/gitvendor');
    // A Host that is no URL authority is not echoed into the twin's links.
    for (const forged of ['evil.example/path', 'a b', '"><x>', 'h:99999999', '']) {
      expect(await seenWith('/acme/w/hello/x', forged)).toBe('http://127.0.0.1:4440/acme/w/hello');
    }
    // The world API is not a twin.
    const api = echo(await dispatch({ method: 'GET', url: '/-/acme/w/clock', headers: { 'x-kit-token': TOKEN, host: 'localhost:4440' } }));
    expect(api.surface).toBe('api');
    expect(api.headers['x-kit-twin-url']).toBeUndefined();
  });

  it("the twin's own endpoints and the attach manifest open to the read token", async () => {
    const { dispatch } = core();
    for (const p of ['/hello/twin', '/hello/twin/scenario', '/hello/twin/store/by-id', '/.well-known/kit-world']) {
      const a = await dispatch({ method: 'GET', url: `/acme/w${p}`, headers: { 'x-kit-token': READ } });
      expect([p, a.status]).toEqual([p, 200]);
      expect([p, (await dispatch({ method: 'GET', url: `/acme/w${p}` })).status]).toEqual([p, 401]);
    }
  });

  it('an unknown vendor refuses the read token its writes (it names no read scope)', async () => {
    const { dispatch } = core();
    const a = await dispatch({ method: 'POST', url: '/acme/w/nosuch/x', headers: { 'x-kit-token': READ } });
    expect(a.status).toBe(403);
  });
});
