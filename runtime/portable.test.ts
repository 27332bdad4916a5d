/**
 * The runtime's portable surface bundles with nothing a workerd isolate lacks: the bundle
 * `portable.ts` makes imports only what is allowed below. A Node module reached from it (a
 * `node:fs` in a runner file, a lane's worker thread, the Node barrel of a folder, a type import
 * written so that it stays a side-effect import) fails here, not in a Worker.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** Packages and Node modules a workerd host with `nodejs_compat` provides or bundles. */
const ALLOWED = new Set(['node:crypto', 'msgpackr', 'yaml', 'acorn', 'quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-sync/ffi']);

describe('runtime/portable.ts', () => {
  it('bundles with no import a workerd isolate lacks', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('./portable.ts', import.meta.url))],
      bundle: true,
      write: false,
      metafile: true,
      format: 'esm',
      platform: 'neutral',
      packages: 'external',
      logLevel: 'silent',
      outfile: 'portable.js',
    });
    const imported = new Map<string, string[]>();
    for (const [file, input] of Object.entries(result.metafile.inputs)) {
      for (const i of input.imports) if (i.external) imported.set(i.path, [...(imported.get(i.path) ?? []), file]);
    }
    const refused = [...imported].filter(([path]) => !ALLOWED.has(path)).map(([path, files]) => `${path} (from ${[...new Set(files)].join(', ')})`);
    expect(refused).toEqual([]);
    // It is the runtime that was bundled: the runner, the inline lane and the realms of trusted code.
    const files = Object.keys(result.metafile.inputs);
    for (const f of ['runtime/runner/world-runner.ts', 'runtime/lane/inline.ts', 'runtime/sandbox/trusted-edge.ts', 'runtime/checks/compile.ts']) expect(files).toContain(f);
  });
});
