/**
 * A signer's folder on disk (Node): `keys.json`, its private keys as a JWK set, newest (the
 * signing one) first, mode 0600, written atomically; and `issuer`, the URL the passes name as
 * their `iss` (written by `startPassIssuer` once it listens, read by `kit pass sign`).
 * A file that is there but unreadable is an error, never replaced: replacing keys would
 * quietly invalidate every pass in flight.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeAtomically } from '../../host/node/tokens.js';
import { checkPassKey } from './signer.js';
import type { PassKey } from './signer.js';

export type PassFileErrorCode = 'pass_keys_corrupt' | 'pass_issuer_corrupt';

export class PassFileError extends Error {
  override readonly name = 'PassFileError';
  constructor(readonly code: PassFileErrorCode, message: string) {
    super(message);
  }
}

export const passKeysPath = (dir: string): string => join(dir, 'keys.json');
export const passIssuerPath = (dir: string): string => join(dir, 'issuer');

async function readIfThere(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** The keys kept in `dir`, newest first; null when there are none yet. Throws `pass_keys_corrupt`. */
export async function readPassKeys(dir: string): Promise<PassKey[] | null> {
  const path = passKeysPath(dir);
  const text = await readIfThere(path);
  if (text === null) return null;
  try {
    const parsed = JSON.parse(text) as { keys?: unknown };
    if (!Array.isArray(parsed.keys) || parsed.keys.length === 0) throw new TypeError('it lists no keys');
    return parsed.keys.map(checkPassKey);
  } catch (e) {
    throw new PassFileError('pass_keys_corrupt', `${path} does not hold pass keys (${(e as Error).message}); move it away to make new ones (passes signed with the old ones will fail)`);
  }
}

/** Keeps `keys` in `dir` (made 0700 if missing), readable by its owner only. */
export async function writePassKeys(dir: string, keys: readonly PassKey[]): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeAtomically(passKeysPath(dir), `${JSON.stringify({ keys }, null, 2)}\n`);
}

/** The issuer URL kept in `dir`, or null. Throws `pass_issuer_corrupt`. */
export async function readPassIssuer(dir: string): Promise<string | null> {
  const text = await readIfThere(passIssuerPath(dir));
  if (text === null) return null;
  const issuer = text.trim();
  if (!/^https?:\/\/[^\s/]+$/.test(issuer)) throw new PassFileError('pass_issuer_corrupt', `${passIssuerPath(dir)} does not hold an issuer URL; remove it and start the issuer again`);
  return issuer;
}

export async function writePassIssuer(dir: string, issuer: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeAtomically(passIssuerPath(dir), `${issuer}\n`);
}
