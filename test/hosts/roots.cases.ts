/**
 * Twins with a real vendor behind them, as every host answers them (spec: Root, Twin status,
 * Credential; "A twin's root and the world's relations"; Events 1–2; Versioning 3;
 * Authentication 12–14): roots and their refusals, sealed credentials, refresh, keyless webhook
 * ingest and links. Called by `runWorldEndpointCases` with its case helpers.
 *
 * The "real" Stripe account is another world of the same host: its Stripe twin, reached over
 * http on loopback (every fixture allows loopback roots: `kit world serve`, the multi-world
 * host's `outboundLoopback`, the edge's `LOOPBACK_ROOTS`), with that world's token as the key
 * sealed for the copy. The same code path reaches api.stripe.com in use.
 */
import { expect } from 'vitest';
import { stripeSignature } from '../../runtime/roots/signatures.js';
import type { CaseKit } from './browser-access.cases.js';
import { api, bearer, expectRefused, kit } from './calls.js';
import { send, type Answer, type HostWorld } from './fixture.js';

/** The copy's webhook signing secret, as the real account's endpoint would show it once. */
const SIGNING = 'whsec_hostsCases0signing0secret0value';
/** Every answer of the copy that must never hold a sealed secret. */
const SHOWN = ['/twins/stripe/credential', '/twins/stripe/status', '/twins', '/log/stripe', '/timeline', '/diff', '/checkpoint/stripe'];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers as parsed

/** `{world_url}/stripe`: the root URL of a copy of this world's Stripe account. */
const stripeRootOf = (real: HostWorld): string => `${real.url}/stripe`;

