/**
 * What the runner's parts use of it, as interfaces: the checks (checks.ts), the scenarios
 * (scenarios.ts) and the world API (api.ts) are given these, never the `WorldRunner` class,
 * so none of them imports world-runner.ts and world-runner.ts may import them all.
 * `WorldRunner` implements every one.
 */
import type { UntrustedLane } from '../lane/types.js';
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
}

/** The checks as the world API changes and shows them (checks.ts `CheckSet`). */
export interface CheckService {
  list(): { name: string; declared: string; updatedAt: string; bytes: number }[];
  get(name: string): { source: string };
  put(name: string, source: string): Promise<{ name: string; declared: string; updatedAt: string }>;
  delete(name: string): Promise<void>;
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
  readonly requests: Pick<RequestLog, 'report'>;
  /** Whether this host makes branches (the single-world server does not). */
  readonly branchesServed: boolean;
  /** Wall clock for the request report. */
  wallClock(): number;
}
