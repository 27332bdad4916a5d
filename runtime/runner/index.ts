export type { LocalWorldOptions, Scope, TwinBundle, TwinManifestJson, WorldHandle, WorldRequest, WorldResponse } from './types.js';
export { WorldRunner, type RunnerOptions } from './world-runner.js';
export { openLocalWorld, openWorldRunner, worldCode, stateDir, type WorldRunnerOptions } from './open.js';
export type { CheckResult } from './checks.js';
