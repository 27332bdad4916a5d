/**
 * Passes (spec Authentication 10, docs/passes.md): a JWT a trusted platform signs for a
 * person, bound to one world and that world's origin, that opens a session of its scope.
 * This file tells whether a pass is good; spending it once and opening the session are the
 * core's.
 *
 * Web Crypto only, through jose's one build (`jose` resolves to `dist/webapi/` under Node and
 * under the edge bundle's conditions alike): workerd runs this file as it is.
 *
 * The order of the checks is the point. Nothing is fetched for a pass that is too long, not
 * a compact JWS, not typed `kit-pass+jwt`, signed with an algorithm outside ES256/EdDSA (so
 * `none` and HS256-with-the-public-key die here), or names an issuer nobody trusts: the
 * unverified `iss` is read only to pick a trusted issuer's key set. Then the signature, then
 * time, then what the claims say; a claim is believed only once the signature is.
 */
import { createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import type { FetchImplementation, JWTPayload, JWTVerifyGetKey } from 'jose';
import { NAME_PATTERN } from '../paths.js';

/** The pass's `typ` header. */
export const PASS_TYPE = 'kit-pass+jwt';
/** Asymmetric only: no `none`, no HS* (whose "secret" an attacker could take from a JWKS). */
export const PASS_ALGORITHMS = ['ES256', 'EdDSA'] as const;
/** Longer than any pass a platform signs by far; a longer one is refused unparsed. */
export const MAX_PASS_LENGTH = 8 * 1024;
/** A pass lives this long at most (`exp - iat`); the session it opens lasts 12 hours. */
export const MAX_PASS_LIFETIME_SECONDS = 600;
/** Clocks of the platform and the host may disagree by this much. */
export const CLOCK_TOLERANCE_SECONDS = 60;
/** Where an issuer publishes its public keys, on its own origin. */
export const JWKS_PATH = '/.well-known/jwks.json';
/**
 * The issuer's keys are fetched again after this long, or sooner for an unknown `kid`, but
 * not twice within `KEYS_COOLDOWN_MS` (jose's own defaults, said here so docs/passes.md can
 * say them): a stream of passes with made-up key ids costs an issuer one fetch per 30 s.
 */
export const KEYS_MAX_AGE_MS = 10 * 60_000;
export const KEYS_COOLDOWN_MS = 30_000;
/** A fetch of the keys that fails is not tried again for this long. */
export const KEYS_RETRY_AFTER_FAILURE_MS = 5_000;
const KEYS_TIMEOUT_MS = 5_000;
/** Claims a person's name or id may fill; past these they are refused, not cut. */
const MAX_TEXT_CLAIM = 256;

export type PassRefusal = 'malformed' | 'untrusted_issuer' | 'unknown_key' | 'bad_signature' | 'expired' | 'wrong_world' | 'wrong_origin';

/** What a good pass says, in the core's words. */
export interface PassClaims {
  /** The trusted issuer that signed it, as an origin: `https://platform.example`. */
  issuer: string;
  /** The person (`sub`). */
  subject: string;
  /** Their display name, when the platform gave one. */
  name?: string;
  scope: 'read' | 'write';
  /** `<org>/<world>` (`kit_world`). */
  world: string;
  /** The world's origin the pass is for (`aud`). */
  origin: string;
  /** `jti`: unique per issuer; the core keeps it until `expiresAt` so the pass is spent once. */
  id: string;
  /** `exp`, epoch ms. */
  expiresAt: number;
}

export type PassCheck = { ok: true; claims: PassClaims } | { ok: false; reason: PassRefusal; message: string };

export interface PassExpectation {
  /** `<org>/<world>` of the world asked for. */
  world: string;
  /** The world's own origin, where the page that sent the pass lives. */
  origin: string;
  /** Epoch ms. */
  now: number;
}

export interface PassVerifier {
  /** Never throws for anything a pass or its issuer does: every refusal is a `PassCheck`. */
  verify(pass: string, expected: PassExpectation): Promise<PassCheck>;
  /** The issuers it trusts, as origins. */
  readonly trusted: readonly string[];
}

export interface PassVerifierOptions {
  /** Issuers as `trustedIssuers()` gives them. */
  trusted: readonly string[];
  /** Fetches the issuers' key sets (default: the global `fetch`). Tests count what it is asked. */
  fetch?: FetchImplementation;
}

/** Thrown by the key lookup so a failure there is told from one of the signature. */
class KeyLookupFailed extends Error {
  constructor(readonly failure: unknown) {
    super('key lookup failed');
  }
}

const refuse = (reason: PassRefusal, message: string): PassCheck => ({ ok: false, reason, message });

/** A value from a pass, fit for a message: short, printable. */
function quoted(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  const printable = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return JSON.stringify(printable.length > 80 ? `${printable.slice(0, 80)}…` : printable);
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) || hostname === '[::1]';
}

