/**
 * One call to a real vendor on a world's behalf: the caller's headers with the sealed
 * credential's laid over them (same-named ones replaced), sent through the host's
 * `OutboundFetch`. Whatever fails, the error that comes back names no secret: the credential's
 * values and the signing secret are scrubbed from its message.
 */
import { KitError, isKitError } from '../errors.js';
import type { CredentialSecret } from './config.js';
import type { OutboundAnswer, OutboundFetch, OutboundLimits } from './outbound.js';

export interface VendorCall {
  method: string;
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: Uint8Array;
}

/** Replaces every secret of the credential in `text` (an error message, a vendor's echo). */
export function scrubSecrets(text: string, credential: CredentialSecret | null): string {
  if (credential === null) return text;
  let out = text;
  const secrets = Object.values(credential.headers).flatMap((v) => [v, ...v.split(/\s+/).filter((part) => part.length >= 8)]);
  if (credential.signingSecret !== undefined) secrets.push(credential.signingSecret);
  for (const secret of secrets.sort((a, b) => b.length - a.length)) if (secret.length >= 4) out = out.split(secret).join('[sealed]');
  return out;
}

export async function callVendor(fetch: OutboundFetch, call: VendorCall, credential: CredentialSecret | null, limits: OutboundLimits): Promise<OutboundAnswer> {
  const headers: Record<string, string> = { ...call.headers };
  if (credential !== null) for (const [name, value] of Object.entries(credential.headers)) headers[name] = value;
  try {
    return await fetch({ method: call.method, url: call.url, headers, ...(call.body !== undefined ? { body: call.body } : {}) }, limits);
  } catch (e) {
    if (isKitError(e)) throw new KitError(e.code, scrubSecrets(e.message, credential));
    throw new KitError('outbound_failed', scrubSecrets(`The call to the vendor failed: ${e instanceof Error ? e.message : String(e)}`, credential));
  }
}
