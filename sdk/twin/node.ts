/**
 * The Node-side twin tools: the build (esbuild) and the guest harness for tests. Kept apart
 * from `./index.ts`, which twin code imports inside the sandbox.
 */
export { buildGuestRuntime, buildTwin, loadBuiltinTwins, readManifest } from './build.js';
export type { BuiltTwin } from './build.js';
export { createGuestHarness } from './testing.js';
export type { GuestHarness, GuestHarnessOptions, HarnessEntry, HarnessResult, RequestOptions } from './testing.js';
