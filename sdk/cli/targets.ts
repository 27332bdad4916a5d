/**
 * Which world a `kit world …` command talks to, and which host a `kit host …` command does:
 * from flags, else the environment, else the files the servers write in their directory.
 *
 *   world: --world/--token, else KIT_WORLD/KIT_WORLD_TOKEN, else <dir>/.kit/token
 *   host:  --url/--token,   else KIT_HOST/KIT_HOST_TOKEN,   else <dir>/.kit-host/url and admin
 *
 * An explicit `--dir` is a flag too: it wins over the environment.
 */
import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { NAME_PATTERN, parseTokenFile, tokenFilePath } from '../../host/index.js';
import { UsageError } from './args.js';
import { CliError } from './client.js';
import type { Endpoint } from './client.js';

export interface WorldUrls {
  /** `{world_url}`: `{base}/<org>/<world>`, where its twins answer. */
  worldUrl: string;
  /** `{world_api}`: `{base}/-/<org>/<world>`, the world's own endpoints. */
  worldApi: string;
  /** `{base_url}`. */
  base: string;
  /** `<org>/<world>`. */
  name: string;
}

/**
 * The world's URLs from its `{world_url}` (as `kit world serve` prints it and `.kit/token`
 * records it) or its `{world_api}` (`…/-/<org>/<world>`): either is accepted.
 */