/** `scheme://host[:port]` when `value` is an origin and nothing more (a trailing `/` allowed), else null. */
function originOf(value: string): URL | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') return null;
  // `new URL` forgives what an origin may not hold (`https://x/?` parses with an empty search).
  if (!/^https?:\/\/[^/?#]+\/?$/i.test(value)) return null;
  return url;
}

/**
 * The issuers to trust: each `--trust` flag, then `TRUSTED_ISSUERS` (comma or space
 * separated), as origins (`https://platform.example`), once each. https, or http on a
 * loopback host (`localhost`, `*.localhost`, 127.x, [::1]) for a platform on this machine.
 * An entry that is not one is a `TypeError` naming it: a typo must not trust nothing quietly.
 */
export function trustedIssuers(flags: readonly string[], env: string | undefined): string[] {
  const entries = [...flags, ...(env ?? '').split(/[\s,]+/)].map((s) => s.trim()).filter((s) => s !== '');
  const found = new Set<string>();
  for (const entry of entries) {
    const url = originOf(entry);
    if (url === null) throw new TypeError(`${quoted(entry)} is not an issuer: name its origin, https://host[:port], with no path`);
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      throw new TypeError(`${quoted(entry)} is not an issuer: http is for a platform on this machine (localhost, 127.0.0.1); use https`);
    }
    found.add(url.origin);
  }
  return [...found];
}

/** The JWKS of each trusted issuer, made on first use and kept: jose caches and refreshes it. */
function keySets(fetchImpl: FetchImplementation | undefined) {
  const sets = new Map<string, JWTVerifyGetKey>();
  const failedAt = new Map<string, number>();
  return (issuer: string): JWTVerifyGetKey => {
    let set = sets.get(issuer);
    if (set === undefined) {
      const remote = createRemoteJWKSet(new URL(JWKS_PATH, issuer), {
        cacheMaxAge: KEYS_MAX_AGE_MS,
        cooldownDuration: KEYS_COOLDOWN_MS,
        timeoutDuration: KEYS_TIMEOUT_MS,
        ...(fetchImpl !== undefined ? { [customFetch]: fetchImpl } : {}),
      });
      set = async (header, token) => {
        const failed = failedAt.get(issuer);
        if (failed !== undefined && Date.now() - failed < KEYS_RETRY_AFTER_FAILURE_MS) {
          throw new KeyLookupFailed(new Error('its last fetch failed moments ago'));
        }
        try {
          return await remote(header, token);
        } catch (e) {
          // A key missing from a set that was fetched is the pass's fault, not the issuer's.
          const fetchFailed = !(e instanceof errors.JWKSNoMatchingKey || e instanceof errors.JWKSMultipleMatchingKeys);
          if (fetchFailed) failedAt.set(issuer, Date.now());
          else failedAt.delete(issuer);
          throw new KeyLookupFailed(e);
        }
      };
      sets.set(issuer, set);
    }
    return set;
  };
}

/** A refusal for what `jwtVerify` threw. */
function refusalOf(e: unknown, issuer: string, kid: string): PassCheck {
  if (e instanceof KeyLookupFailed) {
    const cause = e.failure;
    if (cause instanceof errors.JWKSNoMatchingKey) return refuse('unknown_key', `${issuer} publishes no key ${quoted(kid)} for this pass's algorithm`);
    if (cause instanceof errors.JWKSMultipleMatchingKeys) return refuse('unknown_key', `${issuer} publishes more than one key ${quoted(kid)}`);
    const why = cause instanceof Error ? cause.message : String(cause);
    return refuse('unknown_key', `the keys of ${issuer} could not be fetched from ${new URL(JWKS_PATH, issuer).href}: ${why}`);
  }
  if (e instanceof errors.JWSSignatureVerificationFailed) return refuse('bad_signature', `the signature does not match ${issuer}'s key ${quoted(kid)}`);
  if (e instanceof errors.JOSEAlgNotAllowed) return refuse('bad_signature', 'the pass is signed with an algorithm passes do not use');
  if (e instanceof errors.JWTExpired) return refuse('expired', 'the pass has expired');
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'nbf') return refuse('expired', 'the pass is not valid yet (check the clocks of the platform and this host)');
    return refuse('malformed', `the pass's ${quoted(e.claim)} claim is missing or wrong (${e.reason})`);
  }
  if (e instanceof errors.JOSEError) return refuse('malformed', `not a pass: ${e.message}`);
  // Web Crypto refusing the key itself (a JWK of the wrong curve in the issuer's set).
  return refuse('bad_signature', `the pass could not be checked with ${issuer}'s key ${quoted(kid)}`);
}

function textClaim(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max && !/[\u0000-\u001f\u007f-\u009f]/.test(value);
}

