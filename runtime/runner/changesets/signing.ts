/**
 * The world's signing key for approvals: Ed25519 through WebCrypto (Node and workerd alike).
 * The private half is sealed with the host's sealing key, as credentials are; the public half
 * is answered with the changesets so that anyone can check an approval's signature.
 */
import { createHash } from 'node:crypto';
import { KitError } from '../../errors.js';
import type { SealedBox, Sealer } from '../../roots/sealing.js';
import type { Key, Storage } from '../../store/index.js';
import { canonicalJson } from '../../world/canonical.js';

interface StoredKey {
  publicJwk: JsonWebKey;
  keyId: string;
  sealed: SealedBox;
}

export interface SigningKey {
  publicJwk: JsonWebKey;
  keyId: string;
  sign(payload: unknown): Promise<string>;
}

/** What an approval signs: the payload's canonical JSON. */
export function approvalPayload(p: { world: string; changeset: string; hash: string; as: string; note: string | null; at: string }): unknown {
  return { world: p.world, changeset: p.changeset, hash: p.hash, as: p.as, note: p.note, at: p.at };
}

function toBase64Url(bytes: ArrayBuffer): string {
  return Buffer.from(bytes).toString('base64url');
}

export function keyIdOf(publicJwk: JsonWebKey): string {
  return createHash('sha256').update(String(publicJwk.x)).digest('base64url').slice(0, 16);
}

/** Whether `signature` is the key's over `payload` (for tests and for anyone holding the public key). */
export async function verifyApproval(publicJwk: JsonWebKey, payload: unknown, signature: string): Promise<boolean> {
  const key = await crypto.subtle.importKey('jwk', publicJwk, { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, Buffer.from(signature, 'base64url'), new TextEncoder().encode(canonicalJson(payload)));
}

export class SigningKeys {
  private loaded: SigningKey | null = null;

  constructor(
    private readonly storage: Storage,
    private readonly key: Key,
    private readonly sealer: Sealer | undefined,
    private readonly context: string,
  ) {}

  /** The public key, when one has been made (the first approval makes it). */
  publicKey(): { jwk: JsonWebKey; keyId: string } | null {
    const stored = this.storage.get<StoredKey>(this.key);
    return stored === undefined ? null : { jwk: stored.publicJwk, keyId: stored.keyId };
  }

  async get(): Promise<SigningKey> {
    if (this.loaded !== null) return this.loaded;
    if (this.sealer === undefined) throw new KitError('sealing_unavailable', 'This host has no sealing key, so the world keeps no signing key and cannot sign an approval.');
    const sealer = this.sealer;
    let stored = this.storage.get<StoredKey>(this.key);
    if (stored === undefined) {
      const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
      const publicJwk = await crypto.subtle.exportKey('jwk', pair.publicKey);
      const privateJwk = await crypto.subtle.exportKey('jwk', pair.privateKey);
      stored = { publicJwk, keyId: keyIdOf(publicJwk), sealed: await sealer.seal(JSON.stringify(privateJwk), this.context) };
      const made = stored;
      // Another approval may have made one meanwhile: the first stored stays.
      stored = this.storage.transact((w) => {
        const there = w.get<StoredKey>(this.key);
        if (there !== undefined) return there;
        w.put(this.key, made);
        return made;
      });
    }
    const privateJwk = JSON.parse(await sealer.open(stored.sealed, this.context)) as JsonWebKey;
    const privateKey = await crypto.subtle.importKey('jwk', privateJwk, { name: 'Ed25519' }, false, ['sign']);
    const { publicJwk, keyId } = stored;
    this.loaded = {
      publicJwk,
      keyId,
      sign: async (payload) => toBase64Url(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, new TextEncoder().encode(canonicalJson(payload)))),
    };
    return this.loaded;
  }
}
