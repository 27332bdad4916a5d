/**
 * Sealing a twin's real credential: AES-256-GCM under a key the host keeps apart from the
 * world's state (a key file beside a local world's `.kit/`, the `SEALING_KEY` secret on the
 * edge). The world stores only the sealed box; the world's name and the credential's name are
 * its additional data, so a box copied to another world or another twin does not open.
 * WebCrypto, so the same code runs on Node and workerd.
 */
import { KitError } from '../errors.js';

/** A sealed credential as stored: version, nonce and ciphertext (with its tag), base64. */
export interface SealedBox {
  v: 1;
  iv: string;
  data: string;
}

export interface Sealer {
  seal(plain: string, context: string): Promise<SealedBox>;
  /** The plain text, or KitError `sealing_unavailable` when the box does not open under this key. */
  open(box: SealedBox, context: string): Promise<string>;
}

const KEY_BYTES = 32;

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function unbase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * The 32 key bytes of a sealing key as written in a key file or a secret: base64 (standard or
 * URL-safe) or hex. Anything else throws KitError `sealing_unavailable`, naming no part of it.
 */
export function sealingKeyBytes(text: string): Uint8Array<ArrayBuffer> {
  const t = text.trim();
  let bytes: Uint8Array<ArrayBuffer> | null = null;
  if (/^[0-9a-fA-F]{64}$/.test(t)) bytes = Uint8Array.from(t.match(/../g)!.map((h) => parseInt(h, 16)));
  else if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    try {
      bytes = unbase64(t.replace(/-/g, '+').replace(/_/g, '/').replace(/=?$/, '='));
    } catch {
      bytes = null;
    }
  }
  if (bytes === null || bytes.length !== KEY_BYTES) {
    throw new KitError('sealing_unavailable', 'The sealing key is not 32 bytes written as base64 or hex (make one with `openssl rand -base64 32`).');
  }
  return bytes;
}

/** A fresh sealing key as base64, for a host that makes its key file. */
export function newSealingKey(): string {
  return base64(crypto.getRandomValues(new Uint8Array(KEY_BYTES)));
}

/** A sealer over 32 key bytes. */
export function createSealer(keyBytes: Uint8Array<ArrayBuffer>): Sealer {
  if (keyBytes.length !== KEY_BYTES) throw new TypeError('a sealing key is 32 bytes');
  const key = crypto.subtle.importKey('raw', keyBytes, { name: 'AES-GCM' }, false, ['encrypt', 'decrypt']);
  const encoder = new TextEncoder();
  return {
    async seal(plain, context) {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const data = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: encoder.encode(context) }, await key, encoder.encode(plain));
      return { v: 1, iv: base64(iv), data: base64(new Uint8Array(data)) };
    },
    async open(box, context) {
      try {
        const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: unbase64(box.iv), additionalData: encoder.encode(context) }, await key, unbase64(box.data));
        return new TextDecoder().decode(plain);
      } catch {
        throw new KitError('sealing_unavailable', 'The sealed credential does not open under this host\'s sealing key (the key changed since it was sealed): seal it again.');
      }
    },
  };
}
