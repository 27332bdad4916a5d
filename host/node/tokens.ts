/**
 * A world's two tokens: minted from the CSPRNG on first start, kept in `<dir>/.kit/token`
 * (mode 0600) and reused on every restart, so an app's configuration outlives the server.
 */
import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, open, readFile, readlink, realpath, rename, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { HostError } from '../errors.js';
import { mintTokens, type WorldTokens } from '../core/credentials.js';

export { mintTokens, type WorldTokens };

export interface TokenFile extends WorldTokens {
  url: string;
}

const TOKEN = /^tok_[A-Za-z0-9_-]{43}$/;
const READ_TOKEN = /^tok_r_[A-Za-z0-9_-]{43}$/;

/** Where a world served from `dir` keeps its tokens. */
export function tokenFilePath(dir: string): string {
  return join(dir, '.kit', 'token');
}

function corrupt(path: string, why: string): HostError {
  return new HostError(
    'token_file_corrupt',
    `${path} is not a token file this server wrote (${why}); fix it or remove it to mint new tokens`,
    { path },
  );
}

/** Parses a token file's text; a file that is not exactly what we write is an error, never replaced. */
export function parseTokenFile(text: string, path: string): TokenFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw corrupt(path, 'not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt(path, 'not a JSON object');
  const record = value as Record<string, unknown>;
  const { url, token, readToken } = record;
  if (typeof token !== 'string' || !TOKEN.test(token)) throw corrupt(path, '"token" is missing or malformed');
  if (typeof readToken !== 'string' || !READ_TOKEN.test(readToken)) throw corrupt(path, '"readToken" is missing or malformed');
  if (typeof url !== 'string') throw corrupt(path, '"url" is missing');
  return { url, token, readToken };
}

/**
 * Writes beside the target then renames, so a crash never leaves half a token file. A token
 * file that is a symlink (to a secrets folder, say) is written through: the rename lands on
 * the file it names, and the link stays.
 */
export async function writeAtomically(link: string, content: string): Promise<void> {
  let path = link;
  try {
    path = await realpath(link);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    // A link to a file not made yet: make it where the link points.
    const isLink = await lstat(link).then((s) => s.isSymbolicLink(), () => false);
    if (isLink) path = resolve(dirname(link), await readlink(link));
  }
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, path);
}

/** The token file of the world served from `dir`, or null when there is none yet. Throws `token_file_corrupt`. */
export async function readTokenFile(dir: string): Promise<TokenFile | null> {
  const path = tokenFilePath(dir);
  let text: string;
  try {
    // A FIFO or a device in its place would block the read for ever: only a file is read.
    if (!(await stat(path)).isFile()) throw new HostError('token_file_corrupt', `${path} is not a regular file; move it away to mint new tokens`);
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const file = parseTokenFile(text, path);
  // Someone may have loosened the mode; the tokens open the world, so tighten it back.
  if (((await stat(path)).mode & 0o777) !== 0o600) await chmod(path, 0o600);
  return file;
}

/** Writes `<dir>/.kit/token` (mode 0600, atomically), creating `.kit/` when needed. */
export async function writeTokenFile(dir: string, file: TokenFile): Promise<void> {
  await mkdir(join(dir, '.kit'), { recursive: true, mode: 0o700 });
  await writeAtomically(tokenFilePath(dir), `${JSON.stringify({ url: file.url, token: file.token, readToken: file.readToken }, null, 2)}\n`);
}

/**
 * Reads the tokens of the world served from `dir`, minting and writing them on first
 * start. `url` is recorded so tools can find the server; a changed URL (another port) is
 * written back while the tokens stay. Throws `token_file_corrupt` for an unreadable file.
 */
export async function loadOrCreateTokens(dir: string, url: string): Promise<TokenFile & { created: boolean }> {
  const existing = await readTokenFile(dir);
  if (existing !== null) {
    if (existing.url !== url) await writeTokenFile(dir, { ...existing, url });
    return { url, token: existing.token, readToken: existing.readToken, created: false };
  }
  const tokens = mintTokens();
  await writeTokenFile(dir, { url, ...tokens });
  return { url, ...tokens, created: true };
}

/** The multi-world host's folder in `dir`: its worlds' storage, its admin token, its URL. */
export function hostDir(dir: string): string {
  return join(dir, '.kit-host');
}

const ADMIN_TOKEN = /^tok_a_[A-Za-z0-9_-]{43}$/;

/**
 * The host's admin token, kept at `<dir>/.kit-host/admin` (mode 0600): minted from the CSPRNG
 * on first start and reused after. A file that holds anything else is `admin_file_corrupt`,
 * never replaced (the operator's scripts hold the token it had).
 */
export async function loadOrCreateAdminToken(dir: string): Promise<{ token: string; created: boolean }> {
  const path = join(hostDir(dir), 'admin');
  await mkdir(hostDir(dir), { recursive: true, mode: 0o700 });
  let text: string | null = null;
  try {
    if (!(await stat(path)).isFile()) throw new HostError('admin_file_corrupt', `${path} is not a regular file; move it away to mint a new admin token`);
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (text !== null) {
    const token = text.trim();
    if (!ADMIN_TOKEN.test(token)) throw new HostError('admin_file_corrupt', `${path} does not hold an admin token this host wrote; fix it or move it away to mint a new one`);
    if (((await stat(path)).mode & 0o777) !== 0o600) await chmod(path, 0o600);
    return { token, created: false };
  }
  const token = `tok_a_${randomBytes(32).toString('base64url')}`;
  await writeAtomically(path, `${token}\n`);
  return { token, created: true };
}

/** Writes `<dir>/.kit-host/url`, where the CLI finds the host. */
export async function writeHostUrl(dir: string, url: string): Promise<void> {
  await writeAtomically(join(hostDir(dir), 'url'), `${url}\n`);
}
