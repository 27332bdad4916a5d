/**
 * `kit host serve [dir]`: the multi-world host (host/multi-world/) over `<dir>/.kit-host/`.
 * The host itself comes in through `HostServeDeps`, so tests start it in-process.
 */
import { isLoopbackHost } from '../../host/core/access/origins.js';
import { loadOutboundProxy, outboundProxyFromEnv, type OutboundProxyOption } from './outbound-proxy.js';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { MultiWorldHost, MultiWorldHostOptions } from '../../host/index.js';
import { DEFAULT_BUDGET_SIZE, DEFAULT_BUDGET_WINDOW_MS, describeBudget, parseBudget } from '../../host/index.js';
import { parseArgs, parsePort, UsageError } from './args.js';
import type { CliIo } from './commands.js';
import { describeTrust, parseTrust, passVerifierFor, TRUST_FLAG, trustUsage } from './trust.js';

export const DEFAULT_HOST_PORT = 4450;

export interface HostServeOptions {
  dir: string;
  port: number;
  host: string;
  budget: { size: number; windowMs: number } | false;
  maxOpen?: number;
  idleMs?: number;
  /** Issuers whose passes open a world's page (`--trust`, `TRUSTED_ISSUERS`); default none. */
  trustedIssuers?: string[];
  /** A proxy every call to a real vendor goes through (`KIT_OUTBOUND_PROXY`, `KIT_OUTBOUND_CA`: docs/roots.md). */
  outboundProxy?: OutboundProxyOption;
}

export interface HostServeDeps {
  /** Starts the host with the built-in twins and the guest runtime. */
  startHost(options: Omit<MultiWorldHostOptions, 'twins'>): Promise<MultiWorldHost>;
  untilStopped(): Promise<string>;
}

export const HOST_SERVE_USAGE = `Usage: kit host serve [dir] [--port N] [--host H] [--budget N/10s|off] [--max-open N] [--idle S]
                      [--trust I]...

Serves many worlds under one URL. Every world's state lives in <dir>/.kit-host/worlds/ (one
LMDB environment); the admin token is minted once and kept in <dir>/.kit-host/admin.

  dir            the host's directory (default: the current directory)
  --port N       port to listen on (default ${DEFAULT_HOST_PORT}; 0 picks a free port)
  --host H       address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)
  --budget B     each world's request budget unless the admin sets its own
                 (PUT /-/worlds/<org>/<world>/budget): <requests>/<window>, or off
                 (default 100000/10s)
  --max-open N   worlds kept open in memory at once (default 256); the others wait on
                 disk and open on their next request
  --idle S       seconds after which an unused world closes (default 60)
${trustUsage(17)}
  -h, --help     this help

Make worlds with \`kit host create <org>/<world> --vendors stripe\` or POST /-/worlds; the
console is at http://<host>:<port>/-/console/.`;

