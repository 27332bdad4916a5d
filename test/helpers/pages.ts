/**
 * The built pages (dist/pages/, made by `make build`: pages/build.mjs) for a browser test. Tests
 * never build them themselves: another test's host may be reading dist/pages/ at the same time.
 */
import { join } from 'node:path';
import { loadPageFiles } from '../../host/node/pages.js';
import type { PageFiles } from '../../host/core/pages.js';

/** The built pages; throws naming what is missing (`world`, a vendor's mirror) and how to build it. */
export function builtPages(needed: readonly string[] = ['world']): PageFiles {
  const pages = loadPageFiles(join(process.cwd(), 'dist', 'pages'));
  const missing = needed.filter((p) => !pages.has(p));
  if (missing.length > 0) throw new Error(`dist/pages/ lacks ${missing.join(', ')}: run \`node pages/build.mjs\` (make build does)`);
  return pages;
}
