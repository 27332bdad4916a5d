/**
 * The single-world server (`kit world serve`): the host core (host/core/) with one world at
 * `{base}/<org>/<world>/…` (vendor wire) and `{base}/-/<org>/<world>/…` (world API), behind
 * the uWS adapter, with the world's streams and, given a CA, its CONNECT proxy.
 */
import type { Scope, WorldHandle } from '../runtime/runner/types.js';
import { MemoryStorage } from '../runtime/store/memory.js';
import type { Storage } from '../runtime/store/types.js';
import { createHostCore, type MountedWorld, type PlainRequest, type PublishedAddress, type TwinScopes } from './core/core.js';
import type { PassVerifier } from './core/access/passes.js';
import { hostedOriginOption, localOriginRule, worldOriginOf } from './core/access/origins.js';
import { WorldAccess } from './core/access/world-access.js';
import type { PageFiles } from './core/pages.js';
import type { WorldTokens } from './core/credentials.js';
import { NAME_PATTERN } from './core/paths.js';
import type { HttpAnswer, HttpHandler } from './core/types.js';
import { RequestBudget } from './limits.js';
import type { BudgetOptions } from './limits.js';
import { DEFAULT_MAX_BODY_BYTES, listenHttp, urlHost } from './node/http/uws.js';
import { startConnectProxy } from './node/proxy/proxy.js';
import type { ConnectProxy } from './node/proxy/proxy.js';
import type { WorldCa } from './node/proxy/ca.js';
import { createStreamRoutes } from './node/streams/uws.js';
import { loadPageFiles } from './node/pages.js';
import type { StreamLimits } from './core/streams.js';

export { NAME_PATTERN, type PlainRequest, type PublishedAddress, type TwinScopes };

