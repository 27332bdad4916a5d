/**
 * The signer as a platform (and the tests) use it: passes the host's verifier takes, keys
 * kept on disk, rotation, and the local issuer serving its JWKS over HTTP.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createPassVerifier, KEYS_COOLDOWN_MS } from '../../host/core/access/passes.js';
import { createPassSigner, generatePassKey, PassFileError, passKeysPath, PUBLISHED_KEYS, readPassIssuer, readPassKeys, startPassIssuer, writePassKeys } from './index.js';
import type { PassIssuer } from './index.js';

const WORLD = 'acme/shop';
const ORIGIN = 'http://shop--acme.localhost:4440';
const NOW = Date.UTC(2026, 0, 15, 9, 0, 0);
const expected = { world: WORLD, origin: ORIGIN, now: NOW };
const pass = { world: WORLD, origin: ORIGIN, scope: 'write' as const, subject: 'user_ada', now: NOW };

let dir: string;
const issuers: PassIssuer[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kit-passes-'));
});
afterEach(async () => {
  vi.useRealTimers();
  for (const i of issuers.splice(0)) await i.close();
  await rm(dir, { recursive: true, force: true });
});

async function issuerIn(options: Parameters<typeof startPassIssuer>[0] = {}): Promise<PassIssuer> {
  const i = await startPassIssuer(options);
  issuers.push(i);
  return i;
}

describe('createPassSigner', () => {
  it('signs passes in the documented form, that the host\'s verifier takes', async () => {
    const signer = await createPassSigner({ issuer: 'https://platform.example/' });
    expect(signer.issuer).toBe('https://platform.example');
    const jwt = await signer.sign({ ...pass, name: 'Ada Lovelace' });
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'ES256', typ: 'kit-pass+jwt', kid: signer.kid });
    const claims = decodeJwt(jwt);
    expect(claims).toEqual({ iss: 'https://platform.example', sub: 'user_ada', name: 'Ada Lovelace', aud: ORIGIN, kit_world: WORLD, scope: 'write', jti: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), iat: NOW / 1000, exp: NOW / 1000 + 300 });
    expect(decodeJwt(await signer.sign(pass)).jti).not.toBe(claims.jti);
    const verifier = createPassVerifier({ trusted: [signer.issuer], fetch: async () => Response.json(signer.jwks()) });
    expect(await verifier.verify(jwt, expected)).toMatchObject({ ok: true, claims: { subject: 'user_ada', name: 'Ada Lovelace', scope: 'write', expiresAt: NOW + 300_000 } });
    // ttlSeconds up to 10 minutes; the pass expires when it says.
    const long = await signer.sign({ ...pass, ttlSeconds: 600 });
    expect(decodeJwt(long).exp).toBe(NOW / 1000 + 600);
    expect(await verifier.verify(long, { ...expected, now: NOW + 661_000 })).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('publishes public keys only', async () => {
    const signer = await createPassSigner({ issuer: 'https://platform.example' });
    const { keys } = signer.jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toEqual({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: signer.kid, alg: 'ES256', use: 'sig' });
    expect(signer.keys()[0]!.d).toEqual(expect.any(String));
  });

  it('refuses what is not a pass to sign, and an issuer hosts would not trust', async () => {
    const signer = await createPassSigner({ issuer: 'http://127.0.0.1:4460' });
    for (const bad of [{ world: 'shop' }, { world: 'Acme/Shop' }, { origin: 'shop--acme.localhost' }, { origin: `${ORIGIN}/path` }, { origin: 'ftp://x' }, { scope: 'admin' }, { subject: '' }, { subject: 'a\nb' }, { name: 'x'.repeat(257) }, { ttlSeconds: 601 }, { ttlSeconds: 0 }, { ttlSeconds: 1.5 }]) {
      await expect(signer.sign({ ...pass, ...bad } as typeof pass), JSON.stringify(bad)).rejects.toThrow(TypeError);
    }
    await expect(createPassSigner({ issuer: 'http://platform.example' })).rejects.toThrow(/https/);
  });

  it('rotates: the new key signs, the previous ones stay published, the oldest beyond three are dropped', async () => {
    const signer = await createPassSigner({ issuer: 'https://platform.example' });
    const first = signer.kid;
    const firstPass = await signer.sign(pass);
    const second = await signer.rotate();
    expect(signer.kid).toBe(second);
    expect(decodeProtectedHeader(await signer.sign(pass)).kid).toBe(second);
    expect(signer.jwks().keys.map((k) => k.kid)).toEqual([second, first]);
    const verifier = createPassVerifier({ trusted: [signer.issuer], fetch: async () => Response.json(signer.jwks()) });
    expect((await verifier.verify(firstPass, expected)).ok).toBe(true);
    for (let i = 0; i < PUBLISHED_KEYS; i++) await signer.rotate();
    expect(signer.jwks().keys).toHaveLength(PUBLISHED_KEYS);
    expect(signer.jwks().keys.map((k) => k.kid)).not.toContain(first);
    expect(await createPassVerifier({ trusted: [signer.issuer], fetch: async () => Response.json(signer.jwks()) }).verify(firstPass, expected)).toMatchObject({ ok: false, reason: 'unknown_key' });
  });
});

describe('the package', () => {
  it('is exported as twinkit/passes (the compiled package: needs make build)', async () => {
    const script = [
      "import { createPassSigner } from 'twinkit/passes';",
      "const signer = await createPassSigner({ issuer: 'https://platform.example' });",
      `const pass = await signer.sign(${JSON.stringify(pass)});`,
      'console.log(JSON.stringify({ pass, jwks: signer.jwks() }));',
    ].join('\n');
    const root = resolve(import.meta.dirname, '..', '..');
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
    const made = JSON.parse(stdout) as { pass: string; jwks: unknown };
    const verifier = createPassVerifier({ trusted: ['https://platform.example'], fetch: async () => Response.json(made.jwks) });
    expect(await verifier.verify(made.pass, expected)).toMatchObject({ ok: true, claims: { subject: 'user_ada', world: WORLD } });
  });
});

describe('key files', () => {
  it('keeps keys in <dir>/keys.json, readable by its owner only, and signs with them after a restart', async () => {
    expect(await readPassKeys(dir)).toBeNull();
    const keys = [await generatePassKey(), await generatePassKey()];
    await writePassKeys(dir, keys);
    expect((await stat(passKeysPath(dir))).mode & 0o777).toBe(0o600);
    expect(await readPassKeys(dir)).toEqual(keys);
    const signer = await createPassSigner({ issuer: 'https://platform.example', keys: (await readPassKeys(dir))! });
    expect(signer.kid).toBe(keys[0]!.kid);
  });

  it('a file that does not hold keys is pass_keys_corrupt and is left as it is', async () => {
    for (const text of ['not json', '{}', '{"keys":[]}', '{"keys":[{"kty":"RSA"}]}', '{"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","x":"a","y":"b","kid":"k"}]}']) {
      await writeFile(passKeysPath(dir), text);
      const error = await readPassKeys(dir).catch((e: unknown) => e);
      expect([text, error instanceof PassFileError && error.code]).toEqual([text, 'pass_keys_corrupt']);
      expect(await readFile(passKeysPath(dir), 'utf8')).toBe(text);
    }
  });
});

describe('startPassIssuer', () => {
  it('serves the JWKS a host fetches, and nothing else', async () => {
    const issuer = await issuerIn();
    expect(issuer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const answer = await fetch(issuer.jwksUrl);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/jwk-set+json');
    const body = (await answer.json()) as { keys: { kid: string; d?: string }[] };
    expect(body.keys.map((k) => k.kid)).toEqual([await issuer.kid()]);
    expect(body.keys[0]!.d).toBeUndefined();
    expect(issuer.jwksRequests).toBe(1);
    expect((await fetch(`${issuer.url}/sign`)).status).toBe(404);
    expect((await fetch(issuer.jwksUrl, { method: 'POST' })).status).toBe(405);
    expect(await (await fetch(`${issuer.url}/`)).json()).toEqual({ issuer: issuer.url, jwks_uri: `${issuer.url}/.well-known/jwks.json` });
  });

  it('a host trusting it verifies its passes over HTTP, and finds a key it rotated in', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW);
    const issuer = await issuerIn();
    const verifier = createPassVerifier({ trusted: [issuer.url] });
    expect(await verifier.verify(await issuer.sign(pass), expected)).toMatchObject({ ok: true, claims: { issuer: issuer.url, subject: 'user_ada' } });
    expect(issuer.jwksRequests).toBe(1);
    const rotated = await issuer.rotate();
    vi.setSystemTime(NOW + KEYS_COOLDOWN_MS + 1);
    const after = await issuer.sign(pass);
    expect(decodeProtectedHeader(after).kid).toBe(rotated);
    expect((await verifier.verify(after, expected)).ok).toBe(true);
    expect(issuer.jwksRequests).toBe(2);
  });

  it('with a folder: keeps its keys and URL there, serves what the folder holds, and keeps both across a restart', async () => {
    const first = await issuerIn({ dir });
    const kid = await first.kid();
    expect(await readPassIssuer(dir)).toBe(first.url);
    expect((await readPassKeys(dir))!.map((k) => k.kid)).toEqual([kid]);
    const rotated = await first.rotate();
    expect((await readPassKeys(dir))!.map((k) => k.kid)).toEqual([rotated, kid]);
    // Another process (kit pass rotate) writes the folder: served at the next request.
    const [signing] = (await readPassKeys(dir))!;
    const elsewhere = await generatePassKey();
    await writePassKeys(dir, [elsewhere, signing!]);
    const served = (await (await fetch(first.jwksUrl)).json()) as { keys: { kid: string }[] };
    expect(served.keys.map((k) => k.kid)).toEqual([elsewhere.kid, rotated]);
    expect(await first.kid()).toBe(elsewhere.kid);
    await first.close();
    issuers.splice(0);
    const second = await issuerIn({ dir });
    expect(await second.kid()).toBe(elsewhere.kid);
    expect(await readPassIssuer(dir)).toBe(second.url);
  });

  it('does not start over a corrupt key file', async () => {
    await writeFile(passKeysPath(dir), 'garbage');
    await expect(startPassIssuer({ dir })).rejects.toMatchObject({ code: 'pass_keys_corrupt' });
    expect(await readFile(passKeysPath(dir), 'utf8')).toBe('garbage');
  });
});
