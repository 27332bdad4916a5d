/**
 * `kit edge dev`: the edge variant (host/edge/) run locally in workerd through miniflare, from
 * the Worker `make build` built into dist/edge/. The Worker comes in through `EdgeDevDeps`, so
 * tests start it in-process.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { EdgeDev, EdgeDevOptions } from '../../host/edge/dev.js';
import { writeAtomically } from '../../host/node/tokens.js';
import { parseArgs, parsePort, UsageError } from './args.js';
import type { CliIo } from './commands.js';
import { describeTrust, parseTrust, TRUST_FLAG, trustUsage } from './trust.js';

export const DEFAULT_EDGE_PORT = 8787;

export interface EdgeDevDeps {
  startEdge(options: EdgeDevOptions): Promise<EdgeDev>;
  untilStopped(): Promise<string>;
}

export const EDGE_DEV_USAGE = `Usage: kit edge dev [--port N] [--host H] [--persist dir] [--trust I]...

Runs the edge-hosted variant (a Worker and one Durable Object per world family) locally in
workerd, as Cloudflare would run it (docs/edge.md). Worlds are made with the admin token:
POST /-/worlds, as on \`kit host serve\`.

  --port N        port to listen on (default ${DEFAULT_EDGE_PORT}; 0 picks a free port)
  --host H        address to listen on (default 127.0.0.1)
  --persist dir   keep the Durable Objects' state in dir across restarts (default: in memory,
                  gone when it stops); the admin token is minted once into dir/admin
${trustUsage(18)}
  -h, --help      this help

The admin token is ADMIN_TOKEN from the environment when set (24 characters or more).`;

export interface EdgeDevArgs {
  port: number;
  host: string;
  persist: string | null;
  /** Issuers whose passes open a world's page (`--trust`, `TRUSTED_ISSUERS`): the Worker's `TRUSTED_ISSUERS`. */
  trustedIssuers?: string[];
}

/** `kit edge dev`'s arguments (and `TRUSTED_ISSUERS` from `env`); `help` when asked for help. Throws `UsageError`. */
export function parseEdgeDevArgs(argv: readonly string[], env: Record<string, string | undefined> = {}): EdgeDevArgs | 'help' {
  const { positionals, flags, lists } = parseArgs(argv, [
    { name: 'port', kind: 'string' },
    { name: 'host', kind: 'string' },
    { name: 'persist', kind: 'string' },
    TRUST_FLAG,
    { name: 'help', kind: 'boolean', short: 'h' },
  ]);
  if (flags['help'] === true) return 'help';
  if (positionals.length > 0) throw new UsageError(`kit edge dev takes no arguments, got ${positionals.join(' ')}`);
  const value = (name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
  const host = value('host') ?? '127.0.0.1';
  if (host === '') throw new UsageError('--host needs an address');
  const persist = value('persist');
  if (persist === '') throw new UsageError('--persist needs a folder');
  const trusted = parseTrust(lists['trust'], env);
  return { port: value('port') === undefined ? DEFAULT_EDGE_PORT : parsePort(value('port')!), host, persist: persist ?? null, ...(trusted.length > 0 ? { trustedIssuers: trusted } : {}) };
}

/** The admin token: ADMIN_TOKEN, else the one kept in the persist folder, else minted now. */
async function adminToken(persist: string | null, env: Record<string, string | undefined>): Promise<{ token: string; source: string }> {
  const given = env['ADMIN_TOKEN'];
  if (given !== undefined && given !== '') {
    if (!/^[A-Za-z0-9_-]{24,256}$/.test(given)) throw new UsageError('ADMIN_TOKEN must be 24 to 256 URL-safe characters (A-Z a-z 0-9 - _)');
    return { token: given, source: 'ADMIN_TOKEN' };
  }
  const mint = (): string => `tok_a_${randomBytes(24).toString('base64url')}`;
  if (persist === null) return { token: mint(), source: 'minted now, gone when this stops' };
  const file = join(persist, 'admin');
  const kept = await readFile(file, 'utf8').catch(() => null);
  if (kept !== null) {
    const token = kept.trim();
    if (!/^[A-Za-z0-9_-]{24,256}$/.test(token)) throw new Error(`${file} does not hold an admin token; remove it to mint another`);
    return { token, source: file };
  }
  const token = mint();
  await writeAtomically(file, `${token}\n`);
  return { token, source: `${file} (minted now)` };
}

/** Runs `kit edge dev` until stopped. Exit code: 0 stopped, 1 failed, 2 bad usage. */
export async function runEdgeDev(argv: readonly string[], io: CliIo, deps: EdgeDevDeps, env: Record<string, string | undefined> = process.env): Promise<number> {
  let args: EdgeDevArgs | 'help';
  let admin: { token: string; source: string };
  try {
    args = parseEdgeDevArgs(argv, env);
    if (args === 'help') {
      io.out(EDGE_DEV_USAGE);
      return 0;
    }
    if (args.persist !== null) {
      args.persist = resolve(args.persist);
      await mkdir(args.persist, { recursive: true, mode: 0o700 });
      if (!(await stat(args.persist)).isDirectory()) throw new UsageError(`--persist: ${args.persist} is not a folder`);
    }
    admin = await adminToken(args.persist, env);
  } catch (e) {
    if (!(e instanceof UsageError)) {
      io.err(`kit: ${e instanceof Error ? e.message : String(e)}`);
      return 1;
    }
    io.err(`kit: ${e.message}`);
    io.err('');
    io.err(EDGE_DEV_USAGE);
    return 2;
  }
  let edge: EdgeDev;
  try {
    edge = await deps.startEdge({ port: args.port, host: args.host, adminToken: admin.token, ...(args.persist !== null ? { persist: join(args.persist, 'objects') } : {}), ...(args.trustedIssuers !== undefined ? { trustedIssuers: args.trustedIssuers } : {}) });
  } catch (e) {
    io.err(`kit: ${e instanceof Error ? e.message : String(e)}${args.port !== 0 ? '; pass --port 0 for a free port' : ''}`);
    return 1;
  }
  for (const line of [
    'kit: serving the edge variant in workerd (miniflare)',
    '',
    `  URL          ${edge.url}`,
    `  admin token  ${admin.token}  (${admin.source})`,
    `  state        ${args.persist === null ? 'in memory (--persist dir keeps it)' : `${join(args.persist, 'objects')}/`}`,
    `  passes       ${describeTrust(args.trustedIssuers ?? [])}`,
    '',
    'Try:',
    `  curl -H "x-kit-token: ${admin.token}" -d '{"org":"acme","world":"shop","vendors":["stripe"]}' ${edge.url}/-/worlds`,
    '',
    'Ctrl-C stops it.',
  ]) {
    io.out(line);
  }
  const signal = await deps.untilStopped();
  io.out(`kit: ${signal}, stopping`);
  await edge.close();
  return 0;
}
