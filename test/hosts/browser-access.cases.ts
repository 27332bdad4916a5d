/**
 * Browser access as every host answers it (spec: Session, Named key; Sessions and keys;
 * Authentication 5–10): the world's own origin, sessions (token, read, loopback), named keys,
 * `Sec-Fetch-Site`, and what a rotation ends. Called by `runWorldEndpointCases` with its case
 * helpers, so a host's fixture runs these too.
 */
import { expect } from 'vitest';
import { api, atOrigin, createGreeting, expectRefused, fromPage, kit, loopbackSession, originHost, sessionCookieOf, tokenSession, worldOrigin } from './calls.js';
import { startPassIssuer } from '../../sdk/passes/index.js';
import { errorCode, send, type HostFixture, type HostLacks, type HostWorld } from './fixture.js';

export interface CaseKit {
  /** `timeoutMs`: a case that may wait on something of the host's own (default the suite's). */
  test(name: string, run: () => Promise<void>, needs?: (keyof HostLacks)[], timeoutMs?: number): void;
  group(name: string, body: () => void): void;
  sharedWorld(): () => HostWorld;
  host(): HostFixture;
}

const T0 = '2030-01-01T00:00:00.000Z';
const path = (w: HostWorld, sub: string): string => `/-/${w.name}${sub}`;
const vendorPath = (w: HostWorld, sub: string): string => `/${w.name}${sub}`;

