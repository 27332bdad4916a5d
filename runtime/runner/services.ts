/**
 * What the runner's parts use of it, as interfaces: the checks (checks.ts), the scenarios
 * (scenarios.ts) and the world API (api.ts) are given these, never the `WorldRunner` class,
 * so none of them imports world-runner.ts and world-runner.ts may import them all.
 * `WorldRunner` implements every one.
 */
import type { UntrustedLane } from '../lane/types.js';
import type { CredentialSecret, RootConfig } from '../roots/config.js';
import type { OutboundFetch } from '../roots/outbound.js';
import type { Entry, EntryDraft } from '../world/types.js';
import type { GuestOutput } from './twins.js';
import type { TwinSourceStatus, WorldRequest, WorldResponse } from './types.js';
import type { Storage } from '../store/index.js';
import type { World } from '../world/index.js';
import type { RequestLog } from './requests.js';
import type { ServedTwin } from './twins.js';

/** Runs `work` when nothing else holds `key` (a twin's vendor id, or a name of the runner's own). */
export type Exclusive = <T>(key: string, work: () => Promise<T>) => Promise<T>;

/** What a world's checks use: where they are kept, the lane they run in, one change to the set at a time. */
export interface CheckHost {
  readonly name: string;
  readonly world: World;
  readonly storage: Storage;
  /** The world's checks, each in a runtime of its own. */
  readonly checkLane: UntrustedLane;
  exclusive: Exclusive;
}

/** What the scenarios in force use: where they are kept, the twins, the lane their `js` handlers run in. */
export interface ScenarioHost {
  readonly name: string;
  readonly world: World;
  readonly storage: Storage;
  readonly twins: ReadonlyMap<string, ServedTwin>;
  /** Untrusted code: scenario `js` handlers (and users' twins). */
  readonly lane: UntrustedLane;
}

/** A twin's scenario document as kept: what `GET …/twins/<vendor>/scenario` answers. */
export interface StoredScenario {
  source: string;
  format: 'json' | 'yaml';
  updatedAt: string;
}

/** The scenarios as the world API changes and shows them (scenarios.ts `ScenarioSlot`). */
export interface ScenarioService {
  get(twin: ServedTwin): StoredScenario;
  /** Validates and puts a document in force; a bad one is refused and the one in force kept. */
  put(twin: ServedTwin, source: string, contentType: string | undefined): Promise<{ stored: StoredScenario; scenario: { handlers: readonly unknown[] } }>;
  delete(twin: ServedTwin): Promise<void>;
  /** Whether a scenario is in force, and since when (for the twin's status). */
  inForce(twin: ServedTwin): { handlers: number; updatedAt: string } | null;
  /** The twin's colocated scenario file and its last problem, or null (scenarios.ts `ScenarioFileState`). */
  file(twin: ServedTwin): { path: string; problem: { message: string; line?: number } | null } | null;
}

/** The checks as the world API changes and shows them (checks.ts `CheckSet`). */
export interface CheckService {
  list(): { name: string; declared: string; updatedAt: string; bytes: number }[];
  get(name: string): { source: string };
  put(name: string, source: string): Promise<{ name: string; declared: string; updatedAt: string }>;
  delete(name: string): Promise<void>;
}

/** What a world's roots, credentials and links (roots.ts, links.ts) use of the runner. */
export interface RootHost {
  readonly name: string;
  readonly world: World;
  readonly storage: Storage;
  readonly twins: ReadonlyMap<string, ServedTwin>;
  twin(vendor: string): ServedTwin;
  exclusive: Exclusive;
  /** Runs `__kit_invoke` (a `root.*` call) for the twin at its next position. */
  invokeGuest(twin: ServedTwin, input: Record<string, unknown>): Promise<GuestOutput>;
  /** Appends an entry; the caller waits for `durable` before it answers. */
  appendEntry(twin: string, draft: EntryDraft): Entry;
  durable(): Promise<void>;
  wallClock(): number;
}

