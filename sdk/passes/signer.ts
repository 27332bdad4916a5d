/**
 * Signing passes (docs/passes.md): what a platform does for a person it lets into a world.
 * Web Crypto only (jose), so a platform on Node or on workerd signs with the same code the
 * tests use. The format's rules (type, algorithms, lifetime, names) are the verifier's,
 * imported from it, so the two cannot drift.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, SignJWT } from 'jose';
import type { JWK } from 'jose';
import { MAX_PASS_LIFETIME_SECONDS, PASS_TYPE, trustedIssuers } from '../../host/core/access/passes.js';
import { NAME_PATTERN } from '../../host/core/paths.js';

/** A pass's lifetime unless `ttlSeconds` says otherwise: long enough to open a page. */
export const DEFAULT_PASS_TTL_SECONDS = 300;
/** Keys a signer keeps publishing after a rotation (the newest signs): passes signed with a retired key fail once it is dropped. */
export const PUBLISHED_KEYS = 3;

/** A private signing key as a JWK (EC P-256, `alg` ES256), with its `kid` (the RFC 7638 thumbprint). */
export interface PassKey extends JWK {
  kty: 'EC';
  crv: 'P-256';
  alg: 'ES256';
  kid: string;
  x: string;
  y: string;
  d: string;
}

export interface PassToSign {
  /** `<org>/<world>`. */
  world: string;
  /** The world's own origin: `http://shop--acme.localhost:4440`, `https://shop--acme.worlds.example`. */
  origin: string;
  scope: 'read' | 'write';
  /** The person, as the platform knows them (a stable id). */
  subject: string;
  /** Their display name. */
  name?: string;
  /** 1 to 600; default 300. */
  ttlSeconds?: number;
  /** Epoch ms of issue (default now); tests sign passes of another time with it. */
  now?: number;
}

export interface PassSigner {
  /** The `iss` of every pass: an origin, `https://platform.example`. */
  readonly issuer: string;
  /** The `kid` passes are signed with now. */
  readonly kid: string;
  /** A pass (compact JWT) for one person, world and origin. */
  sign(pass: PassToSign): Promise<string>;
  /** The public keys to serve at `<issuer>/.well-known/jwks.json`. */
  jwks(): { keys: JWK[] };
  /** A new key signs from now on; the previous ones stay published (the `PUBLISHED_KEYS` newest). Answers the new `kid`. */
  rotate(): Promise<string>;
  /** The private keys, newest (the signing one) first: what `writePassKeys` keeps. */
  keys(): PassKey[];
}

/** A fresh ES256 key pair as a private JWK with its thumbprint as `kid`. */
export async function generatePassKey(): Promise<PassKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return { ...jwk, alg: 'ES256', kid } as PassKey;
}

/** The public half of a key, as a JWKS lists it. */
export function publicJwk(key: PassKey): JWK {
  return { kty: key.kty, crv: key.crv, x: key.x, y: key.y, kid: key.kid, alg: key.alg, use: 'sig' };
}

/** Checks that `value` is a pass key, as `readPassKeys` found it; throws TypeError naming what is wrong. */
export function checkPassKey(value: unknown): PassKey {
  const k = value as Partial<PassKey> | null;
  if (typeof k !== 'object' || k === null || Array.isArray(k)) throw new TypeError('a pass key is a JWK object');
  if (k.kty !== 'EC' || k.crv !== 'P-256' || k.alg !== 'ES256') throw new TypeError('a pass key is an ES256 key (kty EC, crv P-256, alg ES256)');
  for (const field of ['x', 'y', 'd', 'kid'] as const) {
    if (typeof k[field] !== 'string' || k[field] === '') throw new TypeError(`a pass key needs its "${field}"`);
  }
  return { kty: k.kty, crv: k.crv, alg: k.alg, kid: k.kid as string, x: k.x as string, y: k.y as string, d: k.d as string };
}

function checkPass(pass: PassToSign): number {
  const parts = typeof pass.world === 'string' ? pass.world.split('/') : [];
  if (parts.length !== 2 || !parts.every((p) => NAME_PATTERN.test(p))) throw new TypeError(`world must be <org>/<world>, got ${JSON.stringify(pass.world)}`);
  let origin: URL;
  try {
    origin = new URL(pass.origin);
  } catch {
    throw new TypeError(`origin must be the world's origin (http(s)://host[:port]), got ${JSON.stringify(pass.origin)}`);
  }
  if ((origin.protocol !== 'http:' && origin.protocol !== 'https:') || origin.origin !== pass.origin.replace(/\/$/, '')) {
    throw new TypeError(`origin must be the world's origin (http(s)://host[:port]), got ${JSON.stringify(pass.origin)}`);
  }
  if (pass.scope !== 'read' && pass.scope !== 'write') throw new TypeError(`scope must be read or write, got ${JSON.stringify(pass.scope)}`);
  const text = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 256 && !/[\u0000-\u001f\u007f-\u009f]/.test(v);
  if (!text(pass.subject)) throw new TypeError('subject must be 1 to 256 printable characters');
  if (pass.name !== undefined && !text(pass.name)) throw new TypeError('name must be 1 to 256 printable characters');
  const ttl = pass.ttlSeconds ?? DEFAULT_PASS_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_PASS_LIFETIME_SECONDS) throw new TypeError(`ttlSeconds must be a whole number from 1 to ${MAX_PASS_LIFETIME_SECONDS}, got ${ttl}`);
  return ttl;
}

/** 16 CSPRNG bytes, base64url: the pass's `jti`. */
function passId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * A signer for `issuer` (an origin, as hosts trust it). `keys`, newest first, as `keys()`
 * gave them; none: one is generated.
 */
export async function createPassSigner(options: { issuer: string; keys?: readonly PassKey[] }): Promise<PassSigner> {
  const [issuer] = trustedIssuers([options.issuer], undefined);
  if (issuer === undefined) throw new TypeError('a signer needs its issuer');
  let keys = (options.keys ?? []).map(checkPassKey);
  if (keys.length === 0) keys = [await generatePassKey()];
  let signing = { kid: keys[0]!.kid, key: await importJWK(keys[0]!, 'ES256') };
  return {
    issuer,
    get kid() {
      return signing.kid;
    },
    async sign(pass) {
      const ttl = checkPass(pass);
      const iat = Math.floor((pass.now ?? Date.now()) / 1000);
      return new SignJWT({ kit_world: pass.world, scope: pass.scope, ...(pass.name !== undefined ? { name: pass.name } : {}) })
        .setProtectedHeader({ alg: 'ES256', typ: PASS_TYPE, kid: signing.kid })
        .setIssuer(issuer)
        .setSubject(pass.subject)
        .setAudience(pass.origin.replace(/\/$/, ''))
        .setJti(passId())
        .setIssuedAt(iat)
        .setExpirationTime(iat + ttl)
        .sign(signing.key);
    },
    jwks() {
      return { keys: keys.map(publicJwk) };
    },
    async rotate() {
      const next = await generatePassKey();
      const key = await importJWK(next, 'ES256');
      keys = [next, ...keys].slice(0, PUBLISHED_KEYS);
      signing = { kid: next.kid, key };
      return next.kid;
    },
    keys() {
      return keys.map((k) => ({ ...k }));
    },
  };
}
