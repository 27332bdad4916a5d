/**
 * The multi-world host (`kit host serve`): the host core over a directory of many worlds,
 * all in one LMDB environment under `<dir>/.kit-host/worlds/`, with the admin surface at
 * `/-/…`, the console at `/-/console/`, and branches over HTTP. Worlds open on their first
 * request and close when idle (pool.ts); branches whose ttl passed are removed on a timer
 * (and at start); closed worlds with timed moves wake by themselves (wake.ts).
 */
import { createNodeOutbound } from '../../runtime/roots/node-outbound.js';
import { createSealer, sealingKeyBytes } from '../../runtime/roots/sealing.js';
import { loadOrCreateSealingKey } from '../node/sealing-key.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { KIT_VERSION } from '../../runtime/version.js';
import { hasPendingDeliveries, nodeGuestEngines } from '../../runtime/runner/index.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import type { SandboxLimits } from '../../runtime/sandbox/index.js';
import { openLmdbStorage, type Storage } from '../../runtime/store/index.js';
import { WorldStore } from '../../runtime/world/index.js';
import { createHostCore, type PlainRequest } from '../core/core.js';
import type { PassVerifier } from '../core/access/passes.js';
import { hostedOriginOption, localOriginRule } from '../core/access/origins.js';
import type { PageFiles } from '../core/pages.js';
import type { HttpAnswer } from '../core/types.js';
import { DEFAULT_BUDGET_SIZE, DEFAULT_BUDGET_WINDOW_MS, type BudgetOptions } from '../limits.js';
import { DEFAULT_MAX_BODY_BYTES, listenHttp, urlHost } from '../node/http/uws.js';
import { createStreamRoutes } from '../node/streams/uws.js';
import { loadPageFiles } from '../node/pages.js';
import { hostDir, loadOrCreateAdminToken, writeHostUrl } from '../node/tokens.js';
import { createAdminSurface } from './admin.js';
import { defaultConsoleDir } from './console.js';
import { WorldPool } from './pool.js';
import { HostRegistry } from './registry.js';
import { TwinSets } from './twin-sets.js';
import { HostTwins } from './host-twins.js';
import { TwinCheckLane } from './installed-twins.js';
import { WakeSchedule } from './wake.js';
import { budgetOf, HostWorlds } from './worlds.js';

export interface MultiWorldHostOptions {
  /** State in `<dir>/.kit-host/`. */
  dir: string;
  /** The twins worlds may be made with (the built-in ones). */
  twins: readonly TwinBundle[];
  /** The twin SDK's guest runtime, for scenario `js` handlers. */
  guestRuntime?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Each world's request budget unless the admin sets its own; default 100 000 per 10 s; false: none. */
  budget?: BudgetOptions | false;
  /** Worlds open at once (default 256). */
  maxOpen?: number;
  /** A world unused this long closes (default 60 s). */
  idleMs?: number;
  /** How often branches past their ttl are looked for (default 5 s). */
  sweepEveryMs?: number;
  /** Default 4 MB. */
  maxBodyBytes?: number;
  /** How long a stop waits for in-flight requests. Default 10 s. */
  drainTimeoutMs?: number;
  /** The console's built files; default dist/console/ beside this module; null: no console. */
  consoleDir?: string | null;
  /** Limits of the sandbox lanes of each world. */
  limits?: Partial<SandboxLimits>;
  /** The engine's wall clock (tests). */
  now?: () => number;
  /** The world page and the mirrors; default the built ones (host/node/pages.ts `loadPageFiles()`). */
  pages?: PageFiles;
  /** Checks passes (host/core/access/passes.ts); default: no issuer is trusted. */
  passes?: PassVerifier | null;
  /** `WORLD_ORIGIN_SUFFIX` of a hosted host (`.worlds.example.com`); default `<world>--<org>.localhost:<port>`. */
  worldOriginSuffix?: string;
  /**
   * Whether the worlds' roots and links may name this machine's loopback (over http): a host on
   * this machine alone, where another local world plays the vendor. Default false: a hosted host
   * must not let a world reach its own loopback.
   */
  outboundLoopback?: boolean;
  /** A proxy every call to a real vendor goes through (`http://user:pass@host:port`, and the PEM of its CA). */
  outboundProxy?: { url: string; ca?: string };
}

export interface MultiWorldHost {
  /** `{base_url}`, e.g. `http://127.0.0.1:4450`. */
  readonly url: string;
  readonly port: number;
  readonly adminToken: string;
  /** Whether the admin token was minted by this start. */
  readonly adminTokenCreated: boolean;
  /** The state folder, `<dir>/.kit-host/`. */
  readonly stateDir: string;
  readonly worlds: HostWorlds;
  readonly pool: WorldPool;
  readonly registry: HostRegistry;
  /** The engine over every world's state (what it holds in memory: `heldInMemory()`). */
  readonly store: WorldStore;
  /** The whole path without sockets. */
  dispatch(request: PlainRequest): Promise<HttpAnswer>;
  /** Stops accepting, lets in-flight requests finish, closes every world and the storage. Idempotent. */
  close(): Promise<void>;
}

