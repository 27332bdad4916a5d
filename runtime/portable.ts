/**
 * What of the runtime runs on every host, workerd included: no `node:vm`, `node:fs`,
 * `node:worker_threads`, lmdb or esbuild, and no code generated at run time but where a Node
 * host alone calls it (`makeSyncGlue`). It needs `node:crypto` (workerd's `nodejs_compat` has it)
 * and the global `Buffer`. `portable.test.ts` bundles this file and fails on any other import.
 *
 * A host without Node's engines passes `engines` (`inlineGuestEngines`) to every runner it opens.
 */
export { CodedError, KitError, isCodedError, isKitError, statusOf, type KitErrorCode } from './errors.js';
export { KIT_VERSION } from './version.js';
export type { Key, KeyPart, KeyValue, RangeOptions, Storage, StorageWriter } from './store/types.js';
export { compareKeys, prefixEnd, MAX_KEY_BYTES } from './store/keys.js';
export { MemoryStorage } from './store/memory.js';
export { WorldStore, World } from './world/world.js';
export type { ClockState, Entry, EntryCause, EntryDraft, HistoryCut, RecordWrite, TimelinePage, WorldDiff, WorldMap } from './world/types.js';
export { WorldRunner, type RunnerOptions } from './runner/world-runner.js';
export { openWorldRunner, worldCode, type WorldRunnerOptions } from './runner/open-runner.js';
export { inlineGuestEngines, type GuestEngines, type TrustedEngine } from './runner/engines.js';
export { copyRunnerState, hasPendingDeliveries, nextDeliveryMs, removeRunnerState } from './runner/state.js';
export { matchWorldApi, worldApiScope, WORLD_API_ENDPOINTS } from './runner/api.js';
export type { Endpoint as WorldApiEndpoint } from './runner/routes.js';
export type { LocalWorldOptions, Scope, StreamCall, StreamResult, TwinBundle, TwinManifestJson, WorldHandle, WorldRequest, WorldResponse } from './runner/types.js';
export { InlineLane, type InlineLaneOptions } from './lane/inline.js';
export type { LaneOptions, UntrustedLane } from './lane/types.js';
export { sandboxModuleOf, GlueDate, SandboxModule, SandboxGlueError, type GlueFactory } from './sandbox/wasm.js';
export type { SandboxLimits, CallResult, HostCall, HostValue } from './sandbox/sandbox.js';
export { TrustedContexts, type TrustedRealm, type TrustedRealmMaker } from './sandbox/trusted.js';
export { edgeTrustedRealms, type TrustedRealmLoader } from './sandbox/trusted-edge.js';