export function worldUrls(text: string): WorldUrls {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError('no_world', `the world URL is not a URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError('no_world', `the world URL must be http or https, got ${text}`);
  const segments = url.pathname.split('/').filter((s) => s !== '');
  const api = segments.length >= 3 && segments[segments.length - 3] === '-';
  const [org, world] = segments.slice(-2);
  if (org === undefined || world === undefined || !NAME_PATTERN.test(org) || !NAME_PATTERN.test(world)) {
    throw new CliError('no_world', `the world URL must end in /<org>/<world> (as kit world serve prints it), got ${text}`);
  }
  const prefix = segments.slice(0, segments.length - (api ? 3 : 2));
  const base = `${url.origin}${prefix.map((s) => `/${s}`).join('')}`;
  return { worldUrl: `${base}/${org}/${world}`, worldApi: `${base}/-/${org}/${world}`, base, name: `${org}/${world}` };
}

/** `<org>/<world>` from the command line, checked so it cannot name another path. */
export function parseWorldName(text: string): { org: string; world: string } {
  const [org, world, ...rest] = text.split('/');
  if (org === undefined || world === undefined || rest.length > 0 || !NAME_PATTERN.test(org) || !NAME_PATTERN.test(world)) {
    throw new UsageError(`name the world as <org>/<world> (lower case, digits and dashes, 1 to 63 each), got "${text}"`);
  }
  return { org, world };
}

export interface WorldTarget extends WorldUrls {
  token: string;
  /** Where the world was found, for messages. */
  from: 'flags' | 'environment' | 'token file';
}

export interface Lookup {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** A token goes in a header: a copied line's newline or a space would fail as "cannot reach". */
function checkToken(token: string, what: string): string {
  if (!/^[\x21-\x7e]+$/.test(token)) throw new CliError('bad_token', `${what} holds spaces or control characters; give it as the server printed it`);
  return token;
}

/** A small file's text, or null when it does not exist. Only a regular file is read (a FIFO would block). */
async function readSmallFile(path: string): Promise<string | null> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new CliError('unreadable_file', `${path} is not a regular file`);
    if (info.size > 64 * 1024) throw new CliError('unreadable_file', `${path} is ${info.size} bytes, too large to be what kit writes there`);
    return await readFile(path, 'utf8');
  } catch (e) {
    if (e instanceof CliError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw new CliError('unreadable_file', `cannot read ${path}: ${code ?? (e as Error).message}`);
  }
}

const HOW_TO_NAME_A_WORLD = 'pass --world <world url> --token <token>, set KIT_WORLD and KIT_WORLD_TOKEN, or run it in the directory kit world serve serves (or name it with --dir <dir>)';

/** Finds the world and its token; throws `no_world` saying how to give them. */
export async function findWorld(flags: { world?: string; token?: string; dir?: string }, lookup: Lookup): Promise<WorldTarget> {
  const dirGiven = flags.dir !== undefined;
  let url = given(flags.world);
  let token = given(flags.token);
  let from: WorldTarget['from'] = 'flags';
  if (!dirGiven) {
    if (url === undefined && given(lookup.env['KIT_WORLD']) !== undefined) {
      url = given(lookup.env['KIT_WORLD']);
      from = 'environment';
    }
    token ??= given(lookup.env['KIT_WORLD_TOKEN']);
  }
  if (url !== undefined && token !== undefined) return { ...worldUrls(url), token: checkToken(token, 'the token'), from };

  const dir = resolve(lookup.cwd, flags.dir ?? '.');
  const path = tokenFilePath(dir);
  const text = await readSmallFile(path);
  let file: { url: string; token: string } | null = null;
  if (text !== null) {
    try {
      file = parseTokenFile(text, path);
    } catch (e) {
      throw new CliError('token_file_corrupt', (e as Error).message);
    }
  }
  if (url === undefined) {
    if (file === null) {
      throw new CliError('no_world', `no world named and no ${path}: ${HOW_TO_NAME_A_WORLD}`);
    }
    if (file.url === '') throw new CliError('no_world', `${path} names no URL yet; start the world with kit world serve ${dir}`);
    url = file.url;
    from = 'token file';
  }
  const urls = worldUrls(url);
  // The file's token opens the world the file names, and no other.
  if (token === undefined && file !== null && file.url !== '' && worldUrls(file.url).worldApi === urls.worldApi) token = file.token;
  if (token === undefined) {
    throw new CliError('no_world', `no token for ${urls.worldUrl}: pass --token <token> or set KIT_WORLD_TOKEN`);
  }
  return { ...urls, token: checkToken(token, 'the token'), from };
}

export interface HostTarget extends Endpoint {
  from: 'flags' | 'environment' | 'host directory';
}

/** The host's base URL: http or https, no trailing slash, no query. */
export function hostUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CliError('no_host', `the host URL is not a URL: ${text}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError('no_host', `the host URL must be http or https, got ${text}`);
  if (url.search !== '' || url.hash !== '') throw new CliError('no_host', `the host URL is its base address, without a query, got ${text}`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const HOW_TO_NAME_A_HOST = 'pass --url <host url> --token <admin token>, set KIT_HOST and KIT_HOST_TOKEN, or run it in the directory kit host serve serves (or name it with --dir <dir>)';

/** Finds the host and its admin token; throws `no_host` saying how to give them. */
export async function findHost(flags: { url?: string; token?: string; dir?: string }, lookup: Lookup): Promise<HostTarget> {
  const dirGiven = flags.dir !== undefined;
  let url = given(flags.url);
  let token = given(flags.token);
  let from: HostTarget['from'] = 'flags';
  if (!dirGiven) {
    if (url === undefined && given(lookup.env['KIT_HOST']) !== undefined) {
      url = given(lookup.env['KIT_HOST']);
      from = 'environment';
    }
    token ??= given(lookup.env['KIT_HOST_TOKEN']);
  }
  if (url === undefined || token === undefined) {
    const dir = join(resolve(lookup.cwd, flags.dir ?? '.'), '.kit-host');
    const dirUrl = given((await readSmallFile(join(dir, 'url'))) ?? undefined);
    if (url === undefined) {
      if (dirUrl === undefined) throw new CliError('no_host', `no host named and no ${join(dir, 'url')}: ${HOW_TO_NAME_A_HOST}`);
      url = dirUrl;
      from = 'host directory';
    }
    // The directory's admin token goes to the host that directory serves, and to no other.
    if (token === undefined && dirUrl !== undefined && hostUrl(dirUrl) === hostUrl(url)) {
      const text = await readSmallFile(join(dir, 'admin'));
      token = given(text ?? undefined);
    }
    if (token === undefined) throw new CliError('no_host', `no admin token for ${hostUrl(url)}: pass --token <admin token>, set KIT_HOST_TOKEN, or run it where kit host serve keeps .kit-host/admin`);
  }
  return { base: hostUrl(url), token: checkToken(token, 'the admin token'), from };
}
