/**
 * Git object ids, `X-Hub-Signature-256` and ETag fingerprints. SHA-1, SHA-256 and HMAC are the
 * twin SDK's (`sdk/twin/codec.ts`): the host's node:crypto where it offers it, else
 * @noble/hashes. Tested against Node's crypto and `git hash-object`.
 */
import { hmacSha256, sha1 } from '../../../../sdk/twin/codec.js';
import { hex, utf8Encode } from './bytes.js';

/** The git object id of `<type> <size>\0<content>`. */
export function gitObjectId(type: string, content: Uint8Array): string {
  return hex(sha1(utf8Encode(`${type} ${content.length}\0`), content));
}

/** `X-Hub-Signature-256` for a payload, as GitHub signs it: `sha256=<hex HMAC of the body>`. */
export function hubSignature256(secret: string, body: string): string {
  return 'sha256=' + hex(hmacSha256(utf8Encode(secret), utf8Encode(body)));
}

/**
 * A cheap fingerprint for ETags (no security rests on it): FNV-1a over the text plus its
 * length. One multiply per character keeps it affordable in the interpreter on large lists.
 */
export function fingerprint(text: string): string {
  let a = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) a = Math.imul(a ^ text.charCodeAt(i), 0x01000193);
  return (a >>> 0).toString(16).padStart(8, '0') + text.length.toString(16).padStart(8, '0');
}