export function browserAccessCases({ test, group, sharedWorld, host }: CaseKit): void {
  group('browser access: origins and sessions', () => {
    const shared = sharedWorld();

    test("a session is opened at the world's own origin only: elsewhere 409 naming it", async () => {
      const w = shared();
      const elsewhere = await send('POST', `${w.api}/session`, { headers: kit(w.token), body: { world: w.name, scope: 'write' } });
      expectRefused(elsewhere, 409, 'wrong_origin');
      expect(elsewhere.json()).toMatchObject({ origin: worldOrigin(w) });
      expect(elsewhere.headers['set-cookie']).toBeUndefined();
      // Nor for an origin the body names that is not the world's.
      const named = await atOrigin(w, 'POST', path(w, '/session'), { headers: kit(w.token), body: { world: w.name, origin: 'http://evil.localhost:1' } });
      expectRefused(named, 409, 'wrong_origin');
    });

    test('the cookie is HttpOnly, host-only, SameSite=Strict, holds no token, and opens the world API and the vendor wire there', async () => {
      const w = shared();
      const a = await atOrigin(w, 'POST', path(w, '/session'), { headers: kit(w.token), body: { world: w.name, scope: 'write' } });
      expect(a.status, a.text).toBe(200);
      expect(a.json()).toMatchObject({ world: w.name, scope: 'write', origin: worldOrigin(w) });
      const set = a.headers['set-cookie']!;
      expect(set).toMatch(/^kit_session=[A-Za-z0-9_-]{40,}; /);
      expect(set).toMatch(/HttpOnly/);
      expect(set).toMatch(/SameSite=Strict/);
      expect(set).toMatch(/Path=\//);
      expect(set).toMatch(/Max-Age=2592000/);
      expect(set).not.toMatch(/Domain=/i);
      expect(set).not.toContain(w.token);
      const cookie = sessionCookieOf(a);
      expect((await atOrigin(w, 'GET', path(w, '/clock'), { headers: { cookie } })).status).toBe(200);
      expect((await atOrigin(w, 'GET', path(w, '/session'), { headers: { cookie } })).json()).toMatchObject({ world: w.name, scope: 'write', via: 'session' });
      // A session stands for the world's own key at a twin that checks one (Stripe).
      expect((await atOrigin(w, 'GET', vendorPath(w, '/stripe/v1/customers'), { headers: { cookie } })).status).toBe(200);
      const made = await atOrigin(w, 'POST', vendorPath(w, '/hello/v1/greetings'), { headers: fromPage(w, cookie), body: { name: 'From the page' } });
      expect(made.status, made.text).toBe(200);
      // The same cookie is nothing at the host's base address (a browser would not send it there).
      expectRefused(await send('GET', `${w.api}/clock`, { headers: { cookie } }), 401, 'unauthenticated');
    });

    test('a write carried by a session must come from the same origin; reads need not', async () => {
      const w = shared();
      const cookie = await tokenSession(w);
      for (const site of [undefined, 'cross-site', 'same-site', 'none']) {
        const headers: Record<string, string> = { cookie, ...(site !== undefined ? { 'sec-fetch-site': site } : {}) };
        expectRefused(await atOrigin(w, 'PUT', path(w, '/clock'), { headers, body: { at: T0 } }), 403, 'cross_site_request', `api ${site}`);
        expectRefused(await atOrigin(w, 'POST', vendorPath(w, '/hello/v1/greetings'), { headers, body: { name: 'x' } }), 403, 'cross_site_request', `vendor ${site}`);
        expect((await atOrigin(w, 'GET', vendorPath(w, '/hello/v1/greetings'), { headers })).status).toBe(200);
      }
      expect((await atOrigin(w, 'PUT', path(w, '/clock'), { headers: fromPage(w, cookie), body: { at: T0 } })).status).toBe(200);
    });

    test("a read session reads everything and writes nothing, as the read token; a read token opens no write session", async () => {
      const w = shared();
      const cookie = await tokenSession(w, w.readToken);
      const page = fromPage(w, cookie);
      expect((await atOrigin(w, 'GET', path(w, '/session'), { headers: page })).json()).toMatchObject({ scope: 'read' });
      expect((await atOrigin(w, 'GET', path(w, '/map'), { headers: page })).status).toBe(200);
      expect((await atOrigin(w, 'GET', vendorPath(w, '/hello/v1/greetings'), { headers: page })).status).toBe(200);
      expectRefused(await atOrigin(w, 'PUT', path(w, '/clock'), { headers: page, body: { at: T0 } }), 403, 'forbidden');
      expectRefused(await atOrigin(w, 'POST', vendorPath(w, '/hello/v1/greetings'), { headers: page, body: { name: 'x' } }), 403, 'read_only');
      expectRefused(await atOrigin(w, 'GET', path(w, '/keys'), { headers: page }), 403, 'forbidden');
      const asked = await atOrigin(w, 'POST', path(w, '/session'), { headers: kit(w.readToken), body: { world: w.name, scope: 'write' } });
      expectRefused(asked, 403, 'forbidden');
      // The world token may open a read session for a person who should only look.
      const narrowed = await tokenSession(w, w.token, 'read');
      expectRefused(await atOrigin(w, 'PUT', path(w, '/clock'), { headers: fromPage(w, narrowed), body: { at: T0 } }), 403, 'forbidden');
    });

    test('DELETE …/session ends it; an ended or unknown session opens nothing', async () => {
      const w = shared();
      const cookie = await tokenSession(w);
      const ended = await atOrigin(w, 'DELETE', path(w, '/session'), { headers: fromPage(w, cookie) });
      expect(ended.status).toBe(204);
      expect(ended.headers['set-cookie']).toMatch(/^kit_session=; .*Max-Age=0/);
      expectRefused(await atOrigin(w, 'GET', path(w, '/clock'), { headers: { cookie } }), 401, 'unauthenticated');
      expectRefused(await atOrigin(w, 'GET', path(w, '/clock'), { headers: { cookie: 'kit_session=made-up-0123456789abcdefghijklmnopqrstuvwxyzABCD' } }), 401, 'unauthenticated');
    });

    test('the loopback write session: the page on this machine, with every condition, and no token', async () => {
      const w = shared();
      const page = { origin: worldOrigin(w), 'sec-fetch-site': 'same-origin' };
      const a = await atOrigin(w, 'POST', path(w, '/session'), { headers: page });
      expect(a.status, a.text).toBe(200);
      expect(a.json()).toMatchObject({ world: w.name, scope: 'write', local: true, origin: worldOrigin(w) });
      const cookie = sessionCookieOf(a);
      expect((await atOrigin(w, 'GET', path(w, '/session'), { headers: { cookie } })).json()).toMatchObject({ who: 'this machine', local: true });
      for (const [what, headers] of [
        ['no Origin', { 'sec-fetch-site': 'same-origin' }],
        ['another Origin', { origin: 'http://evil.localhost:1', 'sec-fetch-site': 'same-origin' }],
        ['another world', { origin: `http://other--${w.org}.localhost:${new URL(w.base).port}`, 'sec-fetch-site': 'same-origin' }],
        ['cross-site', { origin: worldOrigin(w), 'sec-fetch-site': 'cross-site' }],
        ['no Sec-Fetch-Site', { origin: worldOrigin(w) }],
      ] as const) {
        const refused = await atOrigin(w, 'POST', path(w, '/session'), { headers });
        expectRefused(refused, 401, 'unauthenticated', what);
        expect(refused.headers['set-cookie'], what).toBeUndefined();
      }
      // At the base address, with the right headers otherwise: not the world's origin.
      expectRefused(await send('POST', `${w.api}/session`, { headers: page }), 401, 'unauthenticated');
    });

    test('a session is never adopted: one presented when opening is ended, and a fresh id is answered (fixation)', async () => {
      const w = shared();
      const first = await loopbackSession(w);
      const again = await atOrigin(w, 'POST', path(w, '/session'), { headers: { ...fromPage(w, first) } });
      expect(again.status).toBe(200);
      const second = sessionCookieOf(again);
      expect(second).not.toBe(first);
      expectRefused(await atOrigin(w, 'GET', path(w, '/clock'), { headers: { cookie: first } }), 401, 'unauthenticated');
      expect((await atOrigin(w, 'GET', path(w, '/clock'), { headers: { cookie: second } })).status).toBe(200);
      // A planted id is not made a session either.
      const planted = 'kit_session=planted-by-an-attacker-0123456789abcdefghijklmnop';
      const opened = await atOrigin(w, 'POST', path(w, '/session'), { headers: { ...fromPage(w, planted) } });
      expect(sessionCookieOf(opened)).not.toBe(planted);
      expectRefused(await atOrigin(w, 'GET', path(w, '/clock'), { headers: { cookie: planted } }), 401, 'unauthenticated');
    });

    test('a session outlives the world going idle', async () => {
      const w = await host().openWorld();
      const cookie = await tokenSession(w);
      await host().idle(w);
      expect((await atOrigin(w, 'GET', path(w, '/clock'), { headers: { cookie } })).status).toBe(200);
    });

    test("at a world's origin, only that world: another world's paths and the admin surface are not there", async () => {
      const w = shared();
      const cookie = await tokenSession(w);
      expectRefused(await atOrigin(w, 'GET', `/-/${w.org}/other-world/clock`, { headers: { cookie } }), 404, 'not_found');
      expectRefused(await atOrigin(w, 'GET', '/-/ping'), 404, 'not_found');
      expectRefused(await send('GET', `${w.base}/-/${w.name}/clock`, { headers: { host: `nosuch--${w.org}.localhost:${new URL(w.base).port}`, cookie } }), 404, 'unknown_world');
    });
  });

  group('browser access: worlds side by side', () => {
    test("a cookie of another world's origin opens nothing here", async () => {
      const one = await host().openWorld();
      const two = await host().openWorld();
      const cookie = await tokenSession(one);
      expectRefused(await atOrigin(two, 'GET', path(two, '/clock'), { headers: { cookie } }), 401, 'unauthenticated');
      expectRefused(await atOrigin(two, 'GET', vendorPath(two, '/hello/v1/greetings'), { headers: { cookie } }), 401, 'unauthenticated');
      // Presented beside one of this world's own, it is ignored and the world's own opens.
      const own = await tokenSession(two);
      expect((await atOrigin(two, 'GET', path(two, '/clock'), { headers: { cookie: `${cookie}; ${own}` } })).status).toBe(200);
    }, ['secondWorld']);

    test("new tokens end every session and every key of the world (a rotation)", async () => {
      const w = await host().openWorld();
      const cookie = await tokenSession(w);
      const key = (await api(w, 'POST', '/keys', { name: 'ci', scope: 'write' })).json() as { key: string };
      expect((await api(w, 'GET', '/clock', undefined, key.key)).status).toBe(200);
      const rotated = await send('POST', `${w.base}/-/worlds/${w.name}/rotate`, { headers: kit(host().adminToken!) });
      expect(rotated.status).toBe(200);
      const fresh = rotated.json() as { token: string };
      expectRefused(await atOrigin(w, 'GET', path(w, '/clock'), { headers: { cookie } }), 401, 'unauthenticated');
      expectRefused(await api(w, 'GET', '/clock', undefined, key.key), 401, 'unauthenticated');
      expect(((await api(w, 'GET', '/keys', undefined, fresh.token)).json() as { keys: unknown[] }).keys).toEqual([]);
    }, ['admin']);
  });

  group('browser access: named keys', () => {
    const shared = sharedWorld();

    test('a key is answered once with its id and listed without it; it opens the world as the token of its scope', async () => {
      const w = shared();
      const made = await api(w, 'POST', '/keys', { name: 'ci', scope: 'write' });
      expect(made.status, made.text).toBe(201);
      const key = made.json() as { id: string; key: string; name: string; scope: string; createdAt: string; createdBy: string };
      expect(key).toMatchObject({ id: expect.stringMatching(/^key_[0-9a-f]{16}$/), key: expect.stringMatching(/^tok_k_[A-Za-z0-9_-]{43}$/), name: 'ci', scope: 'write', createdBy: 'token', for: null, expiresAt: null, lastUsedAt: null });
      const list = await api(w, 'GET', '/keys');
      expect(list.text).not.toContain(key.key);
      expect((list.json() as { keys: unknown[] }).keys).toContainEqual({ id: key.id, name: 'ci', scope: 'write', createdAt: key.createdAt, lastUsedAt: null, expiresAt: null, for: null, createdBy: 'token' });
      // As the world's token: the world API, and the vendor wire in every credential slot.
      expect((await api(w, 'PUT', '/clock', { at: T0 }, key.key)).status).toBe(200);
      expect(await createGreeting(w, 'By key', { authorization: `Bearer ${key.key}` })).toMatch(/./);
      expect((await send('GET', `${w.url}/stripe/v1/customers`, { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(200);
      const used = ((await api(w, 'GET', '/keys')).json() as { keys: { id: string; lastUsedAt: string | null }[] }).keys.find((k) => k.id === key.id);
      expect(used?.lastUsedAt).toEqual(expect.stringMatching(/^\d{4}-/));
      // Its attach manifest hands out the key, never the world's token.
      const manifest = await send('GET', `${w.url}/.well-known/kit-world`, { headers: { 'x-kit-token': key.key } });
      expect(manifest.status).toBe(200);
      expect(manifest.text).toContain(key.key);
      expect(manifest.text).not.toContain(w.token);
    });

    test('a read key reads and writes nothing; keys are never managed with a key', async () => {
      const w = shared();
      const read = (await api(w, 'POST', '/keys', { name: 'viewer' })).json() as { key: string; scope: string };
      expect(read.scope).toBe('read');
      expect((await api(w, 'GET', '/map', undefined, read.key)).status).toBe(200);
      expectRefused(await api(w, 'PUT', '/clock', { at: T0 }, read.key), 403, 'forbidden');
      expectRefused(await send('POST', `${w.url}/hello/v1/greetings`, { headers: { authorization: `Bearer ${read.key}` }, body: { name: 'x' } }), 403, 'read_only');
      const write = (await api(w, 'POST', '/keys', { name: 'deployer', scope: 'write' })).json() as { key: string; id: string };
      for (const [method, sub, body] of [['GET', '/keys', undefined], ['POST', '/keys', { name: 'escalate', scope: 'write' }], ['DELETE', `/keys/${write.id}`, undefined]] as const) {
        expectRefused(await api(w, method, sub, body, write.key), 403, 'keys_need_write_access', `${method} ${sub}`);
      }
    });

    test('a write key opens no session; a read key opens a read session that ends when the key is revoked', async () => {
      const w = shared();
      const write = (await api(w, 'POST', '/keys', { name: 'writer-session', scope: 'write' })).json() as { key: string };
      expectRefused(await atOrigin(w, 'POST', path(w, '/session'), { headers: kit(write.key), body: { world: w.name } }), 403, 'key_opens_no_session');
      const read = (await api(w, 'POST', '/keys', { name: 'reader-session' })).json() as { key: string; id: string };
      const cookie = await tokenSession(w, read.key);
      expect((await atOrigin(w, 'GET', path(w, '/session'), { headers: { cookie } })).json()).toMatchObject({ scope: 'read', via: 'session' });
      expectRefused(await atOrigin(w, 'POST', path(w, '/session'), { headers: kit(read.key), body: { world: w.name, scope: 'write' } }), 403, 'forbidden');
      expect((await atOrigin(w, 'GET', path(w, '/map'), { headers: { cookie } })).status).toBe(200);
      expect((await api(w, 'DELETE', `/keys/${read.id}`)).status).toBe(204);
      expectRefused(await atOrigin(w, 'GET', path(w, '/map'), { headers: { cookie } }), 401, 'unauthenticated');
      expectRefused(await api(w, 'GET', '/map', undefined, read.key), 401, 'unauthenticated');
      expectRefused(await api(w, 'DELETE', `/keys/${read.id}`), 404, 'unknown_key');
    });

    test("a key's session lasts no longer than the key; an expired key opens nothing", async () => {
      const w = shared();
      const expiresAt = new Date(Date.now() + 1500).toISOString();
      const read = (await api(w, 'POST', '/keys', { name: 'brief', expiresAt })).json() as { key: string; expiresAt: string };
      expect(read.expiresAt).toBe(expiresAt);
      const opened = await atOrigin(w, 'POST', path(w, '/session'), { headers: kit(read.key), body: { world: w.name } });
      expect(opened.json()).toMatchObject({ expiresAt });
      expect(Number(/Max-Age=(\d+)/.exec(opened.headers['set-cookie']!)![1])).toBeLessThanOrEqual(2);
      const cookie = sessionCookieOf(opened);
      await new Promise((r) => setTimeout(r, 1700));
      expectRefused(await api(w, 'GET', '/map', undefined, read.key), 401, 'unauthenticated');
      expectRefused(await atOrigin(w, 'GET', path(w, '/map'), { headers: { cookie } }), 401, 'unauthenticated');
    });

    test('a name is taken until replaced; replace, for and expiresAt take the world token; a person loses their keys at once', async () => {
      const w = shared();
      const first = (await api(w, 'POST', '/keys', { name: 'ada-laptop', for: 'ada' })).json() as { key: string };
      expectRefused(await api(w, 'POST', '/keys', { name: 'ada-laptop', for: 'ada' }), 409, 'key_name_taken');
      const second = await api(w, 'POST', '/keys', { name: 'ada-laptop', for: 'ada', replace: true });
      expect(second.status).toBe(201);
      expectRefused(await api(w, 'GET', '/map', undefined, first.key), 401, 'unauthenticated');
      const replaced = (second.json() as { key: string }).key;
      expect((await api(w, 'GET', '/map', undefined, replaced)).status).toBe(200);

      // A person's session makes keys as that person, and may not say for whom or how long.
      const cookie = await loopbackSession(w);
      const byPage = await atOrigin(w, 'POST', path(w, '/keys'), { headers: fromPage(w, cookie), body: { name: 'from-the-page' } });
      expect(byPage.status, byPage.text).toBe(201);
      expect(byPage.json()).toMatchObject({ createdBy: 'this machine', for: null });
      for (const extra of [{ for: 'bob' }, { expiresAt: '2099-01-01T00:00:00.000Z' }, { replace: true }]) {
        expectRefused(await atOrigin(w, 'POST', path(w, '/keys'), { headers: fromPage(w, cookie), body: { name: 'x', ...extra } }), 403, 'token_only_field', JSON.stringify(extra));
      }
      expectRefused(await atOrigin(w, 'DELETE', path(w, '/keys?person=ada'), { headers: fromPage(w, cookie) }), 403, 'token_only_field');

      const ada2 = (await api(w, 'POST', '/keys', { name: 'ada-ci', for: 'ada', scope: 'write' })).json() as { key: string };
      const revoked = await api(w, 'DELETE', '/keys?person=ada');
      expect(revoked.json()).toEqual({ revoked: 2 });
      for (const k of [replaced, ada2.key]) expectRefused(await api(w, 'GET', '/map', undefined, k), 401, 'unauthenticated');
      expect((await api(w, 'GET', '/map', undefined, (byPage.json() as { key: string }).key)).status).toBe(200);
    });

    test('bad key requests are refused with the field at fault, and nothing is made', async () => {
      const w = shared();
      const before = ((await api(w, 'GET', '/keys')).json() as { keys: unknown[] }).keys.length;
      for (const [what, body, param] of [
        ['no name', {}, 'name'],
        ['an empty name', { name: '' }, 'name'],
        ['a long name', { name: 'n'.repeat(65) }, 'name'],
        ['a control character', { name: 'a\u0001b' }, 'name'],
        ['a scope of its own', { name: 'x', scope: 'admin' }, 'scope'],
        ['an expiry past', { name: 'x', expiresAt: '2001-01-01T00:00:00.000Z' }, 'expiresAt'],
        ['an expiry not an instant', { name: 'x', expiresAt: 'tomorrow' }, 'expiresAt'],
        ['an unknown field', { name: 'x', admin: true }, 'admin'],
        ['replace not a boolean', { name: 'x', replace: 'yes' }, 'replace'],
      ] as const) {
        const a = await api(w, 'POST', '/keys', body);
        expect([what, a.status, errorCode(a), (a.json() as { error: { param?: string } }).error.param]).toEqual([what, 400, 'bad_request', param]);
      }
      expectRefused(await api(w, 'POST', '/keys', 'not json'), 400, 'bad_request');
      expect(((await api(w, 'GET', '/keys')).json() as { keys: unknown[] }).keys.length).toBe(before);
      // A value shaped like a key that is none, and a huge one, are refused, not crashed on.
      expectRefused(await api(w, 'GET', '/map', undefined, 'tok_k_not-a-key-of-this-world-0123456789abcdef'), 401, 'unauthenticated');
      expectRefused(await api(w, 'GET', '/map', undefined, `tok_k_${'x'.repeat(5000)}`), 401, 'unauthenticated');
      expect(originHost(w)).toContain('.localhost:');
    });
  });

  group('browser access: passes', () => {
    const shared = sharedWorld();
    /** `POST …/session` with a pass, as the world's page sends it. */
    const spend = (w: HostWorld, pass: string, headers: Record<string, string> = { origin: worldOrigin(w), 'sec-fetch-site': 'same-origin' }) =>
      atOrigin(w, 'POST', path(w, '/session'), { headers: { 'x-kit-pass': pass, ...headers } });

    test("a pass from a trusted platform opens a session of its scope for 12 hours at the world's page, once", async () => {
      const w = shared();
      const issuer = host().passIssuer;
      const pass = await issuer.sign({ world: w.name, origin: worldOrigin(w), scope: 'write', subject: 'usr_ada', name: 'Ada Lovelace' });
      const a = await spend(w, pass);
      expect(a.status, a.text).toBe(200);
      expect(a.json()).toMatchObject({ world: w.name, scope: 'write', who: 'usr_ada', name: 'Ada Lovelace', issuer: issuer.url, origin: worldOrigin(w) });
      expect(a.headers['set-cookie']).toMatch(/Max-Age=43200;/);
      const cookie = sessionCookieOf(a);
      expect((await atOrigin(w, 'GET', path(w, '/session'), { headers: { cookie } })).json()).toMatchObject({ via: 'session', who: 'usr_ada', name: 'Ada Lovelace', issuer: issuer.url });
      expect((await atOrigin(w, 'PUT', path(w, '/clock'), { headers: fromPage(w, cookie), body: { at: T0 } })).status).toBe(200);
      // The keys this person makes are theirs (the pass's subject).
      const made = await atOrigin(w, 'POST', path(w, '/keys'), { headers: fromPage(w, cookie), body: { name: 'ada-script' } });
      expect(made.json()).toMatchObject({ createdBy: 'usr_ada' });
      expectRefused(await spend(w, pass), 401, 'pass_spent');
      // Spent stays spent after the world goes idle (on the edge: workerd restarted).
      await host().idle(w);
      expectRefused(await spend(w, pass), 401, 'pass_spent');
      const read = await spend(w, await issuer.sign({ world: w.name, origin: worldOrigin(w), scope: 'read', subject: 'usr_bob' }));
      expect(read.json()).toMatchObject({ scope: 'read', who: 'usr_bob' });
      expectRefused(await atOrigin(w, 'PUT', path(w, '/clock'), { headers: fromPage(w, sessionCookieOf(read)), body: { at: T0 } }), 403, 'forbidden');
    });

    test('a pass is refused with its reason: another world or origin, expired, forged, malformed, an unknown key, an untrusted platform', async () => {
      const w = shared();
      const issuer = host().passIssuer;
      const origin = worldOrigin(w);
      const good = { world: w.name, origin, scope: 'write' as const, subject: 'usr_eve' };
      const cases: [string, string | Promise<string>, string][] = [
        ['another world', issuer.sign({ ...good, world: `${w.org}/elsewhere` }), 'pass_wrong_world'],
        ['another origin', issuer.sign({ ...good, origin: `http://elsewhere--${w.org}.localhost:1` }), 'pass_wrong_origin'],
        ['expired', issuer.sign({ ...good, ttlSeconds: 1, now: Date.now() - 10 * 60_000 }), 'pass_expired'],
        ['not a pass', 'not-a-jwt', 'pass_malformed'],
        ['too long', `${'a'.repeat(9000)}.b.c`, 'pass_malformed'],
      ];
      const signed = await issuer.sign(good);
      const [head, body, sig] = signed.split('.') as [string, string, string];
      // The same claims for another scope, under the signature of the first: forged.
      const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
      const forgedBody = Buffer.from(JSON.stringify({ ...claims, sub: 'usr_admin' })).toString('base64url');
      cases.push(['forged', `${head}.${forgedBody}.${sig}`, 'pass_bad_signature']);
      for (const [what, pass, code] of cases) {
        const a = await spend(w, await pass);
        expectRefused(a, 401, code, what);
        expect(a.headers['set-cookie'], what).toBeUndefined();
        expect(a.text, what).not.toContain(typeof pass === 'string' ? pass.slice(0, 40) : 'eyJ');
      }
      // A platform nobody trusts here, whatever it signs.
      const stranger = await startPassIssuer();
      try {
        expectRefused(await spend(w, await stranger.sign(good)), 401, 'pass_untrusted_issuer');
        expect(stranger.jwksRequests).toBe(0);
      } finally {
        await stranger.close();
      }
    });

    test("a pass is spent only from the world's own page, at its origin", async () => {
      const w = shared();
      const issuer = host().passIssuer;
      const pass = () => issuer.sign({ world: w.name, origin: worldOrigin(w), scope: 'write', subject: 'usr_mallory' });
      expectRefused(await spend(w, await pass(), { origin: 'http://evil.localhost:1', 'sec-fetch-site': 'cross-site' }), 403, 'cross_site_request');
      expectRefused(await spend(w, await pass(), {}), 403, 'cross_site_request');
      const elsewhere = await send('POST', `${w.api}/session`, { headers: { 'x-kit-pass': await pass(), 'sec-fetch-site': 'same-origin' } });
      expectRefused(elsewhere, 409, 'wrong_origin');
      // None of those spent it: the page's own request still opens the session.
      const p = await pass();
      expectRefused(await spend(w, p, { 'sec-fetch-site': 'cross-site' }), 403, 'cross_site_request');
      expect((await spend(w, p)).status).toBe(200);
    });

    // Last of the passes: the issuer signs with a key this host will not fetch for its cooldown.
    test('a pass signed with a key the host has not seen (within its cooldown of the key set) is refused as unknown', async () => {
      const w = shared();
      const issuer = host().passIssuer;
      const good = { world: w.name, origin: worldOrigin(w), scope: 'write' as const, subject: 'usr_eve' };
      expect((await spend(w, await issuer.sign(good))).status).toBe(200);
      await issuer.rotate();
      expectRefused(await spend(w, await issuer.sign(good)), 401, 'pass_unknown_key');
    });
  });
}
