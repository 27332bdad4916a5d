/**
 * `kit world export [dir] [--twin V] [--out FILE]`: the twins of a local world as the files of
 * an export (docs/export.md), ready for `PUT /-/worlds/<org>/<world>/import` on a host.
 *
 * Where it reads: a world nobody serves is read from its store (`<dir>/.kit/world/`) directly.
 * A world `kit world serve` serves is read through that server (`GET …/twins/<vendor>/export`
 * with the token of `<dir>/.kit/token`): the store takes one process at a time (the engine
 * keeps each twin's head in memory; runtime/store/guard.ts), and the server's answer includes
 * what it has not yet committed. `--world URL --token T` reads any world through its server.
 */
import { writeFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { readTokenFile } from '../../host/index.js';
import { parseArgs, UsageError } from './args.js';
import { CliError, requestJson, segment } from './client.js';
import { failureLine } from './commands.js';
import type { Endpoint } from './client.js';
import type { ClientDeps, CliIo } from './commands.js';
import { bytes } from './format.js';
import { worldUrls } from './targets.js';

/** What a host takes in one request by default (the spec's request body limit). */
const HOST_BODY_BYTES = 4 * 1024 * 1024;

export const EXPORT_USAGE = `Usage: kit world export [dir] [--twin V] [--out FILE] [--world URL --token T]

Writes the twins of the world kept in <dir> (default: the current directory) as the files of an
export: for each twin { "twin": "<vendor>", "files": { ".kit/world/<vendor>/…": "…" } }, the body
PUT /-/worlds/<org>/<world>/import takes on a host. With --twin, that one object; without, an
array of them, one per twin. See docs/export.md for the files.

A world nobody serves is read from <dir>/.kit/world/; one that kit world serve serves is read
through that server, with the token in <dir>/.kit/token.

Flags:
  --twin V      export the twin V only (one object instead of an array)
  --out FILE    write to FILE (default: standard output)
  --world URL   read the world served at URL instead (with --token)
  --token T     the world's token, for --world
  -h, --help    this help`;

const FLAGS = [
  { name: 'twin', kind: 'string' },
  { name: 'out', kind: 'string' },
  { name: 'world', kind: 'string' },
  { name: 'token', kind: 'string' },
  { name: 'help', kind: 'boolean', short: 'h' },
] as const;

interface TwinFiles {
  twin: string;
  files: Record<string, string>;
}

/** Where the export was read, for the summary line. */
type Source = { kind: 'store'; path: string } | { kind: 'server'; url: string };

/** Exit codes: 0 done, 1 failed (one line), 2 bad usage. */
export async function runExport(argv: readonly string[], io: CliIo, deps: ClientDeps): Promise<number> {
  const usage = (message: string): number => {
    io.err(`kit: ${message}`);
    io.err('');
    io.err(EXPORT_USAGE);
    return 2;
  };
  let positionals: string[];
  let flags: Record<string, string | true>;
  try {
    ({ positionals, flags } = parseArgs(argv, FLAGS));
  } catch (e) {
    if (e instanceof UsageError) return usage(e.message);
    throw e;
  }
  if (flags['help'] === true) {
    io.out(EXPORT_USAGE);
    return 0;
  }
  const text = (name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
  if (positionals.length > 1) return usage(`one directory at most, got ${positionals.join(' ')}`);
  const worldUrl = text('world');
  const token = text('token');
  if ((worldUrl === undefined) !== (token === undefined)) return usage('--world and --token go together');
  if (worldUrl !== undefined && positionals.length > 0) return usage('name a directory or --world, not both');
  const twin = text('twin');
  if (twin !== undefined && !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(twin)) return usage(`--twin names a twin (a vendor id such as stripe), got "${twin}"`);

  try {
    let exported: TwinFiles[];
    let source: Source;
    if (worldUrl !== undefined && token !== undefined) {
      const urls = worldUrls(worldUrl);
      exported = await throughServer({ base: urls.worldApi, token }, twin);
      source = { kind: 'server', url: urls.worldUrl };
    } else {
      ({ exported, source } = await fromDirectory(resolve(deps.cwd, positionals[0] ?? '.'), twin));
    }
    const body = twin === undefined ? exported : exported[0];
    const json = `${JSON.stringify(body)}\n`;
    const out = text('out');
    if (out === undefined) await deps.writeStdout(new TextEncoder().encode(json));
    else {
      const path = resolve(deps.cwd, out);
      try {
        await writeFile(path, json, { mode: 0o600 });
      } catch (e) {
        throw new CliError('unwritable_file', `cannot write ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    }
    const from = source.kind === 'store' ? `from ${source.path}` : `through ${source.url}`;
    for (const t of exported) {
      const size = Buffer.byteLength(JSON.stringify(t));
      const entries = (JSON.parse(t.files[`.kit/world/${t.twin}/twin.json`] ?? '{}') as { entries?: unknown }).entries;
      io.err(`kit: exported ${t.twin}: ${typeof entries === 'number' ? entries : '?'} entries, ${bytes(size)} (${from})`);
      if (size > HOST_BODY_BYTES) io.err(`kit: ${t.twin}'s import is over the ${bytes(HOST_BODY_BYTES)} a host takes in one request by default`);
    }
    return 0;
  } catch (e) {
    if (e instanceof CliError) {
      io.err(failureLine(e));
      return 1;
    }
    throw e;
  }
}

/** The world kept in `dir`: from its store, or through its server when one serves it. */
async function fromDirectory(dir: string, twin: string | undefined): Promise<{ exported: TwinFiles[]; source: Source }> {
  const state = join(dir, '.kit', 'world');
  if (!existsSync(join(state, 'data.mdb'))) throw new CliError('no_world', `no world is kept in ${dir}: ${join(state, 'data.mdb')} does not exist`);
  const tokenFile = await readTokenFile(dir).catch((e: unknown) => {
    throw new CliError('token_file_corrupt', (e as Error).message);
  });
  // Served: through the server, whose URL and token kit world serve wrote beside the store.
  const served = async (why: string): Promise<{ exported: TwinFiles[]; source: Source }> => {
    if (tokenFile === null || tokenFile.url === '') throw new CliError('no_world', `${why}; and ${join(dir, '.kit', 'token')} names no URL to read it through`);
    const urls = worldUrls(tokenFile.url);
    return { exported: await throughServer({ base: urls.worldApi, token: tokenFile.token }, twin), source: { kind: 'server', url: urls.worldUrl } };
  };
  // The store's guard decides, but it gives a holder 2 s to end (one being killed) before it
  // refuses: a lock whose process runs goes to the server at once. A server that does not
  // answer may be one just killed: then the guard decides after all, unless the holder is this
  // process (the guard hands a process its own lock, and a second opener would release it).
  const holder = liveLockHolder(state);
  if (holder !== null) {
    try {
      return await served(`the world in ${dir} is open in process ${holder}`);
    } catch (e) {
      if (holder === process.pid || !(e instanceof CliError && e.code === 'unreachable')) throw e;
    }
  }
  // The engine alone, loaded on demand (LMDB and the runtime are not needed for --help).
  const { openLmdbStorage } = await import('../../runtime/store/index.js');
  const { isKitError } = await import('../../runtime/errors.js');
  let storage: ReturnType<typeof openLmdbStorage>;
  try {
    storage = openLmdbStorage(state);
  } catch (e) {
    if (!isKitError(e)) throw e;
    if (e.code !== 'storage_locked') throw new CliError(e.code, e.message);
    return served(e.message);
  }
  try {
    const { WorldStore } = await import('../../runtime/world/index.js');
    const { exportTwinFiles } = await import('../../runtime/runner/transfer.js');
    const store = new WorldStore(storage);
    const world = store.openWorld(worldIn(store.listWorlds(), tokenFile?.url ?? '', dir));
    const twins = twin === undefined ? world.twins() : [twin];
    if (twin !== undefined && !world.twins().includes(twin)) throw new CliError('unknown_twin', `the world in ${dir} has no twin ${twin}; its twins are ${world.twins().join(', ')}`);
    try {
      return { exported: twins.map((t) => exportTwinFiles(storage, world, t)), source: { kind: 'store', path: state } };
    } catch (e) {
      if (isKitError(e)) throw new CliError(e.code, e.message);
      throw e;
    }
  } finally {
    await storage.close();
  }
}

/** The pid in the store's lock (runtime/store/guard.ts: `<pid>\n<host>\n`) when that process runs on this host (this one included); else null. */
function liveLockHolder(state: string): number | null {
  let text: string;
  try {
    text = readFileSync(join(state, 'twinkit.lock'), 'utf8');
  } catch {
    return null;
  }
  const [pidText = '', host = ''] = text.split('\n');
  const pid = /^\d{1,10}$/.test(pidText) ? Number(pidText) : NaN;
  if (host !== hostname() || !Number.isInteger(pid)) return null;
  if (pid === process.pid) return pid;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

/**
 * The world of a single-world store: the one `.kit/token` names (the world name is the URL's
 * last segment), else the only one there.
 */
function worldIn(names: string[], tokenUrl: string, dir: string): string {
  const named = tokenUrl === '' ? undefined : worldUrls(tokenUrl).name.split('/')[1];
  if (named !== undefined && names.includes(named)) return named;
  if (names.length === 1) return names[0] as string;
  if (names.length === 0) throw new CliError('no_world', `the store in ${dir} keeps no world yet`);
  throw new CliError('no_world', `the store in ${dir} keeps several worlds (${names.join(', ')}) and .kit/token names none of them: serve the one to export (kit world serve --world <name>) and run this again`);
}

/** Each twin's export as the world's server answers it (`GET …/twins/<vendor>/export`). */
async function throughServer(endpoint: Endpoint, twin: string | undefined): Promise<TwinFiles[]> {
  const names = twin !== undefined ? [twin] : (await requestJson<{ twins?: { vendor?: unknown }[] }>(endpoint, 'GET', '/twins')).value.twins?.map((t) => String(t.vendor)) ?? [];
  const out: TwinFiles[] = [];
  for (const name of names) {
    const { value } = await requestJson<TwinFiles>(endpoint, 'GET', `/twins/${segment(name)}/export`);
    const files = value?.files as unknown;
    if (value?.twin !== name || typeof files !== 'object' || files === null || Object.values(files).some((c) => typeof c !== 'string')) {
      throw new CliError('bad_answer', `${endpoint.base}/twins/${name}/export answered something that is not a twin's export`);
    }
    out.push(value);
  }
  return out;
}