/** `kit host serve`'s arguments (and `TRUSTED_ISSUERS` from `env`); `help` when asked for help. Throws `UsageError`. */
export function parseHostServeArgs(argv: readonly string[], env: Record<string, string | undefined> = process.env): HostServeOptions | 'help' {
  const { positionals, flags, lists } = parseArgs(argv, [
    { name: 'port', kind: 'string' },
    { name: 'host', kind: 'string' },
    { name: 'budget', kind: 'string' },
    { name: 'max-open', kind: 'string' },
    { name: 'idle', kind: 'string' },
    TRUST_FLAG,
    { name: 'help', kind: 'boolean', short: 'h' },
  ]);
  if (flags['help'] === true) return 'help';
  if (positionals.length > 1) throw new UsageError(`one directory at most, got ${positionals.length}: ${positionals.join(' ')}`);
  const value = (name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
  const options: HostServeOptions = {
    dir: positionals[0] ?? '.',
    port: value('port') === undefined ? DEFAULT_HOST_PORT : parsePort(value('port') as string),
    host: value('host') ?? '127.0.0.1',
    budget: { size: DEFAULT_BUDGET_SIZE, windowMs: DEFAULT_BUDGET_WINDOW_MS },
  };
  if (options.host === '') throw new UsageError('--host needs an address');
  const budget = value('budget');
  if (budget !== undefined) {
    try {
      options.budget = parseBudget(budget);
    } catch (e) {
      throw new UsageError(`--budget: ${(e as Error).message}`);
    }
  }
  const whole = (flag: string, raw: string, min: number, max: number): number => {
    if (!/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new UsageError(`--${flag} must be a whole number from ${min} to ${max}, got "${raw}"`);
    return Number(raw);
  };
  const maxOpen = value('max-open');
  if (maxOpen !== undefined) options.maxOpen = whole('max-open', maxOpen, 1, 1_000_000);
  const idle = value('idle');
  if (idle !== undefined) options.idleMs = whole('idle', idle, 1, 86_400) * 1000;
  const outboundProxy = outboundProxyFromEnv(env);
  if (outboundProxy !== undefined) options.outboundProxy = outboundProxy;
  const trusted = parseTrust(lists['trust'], env);
  if (trusted.length > 0) options.trustedIssuers = trusted;
  return options;
}

/** Runs `kit host serve` until stopped. Exit code: 0 stopped, 1 failed, 2 bad usage. */
export async function runHostServe(argv: readonly string[], io: CliIo, deps: HostServeDeps, env: Record<string, string | undefined> = process.env): Promise<number> {
  let options: HostServeOptions | 'help';
  try {
    options = parseHostServeArgs(argv, env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.err(`kit: ${e.message}`);
    io.err('');
    io.err(HOST_SERVE_USAGE);
    return 2;
  }
  if (options === 'help') {
    io.out(HOST_SERVE_USAGE);
    return 0;
  }
  const dir = resolve(options.dir);
  const info = await stat(dir).catch(() => null);
  if (info === null || !info.isDirectory()) {
    io.err(`kit: no directory ${dir}; create it first, or name another one`);
    return 1;
  }
  const passes = passVerifierFor(options.trustedIssuers ?? []);
  let host: MultiWorldHost;
  try {
    const outboundProxy = await loadOutboundProxy(options.outboundProxy);
    host = await deps.startHost({
      dir,
      port: options.port,
      host: options.host,
      budget: options.budget,
      ...(options.maxOpen !== undefined ? { maxOpen: options.maxOpen } : {}),
      ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
      ...(passes !== null ? { passes } : {}),
      // A host on this machine's loopback alone may root a twin at another local world.
      outboundLoopback: isLoopbackHost(options.host),
      ...(outboundProxy !== undefined ? { outboundProxy } : {}),
    });
  } catch (e) {
    io.err(`kit: ${e instanceof Error ? e.message : String(e)}${options.port !== 0 ? '; pass --port 0 for a free port' : ''}`);
    return 1;
  }
  const worlds = host.registry.names();
  for (const line of [
    `kit: serving a host of ${worlds.length} world${worlds.length === 1 ? '' : 's'}`,
    '',
    `  URL          ${host.url}`,
    `  console      ${host.url}/-/console/`,
    `  admin token  ${host.adminToken}${host.adminTokenCreated ? '  (minted now)' : ''}`,
    `  admin file   ${join(host.stateDir, 'admin')}`,
    `  state        ${join(host.stateDir, 'worlds')}/`,
    `  budget       ${options.budget === false ? 'off' : `${describeBudget(options.budget)} per world, then 429 with Retry-After`}`,
    `  passes       ${describeTrust(options.trustedIssuers ?? [])}`,
    '',
    'Try:',
    `  curl -H "x-kit-token: ${host.adminToken}" -d '{"org":"acme","world":"shop","vendors":["stripe"]}' ${host.url}/-/worlds`,
    `  kit host worlds --dir ${options.dir}`,
    '',
    'Ctrl-C stops the host.',
  ]) {
    io.out(line);
  }
  const signal = await deps.untilStopped();
  io.out(`kit: ${signal}: stopping (finishing requests in flight, closing worlds)`);
  try {
    await host.close();
  } catch (e) {
    io.err(`kit: the host did not close cleanly: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  io.out('kit: stopped');
  return 0;
}
