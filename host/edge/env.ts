/**
 * What a Worker and its Durable Objects are given (wrangler.toml / miniflare's bindings), and
 * the calls the Worker makes of its objects.
 */
import type { DurableObjectNamespace } from 'cloudflare:workers';
import type { NewWorld, WorldRow } from '../multi-world/worlds.js';
import type { ImportSummary } from '../../runtime/runner/transfer.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import type { InstalledTwinRecord } from '../multi-world/installed-twins.js';
import type { Outcome } from './outcome.js';

export interface EdgeEnv {
  /** The admin token (a secret): opens `/-/…`, as `x-kit-token` or a bearer. */
  ADMIN_TOKEN?: string;
  /** Each world family's Durable Object (family.ts). */
  FAMILIES: DurableObjectNamespace<FamilyCalls>;
  /** The one index of names and rows (index-object.ts). */
  INDEX: DurableObjectNamespace<IndexCalls>;
  /**
   * Hosted: each world's origin is `https://<world>--<org><WORLD_ORIGIN_SUFFIX>` (a wildcard route
   * to this Worker). Unset: `http://<world>--<org>.localhost:<port>` (`kit edge dev`).
   */
  WORLD_ORIGIN_SUFFIX?: string;
  /** `1`: workerd listens on this machine's loopback only (`kit edge dev`), so a world's page opens a session without a token. */
  LOOPBACK_SESSIONS?: string;
  /** Issuers of passes this host trusts, comma or space separated (docs/passes.md). */
  TRUSTED_ISSUERS?: string;
  /** The key that seals the twins' real credentials (a secret): 32 bytes as base64 or hex. Unset: no credential can be sealed. */
  SEALING_KEY?: string;
  /** `1`: roots and links may name this machine's loopback over http (`kit edge dev` for local tests). */
  LOOPBACK_ROOTS?: string;
}

/** What the Worker asks of a family (every answer an Outcome: coded errors cross RPC whole). */
export interface FamilyCalls {
  create(family: string, input: NewWorld): Promise<Outcome<WorldRow>>;
  row(name: string): Promise<Outcome<WorldRow>>;
  setOwner(name: string, owner: string): Promise<Outcome<WorldRow>>;
  setBudget(name: string, budget: string | null): Promise<Outcome<WorldRow>>;
  rotate(name: string): Promise<Outcome<{ name: string; token: string; readToken: string }>>;
  remove(name: string): Promise<Outcome<void>>;
  importTwin(name: string, body: unknown): Promise<Outcome<ImportSummary>>;
  /** An installed twin was replaced: its worlds open on the new code from their next request. */
  twinReplaced(vendor: string): Promise<Outcome<void>>;
}

export interface IndexCalls {
  /** `vendors`: what the world will serve, so an installed twin it names is not removed while it is made. */
  reserve(name: string, family: string, vendors?: readonly string[]): Promise<Outcome<void>>;
  release(name: string, family: string): Promise<Outcome<void>>;
  claim(name: string, family: string): Promise<Outcome<void>>;
  resolve(name: string): string | null;
  publish(family: string, rows: WorldRow[]): Promise<Outcome<void>>;
  rows(): WorldRow[];
  names(): string[];
  /** Installed twins (`/-/twins`), kept in the index's storage for every family. */
  twinRecords(): InstalledTwinRecord[];
  twinBundle(vendor: string): TwinBundle | null;
  /** Keeps a checked install; answers whether it replaced one, and the families whose worlds serve it. */
  installTwin(record: InstalledTwinRecord, source: string): Promise<Outcome<{ replaced: boolean; families: string[] }>>;
  /** `twin_in_use` while a world serves it. */
  removeTwin(vendor: string): Promise<Outcome<void>>;
  /** The worlds whose vendors include `vendor`. */
  twinWorlds(vendor: string): string[];
}

/** The index's one object. */
export const INDEX_NAME = '#index';

/** Said by a family to the Worker when it does not hold the world a request names (a stale cache). */
export const MISS_HEADER = 'x-kit-edge-miss';

/** As the multi-world host: 4 MB. */
export const EDGE_MAX_BODY_BYTES = 4 * 1024 * 1024;
