/**
 * The runtime's public surface (`twinkit/runtime`): open a world and serve it in-process,
 * or reach for the engine and storage directly. Everything else in runtime/ is internal.
 */
export { CodedError, KitError, isCodedError, isKitError, statusOf, type KitErrorCode } from './errors.js';
export { KIT_VERSION } from './version.js';
export { MemoryStorage, openLmdbStorage, type Storage } from './store/index.js';
export { WorldStore, World, idSource, type IdSource } from './world/index.js';
export type { ClockState, Entry, EntryCause, EntryDraft, HistoryCut, RecordWrite, TimelinePage, WorldDiff, WorldMap } from './world/index.js';
export { openLocalWorld, openWorldRunner, WorldRunner, worldCode } from './runner/index.js';
export type { LocalWorldOptions, TwinBundle, TwinManifestJson, WorldHandle, WorldRequest, WorldResponse, WorldRunnerOptions } from './runner/index.js';
// The world API's route table, so a host's scope check and the runner's routes are one list.
export { matchWorldApi, worldApiScope, WORLD_API_ENDPOINTS } from './runner/index.js';
export type { Scope, WorldApiEndpoint } from './runner/index.js';
