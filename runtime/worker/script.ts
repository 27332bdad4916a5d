/**
 * Where a worker thread's script is. Worker threads run JavaScript, so a script next to a
 * TypeScript source that vitest loads is taken from the compiled tree (`dist/`, `make build`).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The compiled module `relative` to the module at `from` (its `import.meta.url`): beside it when
 * `from` is itself compiled, else at the same place under `dist/`.
 */
export function compiledScript(from: string, relative: string): URL {
  const here = fileURLToPath(from);
  if (here.endsWith('.js')) return new URL(relative, from);
  const runtime = here.lastIndexOf(`${join('/', 'runtime', '/')}`);
  if (runtime < 0) throw new Error(`compiledScript: ${here} is not under runtime/`);
  const built = join(here.slice(0, runtime), 'dist', dirname(here.slice(runtime + 1)), relative);
  if (!existsSync(built)) throw new Error(`${built} is missing; run \`make build\` first`);
  return pathToFileURL(built);
}