/** The roots and credentials as the world API shows and changes them (roots.ts `RootSet`). */
export interface RootService {
  readonly loopback: boolean;
  root(vendor: string): RootConfig | null;
  putRoot(vendor: string, body: unknown): RootConfig | null;
  putCredential(name: string, bodyText: string, body: unknown, isLink: (name: string) => boolean): Promise<{ sealed: true; sealedAt: string }>;
  credential(name: string, isLink: (name: string) => boolean): { sealed: boolean; sealedAt: string | null };
  credentialStatus(name: string): { sealed: boolean; sealedAt: string | null };
  deleteCredential(name: string, isLink: (name: string) => boolean): void;
  openCredential(name: string): Promise<CredentialSecret | null>;
  outbound(): OutboundFetch;
  status(vendor: string): Record<string, unknown>;
  refresh(vendor: string, force: boolean): Promise<unknown>;
  ingest(vendor: string, headers: Record<string, string>, body: Uint8Array): Promise<unknown>;
}

/** What a world's changesets and origin (changesets/) use of the runner. */
export interface ChangesetHost {
  readonly name: string;
  readonly world: World;
  readonly storage: Storage;
  readonly twins: ReadonlyMap<string, ServedTwin>;
  exclusive: Exclusive;
  readonly roots: RootService;
  /** Appends entries to a twin's log in one transaction; the caller waits for `durable`. */
  appendEntries(twin: string, drafts: EntryDraft[]): Entry[];
  durable(): Promise<void>;
  /** Every check of the world over one entry of a twin (checks.ts `CheckSet.run`). */
  runChecks(twin: string, entry: Entry): Promise<{ check: string; pass: boolean; failures: string[] }[]>;
}

/** The changesets and the origin as the world API shows and changes them (changesets/ `WorldChangesets`). */
export interface ChangesetService {
  list(): unknown;
  /** With `redactFor`, as a caller that may only read sees it. */
  show(name: string, redactFor?: (twin: string) => ((type: string, value: unknown) => unknown) | undefined): unknown;
  cut(body: unknown): Promise<unknown>;
  receive(body: unknown): Promise<{ status: number; body: unknown }>;
  verify(name: string): Promise<unknown>;
  approve(name: string, body: unknown, who: string | undefined): Promise<unknown>;
  deploy(name: string | null, body: unknown, credential: string | undefined): Promise<unknown>;
  origin(): unknown;
  putOrigin(body: unknown): Promise<unknown>;
  pull(body: unknown): Promise<unknown>;
  pushToOrigin(): Promise<unknown>;
  lastReceipt(twin: string): unknown;
}

/** The links as the world API shows and changes them (links.ts `LinkSet`). */
export interface LinkService {
  has(name: string): boolean;
  list(): unknown;
  put(name: string, body: unknown): unknown;
  delete(name: string): void;
  forward(name: string, req: WorldRequest, rest: string): Promise<WorldResponse>;
}

/** What the world API (`{world_api}/…`, api.ts) uses of the runner. */
export interface WorldApiServices {
  readonly world: World;
  /** The world's storage (the runner's own keys beside the engine's: a twin's export reads its scenario). */
  readonly storage: Storage;
  readonly twins: ReadonlyMap<string, ServedTwin>;
  /** The twin, or 404 `unknown_twin`. */
  twin(vendor: string): ServedTwin;
  exclusive: Exclusive;
  readonly scenarios: ScenarioService;
  readonly checks: CheckService;
  readonly roots: RootService;
  readonly links: LinkService;
  readonly changesets: ChangesetService;
  readonly requests: Pick<RequestLog, 'report'>;
  /** Whether this host makes branches (the single-world server does not). */
  readonly branchesServed: boolean;
  /** Wall clock for the request report. */
  wallClock(): number;
  /** Where a twin's code came from and its last build (`source` of its status). */
  twinSource(vendor: string): TwinSourceStatus;
}
