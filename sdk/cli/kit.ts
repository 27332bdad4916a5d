#!/usr/bin/env node
/**
 * The `kit` executable (`bin.kit`, built to dist/sdk/cli/kit.js). Wires the real world
 * runner, the built-in twins and the process's signals into `main`.
 */
import { readFileSync } from 'node:fs';
import type { LocalWorldOptions, WorldHandle } from '../../runtime/runner/types.js';
import { main } from './main.js';
import type { CliDeps } from './main.js';

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    if (typeof pkg.version === 'string') return pkg.version;
  } catch {
    // Run from an unexpected layout: the version is not worth failing over.
  }
  return 'unknown';
}

const deps: CliDeps = {
  version: version(),
  async loadTwins() {
    const { loadBuiltinTwins } = await import('../twin/node.js');
    return loadBuiltinTwins();
  },
  // Loaded on demand so `kit --help` does not pay for esbuild, LMDB and QuickJS.
  async openWorld(options: LocalWorldOptions): Promise<WorldHandle> {
    const { openLocalWorld } = await import('../../runtime/runner/index.js');
    // The guest runtime alone runs a scenario's JavaScript handlers.
    const { buildGuestRuntime } = await import('../twin/node.js');
    return openLocalWorld({ ...options, guestRuntime: await buildGuestRuntime() });
  },
  async startHost(options) {
    const { startMultiWorldHost } = await import('../../host/index.js');
    const { buildGuestRuntime, loadBuiltinTwins } = await import('../twin/node.js');
    return startMultiWorldHost({ ...options, twins: [...(await loadBuiltinTwins()).values()], guestRuntime: await buildGuestRuntime() });
  },
  async startEdge(options) {
    const { startEdgeDev } = await import('../../host/edge/dev.js');
    return startEdgeDev(options);
  },
  untilStopped() {
    return new Promise((resolve) => {
      const stop = (signal: NodeJS.Signals): void => {
        // A second signal while stopping means "now".
        process.once('SIGINT', () => process.exit(130));
        process.once('SIGTERM', () => process.exit(143));
        resolve(signal);
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  },
};

const io = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
};
// `kit world serve | head -1` closes the pipe: the server goes on serving, its lines unread
// (an unhandled EPIPE would end it with a stack trace). Any other command has nothing left to
// do once its reader is gone (`kit world timeline --follow | head -5`): it ends quietly.
const argv = process.argv.slice(2);
const serving = argv[1] === 'serve';
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    if (!serving && stream === process.stdout) process.exit(0);
  });
}

main(argv, io, deps).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`kit: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
