/**
 * The component twins of these tests, built from their JavaScript sources here (never a
 * committed binary): componentized once per content (sdk/wit/componentize.ts) and transpiled
 * once per component (runtime/component/load.ts), both kept under `.kit/components/`
 * (gitignored), so a run after the first loads them in well under a second.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadComponentTwin, type ComponentLoadOptions } from '../../runtime/component/index.js';
import type { TwinBundle } from '../../runtime/runner/types.js';
import { componentizeTwin, type ComponentizeOptions } from '../../sdk/wit/componentize.js';

/** This folder in the sources, also when this file runs compiled from dist/ (the bench). */
export const COMPONENTS_DIR = fileURLToPath(new URL('.', import.meta.url)).replace(/[\\/]dist([\\/]test[\\/]components[\\/])$/, '$1');
const CACHE = join(COMPONENTS_DIR, '../../.kit/components/');

/** The component's bytes for `test/components/<name>/component.js`. */
export function componentBytes(name: string, options: ComponentizeOptions = {}): Promise<Uint8Array> {
  return componentizeTwin(join(COMPONENTS_DIR, name, 'component.js'), { cacheDir: `${CACHE}built`, ...options });
}

/** `test/components/<name>/component.js` as a twin bundle ready to serve. */
export async function componentTwin(name: string, options: ComponentizeOptions & Omit<ComponentLoadOptions, 'cacheDir'> = {}): Promise<TwinBundle> {
  const { witDir, world, stubWasi, ...load } = options;
  const bytes = await componentBytes(name, { ...(witDir ? { witDir } : {}), ...(world ? { world } : {}), ...(stubWasi !== undefined ? { stubWasi } : {}) });
  return loadComponentTwin(bytes, { label: `test/components/${name}`, cacheDir: `${CACHE}transpiled`, ...load });
}
