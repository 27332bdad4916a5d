/**
 * Loading a twin's code where it runs: a trusted (built-in) twin in its V8 realm, anything else
 * in the world's lane (a script in QuickJS, a component in an instance of its own), and the
 * manifest of code the host does not trust read back from the loaded code, never taken from the
 * bundle's word. Swapping a twin's code while it is served puts the old code back on a refusal.
 */
import { loadComponentIntoLane } from '../component/lane-load.js';
import { isKitError, KitError } from '../errors.js';
import type { UntrustedLane } from '../lane/types.js';
import type { CallResult } from '../sandbox/sandbox.js';
import type { TrustedEngine } from './engines.js';
import { manifestInLane } from './twin-check.js';
import type { TwinBundle, TwinManifestJson } from './types.js';

/** Whether a bundle runs trusted: a built-in script, unless the runner runs every twin in QuickJS. */
export function runsTrusted(bundle: TwinBundle, trustTwins: boolean): boolean {
  return bundle.trusted === true && bundle.component === undefined && trustTwins;
}

/** Loads a bundle's code as context `bundle.vendor`. */
export async function loadTwinCode(bundle: TwinBundle, trusted: boolean, trustedEngine: TrustedEngine, lane: UntrustedLane): Promise<CallResult> {
  if (trusted) return trustedEngine.load(bundle.vendor, bundle.source, { hostCall: true });
  if (bundle.component !== undefined) return loadComponentIntoLane(lane, bundle.vendor, bundle.component);
  return lane.load(bundle.vendor, bundle.source, { hostCall: true });
}

/**
 * The bundle with the manifest its loaded code answers in the lane, checked (`served`: the other
 * vendor ids of the world), when the host does not trust it; a built-in script's own otherwise.
 */
export async function servedManifest(bundle: TwinBundle, lane: UntrustedLane, served: readonly string[]): Promise<TwinBundle> {
  if (bundle.trusted === true && bundle.component === undefined) return bundle;
  const manifest = await manifestInLane(lane, bundle.vendor, { label: `twin '${bundle.vendor}'`, served });
  if (manifest.vendor !== bundle.vendor) throw new KitError('invalid_twin', `twin '${bundle.vendor}': its manifest names vendor ${JSON.stringify(manifest.vendor)}`, { label: bundle.vendor, field: 'vendor' });
  return { ...bundle, manifest };
}

/**
 * Loads `bundle`'s script in place of `old`'s in the lane and answers its checked manifest; code
 * that does not load, or whose manifest is refused, leaves `old` loaded and throws `invalid_twin`.
 */
export async function swapTwinCode(lane: UntrustedLane, old: TwinBundle, bundle: TwinBundle, served: readonly string[]): Promise<TwinManifestJson> {
  if (bundle.trusted === true || bundle.component !== undefined || old.component !== undefined) {
    throw new KitError('invalid_twin', `Twin '${bundle.vendor}' is ${bundle.trusted === true ? 'trusted code' : 'a component'}; only a twin built from sources is replaced while served.`, { field: 'source' });
  }
  const loaded = await lane.load(bundle.vendor, bundle.source, { hostCall: true });
  try {
    if ('error' in loaded) throw new KitError('invalid_twin', `it failed to load: ${loaded.error.message}`, { field: 'source' });
    return (await servedManifest(bundle, lane, served)).manifest;
  } catch (e) {
    await lane.load(bundle.vendor, old.source, { hostCall: true });
    const field = isKitError(e) && typeof e.details?.['field'] === 'string' ? e.details['field'] : 'manifest';
    throw new KitError('invalid_twin', `Twin '${bundle.vendor}' was not replaced: ${(e as Error).message}`, { field });
  }
}
