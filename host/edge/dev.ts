/**
 * The edge variant run locally (`kit edge dev`, the tests, the bench): the built Worker
 * (dist/edge/, build.ts) in workerd through miniflare, with the bindings wrangler.toml
 * declares. Node-side: nothing here is bundled into the Worker.
 */
import { newSealingKey } from '../../runtime/roots/sealing.js';
import { existsSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare, type Request as OutboundRequest, type Response as OutboundResponse } from 'miniflare';
import { isLoopbackHost } from '../core/access/origins.js';

const here = dirname(fileURLToPath(import.meta.url));

/** What wrangler.toml says too (a test keeps the two the same). */
export const EDGE_CONFIG = {
  compatibilityDate: '2026-04-01',
  compatibilityFlags: ['nodejs_compat'],
  durableObjects: {
    FAMILIES: { className: 'WorldFamily', useSQLite: true },
    INDEX: { className: 'WorldIndex', useSQLite: true },
  },
} as const;

export interface EdgeDevOptions {
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Durable Objects' state kept in this folder across restarts; absent: in memory, gone at close. */
  persist?: string;
  adminToken: string;
  /** The built Worker's folder (default dist/edge/ of this repository). */
  buildDir?: string;
  /** Answers the Worker's own fetches (webhook deliveries) instead of the network: tests' stand-in for it. */
  outbound?: EdgeOutbound;
  /** Issuers of passes trusted (`--trust`, `TRUSTED_ISSUERS`): the Worker's `TRUSTED_ISSUERS`. */
  trustedIssuers?: readonly string[];
  /** The Worker's `WORLD_ORIGIN_SUFFIX`; default each world at `<world>--<org>.localhost:<port>`. */
  worldOriginSuffix?: string;
  /** The Worker's `SEALING_KEY` (base64 or hex, 32 bytes); default `SEALING_KEY` of this process, else one made for this run (credentials sealed under it do not outlive it). */
  sealingKey?: string;
}

/** A stand-in for the network the Worker fetches from, called in Node with miniflare's Request. */
export type EdgeOutbound = (request: OutboundRequest) => Promise<OutboundResponse>;

export interface EdgeDev {
  /** `{base_url}`, e.g. `http://127.0.0.1:8787`. */
  readonly url: string;
  readonly adminToken: string;
  readonly miniflare: Miniflare;
  /**
   * Stops workerd and starts it again on the same port, as Cloudflare evicts every object: only
   * what is in the objects' storage (and the persist folder) is left.
   */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** The built Worker's folder: dist/edge/ of this repository (this module runs from dist/host/edge/, or from host/edge/ in tests). */
export function defaultEdgeBuildDir(): string {
  const root = resolve(here, '..', '..');
  return root.endsWith(`${sep}dist`) ? join(root, 'edge') : join(root, 'dist', 'edge');
}

/** miniflare's settings of the built Worker, as wrangler.toml declares it (the bench's profiler starts it so too). */
export function edgeWorkerSettings(buildDir: string, adminToken: string, vars: Record<string, string> = {}) {
  return {
    scriptPath: join(buildDir, 'worker.js'),
    modules: true,
    modulesRoot: buildDir,
    modulesRules: [{ type: 'CompiledWasm' as const, include: ['**/*.wasm'] }],
    compatibilityDate: EDGE_CONFIG.compatibilityDate,
    compatibilityFlags: [...EDGE_CONFIG.compatibilityFlags],
    durableObjects: { ...EDGE_CONFIG.durableObjects },
    bindings: { ADMIN_TOKEN: adminToken, ...vars },
  };
}

export async function startEdgeDev(options: EdgeDevOptions): Promise<EdgeDev> {
  const buildDir = options.buildDir ?? defaultEdgeBuildDir();
  const scriptPath = join(buildDir, 'worker.js');
  if (!existsSync(scriptPath)) throw new Error(`no built Worker at ${scriptPath}: run \`node dist/host/edge/build.js\` (make build does)`);
  const host = options.host ?? '127.0.0.1';
  const vars: Record<string, string> = {
    // Only a workerd no other machine reaches may open a world's page without a token.
    LOOPBACK_SESSIONS: isLoopbackHost(host) ? '1' : '0',
    // As on any host of this machine alone: roots and links may name another local world.
    LOOPBACK_ROOTS: isLoopbackHost(host) ? '1' : '0',
    SEALING_KEY: options.sealingKey ?? process.env['SEALING_KEY'] ?? newSealingKey(),
    TRUSTED_ISSUERS: (options.trustedIssuers ?? []).join(' '),
    ...(options.worldOriginSuffix !== undefined ? { WORLD_ORIGIN_SUFFIX: options.worldOriginSuffix } : {}),
  };
  const settings = {
    ...edgeWorkerSettings(buildDir, options.adminToken, vars),
    durableObjectsPersist: options.persist ?? false,
    host,
    port: options.port ?? 0,
    ...(options.outbound !== undefined ? { outboundService: options.outbound } : {}),
  };
  const miniflare = new Miniflare(settings);
  let url: URL;
  try {
    url = await miniflare.ready;
  } catch (e) {
    await miniflare.dispose().catch(() => undefined);
    throw e;
  }
  let closing: Promise<void> | null = null;
  return {
    url: url.origin,
    adminToken: options.adminToken,
    miniflare,
    async restart() {
      await miniflare.setOptions({ ...settings, port: Number(url.port) });
      url = await miniflare.ready;
    },
    close: () => (closing ??= miniflare.dispose()),
  };
}
