/**
 * Opening a world's runner in this thread, over any storage, on any host: needs no Node API but
 * `node:crypto` (workerd's `nodejs_compat` has it). Node's ways to open a world from a folder or in
 * a worker thread are in open.ts.
 */
import { createHash } from 'node:crypto';
import type { SandboxLimits } from '../sandbox/sandbox.js';
import type { Storage } from '../store/types.js';
import { WorldStore } from '../world/world.js';
import { KIT_VERSION } from '../version.js';
import type { GuestEngines } from './engines.js';
import type { ScenarioFiles } from './scenarios.js';
import { WorldRunner, type RunnerOptions } from './world-runner.js';
import type { TwinBundle } from './types.js';

export interface WorldRunnerOptions {
  storage: Storage;
  /** The world's name in the storage; made with the twins when it does not exist yet. */
  world: string;
  twins: TwinBundle[];
  /** Run trusted (built-in) twins in V8; false runs every twin in QuickJS (default true). */
  trustTwins?: boolean;
  /** The engines guest code runs in (default: the host's; on Node `nodeGuestEngines`). */
  engines?: GuestEngines;
  guestRuntime?: string;
  branches?: boolean;
  /** A local world also keeps each twin's scenario as a file (open.ts `scenarioFolder`). */
  scenarioFiles?: ScenarioFiles;
  limits?: Partial<SandboxLimits>;
  /** The engine's wall clock (tests freeze it). */
  now?: () => number;
  /** Outbound webhook settings (tests shorten the retry delays). */
  webhooks?: RunnerOptions['webhooks'];
  /** The vendor behind each twin's root: the host's way out, its sealing key, whether loopback may be named. */
  outbound?: RunnerOptions['outbound'];
  sealer?: RunnerOptions['sealer'];
  outboundLoopback?: boolean;
  /** For a branch: its parent's world API (changesets/ `ParentApi`). */
  parentApi?: RunnerOptions['parentApi'];
}

/** The code version a world runs: the runtime's version and a hash of its twins' code. */
export function worldCode(twins: TwinBundle[]): string {
  const hash = createHash('sha256');
  for (const t of [...twins].sort((a, b) => (a.vendor < b.vendor ? -1 : 1))) hash.update(t.vendor).update('\0').update(t.source).update('\0').update(t.component?.sha256 ?? '');
  return `${KIT_VERSION}+${hash.digest('hex').slice(0, 12)}`;
}

/** A world served in this thread (its untrusted code in its lanes). */
export async function openWorldRunner(options: WorldRunnerOptions): Promise<WorldRunner> {
  const store = new WorldStore(options.storage, options.now ? { now: options.now } : {});
  const vendors = options.twins.map((t) => t.vendor);
  const world = store.hasWorld(options.world) ? store.openWorld(options.world) : store.createWorld(options.world, { twins: vendors });
  const runnerOptions: RunnerOptions = {
    world,
    storage: options.storage,
    twins: options.twins,
    code: worldCode(options.twins),
    branches: options.branches ?? false,
  };
  if (options.limits !== undefined) runnerOptions.limits = options.limits;
  if (options.guestRuntime !== undefined) runnerOptions.guestRuntime = options.guestRuntime;
  if (options.trustTwins !== undefined) runnerOptions.trustTwins = options.trustTwins;
  if (options.engines !== undefined) runnerOptions.engines = options.engines;
  if (options.scenarioFiles !== undefined) runnerOptions.scenarioFiles = options.scenarioFiles;
  if (options.now) runnerOptions.wallNow = options.now;
  if (options.webhooks) runnerOptions.webhooks = options.webhooks;
  if (options.outbound !== undefined) runnerOptions.outbound = options.outbound;
  if (options.sealer !== undefined) runnerOptions.sealer = options.sealer;
  if (options.outboundLoopback !== undefined) runnerOptions.outboundLoopback = options.outboundLoopback;
  if (options.parentApi !== undefined) runnerOptions.parentApi = options.parentApi;
  return WorldRunner.open(runnerOptions);
}