/** A call of a world's Stripe API with the world's token as the API key, as an app under `kit world attach` makes it. */
function stripe(w: HostWorld, method: string, path: string, form?: Record<string, string>, token = w.token): Promise<Answer> {
  const body = form === undefined ? undefined : new URLSearchParams(form).toString();
  return send(method, `${w.url}/stripe${path}`, {
    headers: { ...bearer(token), ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    ...(body !== undefined ? { body } : {}),
  });
}

async function makeCustomer(real: HostWorld, name: string): Promise<Json> {
  const a = await stripe(real, 'POST', '/v1/customers', { name, email: `${name.toLowerCase()}@example.com` });
  expect([a.status, a.text.slice(0, 200)]).toEqual([200, expect.any(String)]);
  return a.json() as Json;
}

async function customerIds(w: HostWorld): Promise<string[]> {
  const a = await stripe(w, 'GET', '/v1/customers?limit=100');
  expect([a.status, a.text.slice(0, 200)]).toEqual([200, expect.any(String)]);
  return (a.json() as { data: { id: string }[] }).data.map((c) => c.id);
}

async function ok(a: Promise<Answer>, status = 200): Promise<Json> {
  const got = await a;
  expect([got.status, got.text.slice(0, 300)]).toEqual([status, expect.any(String)]);
  return status === 204 ? {} : (got.json() as Json);
}

async function stripeStatus(w: HostWorld): Promise<Json> {
  return ok(api(w, 'GET', '/twins/stripe/status'));
}

/** The copy: its Stripe twin rooted at the real world's, the real world's token sealed as its key (with a signing secret). */
async function rootTo(copy: HostWorld, real: HostWorld): Promise<void> {
  await ok(api(copy, 'PUT', '/twins/stripe/root', { url: stripeRootOf(real) }));
  await ok(api(copy, 'PUT', '/twins/stripe/credential', { bearer: real.token, signingSecret: SIGNING }));
}

async function refresh(w: HostWorld, force = false): Promise<Json> {
  return (await ok(api(w, 'POST', `/twins/stripe/refresh${force ? '?force=1' : ''}`))).refresh as Json;
}

/** A webhook to the copy's keyless ingest: no token, only what Stripe would send. */
function ingest(w: HostWorld, body: string, signature?: string): Promise<Answer> {
  return send('POST', `${w.api}/twins/stripe/ingest`, { headers: { 'content-type': 'application/json', ...(signature !== undefined ? { 'stripe-signature': signature } : {}) }, body });
}

const nowS = (): number => Math.floor(Date.now() / 1000);

export function rootsCases({ test, group, sharedWorld, host }: CaseKit): void {
  /** A real world and its copy, rooted and keyed, the copy not refreshed yet. */
  const pair = async (): Promise<{ real: HostWorld; copy: HostWorld }> => {
    const real = await host().openWorld();
    const copy = await host().openWorld();
    await rootTo(copy, real);
    return { real, copy };
  };

  group('roots: the root and who may set it', () => {
    const shared = sharedWorld();

    test('a root is set, shown and cleared', async () => {
      const w = shared();
      expect(await ok(api(w, 'GET', '/twins/stripe/root'))).toBeNull();
      const set = await ok(api(w, 'PUT', '/twins/stripe/root', { url: 'https://api.stripe.com/', refresh: { atMost: '5m', every: '2h' } }));
      expect(set).toEqual({ url: 'https://api.stripe.com', deploy: 'manual', refresh: { atMost: '5m', every: '2h' } });
      expect(await ok(api(w, 'GET', '/twins/stripe/root'))).toEqual(set);
      expect(await stripeStatus(w)).toMatchObject({ root: set, credential: { sealed: false, sealedAt: null }, lastRefresh: null });
      const listed = (await ok(api(w, 'GET', '/twins'))) as unknown;
      expect(JSON.stringify(listed)).toContain('https://api.stripe.com');
      expect(await ok(api(w, 'PUT', '/twins/stripe/root', 'null', w.token, { 'content-type': 'application/json' }))).toBeNull();
      expect(await ok(api(w, 'GET', '/twins/stripe/root'))).toBeNull();
      expect((await stripeStatus(w)).root).toBeNull();
    });

    test('refused: a URL it must not reach (destination_refused), a bad deploy or refresh (invalid_root); the root set is kept', async () => {
      const w = shared();
      const kept = await ok(api(w, 'PUT', '/twins/stripe/root', { url: 'https://api.stripe.com' }));
      for (const url of [
        'http://api.stripe.com',
        'http://169.254.169.254/',
        'https://169.254.169.254/latest/meta-data',
        'https://10.0.0.1/',
        'https://192.168.1.1/',
        'https://user:pass@api.stripe.com',
        'https://sk_live_x@api.stripe.com',
        'ftp://api.stripe.com',
        'https://metadata.google.internal/',
      ]) {
        const refused = await api(w, 'PUT', '/twins/stripe/root', { url });
        expectRefused(refused, 400, 'destination_refused', url);
        // The refusal names the rule and the host, never a user's secret.
        expect(refused.text).not.toContain('pass@');
      }
      for (const body of [
        { url: 'https://api.stripe.com', deploy: 'sometimes' },
        { url: 'https://api.stripe.com', refresh: { every: '10s' } },
        { url: 'https://api.stripe.com', refresh: { atMost: 'soon' } },
        { url: 'https://api.stripe.com', refresh: 'hourly' },
        { url: 'https://api.stripe.com', extra: 1 },
        { url: 'https://api.stripe.com/?q=1' },
        { url: 42 },
        [],
      ]) {
        expectRefused(await api(w, 'PUT', '/twins/stripe/root', body), 400, 'invalid_root', JSON.stringify(body));
      }
      // hello keeps no copy of a real vendor.
      expectRefused(await api(w, 'PUT', '/twins/hello/root', { url: 'https://api.stripe.com' }), 400, 'invalid_root', 'hello');
      expect(await ok(api(w, 'GET', '/twins/stripe/root'))).toEqual(kept);
    });

    test('the read token cannot set a root, seal, refresh, link or look at a root (403 from the host)', async () => {
      const w = shared();
      const before = await ok(api(w, 'GET', '/twins/stripe/root'));
      for (const [method, path, body] of [
        ['PUT', '/twins/stripe/root', { url: 'https://api.stripe.com' }],
        ['PUT', '/twins/stripe/root', null],
        ['GET', '/twins/stripe/root', undefined],
        ['PUT', '/twins/stripe/credential', { bearer: 'sk_live_fromTheReadToken0' }],
        ['GET', '/twins/stripe/credential', undefined],
        ['DELETE', '/twins/stripe/credential', undefined],
        ['POST', '/twins/stripe/refresh', undefined],
        ['POST', '/twins/stripe/refresh?force=1', undefined],
        ['GET', '/links', undefined],
        ['PUT', '/links/real', { origin: 'https://api.stripe.com' }],
        ['DELETE', '/links/real', undefined],
      ] as const) {
        const a = await api(w, method, path, body === undefined ? undefined : JSON.stringify(body), w.readToken, { 'content-type': 'application/json' });
        expectRefused(a, 403, 'forbidden', `${method} ${path}`);
      }
      expect(await ok(api(w, 'GET', '/twins/stripe/root'))).toEqual(before);
      expect(await ok(api(w, 'GET', '/twins/stripe/credential'))).toEqual({ sealed: false, sealedAt: null });
    });
  });

  group('roots: a sealed credential', () => {
    test('sealed, it answers { sealed, sealedAt } and its value is in no answer of the world', async () => {
      const { real, copy } = await pair();
      const sealed = await ok(api(copy, 'PUT', '/twins/stripe/credential', { bearer: real.token, signingSecret: SIGNING }));
      expect(sealed).toEqual({ sealed: true, sealedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      expect(await ok(api(copy, 'GET', '/twins/stripe/credential'))).toEqual(sealed);
      expect((await stripeStatus(copy)).credential).toEqual(sealed);
      await makeCustomer(real, 'Sealed');
      await refresh(copy);
      for (const path of SHOWN) {
        const a = await api(copy, 'GET', path);
        expect([path, a.status]).toEqual([path, 200]);
        expect(a.text, path).not.toContain(real.token);
        expect(a.text, path).not.toContain(SIGNING);
      }
      // Nor to the read token's eyes.
      for (const path of ['/twins', '/log/stripe', '/timeline', '/diff', '/checkpoint/stripe']) {
        const a = await api(copy, 'GET', path, undefined, copy.readToken);
        expect([path, a.status]).toEqual([path, 200]);
        expect(a.text, path).not.toContain(real.token);
      }
    });

    test('too large is 413 credential_too_large; not JSON is invalid_json without the secret; the sealed one stays', async () => {
      const { real, copy } = await pair();
      const before = await ok(api(copy, 'GET', '/twins/stripe/credential'));
      const secret = 'sk_live_neverEchoedBack0123456789';
      const tooLarge = await api(copy, 'PUT', '/twins/stripe/credential', { headers: { 'x-pad': 'a'.repeat(17 * 1024) }, bearer: secret });
      expectRefused(tooLarge, 413, 'credential_too_large');
      expect(tooLarge.text).not.toContain(secret);
      const notJson = await api(copy, 'PUT', '/twins/stripe/credential', `{ "bearer": "${secret}"`, copy.token, { 'content-type': 'application/json' });
      expectRefused(notJson, 400, 'invalid_json');
      expect(notJson.text).not.toContain(secret);
      const badHeader = await api(copy, 'PUT', '/twins/stripe/credential', { headers: { authorization: `Bearer ${secret}\r\nx-evil: 1` } });
      expectRefused(badHeader, 400, 'invalid_credential');
      expect(badHeader.text).not.toContain(secret);
      expectRefused(await api(copy, 'PUT', '/twins/nobody/credential', { bearer: secret }), 404, 'unknown_twin');
      expect(await ok(api(copy, 'GET', '/twins/stripe/credential'))).toEqual(before);
      // The one sealed before still opens the real account.
      await makeCustomer(real, 'Still');
      expect(await refresh(copy)).toMatchObject({ ok: true });
    });
  });

  group('roots: refresh', () => {
    test('the real customers appear in the copy with their real ids; the copy then says when it observed them', async () => {
      const { real, copy } = await pair();
      const made = [await makeCustomer(real, 'Ada'), await makeCustomer(real, 'Grace')];
      const before = await stripe(copy, 'GET', '/v1/customers');
      expect(before.status).toBe(200);
      expect(before.headers['x-kit-observed-at']).toBeUndefined();
      expect((before.json() as { data: unknown[] }).data).toEqual([]);
      const cut = (await ok(api(copy, 'GET', '/clock'))).at as string;
      await new Promise((resolve) => setTimeout(resolve, 5));

      const report = await refresh(copy);
      expect(report).toMatchObject({ ok: true, observedAt: expect.any(String), reads: expect.any(Number), entries: expect.any(Number), written: expect.any(Number) });
      expect(report.reads).toBeGreaterThanOrEqual(8); // the account, then seven lists
      expect(report.entries).toBeGreaterThan(0);
      expect((await customerIds(copy)).sort()).toEqual(made.map((c) => c.id).sort());
      const ada = await stripe(copy, 'GET', `/v1/customers/${made[0]!.id}`);
      expect(ada.json()).toMatchObject({ id: made[0]!.id, name: 'Ada', email: 'ada@example.com' });
      expect(ada.headers['x-kit-observed-at']).toBe(report.observedAt);
      // The copy's account is the real one: the same id the real key opens.
      expect((await stripe(copy, 'GET', '/v1/account')).json().id).toBe((await stripe(real, 'GET', '/v1/account')).json().id);

      const status = await stripeStatus(copy);
      expect(status).toMatchObject({
        root: { url: stripeRootOf(real) },
        credential: { sealed: true },
        lastRefresh: { ok: true, reads: report.reads, entries: report.entries, observedAt: report.observedAt },
        position: expect.any(Number),
      });
      expect(status.position).toBeGreaterThanOrEqual(report.entries);
      const twins = (await ok(api(copy, 'GET', '/twins'))) as unknown;
      expect(JSON.stringify(twins)).toContain(stripeRootOf(real));

      const log = await ok(api(copy, 'GET', '/log/stripe'));
      expect(log.entries.length).toBe(status.position);
      expect(new Set(log.entries.map((e: { cause: { kind: string } }) => e.cause.kind))).toEqual(new Set(['refresh']));
      const history = await ok(api(copy, 'GET', `/history?at=${encodeURIComponent(cut)}`));
      expect(history.views.stripe.position).toBe(0);
      const observed = await ok(api(copy, 'GET', `/history?at=${encodeURIComponent(report.observedAt as string)}`));
      expect(observed.views.stripe.position).toBe(status.position);
    });

    test('a second refresh at once is 429 refresh_throttled with Retry-After; ?force=1 goes through and takes what changed', async () => {
      const { real, copy } = await pair();
      await makeCustomer(real, 'First');
      await refresh(copy);
      const later = await makeCustomer(real, 'Later');
      const throttled = await api(copy, 'POST', '/twins/stripe/refresh');
      expectRefused(throttled, 429, 'refresh_throttled');
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(throttled.headers['retry-after'])).toBeLessThanOrEqual(30);
      expect(await customerIds(copy)).not.toContain(later.id);
      const forced = await refresh(copy, true);
      expect(forced).toMatchObject({ ok: true });
      expect(await customerIds(copy)).toContain(later.id);
    });

    test('a refresh the real account refuses fails with nothing changed and no secret in the error', async () => {
      const { real, copy } = await pair();
      await makeCustomer(real, 'Kept');
      const first = await refresh(copy);
      const head = (await stripeStatus(copy)).position as number;
      const wrong = 'tok_sealedButWrong0123456789abcdefghij';
      await ok(api(copy, 'PUT', '/twins/stripe/credential', { bearer: wrong }));
      const failed = await api(copy, 'POST', '/twins/stripe/refresh?force=1');
      expect([failed.status, failed.text.slice(0, 300)]).toEqual([502, expect.any(String)]);
      expect(failed.text).not.toContain(wrong);
      const status = await stripeStatus(copy);
      expect(status).toMatchObject({ position: head, lastRefresh: { ok: true, observedAt: first.observedAt }, lastRefreshAttempt: { ok: false } });
      expect(JSON.stringify(status)).not.toContain(wrong);
      expect((await customerIds(copy)).length).toBe(1);
    });

    test('a refresh without a root is 409 no_root; of a twin the world has not, 404 unknown_twin', async () => {
      const w = await host().openWorld();
      expectRefused(await api(w, 'POST', '/twins/stripe/refresh'), 409, 'no_root');
      expectRefused(await api(w, 'POST', '/twins/nobody/refresh'), 404, 'unknown_twin');
    });

    test('root, credential and the last refresh outlive the world going idle', async () => {
      const { real, copy } = await pair();
      const made = await makeCustomer(real, 'Idle');
      const report = await refresh(copy);
      await host().idle(copy);
      expect(await stripeStatus(copy)).toMatchObject({ root: { url: stripeRootOf(real) }, credential: { sealed: true }, lastRefresh: { ok: true, observedAt: report.observedAt } });
      const read = await stripe(copy, 'GET', `/v1/customers/${made.id}`);
      expect([read.status, read.headers['x-kit-observed-at']]).toEqual([200, report.observedAt]);
      // The sealed key still opens after the host let the world go (the sealing key is the host's).
      await makeCustomer(real, 'After idle');
      expect(await refresh(copy, true)).toMatchObject({ ok: true });
      expect((await customerIds(copy)).length).toBe(2);
    });
  });

  group('roots: webhook ingest', () => {
    test('keyless: a webhook signed with the sealed signing secret folds into the copy', async () => {
      const { real, copy } = await pair();
      const made = await makeCustomer(real, 'Before');
      await refresh(copy);
      const head = (await stripeStatus(copy)).position as number;
      const body = JSON.stringify({ id: 'evt_hostsIngest0001', object: 'event', type: 'customer.updated', data: { object: { ...made, name: 'After' } } });
      const a = await ingest(copy, body, stripeSignature(SIGNING, body, nowS()));
      expect([a.status, a.text.slice(0, 300)]).toEqual([200, expect.any(String)]);
      expect(a.json()).toEqual({ received: true, event: 'evt_hostsIngest0001', position: head + 1 });
      expect((await stripe(copy, 'GET', `/v1/customers/${made.id}`)).json()).toMatchObject({ id: made.id, name: 'After' });
      const entry = (await ok(api(copy, 'GET', `/log/stripe?after=${head}`))).entries[0];
      expect(entry.cause).toEqual({ kind: 'ingest', source: 'stripe:evt_hostsIngest0001' });
      // The real account was not touched.
      expect((await stripe(real, 'GET', `/v1/customers/${made.id}`)).json().name).toBe('Before');
    });

    test('unsigned, forged, stale or replayed: refused with its code, and the head does not move', async () => {
      const { real, copy } = await pair();
      const made = await makeCustomer(real, 'Target');
      await refresh(copy);
      const head = async (): Promise<number> => (await stripeStatus(copy)).position as number;
      const start = await head();
      const body = JSON.stringify({ id: 'evt_hostsRefused001', object: 'event', type: 'customer.updated', data: { object: { ...made, name: 'Forged' } } });

      expectRefused(await ingest(copy, body), 401, 'webhook_unverified', 'unsigned');
      expectRefused(await ingest(copy, body, stripeSignature('whsec_someoneElse0secret', body, nowS())), 401, 'webhook_unverified', 'forged');
      expectRefused(await ingest(copy, body.replace('Forged', 'Tampered'), stripeSignature(SIGNING, body, nowS())), 401, 'webhook_unverified', 'tampered');
      expectRefused(await ingest(copy, body, 't=abc,v1=00'), 401, 'webhook_unverified', 'malformed');
      expectRefused(await ingest(copy, body, stripeSignature(SIGNING, body, nowS() - 600)), 401, 'webhook_stale', 'stale');
      // Unverified ones change nothing, and do not spend the event id.
      expect(await head()).toBe(start);
      expect((await stripe(copy, 'GET', `/v1/customers/${made.id}`)).json().name).toBe('Target');

      expect((await ingest(copy, body, stripeSignature(SIGNING, body, nowS()))).status).toBe(200);
      expect(await head()).toBe(start + 1);
      expectRefused(await ingest(copy, body, stripeSignature(SIGNING, body, nowS())), 409, 'webhook_replayed', 'replayed');
      expect(await head()).toBe(start + 1);
    });

    test('keyless means the signature alone: a token does not stand for it, and a world without a signing secret refuses', async () => {
      const real = await host().openWorld();
      const copy = await host().openWorld();
      const body = JSON.stringify({ id: 'evt_hostsNoSecret01', object: 'event', type: 'customer.updated', data: { object: { id: 'cus_x', object: 'customer' } } });
      expectRefused(await ingest(copy, body, stripeSignature(SIGNING, body, nowS())), 409, 'no_root', 'no root');
      await ok(api(copy, 'PUT', '/twins/stripe/root', { url: stripeRootOf(real) }));
      await ok(api(copy, 'PUT', '/twins/stripe/credential', { bearer: real.token }));
      expectRefused(await ingest(copy, body, stripeSignature(SIGNING, body, nowS())), 409, 'no_credential', 'no signing secret');
      await ok(api(copy, 'PUT', '/twins/stripe/credential', { bearer: real.token, signingSecret: SIGNING }));
      // The world's token with no signature is still unverified.
      const withToken = await send('POST', `${copy.api}/twins/stripe/ingest`, { headers: { ...kit(copy.token), 'content-type': 'application/json' }, body });
      expectRefused(withToken, 401, 'webhook_unverified', 'token, unsigned');
      // Only ingest is keyless: the refresh next to it is not.
      expectRefused(await send('POST', `${copy.api}/twins/stripe/refresh`), 401, 'unauthenticated', 'refresh without a token');
    });
  });

  group('roots: links', () => {
    test('a link forwards to the real world with the sealed credential, to the world token only; listed and removed', async () => {
      const real = await host().openWorld();
      const copy = await host().openWorld();
      const made = await makeCustomer(real, 'Linked');
      const origin = new URL(real.base).origin;
      const realPath = new URL(real.url).pathname;

      expect(await ok(api(copy, 'PUT', '/links/real', { origin }))).toMatchObject({ name: 'real', origin });
      const sealed = await ok(api(copy, 'PUT', '/twins/real/credential', { bearer: real.token }));
      expect(sealed).toMatchObject({ sealed: true });
      const listed = await ok(api(copy, 'GET', '/links'));
      expect(listed.links).toEqual([{ name: 'real', origin, createdAt: expect.any(String), credential: sealed }]);
      expect(JSON.stringify(listed)).not.toContain(real.token);

      const heads = async (): Promise<unknown> => (await ok(api(copy, 'GET', '/map'))).twins.map((t: { twin: string; position: number }) => [t.twin, t.position]);
      const positions = await heads();
      const through = `${copy.url}/real${realPath}/stripe/v1/customers`;
      for (const headers of [bearer(copy.token), kit(copy.token)]) {
        const a = await send('GET', through, { headers });
        expect([a.status, a.text.slice(0, 300)]).toEqual([200, expect.any(String)]);
        // Not encoded for a caller that asked for no encoding (the edge's fetch asks the vendor for one itself).
        expect(a.headers['content-encoding']).toBeUndefined();
        expect((a.json() as { data: { id: string }[] }).data.map((c) => c.id)).toEqual([made.id]);
      }
      // A write goes through too, to the real account.
      const posted = await send('POST', through, { headers: { ...bearer(copy.token), 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=ThroughTheLink' });
      expect(posted.status).toBe(200);
      expect((await stripe(real, 'GET', `/v1/customers/${(posted.json() as { id: string }).id}`)).json().name).toBe('ThroughTheLink');
      // Stateless: the copy's log did not move.
      expect(await heads()).toEqual(positions);

      expectRefused(await send('GET', through, { headers: bearer(copy.readToken) }), 403, 'link_needs_token', 'read token');
      expectRefused(await send('GET', through, { headers: kit(copy.readToken) }), 403, 'link_needs_token', 'read token (x-kit-token)');
      expect((await send('GET', through, {})).status).toBe(401);

      await ok(api(copy, 'DELETE', '/links/real'), 204);
      expect((await ok(api(copy, 'GET', '/links'))).links).toEqual([]);
      expect((await send('GET', through, { headers: bearer(copy.token) })).status).toBe(404);
      expectRefused(await api(copy, 'GET', '/twins/real/credential'), 404, 'unknown_twin', 'credential gone with the link');
    });

    test('refused: a link named like a twin, a bad name, an origin with a path, one it must not reach', async () => {
      const w = await host().openWorld();
      expectRefused(await api(w, 'PUT', '/links/stripe', { origin: 'https://api.stripe.com' }), 409, 'link_names_twin', 'stripe');
      expectRefused(await api(w, 'PUT', '/links/hello', { origin: 'https://api.stripe.com' }), 409, 'link_names_twin', 'hello');
      expectRefused(await api(w, 'PUT', '/links/Real', { origin: 'https://api.stripe.com' }), 400, 'invalid_link', 'upper case');
      expectRefused(await api(w, 'PUT', '/links/real', { origin: 'https://api.stripe.com/v1' }), 400, 'invalid_link', 'a path');
      for (const origin of ['http://api.stripe.com', 'http://169.254.169.254', 'https://10.0.0.1', 'https://user:pass@api.stripe.com']) {
        expectRefused(await api(w, 'PUT', '/links/real', { origin }), 400, 'destination_refused', origin);
      }
      expectRefused(await api(w, 'DELETE', '/links/real'), 404, 'unknown_link');
      expect((await ok(api(w, 'GET', '/links'))).links).toEqual([]);
    });
  });
}
