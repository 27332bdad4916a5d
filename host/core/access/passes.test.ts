/**
 * The pass verifier as an attacker and a platform meet it: every refusal, what is fetched
 * (and what is never fetched), key rotation at the issuer, algorithm confusion, size.
 * The issuer is in memory: its JWKS answered by the `fetch` the verifier is given, which
 * records every URL asked for.
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { base64url, calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { CryptoKey, FetchImplementation, JWK, JWTPayload } from 'jose';
import { createPassVerifier, KEYS_COOLDOWN_MS, KEYS_RETRY_AFTER_FAILURE_MS, MAX_PASS_LENGTH, trustedIssuers } from './passes.js';
import type { PassCheck } from './passes.js';
import { startPassIssuer } from '../../../sdk/passes/index.js';
import { EDGE_CONFIG } from '../../edge/dev.js';

const here = dirname(fileURLToPath(import.meta.url));

const ISSUER = 'https://platform.example';
const WORLD = 'acme/shop';
const ORIGIN = 'http://shop--acme.localhost:4440';
const NOW = Date.UTC(2026, 0, 15, 9, 0, 0);
const IAT = NOW / 1000;
const expected = { world: WORLD, origin: ORIGIN, now: NOW };

interface Key {
  kid: string;
  alg: 'ES256' | 'EdDSA';
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function makeKey(alg: 'ES256' | 'EdDSA' = 'ES256'): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { kid, alg, privateKey, publicJwk: { ...jwk, kid, alg, use: 'sig' } };
}

/** An issuer in memory: its published keys, and every URL the verifier fetched. */
class FakeIssuer {
  published: Key[] = [];
  fetched: string[] = [];
  status = 200;
  readonly fetch: FetchImplementation = async (url) => {
    this.fetched.push(url);
    if (this.status !== 200) return new Response('down', { status: this.status, headers: this.status === 302 ? { location: 'https://elsewhere.example/keys' } : {} });
    return Response.json({ keys: this.published.map((k) => k.publicJwk) });
  };
}

function claims(overrides: Record<string, unknown> = {}): JWTPayload {
  const base: Record<string, unknown> = { iss: ISSUER, sub: 'user_ada', name: 'Ada Lovelace', aud: ORIGIN, kit_world: WORLD, scope: 'write', jti: 'pass_1', iat: IAT, exp: IAT + 300 };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === undefined) delete base[k];
    else base[k] = v;
  }
  return base as JWTPayload;
}

async function sign(key: Key, payload: JWTPayload = claims(), header: Record<string, unknown> = {}): Promise<string> {
  const protectedHeader = { alg: key.alg, typ: 'kit-pass+jwt', kid: key.kid, ...header } as { alg: string };
  for (const [k, v] of Object.entries(header)) if (v === undefined) delete (protectedHeader as Record<string, unknown>)[k];
  return new SignJWT(payload).setProtectedHeader(protectedHeader).sign(key.privateKey);
}

const enc = (value: unknown) => base64url.encode(JSON.stringify(value));
const refusal = (check: PassCheck) => (check.ok ? 'ok' : check.reason);

let issuer: FakeIssuer;
let key: Key;
beforeEach(async () => {
  issuer = new FakeIssuer();
  key = await makeKey();
  issuer.published = [key];
});
afterEach(() => {
  vi.useRealTimers();
});

const verifier = () => createPassVerifier({ trusted: [ISSUER], fetch: issuer.fetch });

describe('a good pass', () => {
  it('gives the claims in the core\'s words, after one fetch of the issuer\'s JWKS, and none the next time', async () => {
    const v = verifier();
    const check = await v.verify(await sign(key), expected);
    expect(check).toEqual({
      ok: true,
      claims: { issuer: ISSUER, subject: 'user_ada', name: 'Ada Lovelace', scope: 'write', world: WORLD, origin: ORIGIN, id: 'pass_1', expiresAt: (IAT + 300) * 1000 },
    });
    expect(issuer.fetched).toEqual(['https://platform.example/.well-known/jwks.json']);
    const again = await v.verify(await sign(key, claims({ jti: 'pass_2', scope: 'read', name: undefined })), expected);
    expect(again).toMatchObject({ ok: true, claims: { scope: 'read', id: 'pass_2' } });
    expect(again.ok && 'name' in again.claims).toBe(false);
    expect(issuer.fetched).toHaveLength(1);
  });

  it('takes EdDSA as well as ES256, and an issuer written with a trailing slash', async () => {
    const ed = await makeKey('EdDSA');
    issuer.published = [key, ed];
    const check = await verifier().verify(await sign(ed, claims({ iss: `${ISSUER}/` })), expected);
    expect(check).toMatchObject({ ok: true, claims: { issuer: ISSUER } });
  });

  it('forgives clocks that differ by up to a minute', async () => {
    const v = verifier();
    // Expired 59 s ago, by the host's clock.
    expect(refusal(await v.verify(await sign(key, claims({ iat: IAT - 359, exp: IAT - 59 })), expected))).toBe('ok');
    // Issued 59 s in the host's future.
    expect(refusal(await v.verify(await sign(key, claims({ iat: IAT + 59, exp: IAT + 359 })), expected))).toBe('ok');
  });
});

