/**
 * The key that seals a host's credentials (runtime/roots/sealing.ts), kept apart from the
 * worlds' state: the `SEALING_KEY` environment variable when set (a secret manager's, as on the
 * edge variant), else a key file made on first start (mode 0600) — `<dir>/.kit/sealing-key` for
 * a world served from `dir`, `<dir>/.kit-host/sealing-key` for a multi-world host. A file that
 * holds anything but a key is `sealing_key_corrupt`, never replaced: the credentials sealed
 * under it would be lost.
 */
import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HostError } from '../errors.js';
import { isKitError } from '../../runtime/errors.js';
import { newSealingKey, sealingKeyBytes } from '../../runtime/roots/sealing.js';
import { writeAtomically } from './tokens.js';

/** Where the key came from, for the serve commands to print. */
export interface SealingKey {
  /** base64 of the 32 key bytes. */
  key: string;
  from: 'SEALING_KEY' | string;
}

export async function loadOrCreateSealingKey(path: string, env: Record<string, string | undefined> = process.env): Promise<SealingKey> {
  const given = env['SEALING_KEY'];
  if (given !== undefined && given !== '') {
    try {
      sealingKeyBytes(given);
    } catch (e) {
      if (isKitError(e)) throw new HostError('sealing_key_corrupt', `SEALING_KEY is not 32 bytes written as base64 or hex (make one with \`openssl rand -base64 32\`)`);
      throw e;
    }
    return { key: given.trim(), from: 'SEALING_KEY' };
  }
  let text: string | null = null;
  try {
    if (!(await stat(path)).isFile()) throw new HostError('sealing_key_corrupt', `${path} is not a regular file; the credentials sealed under it need it back`);
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (text !== null) {
    try {
      sealingKeyBytes(text);
    } catch (e) {
      if (isKitError(e)) throw new HostError('sealing_key_corrupt', `${path} does not hold a sealing key this host wrote; restore it (credentials sealed under it open with it only) or move it away to make a new one`);
      throw e;
    }
    return { key: text.trim(), from: path };
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const key = newSealingKey();
  await writeAtomically(path, `${key}\n`);
  return { key, from: path };
}