export interface SingleWorldOptions {
  world: WorldHandle;
  org: string;
  /** The world's name in URLs; default `world.name`. */
  worldName?: string;
  tokens: WorldTokens;
  twins: readonly TwinScopes[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /**
   * The world's request budget (host/limits.ts). Absent or `false`: none — a world served alone
   * answers its owner's load test at full speed; a host serving many worlds sets one per world.
   */
  budget?: BudgetOptions | false;
  /** Default 4 MB. */
  maxBodyBytes?: number;
  /** How long a stop waits for in-flight requests. Default 10 s. */
  drainTimeoutMs?: number;
  /**
   * The world's CA. With it the server also runs the CONNECT proxy (host/node/proxy/) and the
   * attach manifest names both; without it the manifest's `ca` and `proxy` are null.
   */
  ca?: WorldCa;
  /** The proxy's port: default the server's port + 1 (a free one when the server's is 0); 0 picks. */
  proxyPort?: number;
  /** Limits of stream connections (`{world_api}/streams/<id>`); defaults in host/node/streams/bridge.ts. */
  streamLimits?: Partial<StreamLimits>;
  /**
   * Where the world's sessions, named keys and spent passes are kept (`kit world serve`: an LMDB
   * environment in `<dir>/.kit/access/`); the server closes it. Default: in memory, gone at stop.
   */
  accessStorage?: Storage;
  /** The world page and the mirrors; default the built ones (host/node/pages.ts `loadPageFiles()`) when served, none in `createSingleWorldCore`. */
  pages?: PageFiles;
  /** Checks passes (host/core/access/passes.ts); default: no issuer is trusted. */
  passes?: PassVerifier | null;
  /**
   * `WORLD_ORIGIN_SUFFIX` of a hosted server (`.worlds.example.com`: the world's origin is
   * `https://<world>--<org>.worlds.example.com`); default `<world>--<org>.localhost:<port>`.
   */
  worldOriginSuffix?: string;
}

export interface SingleWorldCore {
  readonly handler: HttpHandler;
  /** The whole auth/route/limits path without sockets. */
  dispatch(request: PlainRequest): Promise<HttpAnswer>;
  /** From now on every request is answered 503 `shutting_down`. */
  stop(): void;
  /** What a token opens, or null (the proxy authenticates with it). */
  scopeOf(token: string): Scope | null;
  /** The server's path of a twin path: `vendorPath('stripe', '/v1/x')` → `/<org>/<world>/stripe/v1/x`. */
  vendorPath(vendor: string, path: string): string;
  /** Sets the addresses the attach manifest names; until then it answers 503. */
  publish(address: PublishedAddress): void;
}

export interface SingleWorldServer {
  /** `{base_url}`, e.g. `http://127.0.0.1:4440`. */
  readonly url: string;
  /** `{world_url}`: `{base_url}/<org>/<world>`. */
  readonly worldUrl: string;
  /** `{world_api}`: `{base_url}/-/<org>/<world>`. */
  readonly worldApi: string;
  readonly port: number;
  /** The world's own origin, where its page is (`http://<world>--<org>.localhost:<port>`); null when it has none. */
  readonly pageUrl: string | null;
  /** The CONNECT proxy, when the server was given a CA. */
  readonly proxy: ConnectProxy | null;
  dispatch(request: PlainRequest): Promise<HttpAnswer>;
  /** Stops accepting, lets in-flight requests finish, then closes the world. Idempotent. */
  close(): Promise<void>;
}

/** The host core with one world. */
export function createSingleWorldCore(options: SingleWorldOptions): SingleWorldCore {
  const world = options.world;
  const org = options.org;
  const name = options.worldName ?? world.name;
  if (!NAME_PATTERN.test(org)) throw new TypeError(`org must match ${NAME_PATTERN}, got ${JSON.stringify(org)}`);
  if (!NAME_PATTERN.test(name)) throw new TypeError(`world name must match ${NAME_PATTERN}, got ${JSON.stringify(name)}`);
  const access = new WorldAccess(`${org}/${name}`, options.tokens, options.accessStorage ?? new MemoryStorage());
  const mounted: MountedWorld = {
    code: world.code,
    scopeOf: (token) => access.scopeOf(token),
    access,
    twins: options.twins,
    budget: options.budget === undefined || options.budget === false ? null : new RequestBudget(options.budget),
    handle: (request) => world.handle(request),
  };
  const core = createHostCore({
    worlds: {
      find: (o, w) => (o === org && w === name ? mounted : null),
      notFoundHint: `this server serves /${org}/${name}/<vendor>/… and /-/${org}/${name}/…`,
    },
    hostCode: world.code,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    noBranches: 'the single-world server makes no branches; serve the world on a host for branches',
    ...(options.pages !== undefined ? { pages: options.pages } : {}),
    passes: options.passes ?? null,
  });
  return {
    handler: core.handler,
    dispatch: core.dispatch,
    stop: core.stop,
    publish: core.publish,
    scopeOf: mounted.scopeOf,
    vendorPath: (vendor, path) => `/${org}/${name}/${vendor}${path}`,
  };
}

/** Serves one world over HTTP until `close()`. */
export async function startSingleWorldServer(options: SingleWorldOptions): Promise<SingleWorldServer> {
  const hosted = hostedOriginOption(options.worldOriginSuffix);
  // The built pages (dist/pages/), read once; a checkout not built serves none.
  const core = createSingleWorldCore({ ...options, pages: options.pages ?? loadPageFiles() });
  const host = options.host ?? '127.0.0.1';
  // WebSocket `{world_api}/streams/<id>`: TCP-protocol twins (host/node/streams/).
  const streams = createStreamRoutes({ apiPrefix: `/-/${options.org}/${options.worldName ?? options.world.name}`, world: options.world, scopeOf: core.scopeOf, ...(options.streamLimits ? { limits: options.streamLimits } : {}) });
  const http = await listenHttp({
    configure: streams.register,
    handler: core.handler,
    host,
    port: options.port ?? 0,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    drainTimeoutMs: options.drainTimeoutMs ?? 10_000,
  });
  const name = options.worldName ?? options.world.name;
  const url = `http://${urlHost(host)}:${http.port}`;
  let proxy: ConnectProxy | null = null;
  const ca = options.ca;
  if (ca !== undefined) {
    const twins = new Map<string, string>();
    for (const t of options.twins) {
      if ((t.protocol ?? 'http') !== 'http') continue;
      for (const h of t.hosts ?? []) if (!twins.has(h.toLowerCase())) twins.set(h.toLowerCase(), t.vendor);
    }
    try {
      proxy = await startConnectProxy({
        host,
        port: options.proxyPort ?? (http.port < 65535 && options.port !== undefined && options.port !== 0 ? http.port + 1 : 0),
        ca,
        twins,
        scopeOf: core.scopeOf,
        ownServer: { host, port: http.port },
        handler: core.handler,
        vendorPath: core.vendorPath,
        maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
        realm: `kit world ${options.org}/${name}`,
      });
    } catch (e) {
      await http.close();
      throw new Error(`the proxy cannot listen: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const worldOrigins = hosted ?? localOriginRule(host, http.port);
  core.publish({
    baseUrl: url,
    proxyUrl: proxy?.url ?? null,
    ca: ca === undefined ? null : { pem: ca.certPem, sha256: ca.sha256 },
    everyAddress: host === '0.0.0.0' || host === '::' || host === '',
    worldOrigins,
  });
  let closing: Promise<void> | null = null;
  return {
    url,
    worldUrl: `${url}/${options.org}/${name}`,
    worldApi: `${url}/-/${options.org}/${name}`,
    port: http.port,
    pageUrl: worldOriginOf(worldOrigins, options.org, name),
    proxy,
    dispatch: core.dispatch,
    close(): Promise<void> {
      if (closing === null) {
        closing = (async () => {
          await proxy?.close();
          await streams.close();
          await http.close();
          core.stop();
          await options.world.close();
          await options.accessStorage?.close();
        })();
      }
      return closing;
    },
  };
}