describe('refusals', () => {
  it('malformed: not a JWT, not JSON, not a kit pass, no key id, a claim missing or wrong; nothing fetched before the signature is due', async () => {
    const v = verifier();
    const header = { alg: 'ES256', typ: 'kit-pass+jwt', kid: key.kid };
    const unsigned = ['', 'tok_abc', 'a.b', 'a.b.c.d', 'a b.c.d', `${enc(header)}.${enc(claims())}.`, `bm90IGpzb24.${enc(claims())}.c2ln`, `${enc(header)}.bm90IGpzb24.c2ln`];
    for (const pass of unsigned) expect([pass, refusal(await v.verify(pass, expected))]).toEqual([pass, 'malformed']);
    // A JWT that is not a pass: another typ, none, or no kid.
    for (const h of [{ typ: 'JWT' }, { typ: undefined }, { typ: 'at+jwt' }, { kid: undefined }, { kid: '' }]) {
      expect([h, refusal(await v.verify(await sign(key, claims(), h), expected))]).toEqual([h, 'malformed']);
    }
    expect(issuer.fetched).toEqual([]);
    // Signed by the trusted issuer but missing what a pass must say.
    const wrong: Record<string, unknown>[] = [
      { sub: undefined },
      { sub: '' },
      { sub: 'ada\u0000' },
      { name: 42 },
      { jti: undefined },
      { aud: undefined },
      { aud: [ORIGIN, 'https://other.example'] },
      { kit_world: undefined },
      { kit_world: 'shop' },
      { kit_world: 'acme/shop/main' },
      { kit_world: 'Acme/Shop' },
      { scope: 'admin' },
      { scope: undefined },
      { exp: undefined },
      { iat: undefined },
      // Passes are short: at most 10 minutes from issue to expiry.
      { exp: IAT + 601 },
      { exp: IAT },
    ];
    for (const w of wrong) expect([w, refusal(await v.verify(await sign(key, claims(w)), expected))]).toEqual([w, 'malformed']);
    expect(issuer.fetched).toHaveLength(1);
  });

  it('malformed: a pass over 8 KB is refused before it is parsed or anything is fetched', async () => {
    const v = verifier();
    const huge = await sign(key, claims({ name: 'x'.repeat(MAX_PASS_LENGTH) }));
    const check = await v.verify(huge, expected);
    expect(check).toMatchObject({ ok: false, reason: 'malformed' });
    expect(!check.ok && check.message).toMatch(/at most 8192/);
    expect(await v.verify('a'.repeat(10_000_000), expected)).toMatchObject({ ok: false, reason: 'malformed' });
    expect(issuer.fetched).toEqual([]);
  });

  it('untrusted_issuer: another issuer, none, or one that is only a prefix of a trusted one, without a fetch', async () => {
    const v = verifier();
    for (const iss of ['https://evil.example', undefined, 42, 'https://platform.example.evil.example', 'https://platform.example/../x', 'https://platform.example:8443', 'http://platform.example', `${ISSUER}/tenant`]) {
      const check = await v.verify(await sign(key, claims({ iss })), expected);
      expect([iss, refusal(check)]).toEqual([iss, 'untrusted_issuer']);
    }
    expect(issuer.fetched).toEqual([]);
  });

  it('unknown_key: a kid the issuer does not publish, fetched again at most once per cooldown', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    const v = verifier();
    const stranger = await makeKey();
    expect(refusal(await v.verify(await sign(key), expected))).toBe('ok');
    expect(issuer.fetched).toHaveLength(1);
    // A made-up kid within the cooldown costs the issuer nothing.
    for (let i = 0; i < 5; i++) expect(refusal(await v.verify(await sign(stranger), expected))).toBe('unknown_key');
    expect(issuer.fetched).toHaveLength(1);
    // After it, one fetch, then the cooldown again.
    vi.setSystemTime(NOW + KEYS_COOLDOWN_MS + 1);
    expect(refusal(await v.verify(await sign(stranger), expected))).toBe('unknown_key');
    expect(refusal(await v.verify(await sign(stranger), expected))).toBe('unknown_key');
    expect(issuer.fetched).toHaveLength(2);
    // A key of the right id but another algorithm is no match either.
    const ed = await makeKey('EdDSA');
    expect(refusal(await v.verify(await sign({ ...ed, kid: key.kid }), expected))).toBe('unknown_key');
  });

  it('a key the issuer rotated in since the last fetch is fetched and found', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    const v = verifier();
    expect(refusal(await v.verify(await sign(key), expected))).toBe('ok');
    const next = await makeKey();
    issuer.published = [next, key];
    vi.setSystemTime(NOW + KEYS_COOLDOWN_MS + 1);
    expect(refusal(await v.verify(await sign(next, claims({ jti: 'after-rotation' })), expected))).toBe('ok');
    expect(issuer.fetched).toHaveLength(2);
    // The old key, still published, still verifies; once dropped and the set refetched, it does not.
    expect(refusal(await v.verify(await sign(key, claims({ jti: 'old-key' })), expected))).toBe('ok');
    issuer.published = [next];
    vi.setSystemTime(NOW + 11 * 60_000);
    expect(refusal(await v.verify(await sign(key, claims({ jti: 'old-key-2' })), expected))).toBe('unknown_key');
    expect(issuer.fetched).toHaveLength(3);
  });

  it('a rotated key within the cooldown of the last fetch is unknown until the cooldown ends (why an issuer publishes a key before it signs with it)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    const v = verifier();
    expect(refusal(await v.verify(await sign(key), expected))).toBe('ok');
    const next = await makeKey();
    issuer.published = [next, key];
    vi.setSystemTime(NOW + 5_000);
    expect(refusal(await v.verify(await sign(next), expected))).toBe('unknown_key');
    vi.setSystemTime(NOW + KEYS_COOLDOWN_MS + 1);
    expect(refusal(await v.verify(await sign(next), expected))).toBe('ok');
  });

  it('unknown_key: an issuer whose keys cannot be fetched (an error, a redirect, not a JWKS), tried again only after a pause', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    const v = verifier();
    issuer.status = 503;
    const first = await v.verify(await sign(key), expected);
    expect(first).toMatchObject({ ok: false, reason: 'unknown_key' });
    expect(!first.ok && first.message).toContain('could not be fetched from https://platform.example/.well-known/jwks.json');
    expect(refusal(await v.verify(await sign(key), expected))).toBe('unknown_key');
    expect(issuer.fetched).toHaveLength(1);
    // A redirect is not followed: the keys are at the issuer's own origin or nowhere.
    vi.setSystemTime(NOW + KEYS_RETRY_AFTER_FAILURE_MS + 1);
    issuer.status = 302;
    expect(refusal(await v.verify(await sign(key), expected))).toBe('unknown_key');
    expect(issuer.fetched).toEqual(Array(2).fill('https://platform.example/.well-known/jwks.json'));
    vi.setSystemTime(NOW + 2 * (KEYS_RETRY_AFTER_FAILURE_MS + 1));
    issuer.status = 200;
    expect(refusal(await v.verify(await sign(key), expected))).toBe('ok');
  });

  it('unknown_key: a JWKS that publishes a private key is not used', async () => {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const leaked = { ...(await exportJWK(privateKey)), kid: key.kid, alg: 'ES256' };
    const fetchLeaky: FetchImplementation = async () => Response.json({ keys: [leaked] });
    const check = await createPassVerifier({ trusted: [ISSUER], fetch: fetchLeaky }).verify(await sign(key), expected);
    expect(check).toMatchObject({ ok: false, reason: 'unknown_key' });
  });

  it('bad_signature: a changed claim, another key under the issuer\'s kid, a key the pass carries itself', async () => {
    const v = verifier();
    const good = await sign(key, claims({ scope: 'read' }));
    const [h, , s] = good.split('.');
    expect(refusal(await v.verify(`${h}.${enc(claims({ scope: 'write' }))}.${s}`, expected))).toBe('bad_signature');
    const forger = await makeKey();
    expect(refusal(await v.verify(await sign({ ...forger, kid: key.kid }), expected))).toBe('bad_signature');
    // jwk / jku in the header name the forger's key: ignored, only the trusted issuer's JWKS counts.
    const embedded = await sign({ ...forger, kid: key.kid }, claims(), { jwk: forger.publicJwk, jku: 'https://evil.example/jwks.json' });
    expect(refusal(await v.verify(embedded, expected))).toBe('bad_signature');
    // Forged and expired: the signature is judged first, so an expired forgery says nothing of time.
    expect(refusal(await v.verify(await sign({ ...forger, kid: key.kid }, claims({ iat: IAT - 3600, exp: IAT - 3300 })), expected))).toBe('bad_signature');
    expect(issuer.fetched).toEqual(['https://platform.example/.well-known/jwks.json']);
  });

  it('bad_signature: algorithm confusion (HS256 keyed with the public key, none, RS256) is refused without a fetch', async () => {
    const v = verifier();
    const publicAsSecret = new TextEncoder().encode(JSON.stringify(key.publicJwk));
    const hs256 = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', typ: 'kit-pass+jwt', kid: key.kid }).sign(publicAsSecret);
    expect(await v.verify(hs256, expected)).toMatchObject({ ok: false, reason: 'bad_signature', message: expect.stringContaining('"HS256"') });
    const none = `${enc({ alg: 'none', typ: 'kit-pass+jwt', kid: key.kid })}.${enc(claims())}.c2ln`;
    expect(refusal(await v.verify(none, expected))).toBe('bad_signature');
    // `none` as jose's UnsecuredJWT writes it: no signature at all.
    const bare = `${enc({ alg: 'none', typ: 'kit-pass+jwt', kid: key.kid })}.${enc(claims())}.`;
    expect(refusal(await v.verify(bare, expected))).toBe('malformed');
    const { privateKey: rsa } = await generateKeyPair('RS256');
    const rs256 = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', typ: 'kit-pass+jwt', kid: key.kid }).sign(rsa);
    expect(refusal(await v.verify(rs256, expected))).toBe('bad_signature');
    expect(issuer.fetched).toEqual([]);
  });

  it('expired: past exp (and the minute of tolerance), or not valid yet', async () => {
    const v = verifier();
    const check = await v.verify(await sign(key, claims({ iat: IAT - 400, exp: IAT - 61 })), expected);
    expect(check).toEqual({ ok: false, reason: 'expired', message: 'the pass has expired' });
    expect(refusal(await v.verify(await sign(key, claims({ nbf: IAT + 120 })), expected))).toBe('expired');
    expect(refusal(await v.verify(await sign(key, claims({ iat: IAT + 120, exp: IAT + 400 })), expected))).toBe('expired');
    // The host's now is what counts, not the wall clock: the same pass is good at its time.
    expect(refusal(await v.verify(await sign(key, claims({ iat: IAT - 400, exp: IAT - 61 })), { ...expected, now: NOW - 100_000 }))).toBe('ok');
  });

  it('wrong_world and wrong_origin: a pass for another world, branch, or origin', async () => {
    const v = verifier();
    expect(await v.verify(await sign(key, claims({ kit_world: 'acme/other' })), expected)).toEqual({ ok: false, reason: 'wrong_world', message: 'the pass is for the world acme/other, not acme/shop' });
    expect(refusal(await v.verify(await sign(key), { ...expected, world: 'acme/shop-9cfc' }))).toBe('wrong_world');
    for (const aud of ['http://other--acme.localhost:4440', 'http://shop--acme.localhost:4441', 'https://shop--acme.localhost:4440', 'http://shop--acme.localhost:4440/evil', 'http://127.0.0.1:4440']) {
      expect([aud, refusal(await v.verify(await sign(key, claims({ aud })), expected))]).toEqual([aud, 'wrong_origin']);
    }
    // The same origin written as a one-element list, with a trailing slash or in capitals.
    for (const aud of [[ORIGIN], `${ORIGIN}/`, ORIGIN.toUpperCase().replace('HTTP://', 'http://')]) {
      expect([aud, refusal(await v.verify(await sign(key, claims({ aud })), expected))]).toEqual([aud, 'ok']);
    }
  });

  it('never puts the pass in a message', async () => {
    const v = verifier();
    const pass = await sign(key, claims({ kit_world: 'acme/other' }));
    const check = await v.verify(pass, expected);
    expect(check.ok).toBe(false);
    expect(JSON.stringify(check)).not.toContain(pass.split('.')[2]);
  });
});