/** The claims of a pass whose signature and times are good, against what the world expects. */
function claimsOf(payload: JWTPayload, issuer: string, expected: PassExpectation): PassCheck {
  const { sub, aud, jti, iat, exp } = payload;
  const { name, scope, kit_world: world } = payload as Record<string, unknown>;
  if (!textClaim(sub, MAX_TEXT_CLAIM)) return refuse('malformed', 'the pass names no person (sub)');
  if (name !== undefined && !textClaim(name, MAX_TEXT_CLAIM)) return refuse('malformed', 'the pass\'s name is not a line of text');
  if (scope !== 'read' && scope !== 'write') return refuse('malformed', `the pass's scope is ${quoted(scope)}, not read or write`);
  if (!textClaim(jti, MAX_TEXT_CLAIM)) return refuse('malformed', 'the pass has no id (jti)');
  if (typeof iat !== 'number' || typeof exp !== 'number') return refuse('malformed', 'the pass has no iat or exp');
  if (exp - iat > MAX_PASS_LIFETIME_SECONDS || exp <= iat) {
    return refuse('malformed', `the pass lives ${exp - iat} s; a pass lives at most ${MAX_PASS_LIFETIME_SECONDS} s after it is issued`);
  }
  if (iat > expected.now / 1000 + CLOCK_TOLERANCE_SECONDS) return refuse('expired', 'the pass is issued in the future (check the clocks of the platform and this host)');
  const parts = typeof world === 'string' ? world.split('/') : [];
  if (typeof world !== 'string' || parts.length !== 2 || !parts.every((part) => NAME_PATTERN.test(part))) {
    return refuse('malformed', 'the pass names no world (kit_world: <org>/<world>)');
  }
  if (world !== expected.world) return refuse('wrong_world', `the pass is for the world ${world}, not ${expected.world}`);
  // One audience: a pass good at two origins would be bound to neither.
  const audience = typeof aud === 'string' ? aud : Array.isArray(aud) && aud.length === 1 && typeof aud[0] === 'string' ? aud[0] : null;
  if (audience === null) return refuse('malformed', 'the pass names no origin (aud: the world\'s origin)');
  const origin = originOf(audience)?.origin ?? audience;
  const expectedOrigin = originOf(expected.origin)?.origin ?? expected.origin;
  if (origin !== expectedOrigin) return refuse('wrong_origin', `the pass is for the origin ${quoted(audience)}, not ${expectedOrigin}`);
  return {
    ok: true,
    claims: { issuer, subject: sub, ...(name !== undefined ? { name: name as string } : {}), scope, world, origin, id: jti, expiresAt: exp * 1000 },
  };
}

/**
 * A verifier for the passes of `trusted` issuers. Keep one per host (or per edge object):
 * each issuer's keys are fetched on the first pass that names it and cached.
 */
export function createPassVerifier(options: PassVerifierOptions): PassVerifier {
  const trusted = [...new Set(options.trusted)];
  for (const issuer of trusted) {
    if (trustedIssuers([issuer], undefined)[0] !== issuer) throw new TypeError(`${quoted(issuer)} is not an issuer as trustedIssuers() gives one`);
  }
  const keysOf = keySets(options.fetch);
  return {
    trusted,
    async verify(pass, expected) {
      if (typeof pass !== 'string' || pass === '') return refuse('malformed', 'no pass');
      if (pass.length > MAX_PASS_LENGTH) return refuse('malformed', `the pass is ${pass.length} characters; a pass is at most ${MAX_PASS_LENGTH}`);
      if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(pass)) return refuse('malformed', 'not a pass: a pass is a signed JWT (three base64url parts)');
      let header: ReturnType<typeof decodeProtectedHeader>;
      let unverified: JWTPayload;
      try {
        header = decodeProtectedHeader(pass);
        unverified = decodeJwt(pass);
      } catch {
        return refuse('malformed', 'not a pass: its header or claims are not JSON');
      }
      if (typeof header.typ !== 'string' || header.typ.toLowerCase().replace(/^application\//, '') !== PASS_TYPE) {
        return refuse('malformed', `not a pass: its typ is ${quoted(header.typ)}, not ${PASS_TYPE}`);
      }
      if (!(PASS_ALGORITHMS as readonly unknown[]).includes(header.alg)) {
        return refuse('bad_signature', `the pass is signed with ${quoted(header.alg)}; passes are signed with ${PASS_ALGORITHMS.join(' or ')}`);
      }
      const kid = header.kid;
      if (!textClaim(kid, MAX_TEXT_CLAIM)) return refuse('malformed', 'the pass names no key (kid)');
      const claimed = typeof unverified.iss === 'string' ? originOf(unverified.iss)?.origin : undefined;
      if (claimed === undefined || !trusted.includes(claimed)) {
        return refuse('untrusted_issuer', `the pass is signed by ${quoted(unverified.iss)}, an issuer this host does not trust`);
      }
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(pass, keysOf(claimed), {
          algorithms: [...PASS_ALGORITHMS],
          typ: PASS_TYPE,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          currentDate: new Date(expected.now),
          requiredClaims: ['iss', 'sub', 'aud', 'iat', 'exp', 'jti'],
        }));
      } catch (e) {
        return refusalOf(e, claimed, kid);
      }
      return claimsOf(payload, claimed, expected);
    },
  };
}
