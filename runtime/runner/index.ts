export type { LocalWorldOptions, Scope, StreamCall, StreamResult, StreamUntilBytes, TwinBundle, TwinManifestJson, WorldHandle, WorldRequest, WorldResponse } from './types.js';
export { MAX_STREAM_STATE_BYTES } from './streams.js';
export { WorldRunner, type RunnerOptions } from './world-runner.js';
export { openLocalWorld, openWorldRunner, worldCode, stateDir, scenarioFolder, type WorldRunnerOptions } from './open.js';
export type { CheckResult } from './checks.js';
export type { ScenarioFiles } from './scenarios.js';
export { copyRunnerState, hasPendingDeliveries, nextDeliveryMs, removeRunnerState } from './state.js';
export { matchWorldApi, worldApiScope, WORLD_API_ENDPOINTS } from './api.js';
export type { Endpoint as WorldApiEndpoint } from './routes.js';
export {
  CLOCK_FILE,
  EXPORT_FORMAT_VERSION,
  MAX_IMPORT_BYTES,
  MAX_IMPORT_FILE_BYTES,
  exportTwinFiles,
  importTwinFiles,
  parseTwinFiles,
  placeTwinFiles,
  twinFilePath,
  type ImportSummary,
  type PlaceOptions,
  type TwinFiles,
  type TwinImport,
} from './transfer.js';
export { defaultGuestEngines, inlineGuestEngines, type GuestEngines, type TrustedEngine } from './engines.js';
export { nodeGuestEngines } from './node-engines.js';