describe('in workerd', () => {
  it('runs as the edge bundles it (jose\'s Web Crypto build): fetches a live issuer\'s JWKS, verifies ES256 and EdDSA, refuses a forgery', async () => {
    // The edge build's resolution settings (host/edge/build.ts), on this file alone.
    const bundled = await esbuild.build({
      stdin: {
        contents: `import { createPassVerifier } from './passes.ts';
          export default { async fetch(request) {
            const { passes, trusted, jwks, expected } = await request.json();
            const live = createPassVerifier({ trusted });
            const given = createPassVerifier({ trusted, fetch: async () => Response.json(jwks) });
            return Response.json([await live.verify(passes[0], expected), await live.verify(passes[1], expected), await given.verify(passes[2], expected)]);
          } };`,
        resolveDir: here,
        loader: 'js',
      },
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      mainFields: ['module', 'main'],
      conditions: ['workerd', 'worker', 'import'],
      metafile: true,
    });
    expect(Object.keys(bundled.metafile.inputs).filter((p) => p.includes('node_modules/jose/')).every((p) => p.includes('jose/dist/webapi/'))).toBe(true);
    const live = await startPassIssuer({});
    const mf = new Miniflare({ modules: true, script: bundled.outputFiles[0]!.text, compatibilityDate: EDGE_CONFIG.compatibilityDate, compatibilityFlags: [...EDGE_CONFIG.compatibilityFlags] });
    try {
      const now = Date.now();
      const real = { world: WORLD, origin: ORIGIN, now };
      const good = await live.sign({ world: WORLD, origin: ORIGIN, scope: 'read', subject: 'ada', now });
      const [h, p, s] = good.split('.');
      const forged = `${h}.${p}.${s!.startsWith('A') ? 'B' : 'A'}${s!.slice(1)}`;
      const ed = await makeKey('EdDSA');
      const edPass = await sign(ed, claims({ iss: live.url, iat: Math.floor(now / 1000), exp: Math.floor(now / 1000) + 60 }));
      const answer = await mf.dispatchFetch('http://verify/', { method: 'POST', body: JSON.stringify({ passes: [good, forged, edPass], trusted: [live.url], jwks: { keys: [ed.publicJwk] }, expected: real }) });
      const [a, b, c] = (await answer.json()) as PassCheck[];
      expect(a).toMatchObject({ ok: true, claims: { issuer: live.url, subject: 'ada', scope: 'read', world: WORLD } });
      expect(refusal(b!)).toBe('bad_signature');
      expect(c).toMatchObject({ ok: true, claims: { issuer: live.url, subject: 'user_ada' } });
      expect(live.jwksRequests).toBe(1);
    } finally {
      await mf.dispose();
      await live.close();
    }
  }, 60_000);
});

