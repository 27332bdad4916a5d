/**
 * Bundles a TypeScript entry for plain node (a child process or a worker thread runs
 * JavaScript): ESM, bare imports left to resolve from the repository's node_modules.
 */
import { build } from 'esbuild';

export async function bundleForNode(entry: string): Promise<string> {
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  return (out.outputFiles[0] as { text: string }).text;
}
