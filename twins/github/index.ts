/**
 * The GitHub twin, as the rest of the repository sees it (Node side). The twin itself is the
 * sandbox bundle built from `twin/index.ts`; it is registered in `twins/index.ts`.
 */
export { coverage, type CoverageRow } from './coverage.js';

/** The twin's entry file, relative to the repository root (what `buildTwin` takes). */
export const githubTwinEntry = 'twins/github/twin/index.ts';