describe('trustedIssuers', () => {
  it('reads --trust flags and TRUSTED_ISSUERS (comma or space separated) as origins, once each', () => {
    expect(trustedIssuers(['https://Platform.Example/', 'http://127.0.0.1:4460'], 'https://platform.example, https://b.example:8443  http://localhost:4460\nhttp://kit.localhost')).toEqual([
      'https://platform.example',
      'http://127.0.0.1:4460',
      'https://b.example:8443',
      'http://localhost:4460',
      'http://kit.localhost',
    ]);
    expect(trustedIssuers([], undefined)).toEqual([]);
    expect(trustedIssuers([], ' , ')).toEqual([]);
    expect(trustedIssuers(['http://[::1]:4460'], undefined)).toEqual(['http://[::1]:4460']);
  });

  it('refuses what is not an issuer, naming it', () => {
    for (const bad of ['platform.example', 'http://platform.example', 'http://10.0.0.1:4460', 'https://platform.example/tenant', 'https://platform.example/?x', 'https://u:p@platform.example', 'ftp://platform.example', 'https://platform.example#k', 'http://localhost.evil.example']) {
      expect(() => trustedIssuers([bad], undefined)).toThrow(TypeError);
      expect(() => trustedIssuers([], bad)).toThrow(bad.slice(0, 20));
    }
  });

  it('the verifier takes issuers only as trustedIssuers gives them', () => {
    expect(() => createPassVerifier({ trusted: ['https://platform.example/'] })).toThrow(TypeError);
    expect(createPassVerifier({ trusted: [ISSUER, ISSUER] }).trusted).toEqual([ISSUER]);
  });
});
