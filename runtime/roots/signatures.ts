/**
 * Vendor webhook signatures, made and checked exactly as each vendor does: Stripe's
 * `Stripe-Signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, any of several
 * `v1`, the timestamp within a tolerance of now) and GitHub's `X-Hub-Signature-256`
 * (`sha256=<hex HMAC-SHA256 of the body>`). The secret is the whole signing secret as given
 * (`whsec_…` included), as the vendors' own libraries use it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureScheme = 'stripe' | 'github';

/** Stripe's default tolerance, as its libraries' `constructEvent` uses it. */
export const STRIPE_TOLERANCE_S = 300;

export type Verdict = { ok: true } | { ok: false; code: 'webhook_unverified' | 'webhook_stale'; reason: string };

function hmacHex(secret: string, text: string | Uint8Array): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

function sameHex(a: string, b: string): boolean {
  if (a.length !== b.length || !/^[0-9a-f]*$/.test(a)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

export function stripeSignature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, `${unixSeconds}.${body}`)}`;
}

export function githubSignature(secret: string, body: string | Uint8Array): string {
  return `sha256=${hmacHex(secret, body)}`;
}

/** Checks a Stripe-Signature header over the raw body, `nowS` being the receiver's wall clock. */
export function verifyStripe(header: string | undefined, body: string, secret: string, nowS: number, toleranceS = STRIPE_TOLERANCE_S): Verdict {
  if (header === undefined || header === '') return { ok: false, code: 'webhook_unverified', reason: 'no Stripe-Signature header' };
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (name === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (name === 'v1') v1.push(value.toLowerCase());
  }
  if (t === null || v1.length === 0) return { ok: false, code: 'webhook_unverified', reason: 'the Stripe-Signature header has no t= timestamp or no v1= signature' };
  const expected = hmacHex(secret, `${t}.${body}`);
  if (!v1.some((sig) => sameHex(sig, expected))) return { ok: false, code: 'webhook_unverified', reason: 'no v1 signature matches the body under the sealed signing secret' };
  if (Math.abs(nowS - t) > toleranceS) return { ok: false, code: 'webhook_stale', reason: `the signature's timestamp is ${Math.abs(nowS - t)} s from now, beyond the ${toleranceS} s tolerance` };
  return { ok: true };
}

/** Checks an X-Hub-Signature-256 header over the raw body. */
export function verifyGithub(header: string | undefined, body: Uint8Array | string, secret: string): Verdict {
  if (header === undefined || !header.startsWith('sha256=')) return { ok: false, code: 'webhook_unverified', reason: 'no X-Hub-Signature-256 header of the form sha256=<hex>' };
  if (!sameHex(header.slice('sha256='.length).toLowerCase(), hmacHex(secret, body))) return { ok: false, code: 'webhook_unverified', reason: 'the X-Hub-Signature-256 does not match the body under the sealed signing secret' };
  return { ok: true };
}