export async function startMultiWorldHost(options: MultiWorldHostOptions): Promise<MultiWorldHost> {
  const hosted = hostedOriginOption(options.worldOriginSuffix);
  const admin = await loadOrCreateAdminToken(options.dir);
  // Beside the admin token, apart from the worlds' storage: SEALING_KEY when set, else the key file.
  const sealing = await loadOrCreateSealingKey(join(hostDir(options.dir), 'sealing-key'));
  const loopback = options.outboundLoopback === true;
  const roots = {
    // A host of this machine alone delivers webhooks to any receiver; a shared one checks them as it checks roots.
    outbound: createNodeOutbound({ loopback, webhooksAnywhere: loopback, ...(options.outboundProxy !== undefined ? { proxy: options.outboundProxy } : {}) }),
    sealer: createSealer(sealingKeyBytes(sealing.key)),
    outboundLoopback: loopback,
  };
  const stateDir = hostDir(options.dir);
  const worldsDir = join(stateDir, 'worlds');
  mkdirSync(worldsDir, { recursive: true, mode: 0o700 });
  const storage: Storage = openLmdbStorage(worldsDir);
  const now = options.now ?? Date.now;
  const store = new WorldStore(storage, { now });
  const defaultBudget: BudgetOptions | false = options.budget ?? { size: DEFAULT_BUDGET_SIZE, windowMs: DEFAULT_BUDGET_WINDOW_MS };
  // The built-in twins, and those an admin installed (kept beside the worlds, served untrusted).
  const twins = new TwinSets(new Map(options.twins.map((t) => [t.vendor, t])), { installed: HostTwins.bundlesIn(storage) });
  const registry = new HostRegistry(storage, { maxCached: 10_000, budgetOf: (r) => budgetOf(r, defaultBudget) });
  let baseUrl: string | null = null;

  // The pool wakes worlds through `wake`, and notes wake-ups there when they close.
  let wake: WakeSchedule;
  const pool = new WorldPool({
    store,
    storage,
    twins,
    engines: nodeGuestEngines,
    roots,
    ...(options.guestRuntime !== undefined ? { guestRuntime: options.guestRuntime } : {}),
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
    ...(options.maxOpen !== undefined ? { maxOpen: options.maxOpen } : {}),
    ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    onClosed: (name, at) => {
      if (registry.get(name) !== undefined) wake.note(name, at);
    },
  });
  wake = new WakeSchedule(storage, (name) => (registry.get(name) === undefined ? Promise.resolve() : pool.use(name, async (runner) => void (await runner.performDueMoves()))));
  const worlds = new HostWorlds({ storage, store, registry, pool, wake, twins, defaultBudget, baseUrl: () => baseUrl, now });
  // Installs are loaded in a lane of the host's own, under the worlds' sandbox limits, never in V8.
  const checks = new TwinCheckLane(() => nodeGuestEngines.lane({ name: 'host twin check', ...(options.limits !== undefined ? { limits: options.limits } : {}) }));
  const installed = new HostTwins({
    storage,
    twins,
    registry,
    pool,
    checks,
    now,
  });
  const hostCode = `${KIT_VERSION}+host`;
  const core = createHostCore({
    worlds,
    admin: createAdminSurface({ adminToken: admin.token, worlds, twins: installed, hostCode, consoleDir: options.consoleDir === undefined ? defaultConsoleDir() : options.consoleDir }),
    hostCode,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    pages: options.pages ?? loadPageFiles(),
    passes: options.passes ?? null,
  });

  // What a previous run left: branches past their ttl go, deliveries still to send go out.
  await worlds.sweepExpired();
  for (const name of registry.names()) {
    if (hasPendingDeliveries(storage, name)) void pool.use(name, async () => undefined).catch((e: unknown) => console.error(`kit host: reopening ${name} for its webhook deliveries failed:`, e));
  }
  wake.start();
  const sweepEvery = options.sweepEveryMs ?? 5000;
  const sweeper = setInterval(() => void worlds.sweepExpired().catch((e: unknown) => console.error('kit host: removing expired branches failed:', e)), sweepEvery);
  sweeper.unref();

  const host = options.host ?? '127.0.0.1';
  // WebSocket `{world_api}/streams/<id>` of any world: TCP-protocol twins (host/node/streams/).
  const streams = createStreamRoutes({ worlds: (org, world) => worlds.streamWorld(org, world) });
  let http: Awaited<ReturnType<typeof listenHttp>>;
  try {
    http = await listenHttp({
      configure: streams.register,
      handler: core.handler,
      host,
      port: options.port ?? 0,
      maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      drainTimeoutMs: options.drainTimeoutMs ?? 10_000,
    });
  } catch (e) {
    clearInterval(sweeper);
    wake.stop();
    await pool.closeAll();
    await checks.close();
    await storage.close();
    throw e;
  }
  const url = `http://${urlHost(host)}:${http.port}`;
  baseUrl = url;
  core.publish({
    baseUrl: url,
    proxyUrl: null,
    ca: null,
    everyAddress: host === '0.0.0.0' || host === '::' || host === '',
    worldOrigins: hosted ?? localOriginRule(host, http.port),
  });
  await writeHostUrl(options.dir, url);

  let closing: Promise<void> | null = null;
  return {
    url,
    port: http.port,
    adminToken: admin.token,
    adminTokenCreated: admin.created,
    stateDir,
    worlds,
    pool,
    registry,
    store,
    dispatch: core.dispatch,
    close(): Promise<void> {
      if (closing === null) {
        closing = (async () => {
          clearInterval(sweeper);
          wake.stop();
          await streams.close();
          await http.close();
          core.stop();
          await pool.closeAll();
          await checks.close();
          await store.idle();
          await storage.close();
        })();
      }
      return closing;
    },
  };
}
